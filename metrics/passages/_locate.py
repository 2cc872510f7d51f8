"""`locate_quote`: where a quote (a judge's evidence) is in a document, exactly, after normalizing, or
fuzzily; never invented (private; re-exported by `metrics.passages`)."""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass

from metrics._choice import Choice
from metrics.errors import QrelForgeError, quoted

__all__ = ["locate_quote", "QuoteMatch", "Method", "DEFAULT_MIN_SCORE"]

DEFAULT_MIN_SCORE = 90.0
_WORDS = re.compile(r"\S+")


class Method(Choice):
    """How a quote was found in the text."""

    EXACT = "exact"  # the quote occurs as given
    NORMALIZED = "normalized"  # it occurs once whitespace runs are one space and case is folded
    FUZZY = "fuzzy"  # its best fuzzy alignment scores at least min_score
    NOT_FOUND = "not_found"  # none of these: no span is given


@dataclass(frozen=True)
class QuoteMatch:
    """Where a quote is: ``[start, end)`` in the original text, how it was found, and the match score (100
    for exact and normalized matches; the rapidfuzz ``partial_ratio`` for fuzzy ones, and for a quote not
    found the best score seen, or None when the text was never compared)."""

    start: int | None
    end: int | None
    method: Method
    score: float | None

    @property
    def found(self) -> bool:
        return self.method != Method.NOT_FOUND


def locate_quote(text: str, quote: str, *, min_score: float = DEFAULT_MIN_SCORE) -> QuoteMatch:
    """Find ``quote`` in ``text``: exactly first, then after normalizing, then fuzzily.

    1. exact: the first occurrence of ``quote``;
    2. normalized: the first occurrence once both have every run of whitespace made one space, the ends
       stripped, and case folded (``str.casefold``);
    3. fuzzy: rapidfuzz's best ``partial_ratio`` alignment of the normalized quote in the normalized text (a
       window as long as the quote), whose ends are then moved by up to a tenth of the quote's length (at
       most 32 characters) to where ``fuzz.ratio`` of quote and window is highest; kept when that score
       (0-100) is at least ``min_score``.

    Offsets are always into the original ``text`` (``text[start:end]`` is the matched piece, its first to
    its last matched character), whatever normalizing did to the lengths. A quote found none of these ways
    is `Method.NOT_FOUND`, without a span.

    Args:
        text: the document's text.
        quote: the quote to find (not empty, not only whitespace).
        min_score: the lowest fuzzy score accepted, in [0, 100].

    Returns:
        `QuoteMatch`.

    Raises:
        QrelForgeError: ``text`` or ``quote`` is not a str, the quote is blank, ``min_score`` is outside
            [0, 100].

    >>> text = "The  Quick brown fox."
    >>> locate_quote(text, "quick brown")
    QuoteMatch(start=5, end=16, method='normalized', score=100.0)
    >>> m = locate_quote(text, "quick brwn fox")
    >>> m.method, text[m.start:m.end], round(m.score, 1)
    ('fuzzy', 'Quick brown fox', 96.6)
    """
    if not isinstance(text, str):
        raise QrelForgeError(f"text must be a str; got {type(text).__name__}")
    if not isinstance(quote, str) or not quote.strip():
        raise QrelForgeError(f"quote must be a non-blank str; got {quoted(quote)}")
    if isinstance(min_score, bool) or not isinstance(min_score, numbers.Real) or not 0 <= min_score <= 100:
        raise QrelForgeError(f"min_score must be a number in [0, 100]; got {quoted(min_score)}")
    at = text.find(quote)
    if at >= 0:
        return QuoteMatch(at, at + len(quote), Method.EXACT, 100.0)
    norm_text, origin = _normalize(text)
    norm_quote, _ = _normalize(quote)
    at = norm_text.find(norm_quote)
    if at >= 0:
        return QuoteMatch(*_original(origin, at, at + len(norm_quote)), Method.NORMALIZED, 100.0)
    if not norm_text:
        return QuoteMatch(None, None, Method.NOT_FOUND, None)
    from rapidfuzz import fuzz

    found = fuzz.partial_ratio_alignment(norm_quote, norm_text)
    if found is None or found.dest_end <= found.dest_start:
        return QuoteMatch(None, None, Method.NOT_FOUND, float(found.score) if found else 0.0)
    score, begin, stop = _refine(norm_quote, norm_text, found.dest_start, found.dest_end)
    if score < min_score:
        return QuoteMatch(None, None, Method.NOT_FOUND, score)
    start, end = _original(origin, begin, stop)
    return QuoteMatch(start, end, Method.FUZZY, score)


def _refine(quote: str, text: str, start: int, end: int) -> tuple[float, int, int]:
    """The window near ``[start, end)`` whose ``fuzz.ratio`` with the quote is highest (the nearest such
    window on ties): (score, start, end)."""
    from rapidfuzz import fuzz

    reach = min(max(len(quote) // 10, 1), 32)
    best = (-1.0, 0, start, end)
    for s in range(max(start - reach, 0), min(start + reach, len(text)) + 1):
        for e in range(max(end - reach, s + 1), min(end + reach, len(text)) + 1):
            score = fuzz.ratio(quote, text[s:e])
            key = (score, -(abs(s - start) + abs(e - end)), s, e)
            if key[:2] > best[:2]:
                best = key
    return float(best[0]), best[2], best[3]


def _normalize(text: str) -> tuple[str, list[int]]:
    """The text with whitespace runs made one space, ends stripped and case folded, and for each of its
    characters the index of the original character it came from."""
    pieces: list[str] = []
    origin: list[int] = []
    for word in _WORDS.finditer(text):
        if pieces:
            pieces.append(" ")
            origin.append(word.start() - 1)
        folded = word.group().casefold()
        if len(folded) == len(word.group()):
            origin.extend(range(word.start(), word.end()))
            pieces.append(folded)
        else:  # a character that folds to several (ß -> ss): each of them maps to it
            for offset, char in enumerate(word.group()):
                expanded = char.casefold()
                pieces.append(expanded)
                origin.extend([word.start() + offset] * len(expanded))
    return "".join(pieces), origin


def _original(origin: list[int], start: int, end: int) -> tuple[int, int]:
    """The original span of normalized characters ``[start, end)``: from the first one's source to just after
    the last one's."""
    return origin[start], origin[end - 1] + 1
