"""Which strings can be IDs: non-empty, at most `MAX_ID_BYTES` bytes, no space, tab or line break."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from metrics._ids._columns import Strings, _chunks, as_strings, to_numpy
from metrics._lazy import lazy
from metrics.errors import quoted

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    pa = lazy("pyarrow")
    pc = lazy("pyarrow.compute")


# A space, a tab, or anything `str.splitlines` breaks a line at (CR, LF, vertical tab, form feed, the
# file, group and record separators, NEL, U+2028 and U+2029): such an ID could not be written to a TREC
# file and read back as the same ID.
BAD_ID_CHARS = re.compile("[ \t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_BAD_ID_RE2 = r"[ \t\n\r\x0b\x0c\x1c-\x1e\x{85}\x{2028}\x{2029}]"
MAX_ID_BYTES = 512


def id_problem(value: str, what: str) -> str | None:
    """Why ``value`` cannot be an ID (``what`` names it in the message), or None.

    >>> id_problem("D1", "doc_id"), id_problem("a\x0bb", "doc_id")
    (None, "doc_id must not contain spaces, tabs or line breaks; got 'a\\\\x0bb'")
    """
    if not value:
        return f"{what} must be a non-empty string; got {value!r}"
    size = len(value.encode("utf-8", "surrogatepass")) if len(value) * 4 > MAX_ID_BYTES else 0
    if size > MAX_ID_BYTES:
        return f"{what} is longer than {MAX_ID_BYTES} bytes ({size} bytes)"
    if BAD_ID_CHARS.search(value):
        return f"{what} must not contain spaces, tabs or line breaks; got {quoted(value)}"
    return None


def invalid_id_rows(values: Strings) -> np.ndarray:
    """Rows whose ID is empty, longer than `MAX_ID_BYTES` or holds a space, tab or line break (it could not be
    written to a TREC file and read back)."""
    values = as_strings(values)
    length = pc.binary_length(values)
    bad = pc.or_(
        pc.or_(pc.equal(length, 0), pc.greater(length, MAX_ID_BYTES)),
        pc.match_substring_regex(values, _BAD_ID_RE2),
    )
    return np.flatnonzero(to_numpy(bad.fill_null(True) if bad.null_count else bad))


def longest(values: Strings) -> int:
    """The length in bytes of the longest ID (0 for none), from the offsets, a chunk at a time."""
    most = 0
    for chunk in _chunks(values):
        if len(chunk):
            offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[
                chunk.offset : chunk.offset + len(chunk) + 1
            ]
            most = max(most, int(np.diff(offsets).max()))
    return most
