"""Run fusion: reciprocal rank fusion (RRF), CombSUM and CombMNZ, with per-query score normalization.

Every function takes runs in any form `metrics.evaluate` accepts (paths, DataFrames, mappings, `Run`) and
returns a `Run`, vectorized over all queries and documents at once. Ranks come from trec_eval's order
(`Run.ranked`: score descending in single precision, then document ID descending), never from a file's rank
column. The fused run is ordered the same way, so ties in the fused score are broken by document ID
descending. Each document's contributions are added in ascending order of value, so the fused scores do not
depend on the order in which the runs are given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from metrics import _ids
from metrics._choice import Choice
from metrics.data import Run
from metrics.errors import QrelForgeError

__all__ = ["fuse", "rrf", "combsum", "combmnz", "normalize", "Method", "Norm", "METHODS", "NORMS"]


class Method(Choice):
    """How `fuse` combines runs."""

    RRF = "rrf"  # reciprocal rank fusion
    COMBSUM = "combsum"  # sum of normalized scores
    COMBMNZ = "combmnz"  # CombSUM times the number of runs that retrieved the document


class Norm(Choice):
    """How scores are normalized per query before CombSUM / CombMNZ."""

    MINMAX = "minmax"
    ZSCORE = "zscore"
    NONE = "none"


METHODS: tuple[Method, ...] = tuple(Method)
NORMS: tuple[Norm, ...] = tuple(Norm)


# --------------------------------------------------------------------------------------------- validation
def _check_runs(runs: Any) -> list[Run]:
    from metrics.evaluate import as_run

    if isinstance(runs, str | bytes) or not isinstance(runs, Sequence) or len(runs) == 0:
        raise QrelForgeError(f"runs must be a non-empty list of runs; got {type(runs).__name__} {runs!r:.60}")
    return [as_run(r) for r in runs]


def _check_depth(depth: Any) -> int | None:
    if depth is None:
        return None
    if not isinstance(depth, int | np.integer) or isinstance(depth, bool | np.bool_) or depth < 1:
        raise QrelForgeError(f"depth must be an int >= 1 or None; got {depth!r}")
    return int(depth)


def _check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise QrelForgeError(
            f"{name} must be one of {', '.join(repr(str(c)) for c in choices)}; got {value!r}"
        )
    return value


def _check_rrf_k(k: Any) -> float:
    number = isinstance(k, int | float | np.integer | np.floating) and not isinstance(k, bool | np.bool_)
    if not number or not np.isfinite(k) or k < 0:
        raise QrelForgeError(f"k must be a finite number >= 0; got {k!r}")
    return float(k)


# ------------------------------------------------------------------------------------------ per-run steps
def _top(run: Run, depth: int | None) -> tuple[Run, np.ndarray]:
    """The run in trec order cut to its first ``depth`` documents per query, and each row's 0-based rank."""
    ranked = run.ranked()
    position = _ids.position_within(ranked.query_codes()[0])
    if depth is None or (position < depth).all():
        return ranked, position
    keep = pa.array(np.flatnonzero(position < depth))
    cut = Run(
        ranked.query_id.take(keep),
        ranked.doc_id.take(keep),
        ranked.score[keep.to_numpy()],
        name=run.name,
        source=run.source,
        empty_queries=run.empty_queries,
        _validated=True,
    )
    return cut, position[position < depth]


def _group_starts(codes: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(codes) else np.zeros(0, np.int64)


def _normalized(run: Run, method: str) -> np.ndarray:
    """The scores of a run in trec order (rows grouped by query), normalized within each query."""
    s = run.score
    if method == Norm.NONE or len(s) == 0:
        return s
    if not np.isfinite(s).all():
        row = int(np.flatnonzero(~np.isfinite(s))[0])
        raise QrelForgeError(
            f"{run.source}: score {float(s[row])!r} of {run.doc_id[row].as_py()!r} for query "
            f"{run.query_id[row].as_py()!r} must be finite for norm={method!r}"
        )
    starts = _group_starts(run.query_codes()[0])
    sizes = np.diff(np.r_[starts, len(s)])
    if method == Norm.MINMAX:
        low = np.repeat(np.minimum.reduceat(s, starts), sizes)
        span = np.repeat(np.maximum.reduceat(s, starts), sizes) - low
        return np.where(span > 0, (s - low) / np.where(span > 0, span, 1.0), 1.0)
    mean = np.repeat(np.add.reduceat(s, starts) / sizes, sizes)
    std = np.repeat(np.sqrt(np.add.reduceat((s - mean) ** 2, starts) / sizes), sizes)
    return np.where(std > 0, (s - mean) / np.where(std > 0, std, 1.0), 0.0)


def normalize(run: Any, *, method: str = Norm.MINMAX) -> Run:
    """The run with its scores normalized within each query.

    - ``minmax``: (s − min) / (max − min), so the top document gets 1 and the last 0; when every score of
      the query is equal (one document included) each gets 1;
    - ``zscore``: (s − mean) / std with the population standard deviation (ddof=0); each gets 0 when std = 0;
    - ``none``: the scores unchanged.

    Args:
        run: anything `metrics.evaluate` accepts.
        method: ``"minmax"``, ``"zscore"`` or ``"none"``.

    Returns:
        The normalized `Run`, in the run's trec order.

    Raises:
        QrelForgeError: an unknown ``method``; a score that is not finite (except with ``none``).

    >>> normalize({"q1": {"D1": 3.0, "D2": 2.0, "D3": 1.0}}).to_dict()
    {'q1': {'D1': 1.0, 'D2': 0.5, 'D3': 0.0}}
    """
    from metrics.evaluate import as_run

    _check_choice(method, "method", NORMS)
    ranked = as_run(run).ranked()
    return Run(
        ranked.query_id,
        ranked.doc_id,
        _normalized(ranked, method),
        name=ranked.name,
        source=ranked.source,
        empty_queries=ranked.empty_queries,
        _validated=True,
    )


# -------------------------------------------------------------------------------------------- combination
def _combine(runs: list[Run], values: list[np.ndarray], *, mnz: bool, name: str, source: str) -> Run:
    """Sum each (query, document)'s values over the runs (0 where a run lacks it); × the count if ``mnz``."""
    q_codes, q_ids = _ids.encode(pa.chunked_array([r.query_id for r in runs], type=pa.string()))
    d_codes, d_ids = _ids.encode(pa.chunked_array([r.doc_id for r in runs], type=pa.string()))
    value = np.concatenate(values) if values else np.zeros(0)
    key = q_codes.astype(np.int64) * max(len(d_ids), 1) + d_codes
    pairs, group = np.unique(key, return_inverse=True)
    order = np.lexsort((value, group))
    fused = np.bincount(group[order], weights=value[order], minlength=len(pairs))
    if mnz:
        fused = fused * np.bincount(group, minlength=len(pairs))
    q_take = pa.array(pairs // max(len(d_ids), 1))
    d_take = pa.array(pairs % max(len(d_ids), 1))
    fused_q = _ids.as_string_array(q_ids).take(q_take)
    present = set(fused_q.unique().to_pylist())
    empty = list(dict.fromkeys(q for r in runs for q in r.empty_queries if q not in present))
    out = Run(
        fused_q,
        _ids.as_string_array(d_ids).take(d_take),
        fused,
        name=name,
        source=source,
        empty_queries=empty,
        _validated=True,
    )
    return out.ranked()


def rrf(runs: Sequence[Any], *, k: float = 60, depth: int | None = None, name: str = "fused") -> Run:
    """Reciprocal rank fusion: score(d) = Σ over runs of 1 / (k + rank(d)), for each query.

    ``rank`` is d's 1-based position in the run's trec order (score descending, then doc ID descending); a
    run that does not retrieve d (within its first ``depth`` documents, when given) contributes 0.

    Args:
        runs: the runs to fuse, each anything `metrics.evaluate` accepts (at least one).
        k: the rank offset, a finite number >= 0.
        depth: cut each run to its top ``depth`` documents per query first; None keeps all.
        name: the fused run's name.

    Returns:
        The fused `Run`.

    Raises:
        QrelForgeError: no runs, a run that cannot be read, or a bad option, naming it and its value.

    >>> rrf([{"q1": ["D1", "D2"]}, {"q1": ["D2", "D3"]}], k=1).to_dict()
    {'q1': {'D2': 0.8333333333333333, 'D1': 0.5, 'D3': 0.3333333333333333}}
    """
    k, depth, runs = _check_rrf_k(k), _check_depth(depth), _check_runs(runs)
    tops = [_top(r, depth) for r in runs]
    values = [1.0 / (k + position + 1.0) for _, position in tops]
    return _combine([t for t, _ in tops], values, mnz=False, name=name, source=f"rrf(k={k:g})")


def _comb(runs: Sequence[Any], norm: str, depth: int | None, name: str, *, mnz: bool) -> Run:
    _check_choice(norm, "norm", NORMS)
    depth, runs = _check_depth(depth), _check_runs(runs)
    tops = [_top(r, depth)[0] for r in runs]
    values = [_normalized(t, norm) for t in tops]
    return _combine(tops, values, mnz=mnz, name=name, source=f"{'combmnz' if mnz else 'combsum'}({norm})")


def combsum(
    runs: Sequence[Any], *, norm: str = Norm.MINMAX, depth: int | None = None, name: str = "fused"
) -> Run:
    """CombSUM: score(d) = Σ over runs of d's normalized score (see `normalize`); a run without d adds 0.

    With ``depth``, each run is first cut to its top ``depth`` documents per query, then normalized.

    Args:
        runs, depth, name: as in `rrf`.
        norm: the normalization of each run's scores, as `normalize`'s ``method``.

    Returns:
        The fused `Run`.

    Raises:
        QrelForgeError: as `rrf`; an unknown ``norm``.

    >>> combsum([{"q1": {"D1": 3, "D2": 1}}, {"q1": {"D2": 5, "D3": 4}}]).to_dict()
    {'q1': {'D2': 1.0, 'D1': 1.0, 'D3': 0.0}}
    """
    return _comb(runs, norm, depth, name, mnz=False)


def combmnz(
    runs: Sequence[Any], *, norm: str = Norm.MINMAX, depth: int | None = None, name: str = "fused"
) -> Run:
    """CombMNZ: CombSUM × the number of runs that retrieve d (within ``depth``), for each query.

    Args:
        runs, norm, depth, name: as in `combsum`.

    Returns:
        The fused `Run`.

    Raises:
        QrelForgeError: no runs, a run that cannot be read, or a bad option, naming it and its value.

    >>> combmnz([{"q1": {"D1": 3, "D2": 1}}, {"q1": {"D2": 5, "D3": 4}}]).to_dict()
    {'q1': {'D2': 2.0, 'D1': 1.0, 'D3': 0.0}}
    """
    return _comb(runs, norm, depth, name, mnz=True)


def fuse(
    runs: Sequence[Any],
    *,
    method: str = Method.RRF,
    norm: str | None = None,
    k: float = 60,
    depth: int | None = None,
    name: str = "fused",
) -> Run:
    """Fuse ``runs`` with ``method`` (``rrf``, ``combsum`` or ``combmnz``); see those functions.

    Args:
        runs: the runs to fuse, each anything `metrics.evaluate` accepts (at least one).
        method: ``"rrf"``, ``"combsum"`` or ``"combmnz"``.
        norm: for CombSUM and CombMNZ only (default ``minmax``); RRF reads ranks, not scores.
        k: for RRF only.
        depth: cut each run to its top ``depth`` documents per query first; None keeps all.
        name: the fused run's name.

    Returns:
        The fused `Run`.

    Raises:
        QrelForgeError: an unknown ``method``; ``norm`` with RRF; and the errors of the method's function.

    >>> fuse([{"q1": ["D1", "D2"]}, {"q1": ["D2"]}], method="combmnz").to_dict()
    {'q1': {'D2': 2.0, 'D1': 1.0}}
    """
    _check_choice(method, "method", METHODS)
    if method == Method.RRF:
        if norm is not None:
            raise QrelForgeError(f"norm applies to combsum and combmnz, not to rrf; got norm={norm!r}")
        return rrf(runs, k=k, depth=depth, name=name)
    comb = combsum if method == Method.COMBSUM else combmnz
    return comb(runs, norm=norm or Norm.MINMAX, depth=depth, name=name)
