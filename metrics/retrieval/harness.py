"""Score a retriever directly: call it on every query, time each call, and keep what it returns as a `Run`.

`run_retriever` accepts plain callables and LangChain-style objects (``.invoke``), as well as objects with
``.retrieve`` or ``.search``; it turns whatever they return (IDs, ``(id, score)`` pairs, documents whose
``metadata`` holds the ID) into a run that `metrics.evaluate` scores. A query whose call raises, or returns
something unreadable, is recorded as failed and left out of the run, so evaluation scores it 0.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics.data import Run, _is_int, _is_score
from metrics.errors import QrelForgeError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["run_retriever", "RetrievalResult", "Failure", "Duplicate", "RetrieverOutputError", "load_queries"]

_SPACE = re.compile(r"\s")


class RetrieverOutputError(QrelForgeError):
    """A retriever returned something that is not a list of results with readable IDs (one query fails)."""


@dataclass(frozen=True)
class Failure:
    """A query whose retriever call raised (or returned something unreadable): its ID and ``repr`` of the
    error."""

    query_id: str
    error: str


@dataclass(frozen=True)
class Duplicate:
    """A document ID returned again for one query: 1-based positions of the kept and of the dropped
    occurrence."""

    query_id: str
    doc_id: str
    first: int
    position: int


# ------------------------------------------------------------------------------------------------ queries
def load_queries(queries: Any) -> tuple[list[str], list[str]]:
    """The query IDs and texts of queries in any accepted form; integer IDs become strings.

    Args:
        queries: a mapping ``{qid: text}``, a DataFrame with ``query_id`` and ``text`` (as
            `metrics.read_queries` returns), or a path read by `metrics.read_queries`.

    Returns:
        ``(query IDs, query texts)``, two lists in the given order.

    Raises:
        QrelForgeError: no queries, a missing column, an empty ID or one with a space, a text that is not a
            str, a repeated ID (naming the row), or ``queries`` of no accepted type.

    >>> load_queries({"q1": "退货条件", 2: "电池"})
    (['q1', '2'], ['退货条件', '电池'])
    """
    from metrics.formats import read_queries

    if isinstance(queries, str | os.PathLike) or hasattr(queries, "read"):
        queries = read_queries(queries)
    if hasattr(queries, "columns"):
        missing = [c for c in ("query_id", "text") if c not in queries.columns]
        if missing:
            raise QrelForgeError(
                f"queries DataFrame is missing column(s) {missing}; has {list(queries.columns)}"
            )
        pairs = list(zip(queries["query_id"].tolist(), queries["text"].tolist(), strict=True))
    elif isinstance(queries, Mapping):
        pairs = list(queries.items())
    else:
        raise QrelForgeError(
            f"queries must be a mapping {{qid: text}}, a DataFrame or a path; got {type(queries).__name__}"
        )
    if not pairs:
        raise QrelForgeError("queries is empty: nothing to retrieve")
    return _checked_queries(pairs)


def _checked_queries(pairs: list[tuple[Any, Any]]) -> tuple[list[str], list[str]]:
    seen: dict[str, int] = {}
    for row, (qid, text) in enumerate(pairs, 1):
        qid = str(qid) if _is_int(qid) else qid
        if not isinstance(qid, str) or not qid.strip() or _SPACE.search(qid):
            raise QrelForgeError(
                f"queries row {row}: query_id must be a non-empty str without spaces; got {qid!r}"
            )
        if not isinstance(text, str):
            raise QrelForgeError(
                f"queries row {row}: text of {qid!r} must be a str; got {type(text).__name__}"
            )
        if seen.setdefault(qid, row) != row:
            raise QrelForgeError(f"queries row {row}: duplicate query_id {qid!r} (first on row {seen[qid]})")
    return list(seen), [text for _, text in pairs]


# ------------------------------------------------------------------------------------------- retrievers
def _as_callable(retriever: Any) -> Callable[[str], Any]:
    """``retriever.invoke``, ``.retrieve`` or ``.search`` (the first it has), else the retriever itself."""
    for method in ("invoke", "retrieve", "search"):
        bound = getattr(retriever, method, None)
        if callable(bound):
            return bound
    if callable(retriever):
        return retriever
    raise QrelForgeError(
        "retriever must be callable or have an .invoke, .retrieve or .search method; "
        f"got {type(retriever).__name__}"
    )


def _timed(call: Callable[[str], Any], text: str) -> tuple[float, Any, BaseException | None]:
    """(seconds, returned value, exception): generators are consumed inside the timer."""
    start = time.perf_counter()
    try:
        value = call(text)
        if isinstance(value, Iterator):
            value = list(value)
    except Exception as exc:  # every failure of a query is recorded, the others go on
        return time.perf_counter() - start, None, exc
    return time.perf_counter() - start, value, None


class _Counter:
    """A progress counter on standard error, for when tqdm is not installed."""

    def __init__(self, total: int, desc: str):
        self.total, self.desc, self.done, self.shown = total, desc, 0, 0.0

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.shown >= 0.2 or self.done == self.total:
            self.shown = now
            sys.stderr.write(f"\r{self.desc}: {self.done}/{self.total} queries")
            sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")
        sys.stderr.flush()


class _Silent:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, enabled: bool, desc: str) -> Any:
    if not enabled:
        return _Silent()
    try:
        from tqdm import tqdm
    except ImportError:
        return _Counter(total, desc)
    return tqdm(total=total, desc=desc, unit="q", file=sys.stderr)


def _call_all(call: Callable[[str], Any], texts: list[str], workers: int, bar: Any) -> list[tuple]:
    """Outcomes of every call, in query order whatever the number of workers."""
    if workers == 1:
        out = []
        for text in texts:
            out.append(_timed(call, text))
            bar.update(1)
        return out
    pool = ThreadPoolExecutor(max_workers=min(workers, len(texts)), thread_name_prefix="qrelforge-retriever")
    try:
        futures = [pool.submit(_timed, call, text) for text in texts]
        for _ in as_completed(futures):
            bar.update(1)
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------------------------------------- results
def _result_items(value: Any) -> list[Any]:
    if value is None or isinstance(value, str | bytes) or hasattr(value, "columns"):
        raise RetrieverOutputError(f"returned a {type(value).__name__}; expected a list of results")
    if isinstance(value, Mapping):
        return list(value.items())
    try:
        return list(value)
    except TypeError:
        raise RetrieverOutputError(f"returned a {type(value).__name__}; expected a list of results") from None


def _item(item: Any, pos: int, id_field: str) -> tuple[str, float | None]:
    """(doc ID, score or None) of one result: an ID, an ``(id, score)`` pair, a mapping or a document."""
    if (
        isinstance(item, tuple | list) and len(item) == 2 and _is_score(item[1])
    ):  # (id, score), id may be an int
        return _id_of(item[0], pos, id_field), _checked_score(item[1], pos)
    score = item.get("score") if isinstance(item, Mapping) else getattr(item, "score", None)
    return _id_of(item, pos, id_field), None if score is None else _checked_score(score, pos)


def _id_of(obj: Any, pos: int, id_field: str) -> str:
    if isinstance(obj, str) or _is_int(obj):
        raw = obj
    else:
        meta = obj.get("metadata") if isinstance(obj, Mapping) else getattr(obj, "metadata", None)
        own = obj.get(id_field) if isinstance(obj, Mapping) else getattr(obj, id_field, None)
        raw = meta.get(id_field) if isinstance(meta, Mapping) and meta.get(id_field) is not None else own
        if raw is None:
            keys = f" (metadata keys: {sorted(map(str, meta))[:10]})" if isinstance(meta, Mapping) else ""
            raise RetrieverOutputError(
                f"result {pos}: no ID in metadata[{id_field!r}] or .{id_field} of a "
                f"{type(obj).__name__}{keys}"
            )
    doc = str(raw) if _is_int(raw) else raw
    if not isinstance(doc, str) or not doc.strip() or _SPACE.search(doc):
        raise RetrieverOutputError(
            f"result {pos}: document ID must be a non-empty str without spaces; got {raw!r}"
        )
    return doc


def _checked_score(score: Any, pos: int) -> float:
    if not _is_score(score) or score != score:
        raise RetrieverOutputError(f"result {pos}: score must be a number (not NaN); got {score!r}")
    return float(score)


def _ranking(value: Any, k: int, id_field: str) -> tuple[list[str], list[float], list[tuple[str, int, int]]]:
    """The first ``k`` distinct IDs with their scores (rank-derived n, n-1, ..., 1 when none are given), and
    the repeats dropped: (doc ID, first position, repeated position)."""
    pairs = [_item(item, pos, id_field) for pos, item in enumerate(_result_items(value), 1)]
    scored = [s is not None for _, s in pairs]
    if any(scored) and not all(scored):
        raise RetrieverOutputError(
            f"result {scored.index(not scored[0]) + 1}: some results have scores and others do not"
        )
    seen: dict[str, int] = {}
    docs: list[str] = []
    given: list[float | None] = []
    repeats: list[tuple[str, int, int]] = []
    for pos, (doc, score) in enumerate(pairs, 1):
        if doc in seen:
            repeats.append((doc, seen[doc], pos))
        elif len(docs) < k:
            seen[doc] = pos
            docs.append(doc)
            given.append(score)
        else:
            seen[doc] = pos
    if not all(scored) or not pairs:
        return docs, [float(len(docs) - i) for i in range(len(docs))], repeats
    return docs, [s for s in given if s is not None], repeats  # all scored: none is None


class RetrievalResult:
    """What `run_retriever` saw: the run, each query's latency, the failures and the dropped duplicates.

    ``run`` holds the answered queries (a query answered with no result is one of its ``empty_queries``);
    failed queries are absent, so `metrics.evaluate` counts them as missing from the run and scores them 0.
    ``latency`` holds the seconds of every call (failed ones included), aligned with ``query_ids``.
    """

    def __init__(
        self,
        run: Run,
        query_ids: list[str],
        latency: np.ndarray,
        retrieved: np.ndarray,
        failures: list[Failure],
        duplicates: list[Duplicate],
        *,
        k: int,
        workers: int,
        wall: float,
    ):
        self.run, self.query_ids, self.latency, self.retrieved = run, query_ids, latency, retrieved
        self.failures, self.duplicates = failures, duplicates
        self.k, self.workers, self.wall_seconds = k, workers, wall

    @property
    def name(self) -> str | None:
        return self.run.name

    def summary(self) -> dict[str, Any]:
        """Counts and latency: median and p95 (numpy's linear interpolation) over every query, in ms."""
        ms = self.latency * 1000.0
        failed = {f.query_id for f in self.failures}
        return {
            "name": self.name,
            "queries": len(self.query_ids),
            "answered": len(self.query_ids) - len(failed),
            "failed": len(failed),
            "empty": len(self.run.empty_queries),
            "results": len(self.run),
            "duplicates": len(self.duplicates),
            "k": self.k,
            "workers": self.workers,
            "latency_median_ms": float(np.median(ms)),
            "latency_p95_ms": float(np.percentile(ms, 95)),
            "latency_max_ms": float(ms.max()),
            "wall_seconds": self.wall_seconds,
        }

    def per_query(self) -> pd.DataFrame:
        """One row per query: ``latency_ms``, ``results`` kept, ``duplicates`` dropped, ``error`` (the repr of
        the error; missing, ``isna()``, for a query that succeeded)."""
        import pandas as pd

        errors = {f.query_id: f.error for f in self.failures}
        dups = {q: 0 for q in self.query_ids}
        for d in self.duplicates:
            dups[d.query_id] += 1
        return pd.DataFrame(
            {
                "latency_ms": self.latency * 1000.0,
                "results": self.retrieved,
                "duplicates": [dups[q] for q in self.query_ids],
                "error": [errors.get(q) for q in self.query_ids],
            },
            index=pd.Index(self.query_ids, name="query_id"),
        )

    def to_dataframe(self) -> pd.DataFrame:
        """The run: ``query_id``, ``doc_id``, ``score``, ``rank`` in evaluation order."""
        return self.run.to_dataframe()

    def write_trec(self, dest: Any, *, tag: str | None = None) -> None:
        """Write the run as a TREC run file (tag: ``tag``, else the run's name)."""
        from metrics.formats import write_run

        write_run(self.run, dest, tag=tag)

    def __str__(self) -> str:
        s = self.summary()
        lines = [
            f"retriever {s['name']!r}: {s['queries']} queries, {s['answered']} answered "
            f"({s['empty']} empty), "
            f"{s['failed']} failed; {s['results']} results, {s['duplicates']} duplicate IDs dropped",
            f"latency median {s['latency_median_ms']:.2f} ms, p95 {s['latency_p95_ms']:.2f} ms; "
            f"{s['wall_seconds']:.2f} s with {s['workers']} worker{'s' if s['workers'] > 1 else ''}",
        ]
        lines += [f"failed {f.query_id}: {f.error}" for f in self.failures[:10]]
        if len(self.failures) > 10:
            lines.append(f"... and {len(self.failures) - 10} more failures")
        return "\n".join(lines)

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"RetrievalResult({s['name']!r}: {s['queries']} queries, {s['failed']} failed, "
            f"{s['results']} results)"
        )


def _check_int(value: Any, name: str) -> int:
    if not _is_int(value) or value < 1:
        raise QrelForgeError(f"{name} must be an int >= 1; got {value!r}")
    return int(value)


def run_retriever(
    retriever: Any,
    queries: Any,
    *,
    k: int = 100,
    workers: int = 4,
    id_field: str = "id",
    progress: bool = True,
    name: str | None = None,
) -> RetrievalResult:
    """Call ``retriever`` on every query and return its run, per-query latency, failures and duplicates.

    A repeated ID is dropped (the first occurrence is kept, its position recorded in ``duplicates``);
    the first ``k`` distinct IDs are kept; scores, when every result has one, order the run as trec_eval
    orders it (score descending, then doc ID descending), else scores are rank-derived (n, n-1, ..., 1, the
    returned order). A call that raises, or returns results without readable IDs or with mixed scored and
    unscored results, fails that query only. ``workers`` threads call the retriever concurrently; the run
    is the same whatever their number.

    Args:
        retriever: an object with ``.invoke(text)`` (LangChain), ``.retrieve(text)`` or ``.search(text)``
            (the first found), or a callable ``f(text)``. It returns a list (or any iterable, or a mapping
            ``{id: score}``) whose items are IDs (str or int), ``(id, score)`` pairs, mappings, or objects;
            the ID of a mapping or object is ``metadata[id_field]``, else its ``id_field`` key or attribute;
            its score is its ``score`` key or attribute, if any.
        queries: as `load_queries` takes them.
        k: the distinct IDs kept per query, >= 1.
        workers: the threads calling the retriever, >= 1.
        id_field: the key or attribute holding a result's ID.
        progress: show a tqdm bar (a counter on stderr without tqdm).
        name: the run's name (default ``retriever``), without spaces.

    Returns:
        A `RetrievalResult`: the run, each query's latency, the failed queries with their errors, and the
        dropped duplicates.

    Raises:
        QrelForgeError: a ``retriever`` with none of these methods and not callable, bad queries, or a bad
            option, naming it.

    >>> def flaky(text):
    ...     if "boom" in text:
    ...         raise RuntimeError("index offline")
    ...     return ["D1", "D2", "D1"]
    >>> res = run_retriever(flaky, {"q1": "ok", "q2": "boom"}, workers=1, progress=False, name="flaky")
    >>> res.run.to_dict(), [f.error for f in res.failures], len(res.duplicates)
    ({'q1': {'D1': 2.0, 'D2': 1.0}}, ["RuntimeError('index offline')"], 1)
    """
    call = _as_callable(retriever)
    k, workers = _check_int(k, "k"), _check_int(workers, "workers")
    if not isinstance(id_field, str) or not id_field:
        raise QrelForgeError(f"id_field must be a non-empty str; got {id_field!r}")
    if name is not None and (not isinstance(name, str) or not name.strip() or _SPACE.search(name)):
        raise QrelForgeError(f"name must be a non-empty str without spaces; got {name!r}")
    qids, texts = load_queries(queries)
    name = name or "retriever"
    bar = _progress_bar(len(texts), bool(progress), name)
    start = time.perf_counter()
    try:
        outcomes = _call_all(call, texts, workers, bar)
    finally:
        bar.close()
    wall = time.perf_counter() - start
    return _assemble(qids, outcomes, k=k, id_field=id_field, name=name, workers=workers, wall=wall)


def _assemble(
    qids: list[str], outcomes: list[tuple], *, k: int, id_field: str, name: str, workers: int, wall: float
) -> RetrievalResult:
    qs: list[str] = []
    ds: list[str] = []
    ss: list[float] = []
    empty: list[str] = []
    failures: list[Failure] = []
    duplicates: list[Duplicate] = []
    retrieved = np.zeros(len(qids), dtype=np.int64)
    for i, (qid, (_, value, exc)) in enumerate(zip(qids, outcomes, strict=True)):
        if exc is None:
            try:
                docs, scores, repeats = _ranking(value, k, id_field)
            except RetrieverOutputError as bad:
                exc = bad
        if exc is not None:
            failures.append(Failure(query_id=qid, error=repr(exc)))
            continue
        duplicates.extend(
            Duplicate(query_id=qid, doc_id=doc, first=first, position=pos) for doc, first, pos in repeats
        )
        if not docs:
            empty.append(qid)
        qs.extend([qid] * len(docs))
        ds.extend(docs)
        ss.extend(scores)
        retrieved[i] = len(docs)
    run = Run(
        qs,
        ds,
        np.array(ss, dtype=np.float64),
        name=name,
        source=f"retriever {name}",
        empty_queries=empty,
        _validated=True,
    )
    latency = np.array([o[0] for o in outcomes], dtype=np.float64)
    return RetrievalResult(
        run, qids, latency, retrieved, failures, duplicates, k=k, workers=workers, wall=wall
    )
