"""Judging coverage: how well the qrels cover each run's top k, and what a depth-k pool of the runs would add.

`judging_coverage` reports Judged@k per run, the unjudged top-k documents, and how many (query, document)
pairs each run would add to a depth-k pool (`Coverage`; tables via ``to_dataframe``, renderings
``to_markdown`` and ``to_dict``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics import _ids
from metrics._text import _fmt, _json_ready, _md, _py, _rows, _table
from metrics.data import Qrels, Run
from metrics.errors import QrelForgeError
from metrics.evaluate import as_qrels, named_runs
from metrics.measures import Measure, compute
from metrics.measures.ranking import position_within, rank_run, trec_order
from metrics.stats import significance

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["judging_coverage", "Coverage"]


def judging_coverage(qrels: Any, runs: Any, *, k: int = 10) -> Coverage:
    """How well the qrels cover each run's top ``k``.

    Per run: Judged@k (judged documents in the top k / min(k, returned), averaged over the qrels' queries as
    `metrics.evaluate` does); the unjudged documents in its top k (queries of the qrels only; other queries
    are not in the topic set); how many unjudged (query, document) pairs it would add to a depth-``k`` pool,
    and how many of those no other run would add (``only_this_run``). ``Coverage.pool_total`` is the size of
    the union over all runs: the new pairs a depth-k pool of these runs needs judged.

    Args:
        qrels: anything `metrics.evaluate` accepts.
        runs: ``{name: run}`` or a list of named runs (at least one), as `metrics.compare` takes them.
        k: the depth, an int >= 1.

    Returns:
        A `Coverage`: Judged@k per run, the unjudged top-k documents, and the ``pool`` table.

    Raises:
        QrelForgeError: a bad ``k``, no run, or an unnamed or repeated run; and the readers' errors.

    >>> cov = judging_coverage({"q1": {"D1": 1}}, {"a": {"q1": ["D1", "D2"]}, "b": {"q1": ["D3"]}}, k=2)
    >>> cov.pool["unjudged_pairs"].tolist(), cov.pool["only_this_run"].tolist(), cov.pool_total
    ([1, 1], [1, 1], 2)
    """
    k = significance.check_int(k, "k", 1)
    qrels, named = as_qrels(qrels), named_runs(runs, minimum=1)
    judged, parts = {}, []
    for name, run in named.items():
        judged[name], rows = _unjudged_top(qrels, run, k)
        parts.append(
            (
                name,
                run.query_id.take(_ids.indices(rows)).to_pylist(),
                _rank_of(run, rows),
                run.doc_id.take(_ids.indices(rows)).to_pylist(),
            )
        )
    return Coverage(k, judged, parts)


def _unjudged_top(qrels: Qrels, run: Run, k: int) -> tuple[tuple[float, int], np.ndarray]:
    """(mean Judged@k, queries), and the run rows (rank order) of unjudged top-k documents of qrels queries.

    Only queries of the qrels count: the others are not in the topic set."""
    ranked = rank_run(qrels, run)
    judged_at = float(compute(ranked, Measure("Judged", k)).mean()) if ranked.nq else math.nan
    codes, qids = run.query_codes()
    asked = _ids.lookup(qids, qrels.query_codes()[1]) >= 0
    order = trec_order(codes, run.score, run.doc_id)
    is_judged = np.zeros(len(run), dtype=bool)
    is_judged[ranked.row] = True
    keep = (position_within(codes[order]) < k) & asked[codes[order]] & ~is_judged[order]
    return (judged_at, ranked.nq), order[keep]


def _rank_of(run: Run, rows: np.ndarray) -> np.ndarray:
    """1-based rank of each of ``rows`` within its query (trec_eval order)."""
    codes = run.query_codes()[0]
    order = trec_order(codes, run.score, run.doc_id)
    rank = np.empty(len(run), dtype=np.int64)
    rank[order] = position_within(codes[order]) + 1
    return rank[rows]


class Coverage:
    """Judged@k per run, the unjudged top-k documents, and what each run adds to a depth-k pool. Tables via
    ``to_dataframe``: ``"judged"``, ``"unjudged"``, ``"pool"``."""

    def __init__(
        self, k: int, judged: dict[str, tuple[float, int]], parts: list[tuple[str, Any, Any, list[str]]]
    ):
        import pandas as pd

        self.k = k
        self.judged = pd.DataFrame(
            [{"run": r, f"Judged@{k}": v, "queries": n} for r, (v, n) in judged.items()]
        )
        frames = [
            pd.DataFrame({"run": name, "query_id": q, "rank": rank, "doc_id": docs})
            for name, q, rank, docs in parts
        ]
        self.unjudged = pd.concat(frames, ignore_index=True).astype({"rank": np.int64})
        self.pool = self._pool(list(judged))

    def _pool(self, runs: list[str]) -> pd.DataFrame:
        import pandas as pd

        pairs = self.unjudged[["run", "query_id", "doc_id"]]
        seen_by = pairs.groupby(["query_id", "doc_id"])["run"].transform("size")
        only = pairs[seen_by == 1].groupby("run").size()
        total = pairs.groupby("run").size()
        self.pool_total = int(len(pairs.drop_duplicates(["query_id", "doc_id"])))
        return pd.DataFrame(
            {
                "run": runs,
                "unjudged_pairs": [int(total.get(r, 0)) for r in runs],
                "only_this_run": [int(only.get(r, 0)) for r in runs],
            }
        )

    def to_dataframe(self, what: str = "judged") -> pd.DataFrame:
        tables = {"judged": self.judged, "unjudged": self.unjudged, "pool": self.pool}
        if what not in tables:
            raise QrelForgeError(f"what must be one of judged, unjudged, pool; got {what!r}")
        return tables[what].copy()

    def to_dict(self, *, unjudged: bool = True) -> dict[str, Any]:
        out = {
            "k": self.k,
            "judged": self.judged.to_dict(orient="records"),
            "pool": self.pool.to_dict(orient="records"),
            "pool_total": self.pool_total,
        }
        if unjudged:
            out["unjudged"] = self.unjudged.to_dict(orient="records")
        return _json_ready(out)

    def to_markdown(self, *, digits: int = 4, max_rows: int = 50) -> str:
        """Markdown: Judged@k and pool additions per run, then up to ``max_rows`` unjudged documents."""
        digits, max_rows = (
            significance.check_int(digits, "digits", 0),
            significance.check_int(max_rows, "max_rows", 0),
        )
        pool = self.pool.set_index("run")
        rows = [
            [
                _md(j.run),
                _fmt(_py(j[2]), digits),
                str(j.queries),
                str(pool.loc[j.run, "unjudged_pairs"]),
                str(pool.loc[j.run, "only_this_run"]),
            ]
            for j in _rows(self.judged)
        ]
        out = [
            f"# Judging coverage at depth {self.k}\n",
            _table(["run", f"Judged@{self.k}", "queries", "unjudged pairs", "only this run"], rows, "lrrrr"),
            f"A depth-{self.k} pool of these runs adds {self.pool_total} unjudged (query, document) pairs.\n",
        ]
        shown = self.unjudged.head(max_rows)
        if len(shown):
            out.append(
                _table(
                    ["run", "query", "rank", "document"],
                    [[_md(u.run), _md(u.query_id), str(u.rank), _md(u.doc_id)] for u in _rows(shown)],
                    "llrl",
                )
            )
        if len(self.unjudged) > max_rows:
            out.append(f"{len(self.unjudged) - max_rows} more unjudged documents not shown.\n")
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"Coverage(k={self.k}, runs={self.judged['run'].tolist()}, pool_total={self.pool_total})"
