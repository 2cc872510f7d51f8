"""Repeated (group, document) pairs: a quick certain "none", hashed candidates confirmed exactly, and the
stretches of whole groups that the sorts work on."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metrics._ids._columns import Strings, as_strings, indices, to_numpy
from metrics._ids._hashing import hash_strings, pair_hashes
from metrics._lazy import lazy

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    pa = lazy("pyarrow")
    pc = lazy("pyarrow.compute")

_SORT_ROWS = 4096  # rows sorted at once by `may_repeat_pairs` (whole groups: a stretch may be longer)
_MATCH_ROWS = 1 << 16  # rows looked up at once by `hash_matches` (its temporaries: ~40 bytes a row)


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

    A direct-address table over the hashes' low bits (4 slots per entry, so most slots are empty) finds them
    in one gather per row; the rare slot that two entries share is resolved by a binary search."""
    order = np.argsort(table)
    held = table[order]
    if len(held) >= 2 and bool((held[1:] == held[:-1]).any()):
        return None
    bits = max(int(len(held)).bit_length() + 2, 10)
    mask = np.uint64((1 << bits) - 1)
    slot = (held & mask).astype(np.intp)
    direct = np.full(1 << bits, -1, dtype=np.int32)
    direct[slot] = np.arange(len(held), dtype=np.int32)
    slot.sort()  # a slot met twice is shared (a sort of the entries, not a count over every slot)
    direct[slot[1:][slot[1:] == slot[:-1]]] = -2
    rows, at = [], []
    for lo in range(0, len(groups), _MATCH_ROWS):
        key = pair_hashes(doc_hashes, groups, lo, lo + _MATCH_ROWS)
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
