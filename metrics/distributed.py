"""Score runs too big for one machine: a run held as partition files, evaluated query by query on Ray.

`evaluate_ray` returns exactly `metrics.evaluate`'s `Result` on the concatenated run; `read_partitions`
reads the same partitions into one `Run` without Ray. A partition is a TREC or Parquet file (a directory or
a glob stands for its files, in name order). A query found in two partitions is refused
(`EvaluationError`). Ray is optional: without it `evaluate_ray` raises `QrelForgeError`. Design:
docs/modules.md.

The example is skipped by the doctests (+SKIP): it needs Ray, its files, and seconds to start a cluster.

>>> from metrics.distributed import evaluate_ray
>>> result = evaluate_ray("qrels.txt", "run_parts/", ["P@10", "nDCG@10"])  # doctest: +SKIP
>>> result.counts  # doctest: +SKIP
Counts(evaluated=6980, missing=0, extra=0, no_relevant=0)
"""

from __future__ import annotations

import glob
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics import (
    Counts,
    EvaluationError,
    FormatError,
    Problem,
    QrelForgeError,
    Qrels,
    Result,
    Run,
    parse_measures,
    read_qrels,
    read_run,
)

# ``metrics.evaluate`` names both a function (the public name) and a module; type checkers see the module.
from metrics import evaluate as _public_evaluate

_evaluate = cast("Callable[..., Result]", _public_evaluate)

__all__ = ["Address", "evaluate_ray", "evaluate_ray_runs", "partition_paths", "read_partitions"]

RunPaths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
PARQUET_SUFFIXES = (".parquet", ".pq")
PARQUET_COLUMNS = ("query_id", "doc_id", "score")
_PATTERN_CHARS = frozenset("*?[")
INSTALL_HINT = "pip install 'qrelforge[ray]'"


class Address(StrEnum):
    """Where Ray runs: ``local`` starts a Ray on this machine, ``auto`` joins the cluster already running here
    (as ``ray start --head`` left it, or ``RAY_ADDRESS``). Any other text is a cluster address,
    ``HOST:PORT`` or ``ray://HOST:PORT``."""

    AUTO = "auto"
    LOCAL = "local"


# ------------------------------------------------------------------------------------------- partitions
def partition_paths(run: RunPaths) -> list[str]:
    """The partition files of a run, in the order given.

    Args:
        run: a file, a directory (its files, sorted; names starting with ``.`` or ``_`` left out), a glob
            pattern (its matches, sorted), or a sequence of those.

    Returns:
        The file paths.

    Raises:
        EvaluationError: no path, a path that does not exist, an empty directory, or a pattern matching no
            file.

    >>> partition_paths([])
    Traceback (most recent call last):
    ...
    metrics.errors.EvaluationError: run must name at least one partition file; got []
    """
    items = [run] if isinstance(run, str | os.PathLike) else list(run)
    if not items:
        raise EvaluationError(f"run must name at least one partition file; got {items!r}")
    paths = [p for item in items for p in _expand(item)]
    seen: dict[str, int] = {}
    for i, p in enumerate(paths):
        if seen.setdefault(os.path.realpath(p), i) != i:
            raise EvaluationError(f"partition file {p!r} is given twice in run {run!r}")
    return paths


def _expand(item: Any) -> list[str]:
    if not isinstance(item, str | os.PathLike):
        raise EvaluationError(f"a run partition must be a path; got {type(item).__name__} {item!r}")
    text = os.fspath(item)
    if os.path.isdir(text):
        found = sorted(
            str(p) for p in Path(text).iterdir() if p.is_file() and not p.name.startswith((".", "_"))
        )
        if not found:
            raise EvaluationError(f"run directory {text!r} holds no partition files")
        return found
    if os.path.exists(text):
        return [text]
    if _PATTERN_CHARS & set(text):
        matches = sorted(p for p in glob.glob(text) if os.path.isfile(p))
        if not matches:
            raise EvaluationError(f"run pattern {text!r} matches no file")
        return matches
    raise EvaluationError(f"run partition {text!r} does not exist")


def _read_partition(path: str) -> Run:
    """One partition as a `Run`: Parquet by its suffix, else a TREC run (plain or gzip)."""
    if not path.lower().endswith(PARQUET_SUFFIXES):
        return read_run(path)
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise FormatError(Problem(path, None, "", f"not a readable Parquet file: {exc}")) from None
    missing = [c for c in PARQUET_COLUMNS if c not in table.column_names]
    if missing:
        raise FormatError(
            Problem(path, None, repr(table.column_names), f"Parquet run needs columns {missing}")
        )
    score = pc.cast(table.column("score"), pa.float64()).to_numpy()
    return Run(table.column("query_id"), table.column("doc_id"), score, name=None, source=path)


def _split_query_error(query: str, first: str, second: str) -> EvaluationError:
    return EvaluationError(
        f"query {query!r} is split across partitions {first!r} and {second!r}: every line of a query must "
        "be in one partition file (partition the run by query_id)"
    )


class _Owners:
    """Which partition each query was found in, to refuse a query split across two of them."""

    def __init__(self) -> None:
        self.owner: dict[str, str] = {}

    def claim(self, path: str, queries: Iterable[str]) -> None:
        for q in queries:
            first = self.owner.setdefault(q, path)
            if first != path:
                raise _split_query_error(q, first, path)


def _run_name(name: str | None, parts: Sequence[Run | _Partial], run: RunPaths, paths: list[str]) -> str:
    """``name``, else the first partition's (a TREC tag), else the directory's name (of a directory or of a
    pattern's first match), else the first file's name."""
    if name is not None:
        return name
    named = next((p.name for p in parts if p.name), None)
    if named:
        return named
    text = os.fspath(run) if isinstance(run, str | os.PathLike) else ""
    if os.path.isdir(text):
        return Path(text).resolve().name
    first = Path(paths[0])
    return first.resolve().parent.name if _PATTERN_CHARS & set(text) else first.name


def read_partitions(run: RunPaths, *, name: str | None = None) -> Run:
    """Read a partitioned run into one `Run` here, in partition order, without Ray.

    ``evaluate(qrels, read_partitions(run), measures)`` is the local twin of ``evaluate_ray(qrels, run,
    measures)``.

    Args:
        run: the partitions, as `partition_paths` takes them.
        name: the run's name; default: the first partition's tag.

    Returns:
        The `Run`.

    Raises:
        EvaluationError: a bad path (as `partition_paths`), or a query split across two partitions (naming it
            and both files).
        FormatError: a bad partition file.
    """
    paths = partition_paths(run)
    parts = [_read_partition(p) for p in paths]
    owners = _Owners()
    for path, part in zip(paths, parts, strict=True):
        owners.claim(path, part.query_ids)
    if len(parts) == 1:
        only = parts[0]
        only.name = _run_name(name, parts, run, paths)
        return only
    return Run(
        pa.chunked_array([c for p in parts for c in _chunks(p.query_id)], pa.string()),
        pa.chunked_array([c for p in parts for c in _chunks(p.doc_id)], pa.string()),
        np.concatenate([p.score for p in parts]),
        name=_run_name(name, parts, run, paths),
        source=os.fspath(run) if isinstance(run, str | os.PathLike) else paths[0],
    )


def _chunks(column: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(column.chunks) if isinstance(column, pa.ChunkedArray) else [column]


# ----------------------------------------------------------------------------------------------- workers
@dataclass(frozen=True)
class _Partial:
    """What one task sends back: its partition's queries, the values of those in the qrels, the extra ones."""

    path: str
    name: str | None
    queries: list[str]
    scored: list[str]
    values: dict[str, np.ndarray]
    extra: list[str]


def _judgments_of(qrels: Qrels, queries: list[str]) -> Qrels:
    keep = pc.is_in(qrels.query_id, value_set=pa.array(queries, pa.string()))
    flat = keep.combine_chunks() if isinstance(keep, pa.ChunkedArray) else keep
    mask = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=bool)
    return Qrels(
        qrels.query_id.filter(keep), qrels.doc_id.filter(keep), qrels.relevance[mask], source=qrels.source
    )


@dataclass(frozen=True)
class _Failure:
    """A `QrelForgeError` raised in a task, sent back as data: a `FormatError` does not survive pickling (its
    constructor takes problems, not the message), and the driver raises it again as it was."""

    kind: type[QrelForgeError]
    message: str
    problems: tuple[Problem, ...] = ()

    def error(self) -> QrelForgeError:
        if issubclass(self.kind, FormatError):
            return self.kind(list(self.problems))
        return self.kind(self.message)


def _score_partition(qrels: Qrels, path: str, measures: Sequence[str]) -> _Partial | _Failure:
    """The body of a Ray task: `_evaluate_partition`, its bad-input errors returned as a `_Failure`."""
    try:
        return _evaluate_partition(qrels, path, measures)
    except QrelForgeError as exc:
        problems = tuple(exc.problems) if isinstance(exc, FormatError) else ()
        return _Failure(kind=type(exc), message=str(exc), problems=problems)


def _evaluate_partition(qrels: Qrels, path: str, measures: Sequence[str]) -> _Partial:
    """Evaluate one partition on the judgments of its queries."""
    run = _read_partition(path)
    queries = run.query_ids
    judged = _judgments_of(qrels, queries)
    if len(judged) == 0:
        return _Partial(path=path, name=run.name, queries=queries, scored=[], values={}, extra=queries)
    result = _evaluate(judged, run, measures)
    return _Partial(
        path=path,
        name=run.name,
        queries=queries,
        scored=result.query_ids,
        values=result.values,
        extra=result.extra_queries,
    )


# ------------------------------------------------------------------------------------------------- driver
def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise QrelForgeError(
            f"metrics.distributed needs Ray, which is not installed: {INSTALL_HINT}"
        ) from None
    return ray


def _connect(ray: Any, address: str | None, num_cpus: int | None) -> bool:
    """Connect to Ray as ``address`` asks; True when this call started the connection (and must end it)."""
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise EvaluationError(f"address must be None, 'auto', 'local' or 'HOST:PORT'; got {address!r}")
    if num_cpus is not None and (isinstance(num_cpus, bool) or not isinstance(num_cpus, int) or num_cpus < 1):
        raise EvaluationError(f"num_cpus must be None or an int >= 1; got {num_cpus!r}")
    if ray.is_initialized():
        if address is None:
            return False
        raise EvaluationError(f"address={address!r}, but Ray is already initialized here: pass address=None")
    local = address in (None, Address.LOCAL)
    if num_cpus is not None and not local:
        raise EvaluationError(
            f"num_cpus applies to a local Ray only; got num_cpus={num_cpus} with {address=}"
        )
    options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    if local:
        options.update(include_dashboard=False, num_cpus=num_cpus)
    try:
        ray.init(address=address or Address.LOCAL, **options)
    except ConnectionError as exc:
        raise EvaluationError(f"address={address!r}: cannot connect to Ray: {exc}") from None
    return True


def _as_qrels(qrels: Any) -> Qrels:
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, str | os.PathLike):
        return read_qrels(qrels)
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    if hasattr(qrels, "columns"):
        return Qrels.from_dataframe(qrels)
    raise EvaluationError(f"qrels must be a path, DataFrame, mapping or Qrels; got {type(qrels).__name__}")


def _gather(ray: Any, futures: list[Any]) -> list[_Partial]:
    """The tasks' answers in partition order; the first partition's bad-input error is raised here."""
    answers = ray.get(futures)
    for answer in answers:
        if isinstance(answer, _Failure):
            raise answer.error()
    return answers


def _combine(
    base: Result, partials: list[_Partial], paths: list[str], *, name: str, strict: bool, run: RunPaths
) -> Result:
    owners = _Owners()
    position = {q: i for i, q in enumerate(base.query_ids)}
    values = {k: v.copy() for k, v in base.values.items()}
    seen = np.zeros(len(base.query_ids), dtype=bool)
    extra: list[str] = []
    for path, part in zip(paths, partials, strict=True):
        owners.claim(path, part.queries)
        rows = np.array([position[q] for q in part.scored], dtype=np.int64)
        seen[rows] = True
        for k, v in part.values.items():
            values[k][rows] = v
        extra += part.extra
    missing = [q for q, s in zip(base.query_ids, seen, strict=True) if not s]
    if strict and (missing or extra):
        raise EvaluationError(
            f"strict=True: run {run!r}: {len(missing)} qrels queries missing from every partition "
            f"{missing[:10]}, {len(extra)} run queries not in the qrels {extra[:10]}"
        )
    counts = Counts(
        evaluated=base.counts.evaluated,
        missing=len(missing),
        extra=len(extra),
        no_relevant=base.counts.no_relevant,
    )
    return Result(
        base.measures,
        base.query_ids,
        values,
        counts,
        name=name,
        missing=missing,
        extra=extra,
        no_relevant=base.no_relevant,
    )


def evaluate_ray_runs(
    qrels: Any,
    runs: Sequence[RunPaths],
    measures: Iterable[str] | str,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    names: Sequence[str | None] | None = None,
    strict: bool = False,
) -> list[Result]:
    """`evaluate_ray` on several runs at once: the tasks of every partition of every run share the cluster.

    Args:
        qrels, measures, address, num_cpus, strict: as in `evaluate_ray`.
        runs: each run's partitions, as `partition_paths` takes them.
        names: one name (or None) per run; default: each run's first tag.

    Returns:
        One `Result` per run, in the order given.

    Raises:
        EvaluationError: ``names`` of another length than ``runs``; and the errors of `evaluate_ray`.
    """
    ray = _ray()
    specs = parse_measures(measures)
    if not isinstance(strict, bool):
        raise EvaluationError(f"strict must be a bool; got {strict!r}")
    if isinstance(runs, str | os.PathLike) or not runs:
        raise EvaluationError(f"runs must be a non-empty sequence of runs (paths); got {runs!r}")
    if names is not None and len(names) != len(runs):
        raise EvaluationError(f"names must hold one name per run ({len(runs)}); got {names!r}")
    qrels = _as_qrels(qrels)
    base = _evaluate(qrels, Run.from_dict({}), specs)  # every query missing: the values evaluate gives them
    paths = [partition_paths(r) for r in runs]
    started = _connect(ray, address, num_cpus)
    try:
        task = ray.remote(num_cpus=1)(_score_partition)
        qrels_ref, measure_names = ray.put(qrels), [str(m) for m in specs]
        futures = [[task.remote(qrels_ref, p, measure_names) for p in run_paths] for run_paths in paths]
        partials = [_gather(ray, f) for f in futures]
    finally:
        if started:
            ray.shutdown()
    return [
        _combine(
            base,
            parts,
            run_paths,
            name=_run_name(names[i] if names else None, parts, runs[i], run_paths),
            strict=strict,
            run=runs[i],
        )
        for i, (parts, run_paths) in enumerate(zip(partials, paths, strict=True))
    ]


def evaluate_ray(
    qrels: Any,
    run_paths: RunPaths,
    measures: Iterable[str] | str,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    name: str | None = None,
    strict: bool = False,
) -> Result:
    """Score a run held as partition files on Ray: the numbers of `metrics.evaluate` on their concatenation.

    See the module docstring for the partitions' formats and the rules.

    Args:
        qrels: a path, DataFrame, mapping or `Qrels`.
        run_paths: the partitions, as `partition_paths` takes them.
        measures: names as for `metrics.evaluate`.
        address: None (the Ray already connected, else a new local one), ``"local"``, ``"auto"`` or a
            cluster address.
        num_cpus: the CPUs of a Ray started here; default: the machine's.
        name: the run's name; default: the first partition's tag.
        strict: when True, missing or extra queries are errors.

    Returns:
        The `Result`, equal to `metrics.evaluate`'s on the concatenated partitions.

    Raises:
        EvaluationError: a query split across partitions (naming it and both files); the errors of
            `metrics.evaluate`.
        FormatError: a bad partition.
        QrelForgeError: Ray is not installed.
    """
    return evaluate_ray_runs(
        qrels, [run_paths], measures, address=address, num_cpus=num_cpus, names=[name], strict=strict
    )[0]
