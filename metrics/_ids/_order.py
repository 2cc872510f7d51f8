"""trec_eval's row order: by query, then score descending (single precision), then document ID descending."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from metrics._ids._columns import Packed, indices, take, to_numpy
from metrics._ids._pairs import _group_cuts_of, _group_starts
from metrics._lazy import lazy

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    pa = lazy("pyarrow")
    pc = lazy("pyarrow.compute")

_ORDER_ROWS = 1 << 16  # rows ordered at once by `_sorted_order` (whole groups)


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
    """Row order by group, then score descending (single precision), then document ID descending (byte order).

    Args:
        groups: each row's group (query) code; groups already adjacent keep their first-appearance order.
        scores: each row's score, compared after rounding to float32 as trec_eval stores them.
        doc_ids: each row's document ID, the tie-break.

    Returns:
        The row indices in that order.
    """
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

    def positions_of(self, rows: np.ndarray, n: int) -> np.ndarray:
        """The positions (ascending) that hold ``rows`` (distinct rows among ``n``; an order of some rows only
        holds those): only a mark per row and a block of positions at a time are made, never a second
        row-long array."""
        marked = np.zeros(n, dtype=bool)
        marked[rows] = True
        if self.order is None:
            marked[self.at] = marked[self.moved]
            return np.flatnonzero(marked)
        step = 1 << 20
        held = len(self.order)
        parts = [np.flatnonzero(marked[self.order[lo : lo + step]]) + lo for lo in range(0, held, step)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

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
    ties, step = [], 1 << 16  # (a stretch's keys: small beside the order an unsorted run then needs)
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
    temporaries (ties too) are a stretch long and the order is int32.

    The sorts need not be stable (numpy's default sort is the faster on these keys): rows with equal keys
    share a group and a score, and `_break_ties` then orders them by document ID alone, which tells them
    apart (a run never holds a (query, document) pair twice)."""
    n = len(scores)
    if cuts is None or n >= 1 << 31:
        key = _order_key(groups, scores)
        order = np.argsort(key)
        key = key[order]
        tied = key[1:] == key[:-1]
        del key
        return _break_ties(order, tied, doc_ids) if tied.any() else order
    order = np.empty(n, dtype=np.int32)
    for lo, hi in itertools.pairwise(cuts):
        key = _order_key(groups[lo:hi], scores[lo:hi])
        local = np.argsort(key)
        key = key[local]
        np.add(local, lo, out=order[lo:hi], casting="unsafe")
        tied = key[1:] == key[:-1]  # (no tie crosses a cut: a tie shares a group)
        if tied.any():
            _break_ties(order[lo:hi], tied, doc_ids)
    return order


def _break_ties(order: np.ndarray, tied: np.ndarray, doc_ids: pa.Array) -> np.ndarray:
    """Reorder each run of equal keys by document ID descending, in place (``order`` is the caller's own, or
    a stretch of it)."""
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
    """0-based position of each row within its run of equal ``groups`` values.

    Args:
        groups: one value per row; equal adjacent values form a run.

    Returns:
        The position of each row within its run (int32).

    >>> position_within(np.array([3, 3, 3, 1, 1, 3])).tolist()
    [0, 1, 2, 0, 1, 0]
    """
    n = len(groups)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]]) if n else np.zeros(0, np.int64)
    return np.arange(n, dtype=np.int32) - np.repeat(starts.astype(np.int32), np.diff(np.r_[starts, n]))
