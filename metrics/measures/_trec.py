"""Kernels of trec_eval's set, count and incomplete-judgment measures, equal to trec_eval 9.0.8 per query.

Each names the trec_eval source it follows (``m_*.c``); like every kernel (`metrics.measures.ranking`) they
are vectorized over all queries: cumulative sums and ``np.bincount`` over the judged rows, no loop per
document.
Relevant means a grade >= ``rel``; judged non-relevant a grade in [0, rel); a negative grade is trec_eval's
"in the pool but unjudged" (RELVALUE_UNJUDGED); a document without a judgment is outside the pool.
"""

from __future__ import annotations

import numpy as np

from metrics.measures.ranking import Params, Ranked, _divide, _hits, cumsum_within

__all__ = [
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "set_precision",
    "set_recall",
    "set_f",
    "bpref",
    "inferred_ap",
    "iprec_at_recall",
]

INFAP_EPSILON = 0.00001  # trec_eval's INFAP_EPSILON (trec_eval.h)


def num_ret(r: Ranked, m: Params) -> np.ndarray:
    """Documents returned (trec_eval's num_ret, m_num_ret.c)."""
    return r.returned.astype(np.float64)


def num_rel(r: Ranked, m: Params) -> np.ndarray:
    """Relevant documents judged, retrieved or not (trec_eval's num_rel, m_num_rel.c)."""
    return r.relevant_count(m.rel).astype(np.float64)


def num_rel_ret(r: Ranked, m: Params) -> np.ndarray:
    """Relevant documents returned (trec_eval's num_rel_ret, m_num_rel_ret.c)."""
    return _hits(r, m.rel, None)


def set_precision(r: Ranked, m: Params) -> np.ndarray:
    """Relevant returned / returned, 0 when nothing was returned (trec_eval's set_P, m_set_P.c)."""
    return np.where(r.returned > 0, _hits(r, m.rel, None) / np.maximum(r.returned, 1), 0.0)


def set_recall(r: Ranked, m: Params) -> np.ndarray:
    """Relevant returned / relevant judged (trec_eval's set_recall, m_set_recall.c)."""
    return _divide(_hits(r, m.rel, None), r.relevant_count(m.rel))


def set_f(r: Ranked, m: Params) -> np.ndarray:
    """(1 + beta)·P·R / (beta·P + R) over the returned set, 0 when nothing relevant was returned (trec_eval's
    set_F, m_set_F.c: ``set_F.x`` with x = beta, which is β² of the usual F_β)."""
    hits = _hits(r, m.rel, None)
    p, rec = set_precision(r, m), set_recall(r, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(hits > 0, (1.0 + m.beta) * p * rec / (m.beta * p + rec), 0.0)
    return np.where(np.isnan(rec), np.nan, f)


def bpref(r: Ranked, m: Params) -> np.ndarray:
    """Buckley & Voorhees' bpref as trec_eval's bpref (m_bpref.c): for each relevant document returned,
    1 − min(judged non-relevant above it, R) / min(judged non-relevant, R), averaged over the R relevant."""
    relevant = r.grade >= m.rel
    nonrel = (r.grade >= 0) & ~relevant
    n_rel = r.relevant_count(m.rel)
    judged_nonrel = (r.qrels_grade >= 0) & (r.qrels_grade < m.rel)
    n_nonrel = np.bincount(r.qrels_qidx, weights=judged_nonrel, minlength=r.nq)
    above = cumsum_within(nonrel, r.qidx)[relevant]  # a relevant row adds no non-relevant: inclusive = above
    q = r.qidx[relevant]
    cap = n_rel[q]
    term = np.where(
        above > 0, 1.0 - np.minimum(above, cap) / np.maximum(np.minimum(n_nonrel[q], cap), 1), 1.0
    )
    return _divide(np.bincount(q, weights=term, minlength=r.nq), n_rel)


def inferred_ap(r: Ranked, m: Params) -> np.ndarray:
    """Yilmaz & Aslam's inferred AP as trec_eval's infAP (m_infap.c): at a relevant document at rank j+1,
    1/(j+1) + j/(j+1) · (pooled above / j) · (relevant above + ε) / (judged above + 2ε), averaged over the
    relevant judged; pooled documents are the judged ones and those with a negative grade."""
    relevant = r.grade >= m.rel
    nonrel = (r.grade >= 0) & ~relevant
    rel_above = (cumsum_within(relevant, r.qidx) - relevant)[relevant]
    nonrel_above = cumsum_within(nonrel, r.qidx)[relevant]
    unjudged_above = cumsum_within(r.grade < 0, r.qidx)[relevant]
    j = r.pos[relevant].astype(np.float64)
    pooled = (rel_above + nonrel_above + unjudged_above) / np.maximum(j, 1.0)
    share = (rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2 * INFAP_EPSILON)
    term = np.where(j == 0, 1.0, 1.0 / (j + 1.0) + (j / (j + 1.0)) * pooled * share)
    return _divide(np.bincount(r.qidx[relevant], weights=term, minlength=r.nq), r.relevant_count(m.rel))


def iprec_at_recall(r: Ranked, m: Params) -> np.ndarray:
    """Interpolated precision at a recall level as trec_eval's iprec_at_recall (m_iprec_at_recall.c).

    The level r becomes a number of relevant documents c = floor(r·R + 0.9) (trec_eval's rounding, so the
    default levels 0, 0.1, ..., 1 match the historical ones); the value is the best precision at or below the
    rank of the c-th relevant document returned (c = 0 counts as 1), 0 when fewer than c were returned. Ties
    are broken as everywhere else (trec_eval's order), so tied documents never enter together.
    """
    rows = np.flatnonzero(r.grade >= m.rel)
    q = r.qidx[rows]
    count = cumsum_within(np.ones(len(rows)), q)
    best = _suffix_max(count / (r.pos[rows] + 1.0), q, r.nq)
    cut = np.floor(m.recall * r.relevant_count(m.rel) + 0.9)
    hit = count == np.maximum(cut, 1.0)[q]
    return np.bincount(q[hit], weights=best[hit], minlength=r.nq)


def _suffix_max(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """For each row, the largest of ``values`` from that row to the end of its group.

    The rows of a group are contiguous; the groups' codes may come in any order. Exact: the running maximum
    runs over integer ranks, shifted apart per block of rows so that no maximum crosses into the next block.
    """
    n = len(values)
    if n == 0:
        return values
    order = np.argsort(values, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    block = np.cumsum(np.concatenate(([0], groups[1:] != groups[:-1])), dtype=np.int64)
    shift = (block[-1] - block[::-1]) * n
    running = np.maximum.accumulate(rank[::-1] + shift) - shift
    return values[order][running][::-1]
