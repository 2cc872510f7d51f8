"""Reading a TREC file in pieces (private; `metrics.formats._trec` uses it): the input cut into pieces of
whole lines by bytes (`pieces`), and the sorted 64-bit hashes that find a (query, document) pair repeated
across pieces (`PairHashes`).

Memory is bounded by bytes, never by a count of lines: a piece holds about `PIECE_BYTES` of whole lines (one
longer line, up to the line limit, makes a piece of its own), a line is joined only after
`_Source.blocks` has checked it against the line limit, and a run of blank lines a block long or more is
counted, never held.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from metrics.formats._lines import _blank, _newlines, _only_blanks, _Source

# Bytes of whole lines in a piece. 4 MiB: a piece's Arrow table and columns stay in tens of MB, and Arrow's
# per-call cost is noise (a 7M-line run reads in as much time as in one piece).
PIECE_BYTES = 4 << 20
_MERGE_BLOCK = 1 << 16  # held hashes moved at a time by `PairHashes._merge`
_MERGE_MIN = 1 << 20  # new hashes wait in levels until there are this many (and a quarter of those held)


def pieces(src: _Source, size: int | None = None) -> Iterator[_Source]:
    """The input as pieces of whole lines of about ``size`` bytes each (default `PIECE_BYTES`; a line longer
    than that is a piece of its own), numbered from their first line (the last one may end without a
    newline). Every input gives at least one piece (an empty one when it holds nothing else); blocks of blank
    lines are counted and skipped, so a piece ends before them."""
    size = size or PIECE_BYTES
    number, held_bytes, given = 1, 0, False
    held: list[bytes] = []  # whole lines
    tail: list[bytes] = []  # the start of a line not ended yet (within the line limit: `blocks` checked it)
    for block in src.blocks():
        end = block.rfind(b"\n")
        if end < 0:
            tail.append(block)
            continue
        if _blank(block) and all(map(_only_blanks, tail)):
            if held:
                data = b"".join(held)
                yield src.piece(data, number)
                number, held, held_bytes, given = number + _newlines(data, len(data)), [], 0, True
            number += _newlines(block, len(block))
            tail = [block[end + 1 :]]
            continue
        held.extend([*tail, block[: end + 1]])
        held_bytes += sum(map(len, tail)) + end + 1
        tail = [block[end + 1 :]] if end + 1 < len(block) else []
        if held_bytes < size:
            continue
        data, start = b"".join(held), 0
        held.clear()  # the blocks, joined: a long line is not held twice while it is read
        while len(data) - start >= size:
            cut = data.index(b"\n", start + size - 1) + 1  # the end of the line holding the size-th byte
            piece = data[start:cut]
            yield src.piece(piece, number)
            number, start, given = number + _newlines(piece, len(piece)), cut, True
        held = [data[start:]] if start < len(data) else []
        held_bytes = len(data) - start
    rest = b"".join([*held, *tail])
    held, tail = [], []
    if rest or not given:
        yield src.piece(rest, number)


class PairHashes:
    """The 64-bit (query, document) hashes of the rows read so far: 8 bytes a row, and at most a quarter
    more while new ones wait; and the distinct query IDs of those rows.

    Most are held in one sorted array: ``capacity`` rows are reserved at once (memory that is never written
    costs nothing); past it the array doubles, copying once (a gzip input, whose size is only estimated).
    New hashes wait in a few sorted levels, each at most half as long as the one before (as the digits of a
    binary counter), until they add up to a quarter of the held ones (and at least `_MERGE_MIN`); then they
    are merged in place: the held hashes move towards the end block by block, last block first, so no second
    array of all of them is ever made, and each hash is moved a few times in all, however small the pieces.
    """

    def __init__(self, capacity: int):
        self._keys, self._n = np.empty(max(capacity, 1), dtype=np.uint64), 0
        self._levels: list[np.ndarray] = []
        self._queries: set[str] = set()  # the query IDs of the rows held

    @property
    def held(self) -> int:
        return self._n + sum(map(len, self._levels))

    def hits(self, keys: np.ndarray, queries: list[str], codes: np.ndarray) -> np.ndarray:
        """The positions in ``keys`` (ascending) of the hashes held already, for rows whose query (``codes``
        into ``queries``) was held before: only those can repeat a pair (in a file grouped by query, the rows
        of the query cut by the piece's start). They are looked up in sorted order, so the search walks the
        held arrays forwards instead of jumping about them."""
        known = np.array([q in self._queries for q in queries], dtype=bool)
        if not known.any():
            return np.zeros(0, dtype=np.int64)
        rows = np.flatnonzero(known[codes]) if not known.all() else np.arange(len(keys))
        order = np.argsort(keys[rows])
        wanted = keys[rows][order]
        found = np.zeros(len(rows), dtype=bool)
        for held in [self._keys[: self._n], *self._levels]:
            if len(held) and len(wanted):
                at = np.minimum(np.searchsorted(held, wanted), len(held) - 1)
                found |= held[at] == wanted
        return np.sort(rows[order[found]])

    def add(self, keys: np.ndarray, queries: list[str]) -> None:
        """Hold ``keys`` too (equal hashes are all kept), the hashes of rows of ``queries``."""
        self._queries.update(queries)
        new = np.sort(keys)
        while self._levels and len(self._levels[-1]) <= 2 * len(new):
            new = np.sort(np.concatenate([self._levels.pop(), new]), kind="stable")  # two sorted runs
        self._levels.append(new)
        waiting = sum(map(len, self._levels))
        if waiting >= max(_MERGE_MIN, self._n // 4):
            merged = self._levels[0]
            for level in self._levels[1:]:
                merged = np.sort(np.concatenate([merged, level]), kind="stable")
            self._levels = []
            self._merge(merged)

    def _merge(self, new: np.ndarray) -> None:
        """Merge the sorted ``new`` hashes into the held array, in place."""
        n = self._n
        if len(self._keys) < n + len(new):
            grown = np.empty(n + max(n, len(new)), dtype=np.uint64)
            grown[:n] = self._keys[:n]
            self._keys = grown
        before = np.searchsorted(self._keys[:n], new, side="right")  # held hashes <= each new one
        for hi in range(n, 0, -_MERGE_BLOCK):
            self._move_back(max(hi - _MERGE_BLOCK, 0), hi, before)
        self._keys[before + np.arange(len(new))] = new
        self._n = n + len(new)

    def _move_back(self, lo: int, hi: int, before: np.ndarray) -> None:
        """Move held hashes ``lo:hi`` back by how many new hashes sort below each: held hash ``i`` has
        ``#{j: before[j] <= i}`` of them (``before`` is sorted)."""
        a, b = np.searchsorted(before, [lo, hi])
        shift = a + np.cumsum(np.bincount(before[a:b] - lo, minlength=hi - lo))
        block = self._keys[lo:hi].copy()
        self._keys[np.arange(lo, hi) + shift] = block
