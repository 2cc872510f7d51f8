"""A judge's evidence located in the judged document's text.

Each quote is found with `metrics.passages.locate_quote` (exactly, then with whitespace and case normalized,
then fuzzily with rapidfuzz), keeping how and with what score; a quote found none of these ways is kept as
not located, with its text and no span, never given an invented one. Spans a replayed label gives as
offsets are checked as a human's are (`metrics.passages.check_spans`). The located spans, merged where they
overlap or touch, are the label's evidence passages: ``[start, end)`` code-point offsets into the text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["GIVEN", "QuoteEvidence", "JudgeEvidence", "locate_evidence", "merge_spans"]

GIVEN = "given"
"""The method of a span given as offsets (a replayed label's), not found from a quote."""


@dataclass(frozen=True)
class QuoteEvidence:
    """One piece of a judge's evidence: the quote (``""`` for a span given as offsets), where it is in the
    text (``start``, ``end``; None when not located), how it was found (``exact``, ``normalized``, ``fuzzy``,
    ``not_found`` as `metrics.passages.Method`, or `GIVEN`) and the match score (0-100; see
    `metrics.passages.QuoteMatch`)."""

    quote: str
    start: int | None
    end: int | None
    method: str
    score: float | None

    @property
    def located(self) -> bool:
        return self.start is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "quote": self.quote,
            "start": self.start,
            "end": self.end,
            "method": self.method,
            "score": self.score,
        }

    @classmethod
    def from_dict(cls, data: Any) -> QuoteEvidence:
        return cls(
            quote=str(data.get("quote") or ""),
            start=None if data.get("start") is None else int(data["start"]),
            end=None if data.get("end") is None else int(data["end"]),
            method=str(data.get("method") or ""),
            score=None if data.get("score") is None else float(data["score"]),
        )


@dataclass(frozen=True)
class JudgeEvidence:
    """A judge's evidence on one document version: ``spans``, the located passages merged (sorted,
    disjoint, not touching), and ``quotes``, each piece of evidence as given, in order, with where and how
    it was found."""

    spans: tuple[tuple[int, int], ...] = ()
    quotes: tuple[QuoteEvidence, ...] = ()

    @property
    def not_located(self) -> tuple[QuoteEvidence, ...]:
        return tuple(q for q in self.quotes if not q.located)


def merge_spans(spans: Iterable[Sequence[int]]) -> tuple[tuple[int, int], ...]:
    """Spans merged where they overlap or touch, sorted.

    >>> merge_spans([(10, 20), (0, 5), (15, 30), (5, 8)])
    ((0, 8), (10, 30))
    """
    merged: list[list[int]] = []
    for start, end in sorted((int(a), int(b)) for a, b in spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((a, b) for a, b in merged)


def locate_evidence(
    text: str,
    quotes: Iterable[str] = (),
    spans: Iterable[Sequence[int]] = (),
    *,
    min_score: float | None = None,
) -> JudgeEvidence:
    """The evidence of a judge's quotes and given spans in ``text`` (see the module doc).

    Args:
        text: the text of the judged document version.
        quotes: the judge's quotes; blank ones are skipped.
        spans: ``(start, end)`` spans given as offsets into ``text``.
        min_score: the lowest fuzzy score accepted (None: `locate_quote`'s default).

    Raises:
        metrics.passages.SpanError: a given span is empty, reversed, out of range or overlaps another; the
            message names it and the text's length.

    >>> text = "Charge it fully.  Then hold the Power button for ten seconds."
    >>> ev = locate_evidence(text, ["hold the power button", "Charge it fully.", "unplug the router"])
    >>> ev.spans
    ((0, 16), (23, 44))
    >>> [(q.method, round(q.score)) for q in ev.quotes]
    [('normalized', 100), ('exact', 100), ('not_found', 61)]
    """
    from metrics.passages import check_spans, locate_quote

    options = {} if min_score is None else {"min_score": min_score}
    found: list[QuoteEvidence] = []
    for quote in quotes:
        if not quote.strip():
            continue
        match = locate_quote(text, quote, **options)
        found.append(QuoteEvidence(quote, match.start, match.end, str(match.method), match.score))
    given = check_spans(list(spans), length=len(text))
    found += [QuoteEvidence("", a, b, GIVEN, None) for a, b in given]
    located = [(q.start, q.end) for q in found if q.start is not None and q.end is not None]
    return JudgeEvidence(spans=merge_spans(located), quotes=tuple(found))
