"""`evidence_scores`: a chunk run scored against passages character by character (private; re-exported by
`metrics.passages`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from metrics import _ids
from metrics.errors import EvaluationError, quoted
from metrics.evaluate import Counts, Result, as_run
from metrics.measures import REGISTRY
from metrics.passages import _intervals
from metrics.passages._inputs import Chunks, Passages, check_k, check_rel, load

__all__ = [
    "evidence_scores",
    "EvidenceResult",
    "EVIDENCE_MEASURES",
    "measure_name",
    "chunk_rows",
    "scores_of",
]

# The measures, as registered (`metrics.measures.REGISTRY`, ``requires="passages"``): recall, precision, IoU.
EVIDENCE_MEASURES = tuple(name for name, d in REGISTRY.items() if d.requires == "passages")


def measure_name(measure: str, k: int, rel: int = 1) -> str:
    """``EvidenceRecall@5``; the threshold shows when it is not the default: ``EvidenceRecall(rel=2)@5``.

    >>> measure_name("EvidenceIoU", 10, rel=2)
    'EvidenceIoU(rel=2)@10'
    """
    return f"{measure}{f'(rel={rel})' if rel != 1 else ''}@{k}"


class EvidenceResult(Result):
    """The evidence scores of one run: a `metrics.evaluate.Result` whose measures are the names of the
    evidence measures (``EvidenceRecall@5``, ...). ``mean[name]`` is the mean over the queries where the
    measure is defined (``n[name]`` of them; None when none), ``per_query`` a DataFrame indexed by query ID
    with NaN where undefined; ``counts.no_relevant`` counts the queries without evidence."""

    @property
    def mean(self) -> dict[str, float | None]:
        return {k: (float(np.nanmean(v)) if (~np.isnan(v)).any() else None) for k, v in self.values.items()}

    def take(self, rows: np.ndarray) -> EvidenceResult:
        """The result restricted to the queries at positions ``rows`` (as `metrics.evaluate.Result.take`)."""
        part = super().take(rows)
        return EvidenceResult(
            part.measures,
            part.query_ids,
            part.values,
            part.counts,
            name=part.name,
            missing=part.missing_queries,
            extra=part.extra_queries,
            no_relevant=part.no_relevant,
        )


def evidence_scores(
    passages: Any, chunks: Any, run: Any, *, k: int | Sequence[int] = (1, 3, 5, 10), rel: int = 1
) -> EvidenceResult:
    """Score a chunk run at the character level against the passages of grade >= ``rel``.

    Per query, with E the union of its evidence characters and T the union of the characters of the run's
    top-k chunks (both over all documents)::

        EvidenceRecall@k    = |E ∩ T| / |E|
        EvidencePrecision@k = |E ∩ T| / |T|    (0 when the run returned nothing)
        EvidenceIoU@k       = |E ∩ T| / |E ∪ T|

    A query without evidence (no passage of grade >= ``rel``) leaves all three undefined (NaN), as R@k is
    without relevant documents. The evaluated queries are those of the passages; a query missing from the
    run scores 0; run queries without passages are ignored and counted. The run is ranked as trec_eval ranks
    (score descending, then chunk ID descending).

    Args:
        passages: a PASSAGES file or a DataFrame (``query_id``, ``doc_id``, ``start``, ``end``, ``grade``).
        chunks: a CHUNKS file with offsets or a DataFrame (``chunk_id``, ``doc_id``, ``start``, ``end``).
        run: a run of chunk IDs, anything `metrics.evaluate` takes.
        k: one cutoff or several.
        rel: the lowest grade that counts as evidence.

    Returns:
        `EvidenceResult`; measure names as ``EvidenceRecall@5`` (``EvidenceRecall(rel=2)@5``).

    Raises:
        FormatError: bad passages or chunks. EvaluationError: a chunk of the run is not in ``chunks``.
        QrelForgeError: a bad ``k`` or ``rel``.

    >>> import pandas as pd
    >>> p = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "start": [10], "end": [30], "grade": [1]})
    >>> c = pd.DataFrame({"chunk_id": ["a", "b"], "doc_id": ["d1", "d1"], "start": [0, 20], "end": [20, 40]})
    >>> evidence_scores(p, c, {"q1": ["b", "a"]}, k=1).mean  # T = [20, 40): 10 of E's 20, 10 of T's 20
    {'EvidenceRecall@1': 0.5, 'EvidencePrecision@1': 0.5, 'EvidenceIoU@1': 0.3333333333333333}
    """
    cutoffs, rel = check_k(k), check_rel(rel)
    p, c = load(passages, chunks)
    return scores_of(p, c, as_run(run).ranked(), cutoffs, rel)


def scores_of(p: Passages, c: Chunks, ranked: Any, cutoffs: tuple[int, ...], rel: int) -> EvidenceResult:
    """`evidence_scores` of passages and chunks already loaded (`metrics.passages._inputs.load`) and a
    ranked run (``Run.ranked()``), with checked cutoffs and ``rel``."""
    query, rows, position = _run_rows(ranked, c, p.queries)
    n_queries, n_docs = len(p.queries), int(max(p.doc.max(initial=-1), c.doc.max(initial=-1))) + 1
    evidence = p.grade >= rel
    values: dict[str, np.ndarray] = {}
    size_e = np.zeros(n_queries, dtype=np.int64)
    for cutoff in cutoffs:
        top = rows[position < cutoff]
        e_pair, t_pair, pair_query = _pair_codes(
            n_docs, (p.query[evidence], p.doc[evidence]), (query[position < cutoff], c.doc[top])
        )
        per_pair = _intervals.coverage(
            len(pair_query),
            (e_pair, p.start[evidence], p.end[evidence]),
            (t_pair, c.start[top], c.end[top]),
        )
        size_e, size_t, both = (_by_query(pair_query, a, n_queries) for a in per_pair)
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = (
                both / size_e,
                np.where(size_t > 0, both / np.maximum(size_t, 1), 0.0),
                both / (size_e + size_t - both),
            )
        for measure, score in zip(EVIDENCE_MEASURES, scores, strict=True):
            values[measure_name(measure, cutoff, rel)] = np.where(size_e > 0, score, np.nan)
    answered = np.zeros(n_queries, dtype=bool)
    answered[query] = True
    known = {q: i for i, q in enumerate(p.queries)}
    for q in ranked.empty_queries:
        if q in known:
            answered[known[q]] = True
    run_queries = set(ranked.query_codes()[1].to_pylist()) | set(ranked.empty_queries)
    missing = [q for q, seen in zip(p.queries, answered, strict=True) if not seen]
    extra = sorted(run_queries - set(p.queries))
    counts = Counts(
        evaluated=n_queries, missing=len(missing), extra=len(extra), no_relevant=int((size_e == 0).sum())
    )
    return EvidenceResult(
        [measure_name(m, cutoff, rel) for m in EVIDENCE_MEASURES for cutoff in cutoffs],  # type: ignore[misc]
        list(p.queries),
        values,
        counts,
        name=ranked.name,
        missing=missing,
        extra=extra,
        no_relevant=size_e == 0,
    )


def _pair_codes(
    n_docs: int, e: tuple[np.ndarray, np.ndarray], t: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense codes of the (query, document) pairs of E's and T's intervals (the groups of the interval
    arithmetic), and the query of each pair."""
    keys = np.concatenate([e[0] * n_docs + e[1], t[0] * n_docs + t[1]]).astype(np.int64)
    distinct, code = np.unique(keys, return_inverse=True)
    return code[: len(e[0])], code[len(e[0]) :], distinct // n_docs


def _by_query(pair_query: np.ndarray, per_pair: np.ndarray, n_queries: int) -> np.ndarray:
    return np.rint(np.bincount(pair_query, weights=per_pair, minlength=n_queries)).astype(np.int64)


def chunk_rows(ranked: Any, c: Chunks) -> np.ndarray:
    """The row in ``c`` of the chunk of each row of the ranked run.

    Raises:
        EvaluationError: a chunk of the run is not in the chunking, naming the first one.
    """
    at = _ids.lookup(ranked.doc_id, c.ids)
    if (at < 0).any():
        row = int(np.flatnonzero(at < 0)[0])
        raise EvaluationError(
            f"{ranked.source}: chunk {quoted(ranked.doc_id[row].as_py())} of query "
            f"{quoted(ranked.query_id[row].as_py())} is not in the chunks "
            f"({int((at < 0).sum())} unknown in all)"
        )
    return at


def _run_rows(ranked: Any, c: Chunks, queries: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the run rows of evaluated queries: (query code, chunk row, 0-based rank within the query)."""
    at = chunk_rows(ranked, c)
    codes, distinct = ranked.query_codes()
    to_passage = _ids.lookup(distinct, queries)
    query = to_passage[codes].astype(np.int64) if len(codes) else np.zeros(0, np.int64)
    position = _ids.position_within(codes)
    keep = query >= 0
    return query[keep], at[keep].astype(np.int64), position[keep]
