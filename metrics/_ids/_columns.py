"""Columns of string IDs as Arrow arrays (plain or chunked) or `Packed` numpy bytes: conversions, gathers,
codes, and exact comparisons of a few rows."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from metrics._lazy import lazy

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    pa = lazy("pyarrow")
    pc = lazy("pyarrow.compute")

_BLOCK_ROWS = 1 << 18
_MIN_RUN = 8  # `encode` run-end encodes a column whose runs of equal values are this long on average
_NUMPY_TYPES = (
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
)
Strings: TypeAlias = "pa.Array | pa.ChunkedArray"  # pyarrow has no type stubs: both are Any to mypy


class Packed:
    """A column of ASCII strings held by numpy alone (the reader of plain TREC files builds it without
    pyarrow): string ``i`` is ``data[offsets[i]:offsets[i + 1]]``. `to_arrow` gives the Arrow column, sharing
    the bytes.

    `from_cells` holds the strings as one row of 8-byte words each instead, NUL past each string's end (as
    the reader cuts them), with their lengths as given (``offsets`` are summed from them on first use):
    ``data`` is then packed on first use, and `take` (hence `raw`, `values` and `equal_at`) works on the rows
    it is asked for, so scoring a run never packs all its IDs nor sums their offsets."""

    __slots__ = ("_offsets", "_data", "_cells", "_lengths")

    def __init__(self, offsets: np.ndarray, data: np.ndarray):
        self._offsets: np.ndarray | None = offsets  # int64, one more than the rows
        self._data = data  # uint8; empty while `_cells` holds the strings
        self._cells: np.ndarray | None = None
        self._lengths: np.ndarray | None = None  # with `_cells`: each string's length

    @classmethod
    def from_cells(cls, cells: np.ndarray, lengths: np.ndarray) -> Packed:
        """Strings of ``lengths`` bytes, string ``i`` the first bytes of row ``i`` of ``cells`` (uint8, one
        row per string, zero past its end)."""
        packed = cls.__new__(cls)
        packed._offsets, packed._data, packed._cells, packed._lengths = (
            None,
            np.zeros(0, np.uint8),
            cells,
            lengths,
        )
        return packed

    @property
    def offsets(self) -> np.ndarray:
        """Where each string starts in ``data``, and where the last ends (int64, one more than the rows)."""
        if self._offsets is None:
            lengths = self.lengths()
            self._offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, dtype=np.int64, out=self._offsets[1:])  # (as int64: 3x faster for narrow ints)
        return self._offsets

    def lengths(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The byte length of every string, or of ``rows``."""
        if self._lengths is not None:
            return self._lengths if rows is None else self._lengths[rows]
        if rows is None:
            return np.diff(self.offsets)
        return self.offsets[rows + 1] - self.offsets[rows]

    @classmethod
    def of(cls, strings: list[str]) -> Packed:
        """A few Python strings (e.g. a column's distinct query IDs), packed as UTF-8.

        >>> Packed.of(["q1", "q22"]).values(np.arange(2))
        ['q1', 'q22']
        """
        raw = [s.encode() for s in strings]
        offsets = np.zeros(len(raw) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in raw], out=offsets[1:])
        return cls(offsets, np.frombuffer(b"".join(raw), dtype=np.uint8))

    @property
    def data(self) -> np.ndarray:
        """The strings' bytes end to end (uint8)."""
        if self._cells is not None:
            keep = np.arange(self._cells.shape[1]) < self.lengths()[:, None]
            _ = self.offsets  # summed while the lengths are held
            self._data, self._cells, self._lengths = self._cells[keep], None, None
        return self._data

    def __len__(self) -> int:
        return len(self._lengths) if self._lengths is not None else len(self.offsets) - 1

    def values(self, rows: np.ndarray) -> list[str]:
        """The strings of ``rows``, as Python strings (for a few rows)."""
        return [raw.decode() for raw in self.raw(rows)]

    def raw(self, rows: np.ndarray) -> list[bytes]:
        """The bytes of ``rows`` (for a few rows)."""
        part = self.take(rows) if self._cells is not None else None  # (packs these rows only)
        data, offsets = (part.data, part.offsets) if part is not None else (self.data, self.offsets)
        at = range(len(part)) if part is not None else np.asarray(rows).tolist()
        return [data[offsets[i] : offsets[i + 1]].tobytes() for i in at]

    def take(self, rows: np.ndarray) -> Packed:
        rows = np.asarray(rows, dtype=np.int64)
        if self._cells is not None:
            return Packed.from_cells(self._cells[rows], self.lengths(rows))
        starts, lengths = self.offsets[rows], self.lengths(rows)
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        at = np.repeat(starts - offsets[:-1], lengths) + np.arange(int(offsets[-1]))
        return Packed(offsets, self.data[at])

    def to_arrow(self) -> pa.Array:
        big = int(self.offsets[-1]) >= 1 << 31
        offsets = self.offsets if big else self.offsets.astype(np.int32)
        kind = pa.large_string() if big else pa.string()
        return pa.Array.from_buffers(
            kind, len(self), [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(self.data))]
        )


def as_strings(values) -> Strings:
    """A ``pa.string()`` array (chunked arrays stay chunked) from Arrow data or a Python sequence."""
    if isinstance(values, Packed):
        return values.to_arrow()
    if not isinstance(values, pa.Array | pa.ChunkedArray):
        values = pa.array(values, type=pa.string())
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    return values


def as_string_array(values) -> pa.Array:
    """One contiguous ``pa.string()`` array."""
    values = as_strings(values)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    return values


def to_numpy(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numeric or boolean Arrow column as one numpy array; nulls (integer columns only) become -1.

    Arrow's own ``to_numpy`` imports pandas for anything but zero-copy conversions; importing pandas costs
    ~0.2 s and ~45 MB, which `qrelforge score` avoids.
    """
    if isinstance(column, pa.ChunkedArray):
        parts = [to_numpy(c) for c in column.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=column.type.to_pandas_dtype())
    if column.null_count:
        valid = to_numpy(pc.is_valid(column))
        return np.where(valid, _raw(column), -1)
    if pa.types.is_boolean(column.type):
        return to_numpy(column.cast(pa.uint8())).view(np.bool_)
    return _raw(column)


@functools.cache
def _numpy_types() -> dict[int, type]:
    """Arrow type id → numpy type of the fixed-width numeric types (built once pyarrow is imported)."""
    return {getattr(pa, name)().id: getattr(np, name) for name in _NUMPY_TYPES}


def _raw(column: pa.Array) -> np.ndarray:
    """The value buffer of a fixed-width numeric array (whatever sits under null slots)."""
    dtype = np.dtype(_numpy_types()[column.type.id])
    return np.frombuffer(
        column.buffers()[1], dtype=dtype, count=len(column), offset=column.offset * dtype.itemsize
    )


def indices(values: np.ndarray) -> pa.Array:
    """A numpy integer or boolean array as an Arrow array, not through pandas (as ``pa.array`` would)."""
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        return indices(values.astype(np.uint8)).cast(pa.bool_())
    values = values.astype(np.int64, copy=False) if values.dtype.kind in "iu" else values
    arrow_type = pa.int64() if values.dtype == np.int64 else pa.from_numpy_dtype(values.dtype)
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])


def take(values: Strings, rows: np.ndarray) -> pa.Array:
    """``values[rows]`` as one array. A chunked column is taken from chunk by chunk: Arrow's own ``take`` on
    a chunked array concatenates every chunk first (a copy of the whole column for a few rows)."""
    values = as_strings(values)
    rows = np.asarray(rows, dtype=np.int64)
    if not isinstance(values, pa.ChunkedArray):
        return values.take(indices(rows))
    chunks = [c for c in values.chunks if len(c)]
    if len(chunks) <= 1 or not len(rows):
        return values.take(indices(rows)).combine_chunks() if not chunks else chunks[0].take(indices(rows))
    ends = np.cumsum([len(c) for c in chunks])
    which = np.searchsorted(ends, rows, side="right")
    by_chunk = np.argsort(which, kind="stable")
    local = rows[by_chunk] - (ends - [len(c) for c in chunks])[which[by_chunk]]
    bounds = np.searchsorted(which[by_chunk], np.arange(len(chunks) + 1))
    parts = [
        chunks[k].take(indices(local[bounds[k] : bounds[k + 1]]))
        for k in range(len(chunks))
        if bounds[k + 1] > bounds[k]
    ]
    back = np.empty(len(rows), dtype=np.int64)
    back[by_chunk] = np.arange(len(rows))
    return pa.concat_arrays(parts).take(indices(back))


def bincount(codes: np.ndarray, minlength: int) -> np.ndarray:
    """``np.bincount(codes, minlength=minlength)`` a block at a time (numpy first copies int32 codes to
    int64: 8 bytes a row at once)."""
    out = np.zeros(minlength, dtype=np.int64)
    for lo in range(0, len(codes), _BLOCK_ROWS):
        counts = np.bincount(codes[lo : lo + _BLOCK_ROWS], minlength=minlength)
        if len(counts) > len(out):
            counts[: len(out)] += out
            out = counts
        else:
            out[: len(counts)] += counts
    return out


def _chunks(values: Strings) -> list[pa.Array]:
    values = as_strings(values)
    return list(values.chunks) if isinstance(values, pa.ChunkedArray) else [values]


def equal_at(a: Strings, rows: np.ndarray, b: Strings, at: np.ndarray) -> np.ndarray:
    """Per pair, whether ``a[rows[i]] == b[at[i]]`` (exact byte comparison)."""
    if not len(rows):
        return np.zeros(0, dtype=bool)
    if isinstance(a, Packed) and isinstance(b, Packed):
        return _packed_equal_at(a, np.asarray(rows, dtype=np.int64), b, np.asarray(at, dtype=np.int64))
    if isinstance(a, Packed) or isinstance(b, Packed):
        left, right = strings_at(a, rows), strings_at(b, at)
        return np.array([x == y for x, y in zip(left, right, strict=True)], dtype=bool)
    return to_numpy(pc.equal(take(a, rows), take(b, at)))


def _packed_equal_at(a: Packed, rows: np.ndarray, b: Packed, at: np.ndarray) -> np.ndarray:
    """`equal_at` for two packed columns, without Python strings: equal lengths, then every byte of the
    pairs of equal length compared at once (a pair is equal when none of its bytes differs); two columns of
    cells compare their rows' cells (NUL past each end), as wide as the narrower column's."""
    equal = a.lengths(rows) == b.lengths(at)
    same = np.flatnonzero(equal)
    if a._cells is not None and b._cells is not None:
        width = min(a._cells.shape[1], b._cells.shape[1])  # equal lengths fit in both
        equal[same] = (a._cells[rows[same], :width] == b._cells[at[same], :width]).all(axis=1)
        return equal
    left, right = a.take(rows[same]), b.take(at[same])
    differ = np.zeros(len(left.data) + 1, dtype=np.int64)
    np.cumsum(left.data != right.data, out=differ[1:])
    equal[same] = differ[left.offsets[1:]] == differ[left.offsets[:-1]]
    return equal


def strings_at(values: Strings | Packed, rows: np.ndarray) -> list[str]:
    """The strings of ``rows`` as Python strings (for a few rows)."""
    if isinstance(values, Packed):
        return values.values(rows)
    return take(values, rows).to_pylist()


def encode(values: Strings) -> tuple[np.ndarray, pa.Array]:
    """Integer codes (int32, in first-appearance order) and the distinct values of a string column."""
    values = as_strings(values)
    if len(values) == 0:
        return np.zeros(0, dtype=np.int32), pa.array([], type=pa.string())
    return _encode_runs(values) or _dictionary_codes(values)


def _dictionary_codes(values: Strings) -> tuple[np.ndarray, pa.Array]:
    enc = values.dictionary_encode()
    if isinstance(enc, pa.ChunkedArray):
        chunks = [c for c in enc.chunks if len(c)]
        codes = np.concatenate([to_numpy(c.indices) for c in chunks])
        return codes.astype(np.int32, copy=False), chunks[-1].dictionary
    return to_numpy(enc.indices).astype(np.int32, copy=False), enc.dictionary


def _encode_runs(values: Strings) -> tuple[np.ndarray, pa.Array] | None:
    """`encode` through run-end encoding when rows come in long runs of one value (a run file grouped by
    query): the dictionary is built over one value per run, not per row. None when the runs are short."""
    ends, heads, at = [], [], 0
    for chunk in _chunks(values):
        if not len(chunk):
            continue
        ree = pc.run_end_encode(chunk)
        if len(ree.values) * _MIN_RUN > len(chunk):
            return None
        ends.append(to_numpy(ree.run_ends).astype(np.int64) + at)
        heads.append(ree.values)
        at += len(chunk)
    codes, distinct = _dictionary_codes(pa.chunked_array(heads, pa.string()))
    lengths = np.diff(np.concatenate([[0], *ends]))
    return np.repeat(codes, lengths), distinct


def lookup(values: Strings, value_set: Strings) -> np.ndarray:
    """Position of each value in ``value_set`` (int32), or -1 where absent."""
    idx = pc.index_in(as_strings(values), value_set=as_string_array(value_set))
    return to_numpy(idx).astype(np.int32, copy=False) if len(idx) else np.zeros(0, np.int32)
