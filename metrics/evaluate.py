"""`evaluate()`: score one run against qrels, with the semantics spelled out and the numbers kept apart from
their rendering (`Result`); and the coercions every analysis shares (`as_qrels`, `as_run`, `named_runs`).

The module itself is callable: ``from metrics import evaluate; evaluate(qrels, run, ["P@10"])`` and
``import metrics.evaluate as ev; ev(...)`` call `evaluate` (see `metrics._callable`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics import _callable, _ids
from metrics._lazy import lazy
from metrics._text import _few
from metrics.data import Qrels, Run
from metrics.errors import EvaluationError, QrelForgeError, quoted
from metrics.measures import MIN_GEO_MEAN, Aggregate, Gain, Measure, compute, parse_measures
from metrics.measures.ranking import position_within, rank_run

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy("pyarrow")

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["evaluate", "Result", "Counts", "as_qrels", "as_run", "named_runs", "map_chunks", "best_chunks"]


@dataclass(frozen=True)
class Counts:
    """How many queries were evaluated (those of the qrels), missing from the run (scored 0), extra in the
    run (ignored), and without any relevant document (undefined for R, F1, AP, R-Prec, nDCG)."""

    evaluated: int
    missing: int
    extra: int
    no_relevant: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class Result:
    """The scores of one run: means, per-query values, and the query counts behind them.

    ``mean[name]`` is the mean over the queries where the measure is defined (``n[name]`` of them), or None
    when it is defined for none. ``per_query`` is a DataFrame indexed by query ID, NaN where undefined.
    """

    def __init__(
        self,
        measures: Sequence[Measure],
        query_ids: list[str],
        values: dict[str, np.ndarray],
        counts: Counts,
        *,
        name: str | None,
        missing: list[str],
        extra: list[str],
        no_relevant: np.ndarray | None = None,
    ):
        self.measures = tuple(measures)
        self.query_ids = query_ids
        self.values = values
        self.counts = counts
        self.name = name
        self.missing_queries = missing
        self.extra_queries = extra
        # per query: True where it has no relevant document (the `Counts.no_relevant` of a subset, `take`)
        self.no_relevant = np.zeros(len(query_ids), bool) if no_relevant is None else no_relevant

    def take(self, rows: np.ndarray) -> Result:
        """The result restricted to the queries at positions ``rows`` (a slice, `metrics.slices`): values,
        counts and means of those queries only; no extra queries (they belong to no query of the qrels)."""
        rows = np.asarray(rows, dtype=np.intp)
        query_ids = [self.query_ids[i] for i in rows.tolist()]
        missing = set(self.missing_queries)
        lost = [q for q in query_ids if q in missing]
        no_relevant = self.no_relevant[rows]
        counts = Counts(evaluated=len(rows), missing=len(lost), extra=0, no_relevant=int(no_relevant.sum()))
        values = {k: v[rows] for k, v in self.values.items()}
        return Result(
            self.measures,
            query_ids,
            values,
            counts,
            name=self.name,
            missing=lost,
            extra=[],
            no_relevant=no_relevant,
        )

    @property
    def mean(self) -> dict[str, float | None]:
        """Per measure, the mean over the queries where it is defined (None if none): arithmetic, or for a
        measure whose ``aggregate`` is geometric (GMAP) exp(mean(log(max(v, 0.00001)))), as trec_eval's
        gm_map (queries without relevant documents are left out here, where trec_eval floors their 0)."""
        how = {str(m): m.definition.aggregate for m in self.measures}
        return {k: _aggregate(v, how.get(k, Aggregate.MEAN)) for k, v in self.values.items()}

    @property
    def n(self) -> dict[str, int]:
        """Number of queries each mean is taken over."""
        return {k: int((~np.isnan(v)).sum()) for k, v in self.values.items()}

    @property
    def per_query(self) -> pd.DataFrame:
        import pandas as pd

        frame = pd.DataFrame(self.values, index=pd.Index(self.query_ids, name="query_id"))
        return frame[[str(m) for m in self.measures]]

    def per_query_dict(self) -> dict[str, dict[str, float | None]]:
        names = [str(m) for m in self.measures]
        columns = [self.values[n].tolist() for n in names]
        return {
            q: {n: (None if v != v else v) for n, v in zip(names, row, strict=True)}
            for q, row in zip(self.query_ids, zip(*columns, strict=True), strict=True)
        }

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "mean": self.mean,
            "n": self.n,
            "counts": self.counts.to_dict(),
        }
        if per_query:
            out["per_query"] = self.per_query_dict()
        return out

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={'None' if v is None else f'{v:.4f}'}" for k, v in self.mean.items())
        return f"Result({self.name!r}: {shown}; {self.counts.evaluated} queries)"


def evaluate(
    qrels: Any,
    run: Any,
    measures: Iterable[str | Measure] | str,
    *,
    corpus: Any = None,
    strict: bool = False,
    chunk_map: Any = None,
) -> Result:
    """Score ``run`` against ``qrels`` on each of ``measures``, as ``trec_eval -c`` does.

    The evaluated queries are those of the qrels. A query missing from the run scores 0 on every measure
    (``FirstRel``: None); queries only in the run are ignored and counted. R@k, F1@k, AP, AP@k, R-Prec and
    nDCG are undefined (None) for a query without relevant documents and left out of the mean; unjudged
    documents count as non-relevant.

    Args:
        qrels: a path (TREC or BEIR TSV), a DataFrame (``query_id``, ``doc_id``, ``relevance``), a mapping
            ``{qid: {doc_id: grade}}`` or a `Qrels`.
        run: a path (TREC run), a DataFrame (``query_id``, ``doc_id``, ``score``), a mapping
            ``{qid: {doc_id: score}}``, ranked lists ``{qid: [doc_id, ...]}`` (their order is kept) or a
            `Run`.
        measures: names such as ``"P@10"``, ``"nDCG@10"``, ``"P(rel=2)@5"``, or `Measure` objects; one
            string may hold several names.
        corpus: a path, DataFrame or collection of document IDs; when given, a document ID outside it is an
            error.
        strict: when True, a query missing from the run or only in the run is an error.
        chunk_map: ``{chunk_id: doc_id}``, a DataFrame or a path with ``chunk_id`` and ``doc_id``: maps a
            chunk-level run to documents, keeping each document's first (best-ranked) chunk.

    Returns:
        A `Result`: the mean of each measure, its per-query values and the query `Counts`.

    Raises:
        MeasureError: a measure name cannot be read.
        FormatError: a file line or a mapping value cannot be read (names the file, line and value).
        EvaluationError: empty qrels; ``strict`` and a missing or extra query; a document outside
            ``corpus`` or a chunk outside ``chunk_map``; exponential gains that overflow a float64.

    >>> r = evaluate({"q1": {"D1": 1, "D2": 1}}, {"q1": ["D1", "D3", "D4"]}, ["P@3", "R@3"])
    >>> {k: round(v, 3) for k, v in r.mean.items()}
    {'P@3': 0.333, 'R@3': 0.5}
    """
    specs = parse_measures(measures)
    if not isinstance(strict, bool):
        raise EvaluationError(f"strict must be a bool; got {strict!r}")
    qrels, run = as_qrels(qrels), as_run(run)
    if len(qrels) == 0:
        raise EvaluationError(f"qrels {qrels.source!r} has no judgments; nothing to evaluate")
    _check_gains(qrels, specs)
    if chunk_map is not None:
        run = map_chunks(run, chunk_map)
    if corpus is not None:
        _check_corpus(qrels, run, corpus)
    ranked = rank_run(qrels, run)
    missing = [q for q, seen in zip(ranked.query_ids, ranked.in_run, strict=True) if not seen]
    if strict and (missing or ranked.extra_queries):
        raise EvaluationError(_strict_message(run, missing, ranked.extra_queries))
    values = {str(m): compute(ranked, m) for m in specs}
    no_relevant = np.asarray(ranked.relevant_count(1) == 0)
    counts = Counts(
        evaluated=ranked.nq,
        missing=len(missing),
        extra=len(ranked.extra_queries),
        no_relevant=int(no_relevant.sum()),
    )
    return Result(
        specs,
        ranked.query_ids,
        values,
        counts,
        name=run.name,
        missing=missing,
        extra=ranked.extra_queries,
        no_relevant=no_relevant,
    )


def _check_gains(qrels: Qrels, specs: Sequence[Measure]) -> None:
    """Refuse grades whose exponential gains overflow a float64 (2**1024): nDCG(gain=exp) would be NaN for
    their query, silently left out of the mean. The gains of a query's judgments bound its ideal DCG and its
    DCG, so a finite sum keeps every nDCG finite."""
    exp = [m for m in specs if m.gain == Gain.EXP]
    if not exp or not len(qrels):
        return
    codes, queries = qrels.query_codes()
    positive = np.where(qrels.relevance > 0, qrels.relevance, 0).astype(np.float64)
    with np.errstate(over="ignore"):
        total = np.bincount(codes, weights=np.exp2(positive) - 1.0, minlength=len(queries))
    if np.isfinite(total).all():
        return
    code = int(np.flatnonzero(~np.isfinite(total))[0])
    rows = np.flatnonzero(codes == code)
    row = int(rows[np.argmax(qrels.relevance[rows])])
    raise EvaluationError(
        f"{exp[0]}: the exponential gains (2**grade - 1) of query {quoted(queries[code].as_py())} overflow a "
        f"float64, e.g. grade {int(qrels.relevance[row])} of document {quoted(qrels.doc_id[row].as_py())}; "
        "use gain=lin or grades below 1024"
    )


def _aggregate(values: np.ndarray, how: Aggregate) -> float | None:
    defined = values[~np.isnan(values)]
    if not len(defined):
        return None
    if how == Aggregate.GEOMETRIC:
        return float(np.exp(np.mean(np.log(np.maximum(defined, MIN_GEO_MEAN)))))
    return float(np.mean(defined))


def _strict_message(run: Run, missing: list[str], extra: list[str]) -> str:
    parts = []
    if missing:
        parts.append(
            f"{len(missing)} qrels quer{'y' if len(missing) == 1 else 'ies'} missing from the run: "
            f"{_few(missing)}"
        )
    if extra:
        parts.append(
            f"{len(extra)} run quer{'y' if len(extra) == 1 else 'ies'} not in the qrels: {_few(extra)}"
        )
    return f"strict=True: {run.source}: " + "; ".join(parts)


def as_qrels(qrels: Any) -> Qrels:
    """Coerce qrels in any accepted form into `Qrels`.

    Args:
        qrels: a path or open file (TREC or BEIR TSV), a DataFrame (``query_id``, ``doc_id``,
            ``relevance``), a mapping ``{qid: {doc_id: grade}}`` or a `Qrels` (returned as is).

    Returns:
        The `Qrels`.

    Raises:
        EvaluationError: ``qrels`` is of none of these types.
        FormatError: a line or value cannot be read.

    >>> len(as_qrels({"q1": {"d1": 1, "d2": 0}}))
    2
    """
    from metrics.formats import read_qrels

    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, str | os.PathLike) or hasattr(qrels, "read"):
        return read_qrels(qrels)
    if hasattr(qrels, "columns"):
        return Qrels.from_dataframe(qrels)
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    raise EvaluationError(f"qrels must be a path, DataFrame, mapping or Qrels; got {type(qrels).__name__}")


def as_run(run: Any) -> Run:
    """Coerce a run in any accepted form into `Run`.

    Args:
        run: a path or open file (TREC run), a DataFrame (``query_id``, ``doc_id``, ``score``), a mapping
            ``{qid: {doc_id: score}}``, ranked lists ``{qid: [doc_id, ...]}`` or a `Run` (returned as is).

    Returns:
        The `Run`.

    Raises:
        EvaluationError: ``run`` is of none of these types.
        FormatError: a line or value cannot be read.

    >>> len(as_run({"q1": ["d1", "d2", "d3"]}))
    3
    """
    from metrics.formats import read_run

    if isinstance(run, Run):
        return run
    if isinstance(run, str | os.PathLike) or hasattr(run, "read"):
        return read_run(run)
    if hasattr(run, "columns"):
        return Run.from_dataframe(run)
    if isinstance(run, Mapping):
        return Run.from_dict(run)
    raise EvaluationError(f"run must be a path, DataFrame, mapping or Run; got {type(run).__name__}")


def named_runs(runs: Any, *, minimum: int = 2) -> dict[str, Run]:
    """Runs keyed by name, each coerced by `as_run`.

    Args:
        runs: a mapping ``{name: run}`` (names as given), or a sequence of runs named by their tags (a TREC
            run's tag, or ``Run.name``). Each run is anything `evaluate` accepts.
        minimum: the fewest runs accepted.

    Returns:
        ``{name: Run}``, in the order given.

    Raises:
        QrelForgeError: fewer than ``minimum`` runs, an empty or repeated name, a run in a sequence without
            a name, or ``runs`` neither a mapping nor a sequence.

    >>> list(named_runs({"bm25": {"q1": ["d1"]}, "dense": {"q1": ["d2"]}}))
    ['bm25', 'dense']
    """
    if isinstance(runs, Mapping):
        pairs = [
            (_run_name(name, f"run names must be non-empty strings; got {name!r}"), as_run(run))
            for name, run in runs.items()
        ]
    elif (
        isinstance(runs, str | os.PathLike | Run)
        or hasattr(runs, "columns")
        or not isinstance(runs, Iterable)
    ):
        raise QrelForgeError(
            f"runs must be a mapping {{name: run}} or a list of runs; got {type(runs).__name__}"
        )
    else:
        coerced = [as_run(run) for run in runs]
        pairs = [
            (_run_name(r.name, f"runs[{i}] has no name; pass runs as a mapping {{name: run}}"), r)
            for i, r in enumerate(coerced)
        ]
    named: dict[str, Run] = {}
    for i, (name, run) in enumerate(pairs):
        if name in named:
            first = [n for n, _ in pairs].index(name)
            raise QrelForgeError(
                f"runs[{first}] and runs[{i}] are both named {name!r}; pass runs as a mapping "
                "{name: run} to name them apart"
            )
        named[name] = run
    if len(named) < minimum:
        raise QrelForgeError(
            f"runs must hold at least {minimum} run{'s' if minimum > 1 else ''}; got {len(named)}"
        )
    return named


def _run_name(name: Any, problem: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise QrelForgeError(
            problem if name is None else f"run names must be non-empty strings; got {name!r}"
        )
    return name


# ------------------------------------------------------------------------------------ corpus and chunks
def _corpus_ids(corpus: Any) -> pa.Array:
    from metrics.formats import read_corpus

    if isinstance(corpus, str | os.PathLike) or hasattr(corpus, "read"):
        corpus = read_corpus(corpus)
    if hasattr(corpus, "columns"):
        if "doc_id" not in corpus.columns:
            raise EvaluationError(f"corpus DataFrame needs a 'doc_id' column; got {list(corpus.columns)}")
        corpus = corpus["doc_id"].astype(str).tolist()
    if isinstance(corpus, str) or not isinstance(corpus, Iterable):
        raise EvaluationError(
            f"corpus must be a path, DataFrame or collection of doc IDs; got {type(corpus).__name__}"
        )
    return pa.array([str(d) for d in corpus], type=pa.string())


def _check_corpus(qrels: Qrels, run: Run, corpus: Any) -> None:
    known = _corpus_ids(corpus)
    for rows, what in ((run, "run"), (qrels, "qrels")):
        unknown = np.flatnonzero(_ids.lookup(rows.doc_id, known) < 0)
        if len(unknown):
            raise EvaluationError(_unknown_message(rows, what, unknown))


def _unknown_message(rows: Qrels | Run, what: str, unknown: np.ndarray) -> str:
    from metrics.formats import line_of_row

    row = int(unknown[0])
    doc, qid = rows.doc_id[row].as_py(), rows.query_id[row].as_py()
    line = line_of_row(rows.source, row)
    where = f"{rows.source}:{line}" if line else f"{rows.source} row {row + 1}"
    more = f" ({len(unknown)} unknown document IDs in the {what} in all)" if len(unknown) > 1 else ""
    return f"{where}: unknown document ID {quoted(doc)} for query {quoted(qid)}: not in the corpus{more}"


def _chunk_table(chunk_map: Any) -> tuple[pa.Array, pa.Array]:
    from metrics.formats import read_chunk_map

    if isinstance(chunk_map, str | os.PathLike) or hasattr(chunk_map, "read"):
        return read_chunk_map(chunk_map)
    if hasattr(chunk_map, "columns"):
        if not {"chunk_id", "doc_id"} <= set(chunk_map.columns):
            raise EvaluationError(
                f"chunk_map DataFrame needs 'chunk_id' and 'doc_id'; got {list(chunk_map.columns)}"
            )
        chunk_map = dict(zip(chunk_map["chunk_id"].astype(str), chunk_map["doc_id"].astype(str), strict=True))
    if not isinstance(chunk_map, Mapping):
        raise EvaluationError(
            f"chunk_map must be a mapping, DataFrame or path; got {type(chunk_map).__name__}"
        )
    return pa.array(list(chunk_map), pa.string()), pa.array(list(chunk_map.values()), pa.string())


def map_chunks(run: Run, chunk_map: Any) -> Run:
    """The run with chunk IDs replaced by their documents, keeping each document's best-ranked chunk.

    Args:
        run: a run whose document IDs are chunk IDs.
        chunk_map: ``{chunk_id: doc_id}``, a DataFrame or a path with ``chunk_id`` and ``doc_id`` columns.

    Returns:
        A `Run` over documents, ranked as the chunks were; its scores are the negated ranks.

    Raises:
        EvaluationError: a chunk of the run is not in the map, or the map is of no accepted type.

    >>> mapped = map_chunks(as_run({"q1": ["a#2", "b#1", "a#1"]}), {"a#1": "a", "a#2": "a", "b#1": "b"})
    >>> mapped.doc_id.to_pylist()
    ['a', 'b']
    """
    return best_chunks(run, chunk_map)[0]


def best_chunks(run: Run, chunk_map: Any) -> tuple[Run, pa.Array]:
    """`map_chunks`, with the chunk each row of the mapped run kept: its document's best-ranked chunk.

    Args:
        run: a run whose document IDs are chunk IDs.
        chunk_map: ``{chunk_id: doc_id}``, a DataFrame or a path with ``chunk_id`` and ``doc_id`` columns.

    Returns:
        ``(mapped run, chunk IDs)``: the chunk IDs an Arrow string array aligned with the mapped run's rows.

    Raises:
        EvaluationError: a chunk of the run is not in the map, or the map is of no accepted type.

    >>> chunk_map = {"a#1": "a", "a#2": "a", "b#1": "b"}
    >>> mapped, kept = best_chunks(as_run({"q1": ["a#2", "b#1", "a#1"]}), chunk_map)
    >>> mapped.doc_id.to_pylist(), kept.to_pylist()
    (['a', 'b'], ['a#2', 'b#1'])
    """
    chunks, docs = _chunk_table(chunk_map)
    ranked = run.ranked()
    at = _ids.lookup(ranked.doc_id, chunks)
    if (at < 0).any():
        row = int(np.flatnonzero(at < 0)[0])
        raise EvaluationError(
            f"{run.source}: chunk {quoted(ranked.doc_id[row].as_py())} of query "
            f"{quoted(ranked.query_id[row].as_py())} is not in the chunk map "
            f"({int((at < 0).sum())} unmapped in all)"
        )
    codes, _ = ranked.query_codes()
    mapped = docs.take(_ids.indices(at))
    keep = np.ones(len(at), dtype=bool)
    keep[_ids.duplicate_rows(codes, mapped)] = False
    take = _ids.indices(np.flatnonzero(keep))
    position = position_within(codes[keep])
    out = Run(
        ranked.query_id.take(take),
        mapped.take(take),
        -position.astype(np.float64),
        name=run.name,
        source=run.source,
        empty_queries=run.empty_queries,
        _validated=True,
    )
    return out, ranked.doc_id.take(take)


_callable.make_callable(__name__, evaluate)
