"""Error and warning types shared by the whole `metrics` package.

Every error is a `ValueError` subclass, so ``except ValueError`` keeps working for callers who do not care
which part of the input was wrong. Messages follow scikit-learn's style: they name the parameter or the file
and line, and show the bad value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "QrelForgeError",
    "FormatError",
    "Problem",
    "MeasureError",
    "EvaluationError",
    "UndefinedMetricWarning",
    "quoted",
]


QUOTE_CHARS = 80


def quoted(value: Any, limit: int = QUOTE_CHARS) -> str:
    """``repr(value)`` for a message, cut to about ``limit`` characters.

    A hostile input's line or ID may be megabytes long: no message echoes more than this of it. Strings are
    cut before ``repr``, so the cost does not grow with the value.

    Args:
        value: any value.
        limit: about the most characters shown.

    Returns:
        The repr; a cut value ends in ``...`` and, for a str or bytes, says how long it was.

    >>> quoted("q1"), quoted("x" * 1000, 10)
    ("'q1'", "'xxxxxxxxxx'... (1000 characters)")
    """
    if isinstance(value, str | bytes) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value)} {'characters' if isinstance(value, str) else 'bytes'})"
    shown = repr(value)
    return shown if len(shown) <= limit + 2 else shown[:limit] + "..."


class QrelForgeError(ValueError):
    """Base class of every error raised by QrelForge on bad input."""


@dataclass(frozen=True)
class Problem:
    """One bad line of an input file: where it is, what it says, and what is wrong with it."""

    source: str
    line: int | None
    text: str
    reason: str
    unit: str = "line"

    def __str__(self) -> str:
        if self.line is None:
            where = self.source
        elif self.unit == "line":
            where = f"{self.source}:{self.line}"
        else:
            where = f"{self.source} {self.unit} {self.line}"
        return f"{where}: {self.reason}: {quoted(self.text)}"


class FormatError(QrelForgeError):
    """A file (or in-memory table) could not be read. ``problems`` lists every bad line found.

    The message shows the first problem, e.g. ``run.trec:3: expected 6 fields, got 5: 'q1 Q0 D1 1 0.5'``,
    and says how many more there are. Nothing from the file is returned when this is raised.
    """

    def __init__(self, problems: list[Problem] | Problem):
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        if not self.problems:
            raise TypeError("FormatError needs at least one problem")
        first = str(self.problems[0])
        more = len(self.problems) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        super().__init__(first + suffix)

    def __reduce__(self) -> tuple[type[FormatError], tuple[list[Problem]]]:
        """Pickle by the problems, not the message (errors cross process boundaries: Ray, multiprocessing)."""
        return (type(self), (self.problems,))

    @property
    def source(self) -> str:
        return self.problems[0].source

    @property
    def line(self) -> int | None:
        return self.problems[0].line


class MeasureError(QrelForgeError):
    """A measure name or parameter is unknown or invalid."""


class EvaluationError(QrelForgeError):
    """Qrels and run cannot be evaluated together (strict mode, unknown documents, bad arguments)."""


class UndefinedMetricWarning(UserWarning):
    """A statistic is undefined for this input (e.g. kappa when every rating is in one category)."""
