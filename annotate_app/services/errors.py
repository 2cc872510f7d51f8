"""Domain errors raised by the services, all `metrics.QrelForgeError` (a ValueError): the CLI prints one line
and exits 2, the pages show ``st.error(str(exc))``.

The database faults (`DatabaseFault`) come from `annotate_app.store.faults`, whatever the service.

>>> str(NotFound("project 'x' does not exist"))
"project 'x' does not exist"
"""

from __future__ import annotations

from collections.abc import Sequence

from annotate_app.store.faults import DatabaseBusy, DatabaseFault, DatabaseUnavailable, DiskFull, retry_once
from metrics.errors import Problem, QrelForgeError

__all__ = [
    "ServiceError",
    "PermissionDenied",
    "NotFound",
    "Conflict",
    "DocumentChanged",
    "InvalidInput",
    "DOCUMENT_CHANGED",
    "DatabaseFault",
    "DatabaseBusy",
    "DatabaseUnavailable",
    "DiskFull",
    "retry_once",
]

DOCUMENT_CHANGED = "this document changed while you read it; please judge it again"


class ServiceError(QrelForgeError):
    """Base class of the workflow errors."""


class PermissionDenied(ServiceError):
    """The caller may not do this."""


class NotFound(ServiceError):
    """The thing asked for does not exist."""


class Conflict(ServiceError):
    """The request is valid but clashes with the current state."""


class DocumentChanged(Conflict):
    """The document was re-imported (a new version) after the caller was shown it: their judgment is of a
    version that is no longer current, so it is refused and they judge the new one.

    >>> str(DocumentChanged())
    'this document changed while you read it; please judge it again'
    """

    def __init__(self) -> None:
        super().__init__(DOCUMENT_CHANGED)


class InvalidInput(ServiceError):
    """A bad argument or a bad file. ``problems``: every bad line (``file:line: reason: 'text'``), if any."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()):
        self.problems = list(problems)
        more = len(self.problems) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else ""
        super().__init__(message + suffix)
