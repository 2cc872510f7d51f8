"""Domain errors raised by the services. All are `metrics.QrelForgeError` (a ValueError), so the CLI prints
them as one line and exits 2, and the pages show them with ``st.error(str(exc))``.

=================== =========================================================================
error               raised when
=================== =========================================================================
PermissionDenied    the caller's role (or membership, or login state) does not allow the action
NotFound            a project, user, pair, release ... does not exist (or is hidden from the caller)
Conflict            the action clashes with the current state (duplicate name, pair no longer
                    assigned, release blocked, concurrent edit)
DocumentChanged     (a Conflict) a label saved for a document version that is no longer current
InvalidInput        an argument is malformed; ``problems`` lists every bad line of an imported file
DatabaseBusy        "the database is busy, try again": another writer held the lock too long
DatabaseUnavailable "the database is unreachable, try again later": refused or dropped connection
                    (``in_doubt``: lost during COMMIT, the write may have been stored)
DiskFull            "the disk is full"
=================== =========================================================================

The last three (`DatabaseFault`) come from the store (`annotate_app.store.faults`), whatever the service;
`retry_once` sends a call again when its connection was lost before it wrote anything.

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

    def __init__(self, detail: str = "") -> None:
        super().__init__(DOCUMENT_CHANGED + (f" ({detail})" if detail else ""))


class InvalidInput(ServiceError):
    """A bad argument or a bad file. ``problems``: every bad line (``file:line: reason: 'text'``), if any."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()):
        self.problems = list(problems)
        more = len(self.problems) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else ""
        super().__init__(message + suffix)
