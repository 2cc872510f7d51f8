"""A run joined to qrels in trec_eval's order (`rank_run`, `Ranked`), and the per-query kernels of the ranking
measures, vectorized over every query at once: a few ``np.bincount`` calls over all rows, never a Python loop
per document.

Each registered measure (`metrics.measures.REGISTRY`) names its kernel here; `metrics.measures.compute` calls
it. A kernel takes the `Ranked` rows and the measure's parameters (anything with ``cutoff``, ``rel`` and
``gain``, see `Params`) and returns one float64 per query.

Semantics follow trec_eval 9.0.8 (``trec_eval -c``):

- order: score descending, after rounding to single precision as trec_eval stores scores; ties broken by
  document ID descending in byte order; the rank column of a run file is ignored (`trec_order`, kept with the
  ID helpers in `metrics._ids` and re-exported here);
- a document is relevant when judged with a grade ``>= rel``; unjudged documents are non-relevant;
- nDCG takes the raw grade as gain whatever ``rel`` is, ignores gains of 0 or less, and builds its ideal
  ranking from every judged document with a grade of 1 or more;
- queries in the qrels but not in the run score 0 (``-c``);
- ``judged_only=True`` (any measure but Judged, NumRel and RBPResidual) scores the condensed list (Sakai 2007;
  ir_measures' ``judged_only``, trec_eval ``-J``): unjudged documents, and those judged with a negative grade
  (trec_eval's "in the pool but unjudged"), are removed before ranking (`Ranked.condensed`);

with one deliberate difference: a measure that divides by the number of relevant documents (R@k, F1@k, AP,
AP@k, R-Prec, nDCG) is undefined (NaN here, None in results) for a query without relevant documents, where
trec_eval reports 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from metrics import _ids
from metrics._ids import position_within, trec_order
from metrics.data import Qrels, Run
from metrics.errors import MeasureError

__all__ = [
    "Params",
    "GainMap",
    "Ranked",
    "rank_run",
    "trec_order",
    "position_within",
    "cumsum_within",
    "precision",
    "recall",
    "f1",
    "average_precision",
    "reciprocal_rank",
    "first_rel",
    "ndcg",
    "r_precision",
    "success",
    "judged",
]


class GainMap(tuple):
    """nDCG's gain of each grade, ``{grade: gain}``, as trec_eval's ndcg parameters (``-m ndcg.1=1,2=3``).

    A grade left out gains its own value (trec_eval's default), a negative grade (unjudged) gains nothing;
    a gain may be 0 or negative. It prints as ``{0:0,1:1,2:3,3:7}`` and is hashable (a sorted tuple of pairs).

    >>> g = GainMap({2: 3, 1: 1, 3: 7})
    >>> str(g), g.of(np.array([-1, 0, 1, 2, 3, 4])).tolist()
    ('{1:1,2:3,3:7}', [0.0, 0.0, 1.0, 3.0, 7.0, 4.0])
    """

    __slots__ = ()

    def __new__(cls, mapping: Mapping[Any, Any]) -> GainMap:
        return super().__new__(cls, sorted((int(g), _plain(v)) for g, v in mapping.items()))

    def __str__(self) -> str:
        return "{" + ",".join(f"{g}:{v}" for g, v in self) + "}"

    def of(self, grades: np.ndarray) -> np.ndarray:
        """The gain of each grade (float64)."""
        top = max(int(grades.max(initial=0)), max((g for g, _ in self), default=0))
        table = np.arange(top + 1, dtype=np.float64)
        for grade, gain in self:
            table[grade] = gain
        return np.where(grades >= 0, table[np.maximum(grades, 0)], 0.0)


def _plain(value: Any) -> int | float:
    """A number as it should print: an integral value as an int, any other as a float."""
    number = float(value)
    return int(number) if number.is_integer() else number


class Params(Protocol):
    """What a kernel reads of a measure (`metrics.measures.Measure` has all of it)."""

    @property
    def cutoff(self) -> int | None: ...

    @property
    def rel(self) -> int: ...

    @property
    def gain(self) -> str | GainMap: ...

    @property
    def p(self) -> float: ...  # RBP's persistence

    @property
    def beta(self) -> float: ...  # SetF's weight of recall

    @property
    def recall(self) -> float: ...  # IPrec's recall level


def _cutoff(m: Params) -> int:
    """The cutoff of a measure that needs one (`Measure.validate` checked that it is set)."""
    if m.cutoff is None:
        raise MeasureError(f"cutoff must be an int >= 1 for {m!r}; got None")
    return m.cutoff


@dataclass
class Ranked:
    """A run ranked against qrels, reduced to what every measure needs: the judged rows.

    Unjudged documents are never relevant and carry no gain, so only judged rows (in rank order, grouped by
    query) are kept with their 0-based rank; ``returned`` keeps how many documents each query returned.
    """

    query_ids: list[str]  # evaluated queries (those of the qrels), in qrels order
    qidx: np.ndarray  # per judged row: index into query_ids
    pos: np.ndarray  # per judged row: 0-based rank among everything the run returned
    grade: np.ndarray  # per judged row: the judged grade
    returned: np.ndarray  # per query: number of documents returned
    in_run: np.ndarray  # per query: the run answered it (possibly with nothing)
    qrels_qidx: np.ndarray  # per judgment: query index
    qrels_grade: np.ndarray  # per judgment: grade
    extra_queries: list[str]  # run queries without judgments (ignored)
    row: np.ndarray  # per judged row: its row in the original run
    _condensed: Ranked | None = field(default=None, repr=False, compare=False)

    @property
    def nq(self) -> int:
        return len(self.query_ids)

    def condensed(self) -> Ranked:
        """The condensed list (Sakai 2007), as trec_eval ``-J`` and ir_measures' ``judged_only=True``: only
        the documents judged with a grade >= 0, ranked among themselves. Computed once, then kept."""
        if self._condensed is None:
            keep = np.flatnonzero(self.grade >= 0)
            qidx = self.qidx[keep]
            self._condensed = replace(
                self,
                qidx=qidx,
                pos=position_within(qidx),
                grade=self.grade[keep],
                returned=np.bincount(qidx, minlength=self.nq),
                row=self.row[keep],
                _condensed=None,
            )
        return self._condensed

    def relevant_count(self, rel: int) -> np.ndarray:
        return np.bincount(self.qrels_qidx, weights=self.qrels_grade >= rel, minlength=self.nq)


def rank_run(qrels: Qrels, run: Run) -> Ranked:
    """Join a run to qrels and order it as trec_eval does.

    When every query of the run's rows is judged and the order keeps each row among its query's positions
    (a run written query by query), each row's query index in the qrels is never made (4 bytes a row): the
    run's own query codes stand for it, mapped through the small table of its queries.

    Args:
        qrels: the judgments; their queries are the ones evaluated.
        run: the ranked documents; its rank column is ignored (`trec_order` decides the order).

    Returns:
        The judged rows of ``run`` in rank order, grouped by query in qrels order, with each row's 0-based
        rank among everything the run returned for its query.
    """
    q_codes, q_ids = qrels._query_code_list()
    r_codes, r_ids = run._query_code_list()
    position = {q: i for i, q in enumerate(q_ids)}
    to_qrels = np.array([position.get(q, -1) for q in r_ids], dtype=np.int32)
    counts = _ids.bincount(r_codes, len(r_ids))  # rows of each run query
    # The judged rows first: their temporaries are never beside the order.
    rows, judgment = _judged_rows(qrels, q_codes, len(q_ids), run, r_codes, to_qrels)
    docs = run._docs()
    row_q: np.ndarray | None = None  # each row's query index in the qrels, when made
    if (to_qrels[counts > 0] >= 0).all():
        order = _ids.trec_order_sparse(r_codes, run.score, docs)
    else:
        row_q = to_qrels[r_codes]
        keep = np.flatnonzero(row_q >= 0)
        kept = docs.take(keep) if isinstance(docs, _ids.Packed) else docs.take(_ids.indices(keep))
        full = keep[trec_order(r_codes[keep], run.score[keep], kept)]
        order = _ids.Order(full, np.zeros(0, np.int64), np.zeros(0, np.int64))
    if row_q is None and not (order.order is None or order.within_groups):
        row_q = to_qrels[r_codes]
    judged, judgment = _in_order(order, rows, judgment, len(r_codes))
    # A sparse order only reorders ties, and an order within groups only rows within them: the query of each
    # position is unchanged.
    if row_q is None:
        returned = np.zeros(len(q_ids), dtype=np.int64)
        present = np.flatnonzero(to_qrels >= 0)
        returned[to_qrels[present]] = counts[present]
        qj = to_qrels[r_codes[judged]]
        starts = _group_start(r_codes, judged)  # the same groups: distinct run queries, distinct indices
    else:
        qidx = row_q if order.order is None or order.within_groups else row_q[order.order]
        del row_q
        returned = _ids.bincount(qidx, len(q_ids))
        qj, starts = qidx[judged], _group_start(qidx, judged)
    in_run = returned > 0
    empty = np.array([position.get(q, -1) for q in run.empty_queries], dtype=np.int32)
    in_run[empty[empty >= 0]] = True
    extra = [q for q, i in zip(r_ids, to_qrels.tolist(), strict=True) if i < 0]
    extra += [q for q, i in zip(run.empty_queries, empty, strict=True) if i < 0 and q not in extra]
    return Ranked(
        query_ids=list(q_ids),
        qidx=qj,
        pos=(judged - starts).astype(np.int32),
        grade=qrels.relevance[judgment],
        returned=returned,
        in_run=in_run,
        qrels_qidx=q_codes,
        qrels_grade=qrels.relevance,
        extra_queries=extra,
        row=order.rows(judged),
    )


def _group_start(qidx: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """For each of ``rows`` (positions in the grouped order), the position where its query's group starts."""
    boundaries = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]]) if len(qidx) else np.zeros(0, np.int64)
    return boundaries[np.searchsorted(boundaries, rows, side="right") - 1]


def _judged_rows(
    qrels: Qrels,
    q_codes: np.ndarray,
    nq: int,
    run: Run,
    r_codes: np.ndarray,
    to_qrels: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The run rows whose (query, document) is judged, ascending, and the qrels row of each (``r_codes``:
    each run row's query code; ``to_qrels``: each run query's index among the ``nq`` qrels queries, -1 if
    none).

    Candidates come from 64-bit hashes of the (query, document) pairs (`_ids.hash_matches`), the queries
    numbered as the run numbers them (the judgments of queries the run lacks are left out); each is
    confirmed by comparing the IDs, so a hash collision never makes a document judged."""
    to_run = np.full(nq, -1, dtype=np.int32)
    mapped = np.flatnonzero(to_qrels >= 0)
    to_run[to_qrels[mapped]] = mapped
    judgment_q = to_run[q_codes]
    asked = np.flatnonzero(judgment_q >= 0)
    table = _ids.pair_hashes(qrels.doc_hashes()[asked], judgment_q[asked])
    found = _ids.hash_matches(run.doc_hashes(), r_codes, table)
    if found is None:  # two judgments share a hash: compare every ID
        rows, judgment = _lookup_rows(qrels, q_codes, run, to_qrels[r_codes])
    else:
        rows, judgment = found[0], asked[found[1]]
        exact = (to_qrels[r_codes[rows]] == q_codes[judgment]) & _ids.equal_at(
            run._docs(), rows, qrels._docs(), judgment
        )
        rows, judgment = rows[exact], judgment[exact]
    return rows, judgment


def _in_order(
    order: _ids.Order, rows: np.ndarray, judgment: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The positions in ``order`` of the judged ``rows`` (ascending, among ``n`` rows), ascending, and the
    qrels row of each."""
    if order.order is None and not len(order.at):
        return rows, judgment
    at = order.positions_of(rows, n)
    return at, judgment[np.searchsorted(rows, order.rows(at))]


def _lookup_rows(
    qrels: Qrels, q_codes: np.ndarray, run: Run, row_q: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`_judged_rows` by exact lookup of every document ID (run rows ascending, and their qrels rows)."""
    doc_codes, doc_ids = _ids.encode(qrels.doc_id)
    width = np.int64(max(len(doc_ids), 1))
    judged_keys = q_codes.astype(np.int64) * width + doc_codes
    sort = np.argsort(judged_keys)
    keys = judged_keys[sort]
    row_doc = _ids.lookup(run.doc_id, doc_ids)
    rows = np.flatnonzero((row_doc >= 0) & (row_q >= 0))
    if not len(keys) or not len(rows):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    wanted = row_q[rows].astype(np.int64) * width + row_doc[rows]
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    hit = keys[at] == wanted
    return rows[hit], sort[at[hit]]


# ------------------------------------------------------------------------------------------ kernels
def _hits(r: Ranked, rel: int, k: int | None) -> np.ndarray:
    mask = r.grade >= rel
    if k is not None:
        mask &= r.pos < k
    return np.bincount(r.qidx, weights=mask, minlength=r.nq)


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def precision(r: Ranked, m: Params) -> np.ndarray:
    """Precision at k: the relevant documents among the top k, over k.

    ``P@k = |{d in top k : grade(d) >= rel}| / k``; k divides even when the run returned fewer.

    Args:
        r: the run ranked against the qrels (`rank_run`).
        m: the measure's parameters: ``cutoff`` (k, required) and ``rel`` (the lowest relevant grade).

    Returns:
        One float64 per query of ``r.query_ids``.
    """
    return _hits(r, m.rel, m.cutoff) / _cutoff(m)


def recall(r: Ranked, m: Params) -> np.ndarray:
    """Recall (at k): the relevant documents retrieved (in the top k), over all relevant ones.

    ``R@k = |{d in top k : grade(d) >= rel}| / R``, R the query's judged documents with grade >= rel.

    Args:
        r: the run ranked against the qrels (`rank_run`).
        m: the measure's parameters: ``cutoff`` (k, or None for the whole run) and ``rel`` (the lowest
            relevant grade).

    Returns:
        One float64 per query of ``r.query_ids``; NaN for a query without relevant documents.
    """
    return _divide(_hits(r, m.rel, m.cutoff), r.relevant_count(m.rel))


def f1(r: Ranked, m: Params) -> np.ndarray:
    """F1 (at k): the harmonic mean of precision and recall at the same cutoff.

    ``F1@k = 2 P@k R@k / (P@k + R@k)``, 0 when both are 0.

    Args:
        r: the run ranked against the qrels (`rank_run`).
        m: the measure's parameters: ``cutoff`` (k, required) and ``rel`` (the lowest relevant grade).

    Returns:
        One float64 per query of ``r.query_ids``; NaN for a query without relevant documents.
    """
    p, rec = precision(r, m), recall(r, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(p + rec > 0, 2 * p * rec / np.where(p + rec > 0, p + rec, 1), 0.0)
    return np.where(np.isnan(rec), np.nan, f1)


def cumsum_within(values: np.ndarray, qidx: np.ndarray) -> np.ndarray:
    """Running sum of ``values`` restarting at each query.

    Args:
        values: one number per row.
        qidx: each row's query index; rows are grouped by query (equal values adjacent).

    Returns:
        The running sum per row, restarting at each group's first row.

    >>> cumsum_within(np.array([1, 1, 0, 1]), np.array([0, 0, 1, 1])).tolist()
    [1, 2, 0, 1]
    """
    total = np.cumsum(values)
    starts = np.flatnonzero(np.r_[True, np.diff(qidx) != 0]) if len(qidx) else np.zeros(0, np.int64)
    before = np.r_[0, total][starts]
    return total - np.repeat(before, np.diff(np.r_[starts, len(qidx)]))


def average_precision(r: Ranked, m: Params) -> np.ndarray:
    """Average precision (at k): the mean of the precision at each relevant document's rank.

    ``AP@k = sum(P@rank(d) for relevant d in top k) / R``, R all the query's relevant documents.

    Args:
        r: the run ranked against the qrels (`rank_run`).
        m: the measure's parameters: ``cutoff`` (k, or None for the whole run) and ``rel`` (the lowest
            relevant grade).

    Returns:
        One float64 per query of ``r.query_ids``; NaN for a query without relevant documents.
    """
    rel = r.grade >= m.rel
    precision_at = cumsum_within(rel, r.qidx) / (r.pos + 1.0)
    use = rel if m.cutoff is None else rel & (r.pos < m.cutoff)
    total = np.bincount(r.qidx, weights=np.where(use, precision_at, 0.0), minlength=r.nq)
    return _divide(total, r.relevant_count(m.rel))


def _first_relevant(r: Ranked, rel: int, k: int | None) -> np.ndarray:
    """Per query, 0-based rank of the first relevant document (within k), or -1."""
    mask = r.grade >= rel
    if k is not None:
        mask &= r.pos < k
    rows = np.flatnonzero(mask)
    first = np.full(r.nq, -1, dtype=np.int64)
    queries, at = np.unique(r.qidx[rows], return_index=True)
    first[queries] = r.pos[rows[at]]
    return first


def reciprocal_rank(r: Ranked, m: Params) -> np.ndarray:
    """Reciprocal rank (at k): one over the rank of the first relevant document.

    ``RR@k = 1 / rank(first relevant d in top k)``, ranks counted from 1.

    Args:
        r: the run ranked against the qrels (`rank_run`).
        m: the measure's parameters: ``cutoff`` (k, or None for the whole run) and ``rel`` (the lowest
            relevant grade).

    Returns:
        One float64 per query of ``r.query_ids``; 0 when no relevant document is in the top k.
    """
    first = _first_relevant(r, m.rel, m.cutoff)
    return np.where(first >= 0, 1.0 / np.maximum(first + 1.0, 1.0), 0.0)


def first_rel(r: Ranked, m: Params) -> np.ndarray:
    """The 1-based rank of the first relevant document in the whole run.

    Args:
        r: the run ranked against the qrels (`rank_run`).
        m: the measure's parameters: ``rel`` (the lowest relevant grade); the cutoff is not read.

    Returns:
        One float64 per query of ``r.query_ids``; NaN for a query whose run holds no relevant document.
    """
    first = _first_relevant(r, m.rel, None)
    return np.where(first >= 0, first + 1.0, np.nan)


def _gains(grades: np.ndarray, kind: str | GainMap) -> np.ndarray:
    if isinstance(kind, GainMap):
        return kind.of(grades)
    positive = np.where(grades > 0, grades, 0).astype(np.float64)
    return positive if kind == "lin" else np.exp2(positive) - 1.0


def ndcg(r: Ranked, m: Params) -> np.ndarray:
    """nDCG (at k), as trec_eval's ndcg and ndcg_cut.

    ``DCG@k = sum(gain(d) / log2(rank(d) + 1) for d in top k)``, over the DCG of the ideal ranking (every
    judged document by gain descending). Gains: the grade (``"lin"``), ``2**grade - 1`` (``"exp"``) or the
    `GainMap`'s; a gain of 0 or less adds nothing.

    Args:
        r: the run ranked against the qrels (`rank_run`).
        m: the measure's parameters: ``cutoff`` (k, or None for the whole run) and ``gain`` (``"lin"``,
            ``"exp"`` or a `GainMap`); ``rel`` is not read.

    Returns:
        One float64 per query of ``r.query_ids``; NaN for a query without document of positive gain.
    """
    gains = _gains(r.grade, m.gain)
    use = gains != 0 if m.cutoff is None else (gains != 0) & (r.pos < m.cutoff)
    dcg = np.bincount(r.qidx, weights=np.where(use, gains / np.log2(r.pos + 2.0), 0.0), minlength=r.nq)
    return _divide(dcg, _ideal_dcg(r, m))


def _ideal_dcg(r: Ranked, m: Params) -> np.ndarray:
    """DCG of the ideal ranking: every judged document with a positive gain, by gain descending."""
    all_gains = _gains(r.qrels_grade, m.gain)
    positive = np.flatnonzero(all_gains > 0)
    q, g = r.qrels_qidx[positive], all_gains[positive]
    order = np.lexsort((-g, q))
    q, g = q[order], g[order]
    pos = position_within(q)
    use = np.ones(len(q), bool) if m.cutoff is None else pos < m.cutoff
    return np.bincount(q, weights=np.where(use, g / np.log2(pos + 2.0), 0.0), minlength=r.nq)


def r_precision(r: Ranked, m: Params) -> np.ndarray:
    """R-precision: precision at R, the query's number of relevant documents.

    ``R-Prec = |{d in top R : grade(d) >= rel}| / R``.

    Args:
        r: the run ranked against the qrels (`rank_run`).
        m: the measure's parameters: ``rel`` (the lowest relevant grade); the cutoff is not read.

    Returns:
        One float64 per query of ``r.query_ids``; NaN for a query without relevant documents.
    """
    relevant = r.relevant_count(m.rel)
    mask = (r.grade >= m.rel) & (r.pos < relevant[r.qidx])
    return _divide(np.bincount(r.qidx, weights=mask, minlength=r.nq), relevant)


def success(r: Ranked, m: Params) -> np.ndarray:
    """Success at k: 1 when a relevant document is in the top k, else 0.

    Args:
        r: the run ranked against the qrels (`rank_run`).
        m: the measure's parameters: ``cutoff`` (k, or None for the whole run) and ``rel`` (the lowest
            relevant grade).

    Returns:
        One float64 per query of ``r.query_ids``.
    """
    return (_hits(r, m.rel, m.cutoff) > 0).astype(np.float64)


def judged(r: Ranked, m: Params) -> np.ndarray:
    """Judged at k: the judged documents among the top min(k, returned).

    A document judged with a negative grade counts as judged, as in ir_measures' Judged; trec_eval (which has
    no Judged@k) treats it as "in the pool but unjudged", as `Ranked.condensed` and RBPResidual do here.

    Args:
        r: the run ranked against the qrels (`rank_run`).
        m: the measure's parameters: ``cutoff`` (k, required); ``rel`` is not read.

    Returns:
        One float64 per query of ``r.query_ids``; 0 for a query that returned nothing.
    """
    k = _cutoff(m)
    count = np.bincount(r.qidx, weights=r.pos < k, minlength=r.nq)  # Ranked keeps only judged rows
    shown = np.minimum(r.returned, k)
    return np.where(shown > 0, count / np.maximum(shown, 1), 0.0)
