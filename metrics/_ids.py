"""Vectorized helpers over columns of string IDs (Arrow string arrays, plain or chunked).

They keep the hot paths free of Python loops per row: duplicate detection hashes every ID in a few numpy
passes over the Arrow buffers, block by block, and builds Python strings only for the rows it reports.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from metrics._lazy import lazy
from metrics.errors import quoted

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    pa = lazy("pyarrow")
    pc = lazy("pyarrow.compute")

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# _TAIL_MASK[r] keeps the first r bytes of a big-endian 8-byte word.
_TAIL_MASK = np.array([0] + [((1 << (8 * r)) - 1) << (8 * (8 - r)) for r in range(1, 9)], dtype=np.uint64)
_BLOCK_ROWS = 1 << 18
_MIN_RUN = 8  # `encode` run-end encodes a column whose runs of equal values are this long on average
_SORT_ROWS = 4096  # rows sorted at once by `may_repeat_pairs` (whole groups: a stretch may be longer)
_ORDER_ROWS = 1 << 16  # rows ordered at once by `_sorted_order` (whole groups)
_LONG = 512  # rows longer than this (in bytes) are hashed one by one, not in the word loop
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


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer: spreads every input bit over the whole word (in place)."""
    tmp = np.empty_like(h)
    h ^= np.right_shift(h, np.uint64(30), out=tmp)
    h *= _M1
    h ^= np.right_shift(h, np.uint64(27), out=tmp)
    h *= _M2
    h ^= np.right_shift(h, np.uint64(31), out=tmp)
    return h


def _block_hash(arr: pa.Array, seed: np.ndarray) -> np.ndarray:
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset : arr.offset + n + 1]
    raw = arr.buffers()[2]
    data = np.frombuffer(raw, dtype=np.uint8) if raw is not None else np.zeros(0, np.uint8)
    return _packed_hash(offsets, data, seed)


def _packed_hash(offsets: np.ndarray, data: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """The hash of strings ``data[offsets[i]:offsets[i + 1]]`` (the same for Arrow and `Packed` columns)."""
    lo, hi = int(offsets[0]), int(offsets[-1])
    padded = np.concatenate([data[lo:hi], np.zeros(8, dtype=np.uint8)])
    words = np.ndarray(shape=(len(padded) - 7,), dtype=">u8", buffer=padded, strides=(1,))
    start = offsets[:-1] - lo
    length = offsets[1:] - offsets[:-1]
    shortest = int(length.min(initial=0))
    h = _word_hash(length, seed)
    for j in range(min(int(length.max(initial=0)), _LONG) + 7 >> 3):
        w = words[np.minimum(start + 8 * j, len(padded) - 8)].astype(np.uint64)
        if 8 * j + 8 > shortest:
            w &= _TAIL_MASK[np.clip(length - 8 * j, 0, 8)]
        _fold_word(h, w)
    long = np.flatnonzero(length > _LONG)
    if len(long):  # the word loop stops at _LONG bytes: a 300 KB ID costs one digest, not 40 000 passes
        h[long] = _long_hash(data, offsets[long], length[long], seed[long] if seed.ndim else seed)
    return _mix(h)


def _word_hash(length: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """The start of `_packed_hash` for strings of ``length`` bytes: `_fold_word` then takes each 8-byte word
    (big-endian, zero past the string's end), `_mix` ends it."""
    return (seed ^ length.astype(np.uint64)) * _GOLDEN


def _fold_word(h: np.ndarray, word: np.ndarray) -> None:
    h ^= word
    h *= _M1
    h ^= h >> np.uint64(29)


def hash_words(words: list[np.ndarray], length: np.ndarray) -> np.ndarray:
    """`hash_strings` (no seed) of strings of ``length`` bytes (at most `_LONG`) given as their 8-byte
    big-endian words, zero past each string's end (as `metrics.formats._plain` cuts them)."""
    h = _word_hash(length, _block_seed(None, 0, 1))
    for word in words:
        _fold_word(h, word)
    return _mix(h)


def _long_hash(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """The pre-mix hash of each long string (a digest of its bytes, with its length and seed folded in)."""
    import hashlib  # only for IDs over `_LONG` bytes: the scoring path of usual files never imports it

    digests = [
        int.from_bytes(hashlib.blake2b(data[a : a + n].tobytes(), digest_size=8).digest(), "big")
        for a, n in zip(starts.tolist(), lengths.tolist(), strict=True)
    ]
    with np.errstate(over="ignore"):
        return (np.asarray(seed, dtype=np.uint64) ^ np.array(digests, dtype=np.uint64)) * _GOLDEN


def hash_strings(values, seed: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit hash of every string (equal strings with equal seeds give equal hashes).

    ``seed`` (one integer per row, e.g. a query code) is folded in, so equal strings in different groups
    hash differently.
    """
    seed = None if seed is None else np.asarray(seed)
    if isinstance(values, Packed):
        out = np.empty(len(values), dtype=np.uint64)
        for lo in range(0, len(values), _BLOCK_ROWS):
            offsets = values.offsets[lo : lo + _BLOCK_ROWS + 1]
            out[lo : lo + len(offsets) - 1] = _packed_hash(
                offsets, values.data, _block_seed(seed, lo, len(offsets) - 1)
            )
        return out
    chunks = _chunks(values)
    n = sum(len(c) for c in chunks)
    out, at = np.empty(n, dtype=np.uint64), 0
    for chunk in chunks:
        for lo in range(0, len(chunk), _BLOCK_ROWS):
            block = chunk.slice(lo, _BLOCK_ROWS)
            out[at : at + len(block)] = _block_hash(block, _block_seed(seed, at, len(block)))
            at += len(block)
    return out


def _block_seed(seed: np.ndarray | None, at: int, n: int) -> np.ndarray:
    """The mixed seeds of rows ``at:at + n`` (a block at a time: no full-length temporaries)."""
    raw = np.zeros(n, dtype=np.uint64) if seed is None else seed[at : at + n].astype(np.uint64)
    raw += _GOLDEN
    return _mix(raw)


def pair_hashes(doc_hashes: np.ndarray, groups: np.ndarray, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """A 64-bit hash of each row's (group, document) pair, rows ``lo:hi``, from the documents' `hash_strings`
    (equal pairs, equal hashes; a negative group is a group of its own). Built a block at a time: no
    full-length temporaries beside the result."""
    groups = np.asarray(groups)[lo:hi]
    out = np.empty(len(groups), dtype=np.uint64)
    for at in range(0, len(out), _BLOCK_ROWS):
        block = out[at : at + _BLOCK_ROWS]
        block[:] = groups[at : at + _BLOCK_ROWS]
        block += _GOLDEN
        _mix(block)
        block ^= doc_hashes[lo + at : lo + at + len(block)]
        _mix(block)
    return out


def may_repeat_pairs(groups: np.ndarray, doc_hashes: np.ndarray) -> bool:
    """False when no (group, document) pair occurs twice (certain); True when one may (`duplicate_rows` then
    says which, exactly).

    When each group's rows are contiguous (a run or qrels file written query by query), a pair can only
    repeat within a group: groups all of one size (a run of fixed depth) are sorted as the rows of one
    matrix, others a stretch of about `_SORT_ROWS` rows of whole groups at a time (sorts that fit the CPU's
    cache: ~2-4x faster than one sort of them all); a column whose groups are not contiguous, all at once."""
    key = pair_hashes(doc_hashes, groups)
    starts = _group_starts(np.asarray(groups))
    if starts is None:
        key.sort()
        return len(key) >= 2 and not _increasing(key)
    sizes = np.diff(starts)
    if len(sizes) and (sizes == sizes[0]).all():
        rows = key.reshape(len(sizes), int(sizes[0]))
        rows.sort(axis=1)
        return not (rows[:, 1:] > rows[:, :-1]).all()
    cuts = _group_cuts_of(starts)
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        part = key[lo:hi]
        part.sort()
        if not (part[1:] > part[:-1]).all():
            return True
    return False


def _group_starts(groups: np.ndarray) -> np.ndarray | None:
    """Where each group's rows start, then the length; None when a group's rows are not contiguous."""
    starts = np.flatnonzero(groups[1:] != groups[:-1]) + 1
    starts = np.concatenate([[0], starts, [len(groups)]]) if len(groups) else np.zeros(1, np.int64)
    heads = np.sort(groups[starts[:-1]])
    if not (heads[1:] != heads[:-1]).all():  # (not np.unique: it imports numpy.ma, ~10 ms)
        return None
    return starts


def _group_cuts(groups: np.ndarray, rows: int | None = None) -> list[int] | None:
    """Row positions cutting ``groups`` into stretches of whole groups, about ``rows`` rows each (default
    `_SORT_ROWS`; 0 first, the length last); None when a group's rows are not contiguous."""
    starts = _group_starts(groups)
    return None if starts is None else _group_cuts_of(starts, rows)


def _group_cuts_of(starts: np.ndarray, rows: int | None = None) -> list[int]:
    rows = rows or _SORT_ROWS
    at = np.searchsorted(starts, np.arange(rows, int(starts[-1]), rows))
    cuts = np.concatenate([[0], starts[at], starts[-1:]])  # non-decreasing
    return cuts[np.append(True, cuts[1:] != cuts[:-1])].tolist()


def hash_matches(
    doc_hashes: np.ndarray, groups: np.ndarray, table: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows whose (group, document) pair hash (`pair_hashes`) is in ``table`` (ascending), and the
    position of that hash in ``table``; None when ``table`` holds a hash twice. Candidates only: equal hashes
    need an exact comparison of the IDs.

    A direct-address table over the hashes' low bits (8 slots per entry, so most slots are empty) finds them
    in one gather per row; the rare slot that two entries share is resolved by a binary search."""
    order = np.argsort(table)
    held = table[order]
    if len(held) >= 2 and bool((held[1:] == held[:-1]).any()):
        return None
    bits = max(int(len(held)).bit_length() + 3, 10)
    mask = np.uint64((1 << bits) - 1)
    slot = (held & mask).astype(np.intp)
    direct = np.full(1 << bits, -1, dtype=np.int32)
    direct[slot] = np.arange(len(held), dtype=np.int32)
    slot.sort()  # a slot met twice is shared (a sort of the entries, not a count over every slot)
    direct[slot[1:][slot[1:] == slot[:-1]]] = -2
    rows, at = [], []
    for lo in range(0, len(groups), _BLOCK_ROWS):
        key = pair_hashes(doc_hashes, groups, lo, lo + _BLOCK_ROWS)
        got = direct[(key & mask).astype(np.intp)]
        hit = np.flatnonzero(got >= 0)
        hit = hit[held[got[hit]] == key[hit]]
        shared = np.flatnonzero(got == -2)
        pos = np.minimum(np.searchsorted(held, key[shared]), len(held) - 1)
        found = held[pos] == key[shared]
        both = np.concatenate([hit, shared[found]])
        sort = np.argsort(both, kind="stable")
        rows.append(both[sort] + lo)
        at.append(np.concatenate([got[hit].astype(np.int64), pos[found]])[sort])
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows), order[np.concatenate(at)]


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
    pairs of equal length compared at once (a pair is equal when none of its bytes differs)."""
    equal = a.lengths(rows) == b.lengths(at)
    same = np.flatnonzero(equal)
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


def duplicate_rows(groups: np.ndarray, ids: Strings) -> np.ndarray:
    """Row indices whose (group, id) pair already occurred on an earlier row, in row order.

    ``groups`` are integer codes (e.g. query codes) and ``ids`` the strings (e.g. document IDs). Hashing finds
    candidates; candidates are confirmed by exact comparison, so a hash collision is never reported.
    """
    key = hash_strings(ids, seed=groups)
    key.sort()
    if len(key) < 2 or not (key[1:] == key[:-1]).any():
        return np.zeros(0, dtype=np.int64)
    key = hash_strings(ids, seed=groups)
    order = np.argsort(key, kind="stable")
    same = key[order[1:]] == key[order[:-1]]
    later, earlier = order[1:][same], order[:-1][same]
    ids = as_strings(ids)
    same_doc = to_numpy(pc.equal(ids.take(indices(later)), ids.take(indices(earlier))))
    exact = (np.asarray(groups)[later] == np.asarray(groups)[earlier]) & same_doc
    return np.sort(later[exact])


def first_row_of(groups: np.ndarray, ids: Strings, row: int) -> int:
    """The first row holding the same (group, id) as ``row``."""
    groups = np.asarray(groups)
    same = (groups[: row + 1] == groups[row]) & to_numpy(
        pc.equal(as_strings(ids).slice(0, row + 1), as_strings(ids)[row])
    )
    return int(np.flatnonzero(same)[0])


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


# A space, a tab, or anything `str.splitlines` breaks a line at (CR, LF, vertical tab, form feed, the
# file, group and record separators, NEL, U+2028 and U+2029): such an ID could not be written to a TREC
# file and read back as the same ID.
BAD_ID_CHARS = re.compile("[ \t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_BAD_ID_RE2 = r"[ \t\n\r\x0b\x0c\x1c-\x1e\x{85}\x{2028}\x{2029}]"
MAX_ID_BYTES = 512


def id_problem(value: str, what: str) -> str | None:
    """Why ``value`` cannot be an ID (``what`` names it in the message), or None.

    >>> id_problem("D1", "doc_id"), id_problem("a\x0bb", "doc_id")
    (None, "doc_id must not contain spaces, tabs or line breaks; got 'a\\\\x0bb'")
    """
    if not value:
        return f"{what} must be a non-empty string; got {value!r}"
    size = len(value.encode("utf-8", "surrogatepass")) if len(value) * 4 > MAX_ID_BYTES else 0
    if size > MAX_ID_BYTES:
        return f"{what} is longer than {MAX_ID_BYTES} bytes ({size} bytes)"
    if BAD_ID_CHARS.search(value):
        return f"{what} must not contain spaces, tabs or line breaks; got {quoted(value)}"
    return None


def invalid_id_rows(values: Strings) -> np.ndarray:
    """Rows whose ID is empty, longer than `MAX_ID_BYTES` or holds a space, tab or line break (it could not be
    written to a TREC file and read back)."""
    values = as_strings(values)
    length = pc.binary_length(values)
    bad = pc.or_(
        pc.or_(pc.equal(length, 0), pc.greater(length, MAX_ID_BYTES)),
        pc.match_substring_regex(values, _BAD_ID_RE2),
    )
    return np.flatnonzero(to_numpy(bad.fill_null(True) if bad.null_count else bad))


def longest(values: Strings) -> int:
    """The length in bytes of the longest ID (0 for none), from the offsets, a chunk at a time."""
    most = 0
    for chunk in _chunks(values):
        if len(chunk):
            offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[
                chunk.offset : chunk.offset + len(chunk) + 1
            ]
            most = max(most, int(np.diff(offsets).max()))
    return most


# ------------------------------------------------------------------------------ trec_eval's row order
def _descending_key(scores: np.ndarray) -> np.ndarray:
    """uint32 keys whose ascending order is the float32 scores' descending order (-0.0 == 0.0).

    A negative float's bits already grow as it falls; a positive one's are inverted (and its sign bit
    cleared, so that every positive score sorts before every negative one). Built in place: one 4-byte array.
    """
    with np.errstate(over="ignore"):  # beyond float32's range a score becomes ±inf, as in trec_eval
        s32 = np.asarray(scores, dtype=np.float32)
        if np.may_share_memory(s32, scores):
            s32 = s32.copy()
    s32 += np.float32(0.0)
    bits = s32.view(np.uint32)
    positive = bits < np.uint32(0x80000000)
    np.invert(bits, out=bits, where=positive)
    np.bitwise_and(bits, np.uint32(0x7FFFFFFF), out=bits, where=positive)
    return bits


def trec_order(groups: np.ndarray, scores: np.ndarray, doc_ids: pa.Array) -> np.ndarray:
    """Row order grouping rows by ``groups`` (kept in first-appearance order when already grouped), then score
    descending (single precision), then document ID descending (byte order)."""
    return trec_order_sparse(groups, scores, doc_ids).full(len(scores))


@dataclass(frozen=True)
class Order:
    """A row order (`trec_order`) kept small when the rows are nearly in it (a run file written in rank
    order): ``order`` if given, else the identity except at positions ``at`` (ascending), which take rows
    ``moved``: only the reordered ties are held, not 8 bytes per row."""

    order: np.ndarray | None
    at: np.ndarray
    moved: np.ndarray
    within_groups: bool = False  # ``order`` moves no row out of its group's positions (grouped rows)

    def full(self, n: int) -> np.ndarray:
        if self.order is not None:
            return self.order
        order = np.arange(n)
        order[self.at] = self.moved
        return order

    def rows(self, positions: np.ndarray) -> np.ndarray:
        """The row at each of ``positions`` of the order."""
        if self.order is not None:
            return self.order[positions]
        out = np.array(positions, dtype=np.int64)
        if len(self.at) and len(out):
            k = np.minimum(np.searchsorted(self.at, out), len(self.at) - 1)
            hit = self.at[k] == out
            out[hit] = self.moved[k[hit]]
        return out

    def gather(self, values: np.ndarray) -> np.ndarray:
        """``values`` (one per row) in this order."""
        if self.order is not None:
            return values[self.order]
        out = values.copy()
        out[self.at] = values[self.moved]
        return out


def trec_order_sparse(groups: np.ndarray, scores: np.ndarray, doc_ids: pa.Array) -> Order:
    """`trec_order` as an `Order`. When the rows are grouped and sorted already, the keys are only built a
    block at a time and only the ties are reordered: no 8-byte-per-row array is made."""
    n = len(scores)
    groups = np.asarray(groups)
    ties, step = [], 1 << 20
    for lo in range(0, max(n - 1, 0), step):
        key = _order_key(groups[lo : lo + step + 1], scores[lo : lo + step + 1])
        if not bool(np.all(key[1:] >= key[:-1])):
            starts = _group_starts(groups)
            ascending = starts is not None and bool(np.all(groups[starts[1:-1]] > groups[starts[:-2]]))
            cuts = _group_cuts_of(starts, _ORDER_ROWS) if starts is not None and ascending else None
            return Order(_sorted_order(groups, scores, doc_ids, cuts), _NO_ROWS, _NO_ROWS, cuts is not None)
        ties.append(np.flatnonzero(key[1:] == key[:-1]) + lo)
    tied_at = np.concatenate(ties) if ties else _NO_ROWS
    if not len(tied_at):
        return Order(None, _NO_ROWS, _NO_ROWS)
    tied = np.zeros(n - 1, dtype=bool)
    tied[tied_at] = True
    at, within = _tie_order(None, tied, doc_ids)
    return Order(None, at, at[within])


_NO_ROWS = np.zeros(0, dtype=np.int64)


def _order_key(groups: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Per row, group (high 32 bits) then `_descending_key` (low 32 bits): ascending = trec_eval's order."""
    key = groups.astype(np.uint64)  # codes are >= 0
    key <<= np.uint64(32)
    key |= _descending_key(scores)
    return key


def _sorted_order(
    groups: np.ndarray, scores: np.ndarray, doc_ids: pa.Array, cuts: list[int] | None
) -> np.ndarray:
    """The full `trec_order`. When each group's rows are contiguous, in ascending order of group (``cuts``:
    `_group_cuts`; so no row leaves its group's positions), the stretches
    of whole groups between cuts are sorted one at a time (the same order: no key crosses a group), so the
    temporaries are a stretch long and the order is int32."""
    n = len(scores)
    if cuts is None or n >= 1 << 31:
        key = _order_key(groups, scores)
        order = np.argsort(key, kind="stable")
        key = key[order]
        tied = key[1:] == key[:-1]
        del key
        return _break_ties(order, tied, doc_ids) if tied.any() else order
    order = np.empty(n, dtype=np.int32)
    tied = np.zeros(max(n - 1, 0), dtype=bool)
    for lo, hi in itertools.pairwise(cuts):
        key = _order_key(groups[lo:hi], scores[lo:hi])
        local = np.argsort(key, kind="stable")
        key = key[local]
        np.equal(key[1:], key[:-1], out=tied[lo : hi - 1])
        np.add(local, lo, out=order[lo:hi], casting="unsafe")
    return _break_ties(order, tied, doc_ids) if tied.any() else order


def _blocks_hold(key: np.ndarray, test) -> bool:
    """True when ``test(next, previous)`` holds for every pair of neighbours of ``key`` (a block at a time:
    no full-length temporary)."""
    step, last = 1 << 20, len(key) - 1
    return all(
        bool(np.all(test(key[lo + 1 : min(lo + step, last) + 1], key[lo : min(lo + step, last)])))
        for lo in range(0, last, step)
    )


def _increasing(key: np.ndarray) -> bool:
    return _blocks_hold(key, np.greater)


def _break_ties(order: np.ndarray, tied: np.ndarray, doc_ids: pa.Array) -> np.ndarray:
    """Reorder each run of equal keys by document ID descending, in place (``order`` is the caller's own)."""
    at, within = _tie_order(order, tied, doc_ids)
    order[at] = order[at][within]
    return order


def _tie_order(
    order: np.ndarray | None, tied: np.ndarray, doc_ids: pa.Array
) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``order`` (None: the identity) in runs of equal keys, and their order within those
    runs by document ID descending."""
    member = np.zeros(len(tied) + 1, dtype=bool)
    member[1:] |= tied
    member[:-1] |= tied
    at = np.flatnonzero(member)
    group = np.cumsum(np.r_[True, ~tied[at[:-1]]])
    rows = at if order is None else order[at]
    if isinstance(
        doc_ids, Packed
    ):  # byte order, as Arrow sorts; stable sorts: query first, then ID descending
        docs, groups = doc_ids.raw(rows), group.tolist()
        by_doc = sorted(range(len(at)), key=docs.__getitem__, reverse=True)
        return at, np.array(sorted(by_doc, key=groups.__getitem__), dtype=np.int64)
    docs = take(doc_ids, rows)
    table = pa.table({"g": indices(group), "d": docs})
    within = to_numpy(pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")]))
    return at, within


def position_within(groups: np.ndarray) -> np.ndarray:
    """0-based position of each row within its run of equal ``groups`` values."""
    n = len(groups)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]]) if n else np.zeros(0, np.int64)
    return np.arange(n, dtype=np.int32) - np.repeat(starts.astype(np.int32), np.diff(np.r_[starts, n]))
