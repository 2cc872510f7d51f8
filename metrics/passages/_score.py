"""`score_chunk_run`: a chunk run scored against passages on any measure, the evidence measures included
(private; re-exported by `metrics.passages`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics.evaluate import Counts, Result, as_run, evaluate
from metrics.measures import Measure, parse_measures
from metrics.passages._chunk_qrels import check_min_overlap, qrels_of
from metrics.passages._evidence import chunk_rows, scores_of
from metrics.passages._inputs import load

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["score_chunk_run", "read_inputs"]

_PLACEHOLDER = (
    "NumRet"  # evaluated (and dropped) when only evidence measures are asked, for queries and counts
)


def read_inputs(passages: Any, chunks: Any, *, corpus: Any = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Passages and chunks as DataFrames, files read once (chunks given by text located in ``corpus``)."""
    from metrics.formats import read_chunks, read_passages

    if not hasattr(passages, "columns"):
        passages = read_passages(passages)
    if not hasattr(chunks, "columns"):
        chunks = read_chunks(chunks, corpus=corpus)
    return passages, chunks


def score_chunk_run(
    passages: Any,
    chunks: Any,
    run: Any,
    measures: Iterable[str | Measure] | str,
    *,
    min_overlap: float = 0.5,
    strict: bool = False,
    qrels: Any = None,
) -> Result:
    """Score a run of chunk IDs against passages, in one `metrics.evaluate.Result`.

    Every measure is scored on the chunk qrels (`chunk_qrels`), except the evidence measures
    (``EvidenceRecall@k``, ``EvidencePrecision@k``, ``EvidenceIoU@k``, any ``rel``), scored at the character
    level (`evidence_scores`).

    The evaluated queries are those of the passages; the counts (missing, extra, without relevant chunks)
    are those of the chunk qrels. An evidence measure is undefined (NaN) for a query without evidence of
    grade >= its ``rel``.

    Args:
        passages: a PASSAGES file or a DataFrame (``query_id``, ``doc_id``, ``start``, ``end``, ``grade``).
        chunks: a CHUNKS file with offsets or a DataFrame (``chunk_id``, ``doc_id``, ``start``, ``end``).
        run: a run of chunk IDs, anything `metrics.evaluate` takes.
        measures: measure names, e.g. ``["nDCG@10", "EvidenceRecall@5"]``.
        min_overlap: the F of `chunk_qrels`, in (0, 1].
        strict: queries missing from the run, or extra in it, are errors (as `metrics.evaluate.evaluate`).
        qrels: the chunk qrels when already derived (``chunk_qrels(passages, chunks, min_overlap=...)``),
            to score several runs without deriving them again.

    Returns:
        `metrics.evaluate.Result` with the measures in the order given.

    Raises:
        FormatError: bad passages or chunks.
        EvaluationError: a chunk of the run is not in ``chunks`` (a run made on another chunking).
        MeasureError: a bad measure name.
        QrelForgeError: ``min_overlap`` outside (0, 1].

    >>> import pandas as pd
    >>> p = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "start": [10], "end": [30], "grade": [1]})
    >>> c = pd.DataFrame({"chunk_id": ["a", "b"], "doc_id": ["d1", "d1"], "start": [0, 20], "end": [20, 40]})
    >>> score_chunk_run(p, c, {"q1": ["b", "a"]}, ["R@1", "EvidenceRecall@1"]).mean
    {'R@1': 0.5, 'EvidenceRecall@1': 0.5}
    """
    specs = parse_measures(measures)
    fraction = check_min_overlap(min_overlap)
    p, c = load(*read_inputs(passages, chunks))
    run = as_run(run)
    ranked = run.ranked()
    chunk_rows(ranked, c)  # every chunk of the run is one of the chunking
    if qrels is None:
        qrels = qrels_of(p, c, fraction)
    plain = [m for m in specs if not m.definition.requires]
    base = evaluate(qrels, run, plain or [_PLACEHOLDER], strict=strict)
    values = {str(m): base.values[str(m)] for m in plain}
    where = {q: i for i, q in enumerate(base.query_ids)}
    for rel in sorted({m.rel for m in specs if m.definition.requires}):
        wanted = [m for m in specs if m.definition.requires and m.rel == rel]
        scored = scores_of(p, c, ranked, tuple(sorted({int(m.cutoff or 1) for m in wanted})), rel)
        rows = np.fromiter((where[q] for q in scored.query_ids), dtype=np.intp, count=len(scored.query_ids))
        for m in wanted:
            aligned = np.full(len(base.query_ids), np.nan)
            aligned[rows] = scored.values[str(m)]
            values[str(m)] = aligned
    counts = Counts(**base.counts.to_dict())
    return Result(
        specs,
        base.query_ids,
        {str(m): values[str(m)] for m in specs},
        counts,
        name=base.name,
        missing=base.missing_queries,
        extra=base.extra_queries,
        no_relevant=base.no_relevant,
    )
