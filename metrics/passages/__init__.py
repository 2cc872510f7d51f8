"""Evidence passages: the characters of a document that answer a query, and what they say about chunks.

A passage is ``[start, end)`` in code points of one document version, with a grade. From passages: qrels for
any chunking, chunk runs scored character by character, chunkings compared before retrieval, spans carried
to a new text version, a judge's quote located. Import from here; the private modules load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics._lazy import lazy_exports

if TYPE_CHECKING:
    from metrics.passages._chunk_qrels import chunk_qrels
    from metrics.passages._chunkers import compare_chunkers, perfect_evidence_recall
    from metrics.passages._evidence import EVIDENCE_MEASURES, EvidenceResult, evidence_scores
    from metrics.passages._locate import Method, QuoteMatch, locate_quote
    from metrics.passages._score import score_chunk_run
    from metrics.passages._spans import CarriedSpan, Carry, SpanError, carry_spans, check_spans

_HOMES = {
    **dict.fromkeys(["chunk_qrels"], "metrics.passages._chunk_qrels"),
    **dict.fromkeys(["compare_chunkers", "perfect_evidence_recall"], "metrics.passages._chunkers"),
    **dict.fromkeys(["EVIDENCE_MEASURES", "EvidenceResult", "evidence_scores"], "metrics.passages._evidence"),
    **dict.fromkeys(["Method", "QuoteMatch", "locate_quote"], "metrics.passages._locate"),
    **dict.fromkeys(["score_chunk_run"], "metrics.passages._score"),
    **dict.fromkeys(
        ["Carry", "CarriedSpan", "SpanError", "carry_spans", "check_spans"], "metrics.passages._spans"
    ),
}

__all__ = [
    "check_spans",
    "SpanError",
    "carry_spans",
    "CarriedSpan",
    "Carry",
    "chunk_qrels",
    "evidence_scores",
    "EvidenceResult",
    "EVIDENCE_MEASURES",
    "score_chunk_run",
    "perfect_evidence_recall",
    "compare_chunkers",
    "locate_quote",
    "QuoteMatch",
    "Method",
]

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
