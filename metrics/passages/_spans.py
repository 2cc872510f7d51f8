"""The spans of one document version: `check_spans` refuses bad ones, `carry_spans` moves them to a new
version of the text (private; re-exported by `metrics.passages`).

A span is ``[start, end)``: character offsets into the version's ``text``, Python ``str`` indices (code
points, not bytes or UTF-16 units), start included, end excluded.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from metrics._choice import Choice
from metrics.errors import QrelForgeError, quoted

__all__ = ["SpanError", "check_spans", "carry_spans", "CarriedSpan", "Carry", "shown_span"]


class SpanError(QrelForgeError):
    """A span is not a valid ``[start, end)`` of its document: empty, reversed, out of range, overlapping
    another, or not made of two ints. The message names the span and the document length."""


def shown_span(start: object, end: object) -> str:
    """``[3, 9)``: how messages show a span."""
    return f"[{start}, {end})"


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def check_spans(spans: Iterable[Sequence[int]], *, length: int) -> list[tuple[int, int]]:
    """The spans of one document, checked and sorted by start.

    Each span is a pair ``(start, end)`` of ints with ``0 <= start < end <= length``; no two spans share a
    character (``[0, 5)`` and ``[5, 9)`` touch and are fine).

    Args:
        spans: pairs ``(start, end)``, in any order.
        length: the document's length in characters (``len(text)``).

    Returns:
        The spans as ``(start, end)`` tuples of plain ints, sorted by start.

    Raises:
        SpanError: naming the first bad span and the document length, e.g.
            ``spans [2, 6) and [5, 9) overlap (document length 10)``.

    >>> check_spans([(5, 9), (0, 5)], length=10)
    [(0, 5), (5, 9)]
    """
    if not _is_int(length) or length < 0:
        raise SpanError(f"length must be an int >= 0; got {quoted(length)}")
    checked = []
    for span in spans:
        start, end = _pair(span, length)
        if end < start:
            raise SpanError(f"span {shown_span(start, end)} ends before it starts (document length {length})")
        if end == start:
            raise SpanError(f"span {shown_span(start, end)} is empty (document length {length})")
        if start < 0 or end > length:
            raise SpanError(f"span {shown_span(start, end)} is out of range (document length {length})")
        checked.append((int(start), int(end)))
    checked.sort()
    for (s1, e1), (s2, e2) in zip(checked, checked[1:], strict=False):
        if s2 < e1:
            raise SpanError(
                f"spans {shown_span(s1, e1)} and {shown_span(s2, e2)} overlap (document length {length})"
            )
    return checked


def _pair(span: object, length: int) -> tuple[int, int]:
    if isinstance(span, str | bytes) or not isinstance(span, Sequence) or len(span) != 2:
        raise SpanError(f"a span must be a pair (start, end); got {quoted(span)} (document length {length})")
    start, end = span
    for name, value in (("start", start), ("end", end)):
        if not _is_int(value):
            raise SpanError(
                f"span {name} must be an int; got {quoted(value)} in span {shown_span(start, end)} "
                f"(document length {length})"
            )
    return int(start), int(end)


class Carry(Choice):
    """What became of a span when its document got a new version (`carry_spans`)."""

    CARRIED = "carried"  # its text occurs exactly once in the new version: the span moved there
    MISSING = "missing"  # stale: its text does not occur in the new version
    AMBIGUOUS = "ambiguous"  # stale: its text occurs more than once; which one is meant is unknown


@dataclass(frozen=True)
class CarriedSpan:
    """One span of the old version and where it is in the new one.

    ``start`` and ``end`` are the offsets in the new version when ``status`` is ``carried``, else None (the
    span is stale and must be marked again).
    """

    old_start: int
    old_end: int
    status: Carry
    start: int | None = None
    end: int | None = None

    @property
    def stale(self) -> bool:
        return self.status != Carry.CARRIED


def carry_spans(old_text: str, new_text: str, spans: Iterable[Sequence[int]]) -> list[CarriedSpan]:
    """Carry each span of ``old_text`` to ``new_text``: to the only place where its text occurs, or nowhere.

    The text of a span, ``old_text[start:end]``, is looked for in ``new_text`` exactly (case, whitespace and
    all). Found exactly once (overlapping occurrences count: ``"aa"`` occurs twice in ``"aaa"``), the span
    moves there; found nowhere or more than once, it is stale (`Carry.MISSING`, `Carry.AMBIGUOUS`).

    Args:
        old_text: the text the spans index.
        new_text: the new version's text.
        spans: pairs ``(start, end)`` valid for ``old_text`` (checked as `check_spans` does).

    Returns:
        One `CarriedSpan` per span, in the order of the spans given.

    Raises:
        SpanError: a span is not valid for ``old_text``.

    >>> [(c.status, c.start, c.end) for c in carry_spans("a cat sat", "the cat sat", [(2, 5), (0, 1)])]
    [('carried', 4, 7), ('ambiguous', None, None)]
    """
    for name, value in (("old_text", old_text), ("new_text", new_text)):
        if not isinstance(value, str):
            raise SpanError(f"{name} must be a str; got {type(value).__name__}")
    spans = list(spans)
    check_spans(spans, length=len(old_text))
    out = []
    for start, end in spans:
        piece = old_text[start:end]
        first = new_text.find(piece)
        if first < 0:
            out.append(CarriedSpan(start, end, Carry.MISSING))
        elif new_text.find(piece, first + 1) >= 0:
            out.append(CarriedSpan(start, end, Carry.AMBIGUOUS))
        else:
            out.append(CarriedSpan(start, end, Carry.CARRIED, first, first + len(piece)))
    return out
