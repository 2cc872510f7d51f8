"""Evidence passages: the characters of a document that answer a query, and what they say about chunks.

A passage is ``[start, end)``, character offsets into one version of a document's text (Python ``str``
indices: code points), with a grade. From passages this package derives qrels for any chunking of the
documents, scores chunk runs character by character, compares chunkings before retrieval, carries spans to a
new version of a text, and finds a judge's quote in a document. Agreement between annotators' spans
(Krippendorff's unitizing alpha, the character-overlap F1) lives in `metrics.agreement`; reading and writing
PASSAGES and CHUNKS files in `metrics.formats` (`read_passages`, `write_passages`, `read_chunks`).

What it may import: numpy, pandas, pyarrow (through `metrics._lazy`), rapidfuzz (in `locate_quote` only),
`metrics.errors`, `metrics._ids`, `metrics._choice`, `metrics.data`, `metrics.evaluate` and
`metrics.formats`; never the app. Its private modules, re-exported here (import from `metrics.passages`):

- `metrics.passages._spans`: one document's spans (`check_spans`, `SpanError`; `carry_spans`,
  `CarriedSpan`, `Carry`);
- `metrics.passages._intervals`: vectorized interval arithmetic (unions, coverage sweeps, overlapping
  pairs), shared with `metrics.agreement`;
- `metrics.passages._inputs`: passages and chunks as validated columns;
- `metrics.passages._chunk_qrels`: `chunk_qrels`;
- `metrics.passages._evidence`: `evidence_scores`, `EvidenceResult`, `EVIDENCE_MEASURES`;
- `metrics.passages._score`: `score_chunk_run` (any measure, the evidence measures included);
- `metrics.passages._chunkers`: `perfect_evidence_recall`, `compare_chunkers`;
- `metrics.passages._locate`: `locate_quote`, `QuoteMatch`, `Method`.

The modules are imported on first use of a name, so that `metrics.agreement` can use the interval arithmetic
without loading the rest.
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
