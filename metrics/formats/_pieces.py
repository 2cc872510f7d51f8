"""Reading a TREC file in pieces (private; `metrics.formats._trec` uses it): the input cut into pieces of
whole lines by bytes (`pieces`), the sorted 64-bit hashes that find a (query, document) pair repeated
across pieces (`PairHashes`), and the columns that gather the pieces' rows into one run (`RunColumns`).

Memory is bounded by bytes, never by a count of lines: a piece holds about `PIECE_BYTES` of whole lines (one
longer line, up to the line limit, makes a piece of its own), a line is joined only after
`_Source.blocks` has checked it against the line limit, and a run of blank lines a block long or more is
counted, never held.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from metrics._ids import Packed
from metrics.data import Run
from metrics.formats._lines import _blank, _newlines, _only_blanks, _Source

# Bytes of whole lines in a piece. 4 MiB: a piece's Arrow table and columns stay in tens of MB, and Arrow's
# per-call cost is noise (a 7M-line run reads in as much time as in one piece).
PIECE_BYTES = 4 << 20
# Bytes of a piece while the pieces are gathered into one run (`RunColumns`, `read_run`): a piece's bytes
# and the numpy reader's temporaries are then small beside the columns, and its per-piece cost is still
# noise. Once a piece is not gathered (another reader took it), `PIECE_BYTES` again.
GATHER_BYTES = 1 << 20
_MERGE_BLOCK = 1 << 16  # held hashes moved at a time by `PairHashes._merge`
_MERGE_MIN = 1 << 20  # new hashes wait in levels until there are this many (and a quarter of those held)
_SPAN_MIN = 1 << 16  # `RunColumns.hits` looks back this many rows (or 8 pieces' worth) before spilling
_SPARE = (
    1.1  # `RunColumns` reserves rows for the input's bytes at the first piece's bytes a row, and 10% more
)


def pieces(src: _Source, size: Callable[[], int] | None = None) -> Iterator[_Source]:
    """The input as pieces of whole lines of about ``size()`` bytes each (asked before each piece; default
    `PIECE_BYTES`; a line longer than that is a piece of its own), numbered from their first line (the last
    one may end without a newline). Every input gives at least one piece (an empty one when it holds nothing
    else); blocks of blank lines are counted and skipped, so a piece ends before them."""
    size = size or (lambda: PIECE_BYTES)
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
                part = src.piece(data, number)
                yield part
                number, held, held_bytes, given = number + _lines_in(part), [], 0, True
            number += _newlines(block, len(block))
            tail = [block[end + 1 :]]
            continue
        held.extend([*tail, block[: end + 1]])
        held_bytes += sum(map(len, tail)) + end + 1
        tail = [block[end + 1 :]] if end + 1 < len(block) else []
        if held_bytes < size():
            continue
        data, start = b"".join(held), 0
        held.clear()  # the blocks, joined: a long line is not held twice while it is read
        while len(data) - start >= size():
            cut = data.index(b"\n", start + size() - 1) + 1  # the end of the line holding the size-th byte
            piece = data[start:cut]
            if len(data) - cut < size():  # the last piece cut from these bytes: they go before it is read
                data, cut = data[cut:], 0
            part = src.piece(piece, number)
            yield part
            number, start, given = number + _lines_in(part), cut, True
        held = [data[start:]] if start < len(data) else []
        held_bytes = len(data) - start
    rest = b"".join([*held, *tail])
    held, tail = [], []
    if rest or not given:
        yield src.piece(rest, number)


def _lines_in(piece: _Source) -> int:
    """The newlines in ``piece``'s bytes: as the reader that read it counted them, else counted here."""
    data = piece.data or b""
    return piece.newlines if piece.newlines is not None else _newlines(data, len(data))


class PieceKeys:
    """The 64-bit (query, document) hashes of a piece's rows, computed when first needed: all of them
    (`all`, then kept) or those of some rows (`of`). A gathered piece of a file grouped by query needs only
    the hashes of the rows of the query its start cut (`RunColumns.hits`), and all of them only if the
    check spills to a `PairHashes`.

    Args:
        rows: the piece's rows.
        compute: the hashes of the rows at the given positions (of every row, given None).
    """

    def __init__(self, rows: int, compute: Callable[[np.ndarray | None], np.ndarray]):
        self._rows, self._compute = rows, compute
        self._all: np.ndarray | None = None

    def __len__(self) -> int:
        return self._rows

    def all(self) -> np.ndarray:
        if self._all is None:
            self._all = self._compute(None)
        return self._all

    def of(self, rows: np.ndarray) -> np.ndarray:
        return self._all[rows] if self._all is not None else self._compute(rows)


def _every(keys: np.ndarray | PieceKeys) -> np.ndarray:
    return keys.all() if isinstance(keys, PieceKeys) else keys


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

    def hits(self, keys: np.ndarray | PieceKeys, queries: list[str], codes: np.ndarray) -> np.ndarray:
        """The positions in ``keys`` (ascending) of the hashes held already, for rows whose query (``codes``
        into ``queries``) was held before: only those can repeat a pair (in a file grouped by query, the rows
        of the query cut by the piece's start). They are looked up in sorted order, so the search walks the
        held arrays forwards instead of jumping about them."""
        keys = _every(keys)
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

    def add(self, keys: np.ndarray | PieceKeys, queries: list[str]) -> None:
        """Hold ``keys`` too (equal hashes are all kept), the hashes of rows of ``queries``."""
        self._queries.update(queries)
        new = np.sort(_every(keys))
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


class RunColumns:
    """The rows of a run's pieces gathered into one run, column by column, in arrays reserved once; and the
    check of each piece's (query, document) pairs against the rows gathered before it (`PairHashes`'s
    `hits`, `add` and `held`).

    Each column is reserved for the rows the whole input is expected to hold (its bytes at the first piece's
    bytes a row, and `_SPARE`; reserved memory that is never written costs nothing), so the pieces' rows are
    copied once and no second copy of a column is ever made; past the estimate a column grows by half,
    copying once. Only pieces read by the numpy reader with their IDs as cells (`Packed.from_cells`) and
    their hashes are gathered: query codes (onto the query IDs of all pieces, in order of first appearance),
    scores, document hashes, document lengths (2 bytes each) and the cells (8-byte words), widened when a
    piece's IDs are longer. From the first piece that is not (`take` says False), the caller keeps the rows.

    Pairs: a piece's row can repeat an earlier pair only when its query was met before. The pair hashes of
    the earlier rows of those queries are computed from the gathered columns when those rows lie within the
    last ``max(_SPAN_MIN, 8 * rows of the piece)`` rows (a file written query by query: the query cut by the
    piece's start), so nothing is held for the check; otherwise, and from the first piece not gathered, the
    hashes of every gathered row go to a `PairHashes` that takes over.
    """

    def __init__(self, size: int, capacity: int, pair_keys: Callable[[Run], np.ndarray]):
        self._size, self._capacity, self._n, self._open = size, capacity, 0, True
        self._pair_keys = pair_keys  # the reader's pair hashes of a run's rows
        self._names: dict[str, int] = {}
        self._first = np.zeros(0, dtype=np.int64)  # per query (code), its first row
        self._codes = np.zeros(0, dtype=np.int32)
        self._scores = np.zeros(0, dtype=np.float64)
        self._hashes = np.zeros(0, dtype=np.uint64)
        self._lengths = np.zeros(0, dtype=np.uint16)
        self._cells = np.zeros((0, 1), dtype=np.uint64)
        self._pending: tuple[np.ndarray | PieceKeys, list[str]] | None = (
            None  # the pairs of the piece not taken yet
        )
        self._seen: PairHashes | None = None  # once the gathered rows' pairs are held

    def __len__(self) -> int:
        return self._n

    @property
    def held(self) -> int:
        """Rows whose pairs are checked against."""
        if self._seen is not None:
            return self._seen.held
        return self._n + (len(self._pending[0]) if self._pending else 0)

    def hits(self, keys: np.ndarray | PieceKeys, queries: list[str], codes: np.ndarray) -> np.ndarray:
        """As `PairHashes.hits`: the positions in ``keys`` of pairs met in the rows before (the hashes of
        only the rows of queries met before are asked of a `PieceKeys`)."""
        if self._seen is not None:
            return self._seen.hits(keys, queries, codes)
        known = np.array([q in self._names for q in queries], dtype=bool)
        if not known.any():
            return np.zeros(0, dtype=np.int64)
        wanted = np.array([self._names[q] for q, k in zip(queries, known.tolist(), strict=True) if k])
        lo = int(self._first[wanted].min())
        if self._n - lo > max(_SPAN_MIN, 8 * len(keys)):
            return self._spill().hits(keys, queries, codes)
        span = self._codes[lo : self._n]
        mine = np.flatnonzero(np.isin(span, wanted)) + lo
        earlier = np.sort(self._pairs(mine))
        rows = np.flatnonzero(known[codes])
        mine_keys = keys.of(rows) if isinstance(keys, PieceKeys) else keys[rows]
        at = np.minimum(np.searchsorted(earlier, mine_keys), max(len(earlier) - 1, 0))
        found = earlier[at] == mine_keys if len(earlier) else np.zeros(len(rows), dtype=bool)
        return rows[found]

    def add(self, keys: np.ndarray | PieceKeys, queries: list[str]) -> None:
        """As `PairHashes.add`: the pairs of the piece just checked (kept until it is taken)."""
        if self._seen is not None:
            self._seen.add(keys, queries)
        else:
            self._pending = (keys, queries)

    def take(self, run: Run, piece_bytes: int) -> bool:
        """Gather ``run`` (the rows of a piece of ``piece_bytes`` bytes, checked and `add`-ed) after the rows
        taken so far; False (and False for every later piece, so the rows stay in file order) when it is
        not a run of cells."""
        docs, hashes = run._docs(), run._doc_hashes
        cells = docs._cells if isinstance(docs, Packed) else None
        if not self._open or cells is None or hashes is None:
            self.stop()
            return False
        self._pending = None
        codes, names = run._query_code_list()
        n, at = len(codes), self._n
        words = cells.view(np.uint64).reshape(n, -1)
        self._reserve(n, words.shape[1], piece_bytes)
        old = len(self._names)
        table = np.array([self._names.setdefault(q, len(self._names)) for q in names], dtype=np.int32)
        self._codes[at : at + n] = table[codes] if n else codes
        if len(self._names) > old:
            heads = np.flatnonzero(np.diff(codes, prepend=-1))[::-1]  # the last write of a code: its first
            first = np.zeros(len(names), dtype=np.int64)
            first[codes[heads]] = heads + at
            self._first = np.concatenate([self._first, first[table >= old]])
        self._scores[at : at + n] = run.score
        self._hashes[at : at + n] = hashes
        self._lengths[at : at + n] = docs.lengths()
        self._cells[at : at + n, : words.shape[1]] = words
        self._cells[at : at + n, words.shape[1] :] = 0
        self._n = at + n
        return True

    @property
    def piece_bytes(self) -> int:
        """The size of the next piece: `GATHER_BYTES` while pieces are gathered, then `PIECE_BYTES`."""
        return GATHER_BYTES if self._open else PIECE_BYTES

    def stop(self) -> None:
        """Take no more pieces; the pairs of the rows before go to a `PairHashes`."""
        self._open = False
        self._spill()

    def run(self, source: str) -> Run:
        """The rows taken, as one run (unnamed)."""
        n = self._n
        docs = Packed.from_cells(self._cells[:n].view(np.uint8), self._lengths[:n])
        run: Run = Run._packed(self._codes[:n], list(self._names), docs, source, self._hashes[:n])
        run.score, run.name, run.empty_queries = self._scores[:n], None, ()
        return run

    def _pairs(self, rows: np.ndarray) -> np.ndarray:
        """The pair hashes of the gathered ``rows`` (through the reader's ``pair_keys``)."""
        used, codes = np.unique(self._codes[rows], return_inverse=True)
        names = list(self._names)
        docs = Packed.from_cells(self._cells[rows].view(np.uint8), self._lengths[rows])
        part = Run._packed(
            codes.astype(np.int32), [names[c] for c in used.tolist()], docs, "", self._hashes[rows]
        )
        return self._pair_keys(part)

    def _spill(self) -> PairHashes:
        """The `PairHashes` that takes over the check, holding the pairs of every row gathered or pending."""
        if self._seen is None:
            self._seen = PairHashes(self._capacity)
            if self._n:
                self._seen.add(self._pairs(np.arange(self._n)), list(self._names))
            if self._pending is not None:
                self._seen.add(*self._pending)
        return self._seen

    def _reserve(self, rows: int, words: int, piece_bytes: int) -> None:
        """Room for ``rows`` more rows, cells at least ``words`` 8-byte words wide."""
        need, n, capacity = self._n + rows, self._n, len(self._codes)
        if need > capacity:
            grown = (
                capacity + capacity // 2
                if capacity
                else int(self._size * rows / max(piece_bytes, 1) * _SPARE)
            )
            capacity = max(need, grown)
            self._codes = _grown(self._codes, capacity, n)
            self._scores = _grown(self._scores, capacity, n)
            self._hashes = _grown(self._hashes, capacity, n)
            self._lengths = _grown(self._lengths, capacity, n)
        if capacity > len(self._cells) or words > self._cells.shape[1]:
            wider = np.empty((capacity, max(words, self._cells.shape[1])), dtype=np.uint64)
            old = self._cells.shape[1]
            wider[:n, :old] = self._cells[:n]
            wider[:n, old:] = 0
            self._cells = wider


def _grown(column: np.ndarray, capacity: int, n: int) -> np.ndarray:
    """``column`` reserved for ``capacity`` rows, its first ``n`` kept."""
    out = np.empty(capacity, dtype=column.dtype)
    out[:n] = column[:n]
    return out
