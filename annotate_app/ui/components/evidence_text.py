"""The text side of marking evidence, pure (no Streamlit): a document's sentences, marking and unmarking
passages, finding a browser selection in the text, and the document as inert Markdown with its passages,
the sentence under the cursor and the query terms highlighted.

Passages are ``(start, end)`` character offsets of the document's text (code points), kept sorted and
disjoint: marking a passage that overlaps or touches others merges them.

A browser selection arrives as its text and the number of non-space characters before it in the rendered
document (`locate_selection`): the rendering drops line breaks and Markdown escapes, so both sides are
compared without white space.

>>> sentences("One. Two!  Three")
[(0, 4), (5, 9), (11, 16)]
>>> mark([(0, 4)], (3, 9))
[(0, 9)]
>>> locate_selection("ab. ab.", "ab", 2)
(4, 6)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from annotate_app.ui.components.highlight import query_terms, spans
from annotate_app.ui.escape import escape_markdown

__all__ = [
    "sentences",
    "mark",
    "unmark",
    "toggle",
    "locate_selection",
    "to_markdown",
    "first_match",
    "window",
    "window_caption",
    "clip",
    "opening",
    "open_offset",
    "STYLES",
    "CHUNK",
]

Span = tuple[int, int]

_END = re.compile(r"[.!?。！？]+[\"')\]]*(?=\s|$)|\n+|(?<=[。！？])")

# what a stretch of text is → its highlight (Streamlit's background colours)
STYLES = {"marked": "green-background", "cursor": "blue-background", "both": "violet-background"}
_TERM = "orange-background"
CHUNK = "gray-background"  # the chunk a chunk-level run retrieved (under passages, cursor and query terms)


def sentences(text: str) -> list[Span]:
    """The sentences of ``text``: stretches ending at ``.``, ``!``, ``?`` (or their CJK forms) or a line
    break, without the white space around them."""
    out: list[Span] = []
    start = 0
    for m in _END.finditer(text):
        _add_trimmed(out, text, start, m.end())
        start = m.end()
    _add_trimmed(out, text, start, len(text))
    return out


def _add_trimmed(out: list[Span], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        out.append((start, end))


def mark(marks: Sequence[Span], span: Span) -> list[Span]:
    """``marks`` with ``span`` added; overlapping or touching passages merge."""
    start, end = span
    keep: list[Span] = []
    for a, b in marks:
        if b < start or a > end:
            keep.append((a, b))
        else:
            start, end = min(start, a), max(end, b)
    return sorted([*keep, (start, end)])


def unmark(marks: Sequence[Span], span: Span) -> list[Span]:
    """``marks`` without the passages that share a character with ``span``."""
    return [(a, b) for a, b in marks if b <= span[0] or a >= span[1]]


def toggle(marks: Sequence[Span], span: Span) -> list[Span]:
    """Unmark the passages ``span`` touches, if any; else mark ``span``."""
    left = unmark(marks, span)
    return left if len(left) != len(marks) else mark(marks, span)


def locate_selection(text: str, selected: str, before: int) -> Span | None:
    """Where a browser selection is in ``text``: the occurrence of ``selected`` (white space ignored on both
    sides) nearest to ``before`` non-space characters from the start; None if it occurs nowhere.

    Returns:
        ``(start, end)`` from the first to the last non-space character selected.
    """
    at = [i for i, c in enumerate(text) if not c.isspace()]
    squeezed = "".join(text[i] for i in at)
    wanted = "".join(c for c in selected if not c.isspace())
    if not wanted:
        return None
    found, position = [], squeezed.find(wanted)
    while position >= 0:
        found.append(position)
        position = squeezed.find(wanted, position + 1)
    if not found:
        return None
    best = min(found, key=lambda p: (abs(p - before), p))
    return at[best], at[best + len(wanted) - 1] + 1


def window(length: int, cursor: Span | None, size: int) -> Span:
    """The stretch ``[start, end)`` of a text of ``length`` characters that a card shows: all of it when it
    has at most ``size``, else a window of ``size`` characters starting at a multiple of ``size // 2``, the
    one holding the start of the ``cursor`` (the first without one).

    >>> window(100, (70, 80), 40), window(100, (95, 99), 40), window(100, None, 40), window(30, (20, 25), 40)
    ((60, 100), (60, 100), (0, 40), (0, 30))
    """
    if length <= size:
        return 0, length
    step = size // 2
    last = -(-(length - size) // step) * step  # the first multiple of step whose window reaches the end
    start = 0 if cursor is None else min(cursor[0] // step * step, last)
    return start, min(start + size, length)


def window_caption(start: int, end: int, length: int) -> str:
    """The note of the characters a window shows.

    >>> window_caption(20_000, 40_000, 174_000)
    'Characters 20,000–40,000 of 174,000'
    """
    return f"Characters {start:,}–{end:,} of {length:,}"


def clip(spans_: Sequence[Span], start: int, end: int) -> list[Span]:
    """The parts of ``spans_`` inside ``[start, end)``, as offsets from ``start``.

    >>> clip([(0, 5), (8, 20)], 4, 10)
    [(0, 1), (4, 6)]
    """
    return [(max(a, start) - start, min(b, end) - start) for a, b in spans_ if a < end and b > start]


def first_match(text: str, query: str) -> int | None:
    """The offset of the first query term in ``text``, or None."""
    found = spans(text, query_terms(query))
    return found[0][0] if found else None


def open_offset(text: str, query: str, chunk: Span | None) -> int | None:
    """The character a card opens at: the start of the retrieved ``chunk`` when there is one, else the first
    query term's (`first_match`), else None.

    >>> open_offset("One cat. Two dogs.", "dogs", None), open_offset("One cat.", "dogs", (4, 7))
    (13, 4)
    """
    return chunk[0] if chunk is not None else first_match(text, query)


def opening(found: Sequence[Span], text: str, query: str, chunk: Span | None) -> int:
    """The sentence (an index into ``found``, the text's `sentences`) a card opens at: the one the retrieved
    ``chunk`` starts in when there is one, else the one of the first query term, else the first.

    >>> found = sentences("One cat. Two dogs. Three birds.")
    >>> opening(found, "One cat. Two dogs. Three birds.", "birds", None), opening(found, "", "", (10, 17))
    (2, 1)
    """
    at = open_offset(text, query, chunk)
    return next((i for i, (_, b) in enumerate(found) if at is not None and at < b), 0)


def to_markdown(
    text: str, query: str, marks: Sequence[Span], cursor: Span | None = None, chunk: Span | None = None
) -> str:
    """``text`` as inert Markdown: passages, the cursor's sentence and (elsewhere) query terms highlighted,
    and under them the retrieved ``chunk`` (in `CHUNK`).

    >>> to_markdown("ab cd ef", "", [], chunk=(3, 5))
    'ab :gray-background[cd] ef'
    """
    terms = spans(text, query_terms(query))
    cuts = {0, len(text)}
    for a, b in [*marks, *terms, *([cursor] if cursor else []), *([chunk] if chunk else [])]:
        cuts.update((a, b))
    points = sorted(c for c in cuts if 0 <= c <= len(text))
    runs: list[tuple[str | None, int, int]] = []  # (style, start, end), neighbours of one style merged
    for a, b in zip(points, points[1:], strict=False):
        marked = any(x <= a and b <= y for x, y in marks)
        here = cursor is not None and cursor[0] <= a and b <= cursor[1]
        if marked or here:
            style = STYLES["both" if marked and here else "marked" if marked else "cursor"]
        elif any(x <= a and b <= y for x, y in terms):
            style = _TERM
        else:
            style = CHUNK if chunk is not None and chunk[0] <= a and b <= chunk[1] else None
        if runs and runs[-1][0] == style:
            runs[-1] = (style, runs[-1][1], b)
        else:
            runs.append((style, a, b))
    return "".join(_styled(text[a:b], style) for style, a, b in runs)


def _styled(piece: str, style: str | None) -> str:
    if style is None:
        return escape_markdown(piece)
    lines = piece.replace("\r\n", "\n").split("\n")
    return "  \n".join(
        f":{style}[{escape_markdown(line)}]" if line.strip() else escape_markdown(line) for line in lines
    )


OVERLAY = ("red-background", "blue-background", "green-background", "gray-background")  # one per annotator
BOTH = "violet-background"  # characters two or more annotators marked


def overlay_markdown(text: str, marks: Sequence[Sequence[Span]]) -> str:
    """``text`` as inert Markdown with each annotator's passages (``marks[i]``) in `OVERLAY` colour i, and the
    characters two or more of them marked in `BOTH`.

    >>> overlay_markdown("abcdef", [[(0, 3)], [(2, 5)]])
    ':red-background[ab]:violet-background[c]:blue-background[de]f'
    """
    cuts = {0, len(text)}
    for spans_ in marks:
        for a, b in spans_:
            cuts.update((a, b))
    points = sorted(c for c in cuts if 0 <= c <= len(text))
    out = []
    for a, b in zip(points, points[1:], strict=False):
        who = [i for i, spans_ in enumerate(marks) if any(x <= a and b <= y for x, y in spans_)]
        style = None if not who else BOTH if len(who) > 1 else OVERLAY[who[0] % len(OVERLAY)]
        out.append(_styled(text[a:b], style))
    return "".join(out)
