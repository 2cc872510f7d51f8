"""In-memory qrels and runs: columnar, validated once, cheap to score.

`Qrels` and `Run` hold their rows as Arrow string columns (query and document IDs) and numpy columns
(grades, scores). Build them from files (`metrics.formats`), from pandas DataFrames, or from plain mappings;
every constructor validates its input and raises `FormatError` naming the row and the bad value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics import _ids
from metrics._lazy import lazy
from metrics.errors import FormatError, Problem, quoted

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    pa = lazy("pyarrow")
    pc = lazy("pyarrow.compute")

if TYPE_CHECKING:  # pandas is imported lazily: the CLI scores without it
    import pandas as pd

__all__ = ["Qrels", "Run"]


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def _is_score(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _check_id(value: Any, what: str, where: str, source: str) -> str:
    """An ID is a non-empty str without spaces, tabs or line breaks (it must survive a TREC file)."""
    if not isinstance(value, str):
        raise FormatError(
            Problem(source, None, repr(value), f"{what} must be a str; got {type(value).__name__} {where}")
        )
    if not value:
        raise FormatError(Problem(source, None, value, f"{what} is empty {where}"))
    if len(value.encode("utf-8", "surrogatepass")) > _ids.MAX_ID_BYTES:
        raise FormatError(
            Problem(source, None, value, f"{what} is longer than {_ids.MAX_ID_BYTES} bytes {where}")
        )
    if _ids.BAD_ID_CHARS.search(value):
        raise FormatError(Problem(source, None, value, f"{what} contains a space, tab or line break {where}"))
    return value


class _Rows:
    """Shared behaviour of Qrels and Run: query/doc columns and row access."""

    __slots__ = ("_query_id", "_doc_id", "source", "_encoded", "_query_list", "_doc_hashes")
    _query_id: _ids.Strings | None
    _doc_id: _ids.Strings | _ids.Packed
    source: str
    _encoded: tuple[np.ndarray, pa.Array] | None
    _query_list: tuple[np.ndarray, list[str]] | None
    _doc_hashes: np.ndarray | None

    def _start(self, query_id: Any, doc_id: Any, source: str) -> None:
        self.query_id = _ids.as_strings(query_id)
        self.doc_id = _ids.as_strings(doc_id)
        self._encoded = self._query_list = self._doc_hashes = None
        self.source = source

    @property
    def query_id(self) -> _ids.Strings:
        """The query ID of every row (an Arrow string column; rebuilt from the query codes on first use when
        the reader kept only those, see `_drop_query_strings`)."""
        if self._query_id is None:
            codes, distinct = self.query_codes()
            self._query_id = distinct.take(_ids.indices(codes))
        return self._query_id

    @query_id.setter
    def query_id(self, values: _ids.Strings) -> None:
        self._query_id = values

    @property
    def doc_id(self) -> _ids.Strings:
        """The document ID of every row (an Arrow string column; built on first use, sharing the bytes, when
        the numpy reader of plain TREC files made the rows)."""
        if isinstance(self._doc_id, _ids.Packed):
            self._doc_id = self._doc_id.to_arrow()
        return self._doc_id

    @doc_id.setter
    def doc_id(self, values: _ids.Strings) -> None:
        self._doc_id = values

    def _docs(self) -> _ids.Strings | _ids.Packed:
        """The document IDs as held (`_ids.Packed` or Arrow), for the code that reads both."""
        return self._doc_id

    def __len__(self) -> int:
        if self._query_id is None:
            return len(self._query_code_list()[0])
        return len(self._query_id)

    def query_codes(self) -> tuple[np.ndarray, pa.Array]:
        """Per row, the code of its query (int32), and the distinct query IDs in first-appearance order."""
        encoded = getattr(self, "_encoded", None)
        if encoded is None:
            if self._query_list is not None:
                codes, names = self._query_list
                encoded = self._encoded = (codes, pa.array(names, type=pa.string()))
            else:
                encoded = self._encoded = _ids.encode(self.query_id)
        return encoded

    def _query_code_list(self) -> tuple[np.ndarray, list[str]]:
        """`query_codes` with the distinct query IDs as a list (no Arrow needed when a reader gave them)."""
        if self._query_list is None:
            codes, distinct = self.query_codes()
            self._query_list = (codes, distinct.to_pylist())
        return self._query_list

    def _drop_query_strings(self) -> None:
        """Keep the query IDs as codes only (4 bytes a row instead of the strings and their offsets): a reader
        calls it on the rows it built, once it holds no other reference to the strings."""
        self.query_codes()
        self._query_id = None

    def doc_hashes(self) -> np.ndarray:
        """Per row, a 64-bit hash of its document ID (`_ids.hash_strings`), computed once."""
        hashes = getattr(self, "_doc_hashes", None)
        if hashes is None:
            hashes = self._doc_hashes = _ids.hash_strings(self._doc_id)
        return hashes

    @classmethod
    def _packed(
        cls,
        codes: np.ndarray,
        names: list[str],
        docs: _ids.Packed,
        source: str,
        doc_hashes: np.ndarray | None = None,
    ) -> Any:
        """Rows from the numpy reader: query codes into ``names`` (first-appearance order) and packed document
        IDs (with their `doc_hashes` when the reader computed them); the caller sets the values column
        (validated already)."""
        rows = cls.__new__(cls)
        rows._query_id, rows._doc_id, rows.source = None, docs, source
        rows._encoded, rows._query_list, rows._doc_hashes = None, (codes, names), doc_hashes
        return rows

    @property
    def query_ids(self) -> list[str]:
        """The distinct query IDs, in order of first appearance."""
        return list(self._query_code_list()[1])


class Qrels(_Rows):
    """Relevance judgments: rows of (query_id, doc_id, relevance), at most one per (query, document).

    A grade is an integer; grades of ``rel`` or more count as relevant for a measure with relevance threshold
    ``rel`` (default 1), lower grades (negative ones included) as judged non-relevant.

    >>> q = Qrels.from_dict({"q1": {"D1": 2, "D3": 0}})
    >>> len(q), q.to_dict()
    (2, {'q1': {'D1': 2, 'D3': 0}})
    """

    __slots__ = ("relevance",)

    def __init__(self, query_id, doc_id, relevance, *, source: str = "qrels", _validated: bool = False):
        self._start(query_id, doc_id, source)
        self.relevance = np.asarray(relevance, dtype=np.int64)
        if not _validated:
            _validate_columns(self, "relevance")

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Mapping[str, int]], *, source: str = "qrels") -> Qrels:
        """From ``{query_id: {doc_id: grade}}``. Grades must be ints (not bools)."""
        if not isinstance(mapping, Mapping):
            raise FormatError(
                Problem(source, None, repr(type(mapping)), "qrels must be a mapping {qid: {doc_id: grade}}")
            )
        qs, ds, gs = [], [], []
        for qid, docs in mapping.items():
            _check_id(qid, "query_id", "", source)
            if not isinstance(docs, Mapping):
                raise FormatError(
                    Problem(source, None, repr(docs), f"judgments of query {qid!r} must be a mapping")
                )
            for doc, grade in docs.items():
                _check_id(doc, "doc_id", f"for query {qid!r}", source)
                if not _is_int(grade) or not -(2**63) <= grade < 2**63:
                    what = "an int in the 64-bit range" if _is_int(grade) else "an int"
                    raise FormatError(
                        Problem(
                            source, None, repr(grade), f"grade of {doc!r} for query {qid!r} must be {what}"
                        )
                    )
                qs.append(qid)
                ds.append(doc)
                gs.append(int(grade))
        return cls(qs, ds, np.array(gs, dtype=np.int64), source=source, _validated=True)

    @classmethod
    def from_dataframe(cls, df: pd.DataFrame, *, source: str = "DataFrame") -> Qrels:
        """From a DataFrame with columns ``query_id``, ``doc_id`` and ``relevance``."""
        q, d = _frame_ids(df, source, ("query_id", "doc_id", "relevance"))
        grades = _frame_numbers(df["relevance"], "relevance", source, integer=True)
        return cls(q, d, grades, source=source)

    def to_dataframe(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(
            {
                "query_id": self.query_id.to_pylist(),
                "doc_id": self.doc_id.to_pylist(),
                "relevance": self.relevance,
            }
        )

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, d, g in zip(
            self.query_id.to_pylist(), self.doc_id.to_pylist(), self.relevance.tolist(), strict=True
        ):
            out.setdefault(q, {})[d] = g
        return out

    def __repr__(self) -> str:
        return f"Qrels({len(self)} judgments, {len(self.query_ids)} queries, source={self.source!r})"


class Run(_Rows):
    """A system's ranking: rows of (query_id, doc_id, score), at most one per (query, document).

    Order is by score descending; ties are broken by document ID descending in byte order, after rounding
    scores to single precision, exactly as trec_eval does (it ignores the rank column). ``empty_queries``
    lists queries the system answered with no document at all (they count as answered, scoring 0).

    >>> r = Run.from_dict({"q1": ["D1", "D3", "D4"]})
    >>> r.to_dict()
    {'q1': {'D1': 3.0, 'D3': 2.0, 'D4': 1.0}}
    """

    __slots__ = ("score", "name", "empty_queries")

    def __init__(
        self,
        query_id,
        doc_id,
        score,
        *,
        name: str | None = None,
        source: str = "run",
        empty_queries: Sequence[str] = (),
        _validated: bool = False,
    ):
        self._start(query_id, doc_id, source)
        self.score = np.asarray(score, dtype=np.float64)
        self.name = name
        self.empty_queries = tuple(empty_queries)
        if not _validated:
            _validate_columns(self, "score")

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any], *, name: str | None = None, source: str = "run") -> Run:
        """From ``{qid: {doc_id: score}}`` or ranked lists ``{qid: [doc_id, ...]}`` (their order is kept)."""
        if not isinstance(mapping, Mapping):
            raise FormatError(
                Problem(source, None, repr(type(mapping)), "run must be a mapping {qid: ranking}")
            )
        qs, ds, ss, empty = [], [], [], []
        for qid, ranking in mapping.items():
            _check_id(qid, "query_id", "", source)
            docs, scores = _ranking_items(qid, ranking, source)
            if not docs:
                empty.append(qid)
            qs.extend([qid] * len(docs))
            ds.extend(docs)
            ss.extend(scores)
        return cls(qs, ds, np.array(ss, dtype=np.float64), name=name, source=source, empty_queries=empty)

    @classmethod
    def from_dataframe(cls, df: pd.DataFrame, *, name: str | None = None, source: str = "DataFrame") -> Run:
        """From a DataFrame with columns ``query_id``, ``doc_id`` and ``score`` (other columns ignored)."""
        q, d = _frame_ids(df, source, ("query_id", "doc_id", "score"))
        scores = _frame_numbers(df["score"], "score", source, integer=False)
        return cls(q, d, scores, name=name, source=source)

    def ranked(self) -> Run:
        """The same run in evaluation order: query, then score descending, then doc ID descending."""
        order = _ids.trec_order(self.query_codes()[0], self.score, self.doc_id)
        take = _ids.indices(order)
        return Run(
            self.query_id.take(take),
            self.doc_id.take(take),
            self.score[order],
            name=self.name,
            source=self.source,
            empty_queries=self.empty_queries,
            _validated=True,
        )

    def to_dataframe(self) -> pd.DataFrame:
        """Rows in evaluation order with their 1-based ``rank`` within the query."""
        import pandas as pd

        r = self.ranked()
        rank = _ids.position_within(r.query_codes()[0]) + 1
        return pd.DataFrame(
            {
                "query_id": r.query_id.to_pylist(),
                "doc_id": r.doc_id.to_pylist(),
                "score": r.score,
                "rank": rank,
            }
        )

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {q: {} for q in self.empty_queries}
        for q, d, s in zip(
            self.query_id.to_pylist(), self.doc_id.to_pylist(), self.score.tolist(), strict=True
        ):
            out.setdefault(q, {})[d] = s
        return out

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(self)} rows, {len(self.query_ids)} queries, source={self.source!r})"


def _ranking_items(qid: str, ranking: Any, source: str) -> tuple[list[str], list[float]]:
    if isinstance(ranking, Mapping):
        docs = [_check_id(d, "doc_id", f"for query {qid!r}", source) for d in ranking]
        return docs, [_score(s, qid, doc, source) for doc, s in zip(docs, ranking.values(), strict=True)]
    if isinstance(ranking, str) or not isinstance(ranking, Sequence):
        raise FormatError(
            Problem(
                source,
                None,
                repr(ranking),
                f"ranking of query {qid!r} must be a list of doc IDs or a mapping",
            )
        )
    docs = [
        _check_id(d, "doc_id", f"at position {i + 1} for query {qid!r}", source)
        for i, d in enumerate(ranking)
    ]
    seen: dict[str, int] = {}
    for i, doc in enumerate(docs, 1):
        if doc in seen:
            raise FormatError(
                Problem(
                    source,
                    None,
                    doc,
                    f"duplicate document {doc!r} for query {qid!r} at positions {seen[doc]} and {i}",
                )
            )
        seen[doc] = i
    return docs, [float(len(docs) - i) for i in range(len(docs))]


def _score(value: Any, qid: str, doc: str, source: str) -> float:
    """A run's score as a float, or FormatError naming the query, the document and the value (also a number
    too large for a float, such as ``10**400``)."""
    try:
        score = float(value) if _is_score(value) else math.nan
    except OverflowError:
        raise FormatError(
            Problem(
                source,
                None,
                _digits(value),
                f"score of {doc!r} for query {qid!r} is too large for a float (at most about 1.8e308)",
            )
        ) from None
    if math.isnan(score):
        raise FormatError(
            Problem(source, None, repr(value), f"score of {doc!r} for query {qid!r} must be a number")
        )
    return score


def _digits(value: Any) -> str:
    """A number's text for a message, even one past Python's limit on converting integers to text."""
    try:
        return str(value)
    except ValueError:
        return f"an integer of {int(value).bit_length()} bits"


def _frame_ids(df: Any, source: str, columns: tuple[str, ...]) -> tuple[pa.Array, pa.Array]:
    missing = [c for c in columns if c not in getattr(df, "columns", ())]
    if missing:
        have = list(getattr(df, "columns", []))
        raise FormatError(
            Problem(source, None, repr(have), f"missing column{'s' if len(missing) > 1 else ''} {missing}")
        )
    return _frame_id_column(df, columns[0], source), _frame_id_column(df, columns[1], source)


def _frame_id_column(df: Any, column: str, source: str) -> pa.Array:
    series = df[column]
    if series.dtype.kind in "iu":
        return pa.array(series.astype(str).tolist(), type=pa.string())
    try:
        arr = pa.array(series.to_numpy(dtype=object), type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        bad = next(v for v in series if v is not None and not isinstance(v, str))
        row = int(np.flatnonzero(series.map(lambda v: v is bad).to_numpy())[0])
        raise FormatError(
            Problem(source, row + 1, repr(bad), f"{column} must be a str; got {type(bad).__name__}", "row")
        ) from None
    if arr.null_count:
        row = _first_null(arr)
        raise FormatError(Problem(source, row + 1, "None", f"{column} is missing", "row"))
    return arr


def _frame_numbers(series: Any, column: str, source: str, *, integer: bool) -> np.ndarray:
    kind = series.dtype.kind
    if kind not in "iuf":
        bad = series.iloc[0] if len(series) else None
        raise FormatError(
            Problem(source, None, repr(bad), f"{column} must be numeric; got dtype {series.dtype}")
        )
    values = series.to_numpy(dtype=np.float64)
    bad_rows = np.flatnonzero(np.isnan(values) | (integer & (values != np.round(values))))
    if len(bad_rows):
        row = int(bad_rows[0])
        what = "an integer grade" if integer else "a number (not NaN)"
        raise FormatError(Problem(source, row + 1, str(series.iloc[row]), f"{column} must be {what}", "row"))
    return values.astype(np.int64) if integer else values


def _validate_columns(rows: Qrels | Run, value_name: str) -> None:
    """Equal lengths, no empty IDs, no duplicate (query, document) pair."""
    n = len(rows.query_id)
    values = rows.relevance if isinstance(rows, Qrels) else rows.score
    if len(rows.doc_id) != n or len(values) != n:
        raise FormatError(
            Problem(
                rows.source,
                None,
                f"{n}/{len(rows.doc_id)}/{len(values)}",
                f"query_id, doc_id and {value_name} must have equal lengths",
            )
        )
    for column, what in ((rows.query_id, "query_id"), (rows.doc_id, "doc_id")):
        if column.null_count:
            raise FormatError(
                Problem(rows.source, _first_null(column) + 1, "None", f"{what} is missing", "row")
            )
        bad = _ids.invalid_id_rows(column)
        if len(bad):
            row = int(bad[0])
            value = column[row].as_py()
            reason = (
                f"{what} is empty"
                if not value
                else f"{what} is longer than {_ids.MAX_ID_BYTES} bytes"
                if len(value.encode("utf-8", "surrogatepass")) > _ids.MAX_ID_BYTES
                else f"{what} contains a space, tab or line break"
            )
            raise FormatError(Problem(rows.source, row + 1, value, reason, "row"))
    if isinstance(rows, Run) and np.isnan(rows.score).any():
        row = int(np.flatnonzero(np.isnan(rows.score))[0])
        raise FormatError(Problem(rows.source, row + 1, "nan", "score is NaN", "row"))
    codes, _ = rows.query_codes()
    dup = _ids.duplicate_rows(codes, rows.doc_id)
    if len(dup):
        row = int(dup[0])
        first = _ids.first_row_of(codes, rows.doc_id, row)
        doc, qid = rows.doc_id[row].as_py(), rows.query_id[row].as_py()
        raise FormatError(
            Problem(
                rows.source,
                row + 1,
                doc,
                f"duplicate document {quoted(doc)} for query {quoted(qid)} (first at row {first + 1})",
                "row",
            )
        )


def _first_null(column: pa.Array) -> int:
    return int(np.flatnonzero(_ids.to_numpy(pc.is_null(column)))[0])
