"""Comparing chunkings before any retrieval: how much evidence a perfect retriever could reach with k chunks
of each, how many chunks a passage spreads over, how long chunks are (private; re-exported by
`metrics.passages`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics.errors import QrelForgeError
from metrics.passages import _intervals
from metrics.passages._evidence import measure_name
from metrics.passages._inputs import Chunks, Passages, check_k, check_rel, load

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["perfect_evidence_recall", "compare_chunkers"]


def perfect_evidence_recall(
    passages: Any, chunks: Any, *, k: int | Sequence[int] = (1, 3, 5, 10), rel: int = 1
) -> pd.DataFrame:
    """The evidence recall a perfect retriever reaches with k chunks, per query.

    The perfect retriever returns, for each query, the k chunks (of any documents) whose union covers the
    most evidence characters E (passages of grade >= ``rel``); its value is ``max |E ∩ (c1 ∪ ... ∪ ck)| /
    |E|``, the best `evidence_scores` ``EvidenceRecall@k`` any run over these chunks can reach.

    When no two chunks overlap, the best k are simply the k holding the most evidence characters. When they
    overlap (sliding windows), taking chunks greedily by evidence covered is not always best: with E =
    [0, 10) and chunks [2, 8), [0, 5), [5, 10), greedy takes [2, 8) and then covers 8 characters with two
    chunks, where [0, 5) and [5, 10) cover all 10. The value here is exact in both cases: a chunk inside
    another is never needed, the rest ordered by start also end in order, and the evidence covered by a
    chain c1 < ... < cj is Σ |E ∩ ci| − Σ |E ∩ ci ∩ ci+1|, which a dynamic program over (chunk, j)
    maximizes; the range maxima it needs are vectorized (sparse tables), so it runs over all queries at once.

    Args:
        passages, chunks: as `chunk_qrels` takes them.
        k: one cutoff or several.
        rel: the lowest grade that counts as evidence.

    Returns:
        A DataFrame indexed by query ID: ``evidence`` (|E|, characters) and ``EvidenceRecall@k`` for each k
        (NaN for a query without evidence).

    >>> import pandas as pd
    >>> p = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "start": [0], "end": [10], "grade": [1]})
    >>> c = pd.DataFrame({"chunk_id": ["m", "l", "r"], "doc_id": ["d"] * 3,
    ...                   "start": [2, 0, 5], "end": [8, 5, 10]})
    >>> perfect_evidence_recall(p, c, k=[1, 2]).to_dict("records")
    [{'evidence': 10, 'EvidenceRecall@1': 0.6, 'EvidenceRecall@2': 1.0}]
    """
    import pandas as pd

    cutoffs, rel = check_k(k), check_rel(rel)
    p, c = load(passages, chunks)
    size, best = _best_cover(p, c, cutoffs, rel)
    frame = pd.DataFrame({"evidence": size}, index=pd.Index(p.queries, name="query_id"))
    with np.errstate(divide="ignore", invalid="ignore"):
        for i, cutoff in enumerate(cutoffs):
            frame[measure_name("EvidenceRecall", cutoff, rel)] = np.where(size > 0, best[:, i] / size, np.nan)
    return frame


def compare_chunkers(
    passages: Any, chunkings: Mapping[str, Any], *, k: int | Sequence[int] = (1, 3, 5, 10), rel: int = 1
) -> pd.DataFrame:
    """Compare chunkings of the same documents against the same passages, before any retrieval.

    For each chunking: the mean over queries with evidence of the evidence recall a perfect retriever reaches
    with k chunks (`perfect_evidence_recall`), the mean number of chunks a passage of grade >= ``rel``
    shares a character with (``chunks_per_passage``), and the mean chunk length (``chars_per_chunk``).

    Args:
        passages: as `chunk_qrels` takes them.
        chunkings: ``{name: chunks}``, each a CHUNKS file with offsets or a DataFrame.
        k, rel: as `perfect_evidence_recall`.

    Returns:
        A DataFrame indexed by chunking name: ``chunks``, ``EvidenceRecall@k`` for each k,
        ``chunks_per_passage``, ``chars_per_chunk``.

    Raises:
        QrelForgeError: ``chunkings`` is not a non-empty mapping.
    """
    import pandas as pd

    if not isinstance(chunkings, Mapping) or not chunkings:
        raise QrelForgeError(
            f"chunkings must be a non-empty mapping {{name: chunks}}; got {type(chunkings).__name__}"
        )
    cutoffs, rel = check_k(k), check_rel(rel)
    rows = []
    for name, chunks in chunkings.items():
        p, c = load(passages, chunks)
        size, best = _best_cover(p, c, cutoffs, rel)
        has = size > 0
        row: dict[str, Any] = {"chunking": name, "chunks": len(c)}
        for i, cutoff in enumerate(cutoffs):
            row[measure_name("EvidenceRecall", cutoff, rel)] = (
                float(np.mean(best[has, i] / size[has])) if has.any() else np.nan
            )
        evidence = p.grade >= rel
        passage, _, _ = _intervals.overlapping_pairs(
            (p.doc[evidence], p.start[evidence], p.end[evidence]), (c.doc, c.start, c.end)
        )
        per_passage = np.bincount(passage, minlength=int(evidence.sum()))
        row["chunks_per_passage"] = float(per_passage.mean()) if len(per_passage) else np.nan
        row["chars_per_chunk"] = float(np.mean(c.end - c.start)) if len(c) else np.nan
        rows.append(row)
    return pd.DataFrame(rows).set_index("chunking")


def _best_cover(p: Passages, c: Chunks, cutoffs: tuple[int, ...], rel: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query: |E|, and the most evidence characters k chunks can cover, for each k of ``cutoffs``."""
    n_queries = len(p.queries)
    n_docs = int(max(p.doc.max(initial=-1), c.doc.max(initial=-1))) + 1
    evidence = p.grade >= rel
    keys, pair = np.unique(p.query[evidence] * n_docs + p.doc[evidence], return_inverse=True)
    pair_query, pair_doc = keys // n_docs, keys % n_docs
    ug, us, ue = _intervals.union(pair, p.start[evidence], p.end[evidence])
    size = np.bincount(pair_query[ug], weights=ue - us, minlength=n_queries).astype(np.int64)
    best = np.zeros((n_queries, len(cutoffs)), dtype=np.float64)
    cand = _candidates((ug, us, ue), pair_doc, c)
    if cand is None:
        return size, best
    cpair, cstart, cend, weight = cand
    cquery = pair_query[cpair]
    cumulative = _Cumulative(ug, us, ue)
    w_start, w_end = cumulative.at(cpair, cstart), cumulative.at(cpair, cend)
    n = len(cpair)
    span = _intervals.span_of(cend, cstart)
    # non-overlapping predecessors of a chunk: the query's candidates before ``split`` (earlier documents,
    # and the chunks of its own document that end by its start); overlapping ones: [split, itself)
    split = np.searchsorted(
        _intervals.sort_key(cpair, cend, span), _intervals.sort_key(cpair, cstart, span), side="right"
    )
    query_first = np.flatnonzero(np.r_[True, cquery[1:] != cquery[:-1]])
    query_lo = np.repeat(query_first, np.diff(np.r_[query_first, n]))
    reduce_at = query_first
    chain = weight.astype(np.float64)  # best cover of a chain of j chunks ending at each chunk (j = 1)
    by_j = [np.maximum.reduceat(chain, reduce_at)]
    for _ in range(1, max(cutoffs)):
        prefix = _grouped_cummax(chain, cquery)
        after_gap = np.where(split > query_lo, prefix[np.maximum(split - 1, 0)], -np.inf)
        overlapping = _range_max(chain - w_end, split, np.arange(n)) + w_start
        chain = weight + np.maximum(after_gap, overlapping)
        by_j.append(np.maximum.reduceat(chain, reduce_at))
    covered = np.maximum.accumulate(np.maximum(np.stack(by_j, axis=1), 0), axis=1)
    queries = cquery[query_first]
    for i, cutoff in enumerate(cutoffs):
        best[queries, i] = covered[:, cutoff - 1]
    return size, best


def _candidates(
    union: tuple[np.ndarray, np.ndarray, np.ndarray], pair_doc: np.ndarray, c: Chunks
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The chunks worth retrieving for each (query, document) pair: those sharing evidence with it and not
    inside another such chunk, as (pair, start, end, evidence characters), sorted by pair and start."""
    ug, us, ue = union
    i, j, shared = _intervals.overlapping_pairs((pair_doc[ug], us, ue), (c.doc, c.start, c.end))
    if not len(i):
        return None
    key, at = np.unique(ug[i] * len(c) + j, return_inverse=True)
    weight = np.rint(np.bincount(at, weights=shared)).astype(np.int64)
    pair, chunk = key // len(c), key % len(c)
    start, end = c.start[chunk], c.end[chunk]
    order = np.lexsort((-end, start, pair))
    pair, start, end, weight = pair[order], start[order], end[order], weight[order]
    span = _intervals.span_of(end)
    reach = np.maximum.accumulate(_intervals.sort_key(pair, end, span)) - pair * span
    first = np.r_[True, pair[1:] != pair[:-1]]
    inside = ~first & (end <= np.r_[0, reach[:-1]])
    keep = ~inside
    return pair[keep], start[keep], end[keep], weight[keep]


class _Cumulative:
    """W(pair, x): the evidence characters of a (query, document) pair before position x."""

    def __init__(self, ug: np.ndarray, us: np.ndarray, ue: np.ndarray):
        self.ug, self.us, self.ue = ug, us, ue
        self.span = _intervals.span_of(ue)
        self.key = _intervals.sort_key(ug, us, self.span)
        lengths = ue - us
        first = np.r_[True, ug[1:] != ug[:-1]]
        total = np.cumsum(lengths) - lengths
        self.before = total - np.maximum.accumulate(np.where(first, total, 0))

    def at(self, pair: np.ndarray, x: np.ndarray) -> np.ndarray:
        x = np.minimum(x, self.span - 1)  # W is flat after the last evidence character
        i = np.searchsorted(self.key, _intervals.sort_key(pair, x, self.span), side="right") - 1
        ok = (i >= 0) & (self.ug[np.maximum(i, 0)] == pair)
        i = np.maximum(i, 0)
        inside = np.clip(x - self.us[i], 0, self.ue[i] - self.us[i])
        return np.where(ok, self.before[i] + inside, 0).astype(np.float64)


def _grouped_cummax(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` within runs of equal ``groups`` (rows sorted by group)."""
    import pandas as pd

    return pd.Series(values).groupby(groups, sort=False).cummax().to_numpy()


def _range_max(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``max(values[lo[i]:hi[i]])`` for every i (−inf where the range is empty), from a sparse table."""
    out = np.full(len(lo), -np.inf)
    width = hi - lo
    some = width > 0
    if not some.any():
        return out
    levels = [values]
    while 2 ** len(levels) <= int(width.max()):
        step, prev = 2 ** (len(levels) - 1), levels[-1]
        levels.append(np.concatenate([np.maximum(prev[:-step], prev[step:]), prev[-step:]]))
    table = np.stack(levels)
    level = np.floor(np.log2(width[some])).astype(np.int64)
    out[some] = np.maximum(table[level, lo[some]], table[level, hi[some] - (1 << level)])
    return out
