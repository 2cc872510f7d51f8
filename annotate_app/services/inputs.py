"""Checks shared by the services for free-form arguments: text they store or look up, and integer ids.

Text must be a ``str`` with no NUL and no lone surrogate; everything else is kept as given (data, never
code). Integers are real ``int`` in a stated range, at most 2**31 - 1 (PostgreSQL's 4-byte columns).

>>> check_text("it's 100% \\\\ =SUM(A1)", "reason")
"it's 100% \\\\ =SUM(A1)"
>>> check_text("a\\x00b", "reason")
Traceback (most recent call last):
...
annotate_app.services.errors.InvalidInput: reason contains a NUL character (U+0000); got 'a\\x00b'
>>> check_int(2**31, "pair_id")
Traceback (most recent call last):
...
annotate_app.services.errors.InvalidInput: pair_id must be an int in [1, 2147483647]; got 2147483648
"""

from __future__ import annotations

import re
from typing import Any

from annotate_app.services.errors import InvalidInput
from annotate_app.store.db import MAX_ID, unstorable

__all__ = [
    "check_text",
    "check_int",
    "check_count",
    "check_reason",
    "check_length",
    "check_request_id",
    "cut",
    "MAX_INT",
    "MAX_REASON",
]

MAX_INT = MAX_ID
MAX_REASON = 10_000
"""The most characters of a reason or note a person writes, wherever it comes from: a label saved or
imported, a skip, an adjudication, a machine judge's label, a pair's exclusion reason, a pair's note in the
pool, a release's note and justification."""


def check_text(value: Any, what: str) -> str:
    """``value`` if it is a storable str; else InvalidInput naming ``what`` and the (shortened) value."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string; got {type(value).__name__}")
    reason = unstorable(value)
    if reason:
        raise InvalidInput(f"{what} {reason}; got {value[:40]!r}")
    return value


def check_int(
    value: Any, what: str, low: int = 1, high: int = MAX_INT, *, optional: bool = False
) -> int | None:
    """``value`` if it is an int (not a bool) in ``[low, high]`` (or None when ``optional``)."""
    if optional and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        shown = str(value)[:60] if isinstance(value, int) else repr(value)[:60]
        raise InvalidInput(
            f"{what} must be an int in [{low}, {high}]{' or None' if optional else ''}; got {shown}"
        )
    return value


def check_count(value: Any, what: str, low: int = 1, *, optional: bool = False) -> int | None:
    """``value`` if it is an int (not a bool) of at least ``low`` (and at most `MAX_INT`), or None when
    ``optional``: for limits, offsets, depths and the like.

    >>> check_count("x", "offset", 0)
    Traceback (most recent call last):
    ...
    annotate_app.services.errors.InvalidInput: offset must be an int >= 0; got 'x'
    """
    if optional and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidInput(
            f"{what} must be an int >= {low}{' or None' if optional else ''}; got {value!r:.60}"
        )
    return check_int(value, what, low, optional=optional)


def check_reason(reason: Any, minimum: int, what: str = "reason") -> str:
    """The stripped reason, if it has at least ``max(minimum, 1)`` characters (and at most `MAX_REASON`).

    >>> check_reason("  too short ", 20)
    Traceback (most recent call last):
    ...
    annotate_app.services.errors.InvalidInput: reason must have at least 20 characters; got 9
    """
    text, required = check_text(reason, what).strip(), max(minimum, 1)
    if len(text) < required:
        raise InvalidInput(f"{what} must have at least {required} characters; got {len(text)}")
    return check_length(text, what)


def check_length(text: str, what: str, limit: int = MAX_REASON) -> str:
    """``text`` if it has at most ``limit`` characters (by default `MAX_REASON`); else InvalidInput naming
    ``what`` and the length.

    >>> check_length("x" * 10_001, "reason")
    Traceback (most recent call last):
    ...
    annotate_app.services.errors.InvalidInput: reason must have at most 10000 characters; got 10001
    """
    if len(text) > limit:
        raise InvalidInput(f"{what} must have at most {limit} characters; got {len(text)}")
    return text


_CUT_NOTE = re.compile(r"… \(cut: ([0-9,]+) characters\)\Z")


def cut(text: str, limit: int, *, length: int | None = None) -> str:
    """``text`` if it has at most ``limit`` characters; else its beginning and a note of its length, in
    ``limit`` characters at most (at least the note): what is shown (or kept) of a text that may be huge.
    ``length``: the length of the whole text when ``text`` is only its beginning (at least ``limit``
    characters of it, read cut from the database), for the same result as on the whole text. A text cut
    before (ending with the note) cut again keeps the whole text's length in its note.

    >>> cut("0123456789" * 10, 40)
    '01234567890123456… (cut: 100 characters)'
    >>> cut("0123456789" * 4, 40, length=100)
    '01234567890123456… (cut: 100 characters)'
    >>> cut(cut("0123456789" * 10, 60), 40)
    '01234567890123456… (cut: 100 characters)'
    """
    whole = len(text) if length is None else length
    if whole <= limit:
        return text
    if length is None and (told := _CUT_NOTE.search(text)):
        whole, text = int(told[1].replace(",", "")), text[: told.start()]
    note = f"… (cut: {whole:,} characters)"
    return text[: max(limit - len(note), 0)] + note


_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def check_request_id(value: Any) -> str | None:
    """A client's idempotency key of a save: None, or 1 to 64 characters of A-Z a-z 0-9 ``. _ : -`` (a UUID
    fits).

    >>> check_request_id("7f1c-2a"), check_request_id(None)
    ('7f1c-2a', None)
    """
    if value is None:
        return None
    if not isinstance(value, str) or not _REQUEST_ID.fullmatch(value):
        raise InvalidInput(
            f"request_id must be None or 1 to 64 characters of A-Z a-z 0-9 . _ : -; got {value!r:.80}"
        )
    return value
