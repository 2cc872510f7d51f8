"""Passages and chunkings as validated columns (private): what `chunk_qrels`, `evidence_scores` and
`compare_chunkers` take, checked once.

*Passages*: a PASSAGES file (`metrics.formats.read_passages`) or a DataFrame with ``query_id``, ``doc_id``,
``start``, ``end``, ``grade`` (``doc_version`` and ``text`` are ignored here). *Chunks*: a CHUNKS file with
offsets (`metrics.formats.read_chunks`; a file of chunk texts is read with ``read_chunks(path, corpus=...)``
first) or a DataFrame with ``chunk_id``, ``doc_id``, ``start``, ``end``. Documents are matched by ID; every
document holding a passage must have chunks, or its evidence could never be retrieved.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics import _ids
from metrics._lazy import lazy
from metrics.data import _frame_id_column
from metrics.errors import FormatError, Problem, QrelForgeError, quoted

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
else:
    pa = lazy("pyarrow")

__all__ = ["Passages", "Chunks", "load", "load_passages", "check_k", "check_rel"]


@dataclass(frozen=True, eq=False)
class Passages:
    """Passages as columns: query codes (into ``queries``), document codes (into the shared ``docs``),
    offsets and grades; ``rows`` locates a row for messages."""

    query: np.ndarray
    queries: list[str]
    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    grade: np.ndarray
    rows: _Rows


@dataclass(frozen=True, eq=False)
class Chunks:
    """Chunks as columns: their IDs (Arrow strings), document codes, offsets."""

    ids: pa.Array
    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    rows: _Rows

    def __len__(self) -> int:
        return len(self.doc)


@dataclass(frozen=True)
class _Rows:
    """Where the rows came from: a file (with each row's line) or a DataFrame."""

    source: str
    lines: list[int] | None

    def problem(self, row: int, text: str, reason: str) -> FormatError:
        if self.lines is not None:
            return FormatError(Problem(self.source, self.lines[row], text, reason))
        return FormatError(Problem(self.source, row + 1, text, reason, "row"))


def _frame(value: Any, what: str, reader: str) -> pd.DataFrame:
    if isinstance(value, str | os.PathLike) or hasattr(value, "read"):
        from metrics import formats

        return getattr(formats, reader)(value)
    if not hasattr(value, "columns"):
        raise QrelForgeError(f"{what} must be a path or a DataFrame; got {type(value).__name__}")
    return value


def _rows(frame: pd.DataFrame, default: str) -> _Rows:
    lines = frame.attrs.get("lines")
    if lines is not None and len(lines) == len(frame):
        return _Rows(frame.attrs.get("source", default), list(lines))
    return _Rows(default, None)


def _columns(frame: pd.DataFrame, rows: _Rows, names: tuple[str, ...]) -> None:
    absent = [c for c in names if c not in frame.columns]
    if absent:
        raise FormatError(
            Problem(
                rows.source,
                None,
                repr(list(frame.columns)),
                f"missing column{'s' * (len(absent) > 1)} {absent}",
            )
        )


def _ints(frame: pd.DataFrame, name: str, rows: _Rows, low: int) -> np.ndarray:
    """An integer column (ints, or floats holding whole numbers) with every value >= ``low``."""
    series = frame[name]
    if series.dtype.kind not in "iuf":
        bad = next((i for i, v in enumerate(series) if not _whole(v)), 0)
        raise rows.problem(
            bad, repr(series.iloc[bad]), f"{name} must be an int; got {quoted(series.iloc[bad])}"
        )
    values = series.to_numpy()
    if values.dtype.kind == "f":
        bad_rows = np.flatnonzero(~np.isfinite(values) | (values != np.round(values)))
        if len(bad_rows):
            row = int(bad_rows[0])
            value = float(values[row])
            raise rows.problem(row, repr(value), f"{name} must be an int; got {value!r}")
    values = values.astype(np.int64)
    under = np.flatnonzero(values < low)
    if len(under):
        row = int(under[0])
        raise rows.problem(row, str(values[row]), f"{name} must be an int >= {low}; got {values[row]}")
    return values


def _whole(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _ids_column(frame: pd.DataFrame, name: str, rows: _Rows) -> pa.Array:
    try:
        column = _arrow_strings(frame[name], name, rows) or _frame_id_column(frame, name, rows.source)
    except FormatError as exc:  # re-located to the file line when the frame came from a file
        problem = exc.problems[0]
        raise rows.problem((problem.line or 1) - 1, problem.text, problem.reason) from None
    bad = _ids.invalid_id_rows(column)
    if len(bad):
        row = int(bad[0])
        raise rows.problem(row, column[row].as_py(), _ids.id_problem(column[row].as_py(), name) or "bad ID")
    return _ids.as_string_array(column)


def _arrow_strings(series: pd.Series, name: str, rows: _Rows) -> pa.Array | None:
    """The column as Arrow strings without a copy when pandas already holds it in Arrow (pandas' default
    string dtype); None for any other column."""
    if not type(series.array).__name__.startswith("Arrow") or series.dtype.kind not in "OSUT":
        return None
    column = pa.array(series.array)
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return None
    if column.null_count:
        row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise rows.problem(row, "None", f"{name} is missing")
    return column.cast(pa.string())


def _spans(frame: pd.DataFrame, rows: _Rows) -> tuple[np.ndarray, np.ndarray]:
    start, end = _ints(frame, "start", rows, 0), _ints(frame, "end", rows, 0)
    empty = np.flatnonzero(end <= start)
    if len(empty):
        row = int(empty[0])
        s, e = int(start[row]), int(end[row])
        what = "is empty" if s == e else "ends before it starts"
        raise rows.problem(row, f"[{s}, {e})", f"span [{s}, {e}) {what}")
    return start, end


def load_passages(passages: Any) -> tuple[pd.DataFrame, _Rows, pa.Array, pa.Array]:
    frame = _frame(passages, "passages", "read_passages")
    rows = _rows(frame, "passages")
    _columns(frame, rows, ("query_id", "doc_id", "start", "end", "grade"))
    return frame, rows, _ids_column(frame, "query_id", rows), _ids_column(frame, "doc_id", rows)


def load(passages: Any, chunks: Any) -> tuple[Passages, Chunks]:
    """Both inputs validated, with document codes shared between them.

    Raises:
        FormatError: a missing column, a bad ID, offset or grade, a repeated chunk ID, or a passage on a
            document that has no chunk, naming the row (or the file and line).
    """
    frame, p_rows, p_query, p_doc = load_passages(passages)
    p_start, p_end = _spans(frame, p_rows)
    grade = _ints(frame, "grade", p_rows, 0)
    cframe = _frame(chunks, "chunks", "read_chunks")
    c_rows = _rows(cframe, "chunks")
    _columns(cframe, c_rows, ("chunk_id", "doc_id", "start", "end"))
    c_ids, c_doc = _ids_column(cframe, "chunk_id", c_rows), _ids_column(cframe, "doc_id", c_rows)
    c_start, c_end = _spans(cframe, c_rows)
    _unique(c_ids, c_rows)
    codes, _ = _ids.encode(pa.concat_arrays([c_doc, p_doc]))
    codes = codes.astype(np.int64)
    c_code, p_code = codes[: len(c_doc)], codes[len(c_doc) :]
    _covered(p_code, c_code, p_doc, p_rows, c_rows.source)
    q_code, queries = _ids.encode(p_query)
    return (
        Passages(q_code.astype(np.int64), queries.to_pylist(), p_code, p_start, p_end, grade, p_rows),
        Chunks(c_ids, c_code, c_start, c_end, c_rows),
    )


def _unique(ids: pa.Array, rows: _Rows) -> None:
    codes, _ = _ids.encode(ids)
    order = np.argsort(codes, kind="stable")
    repeat = np.flatnonzero(codes[order][1:] == codes[order][:-1])
    if len(repeat):
        first, row = int(order[repeat[0]]), int(order[repeat[0] + 1])
        where = f"line {rows.lines[first]}" if rows.lines is not None else f"row {first + 1}"
        value = ids[row].as_py()
        raise rows.problem(row, value, f"duplicate chunk_id {quoted(value)} (first on {where})")


def _covered(p_doc: np.ndarray, c_doc: np.ndarray, names: pa.Array, rows: _Rows, chunks: str) -> None:
    has = np.zeros(int(max(p_doc.max(initial=-1), c_doc.max(initial=-1))) + 1, dtype=bool)
    has[c_doc] = True
    lost = np.flatnonzero(~has[p_doc])
    if len(lost):
        row = int(lost[0])
        doc = names[row].as_py()
        more = f" ({len(lost)} passages in all)" if len(lost) > 1 else ""
        raise rows.problem(row, doc, f"document {quoted(doc)} has no chunk in {chunks}{more}")


def check_k(k: Any) -> tuple[int, ...]:
    """The cutoffs as a sorted tuple of distinct ints >= 1 (one int is one cutoff)."""
    values = (k,) if isinstance(k, int | np.integer) and not isinstance(k, bool) else k
    try:
        values = tuple(values)
    except TypeError:
        values = (k,)
    if not values or not all(_whole(v) and v >= 1 for v in values):
        raise QrelForgeError(f"k must be an int >= 1 or a sequence of them; got {quoted(k)}")
    return tuple(sorted({int(v) for v in values}))


def check_rel(rel: Any) -> int:
    if not _whole(rel) or rel < 1:
        raise QrelForgeError(f"rel must be an int >= 1; got {quoted(rel)}")
    return int(rel)
