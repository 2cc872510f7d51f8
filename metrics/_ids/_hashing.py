"""64-bit hashes of string IDs (Arrow or `Packed`), a few numpy passes over their bytes, block by block;
and of (group, document) pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metrics._ids._columns import _BLOCK_ROWS, Packed, _chunks

if TYPE_CHECKING:
    import pyarrow as pa

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# _TAIL_MASK[r] keeps the first r bytes of a big-endian 8-byte word.
_TAIL_MASK = np.array([0] + [((1 << (8 * r)) - 1) << (8 * (8 - r)) for r in range(1, 9)], dtype=np.uint64)
_LONG = 512  # rows longer than this (in bytes) are hashed one by one, not in the word loop


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
