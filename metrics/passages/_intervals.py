"""Vectorized arithmetic on half-open character intervals ``[start, end)`` in groups (private).

A *group* is one continuum, e.g. one (query, document) pair: intervals of different groups never meet. Every
function here sorts and scans whole arrays (numpy ``lexsort``, cumulative sums, ``searchsorted``); none loops
in Python over intervals, so millions of intervals take a fraction of a second.

- `union`: the union of each group's intervals as sorted, disjoint intervals;
- `coverage`: per group, |E|, |T| and |E ∩ T| of two interval sets E and T (one sweep over both);
- `overlapping_pairs`: every (a, b) pair of intervals of two sets that share at least one character;
- `ragged_arange`: the concatenated ranges ``[lo, hi)``, the expansion step of the pair search.
"""

from __future__ import annotations

import numpy as np

__all__ = ["union", "coverage", "overlapping_pairs", "ragged_arange", "sort_key", "span_of"]


def span_of(*positions: np.ndarray) -> int:
    """A stride for `sort_key`: more than every position given (positions are >= 0)."""
    return max((int(p.max()) for p in positions if len(p)), default=0) + 2


def sort_key(groups: np.ndarray, positions: np.ndarray, span: int) -> np.ndarray:
    """One int64 key ordering rows by group, then position: ``group * span + position``.

    >>> sort_key(np.array([0, 1]), np.array([5, 0]), 10).tolist()
    [5, 10]
    """
    groups, positions = np.asarray(groups, dtype=np.int64), np.asarray(positions, dtype=np.int64)
    if len(groups) and (int(groups.max()) + 1) * span >= 2**62:
        raise OverflowError(f"{int(groups.max()) + 1} groups of {span} positions do not fit an int64 key")
    if len(positions) and not 0 <= int(positions.min()) <= int(positions.max()) < span:
        raise ValueError(
            f"positions must lie in [0, {span}); got {int(positions.min())}..{int(positions.max())}"
        )
    return groups * span + positions


def ragged_arange(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranges ``[lo[i], hi[i])`` concatenated, and for each value the ``i`` it came from.

    >>> values, owner = ragged_arange(np.array([3, 0, 5]), np.array([5, 0, 6]))
    >>> values.tolist(), owner.tolist()
    ([3, 4, 5], [0, 0, 2])
    """
    counts = np.maximum(np.asarray(hi, np.int64) - np.asarray(lo, np.int64), 0)
    owner = np.repeat(np.arange(len(counts)), counts)
    firsts = np.cumsum(counts) - counts
    values = np.arange(int(counts.sum()), dtype=np.int64) - firsts[owner] + np.asarray(lo, np.int64)[owner]
    return values, owner


def union(groups: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, ...]:
    """The union of each group's intervals: (groups, starts, ends) of disjoint intervals sorted by group
    and start. Touching intervals merge (``[0, 2) ∪ [2, 4)`` is ``[0, 4)``).

    >>> g, s, e = union(np.array([0, 0, 0, 1]), np.array([5, 0, 2, 0]), np.array([9, 2, 4, 1]))
    >>> g.tolist(), s.tolist(), e.tolist()
    ([0, 0, 1], [0, 5, 0], [4, 9, 1])
    """
    groups, starts, ends = (np.asarray(a, dtype=np.int64) for a in (groups, starts, ends))
    if not len(starts):
        return groups, starts, ends
    order = np.lexsort((starts, groups))
    g, s, e = groups[order], starts[order], ends[order]
    # reach[i]: the furthest end among the intervals before i in the same group (a grouped running max)
    span = span_of(e)
    reach = np.maximum.accumulate(sort_key(g, e, span)) - g * span
    new = np.ones(len(s), dtype=bool)
    new[1:] = (g[1:] != g[:-1]) | (s[1:] > reach[:-1])
    first = np.flatnonzero(new)
    last = np.r_[first[1:], len(s)] - 1
    return g[first], s[first], reach[last]


def coverage(
    n_groups: int,
    e: tuple[np.ndarray, np.ndarray, np.ndarray],
    t: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group ``0 .. n_groups - 1``: (|E|, |T|, |E ∩ T|) in characters, where E and T are unions of the
    (groups, starts, ends) intervals given (overlaps within a set count once).

    One sweep: every interval adds +1 to its set's depth at its start and -1 at its end; between two
    consecutive event positions of a group, a character is in E when E's depth is positive.

    >>> E = (np.array([0, 0]), np.array([0, 5]), np.array([4, 8]))
    >>> T = (np.array([0]), np.array([2]), np.array([6]))
    >>> [a.tolist() for a in coverage(1, E, T)]
    [[7], [4], [3]]
    """
    groups = np.concatenate([e[0], e[0], t[0], t[0]]).astype(np.int64)
    positions = np.concatenate([e[1], e[2], t[1], t[2]]).astype(np.int64)
    ne, nt = len(e[0]), len(t[0])
    d_e = np.concatenate([np.ones(ne), -np.ones(ne), np.zeros(2 * nt)]).astype(np.int64)
    d_t = np.concatenate([np.zeros(2 * ne), np.ones(nt), -np.ones(nt)]).astype(np.int64)
    out = tuple(np.zeros(n_groups, dtype=np.int64) for _ in range(3))
    if not len(groups):
        return out  # type: ignore[return-value]
    order = np.argsort(sort_key(groups, positions, span_of(positions)), kind="stable")
    g, p = groups[order], positions[order]
    depth_e, depth_t = np.cumsum(d_e[order]), np.cumsum(d_t[order])
    same = g[1:] == g[:-1]
    width = np.where(same, p[1:] - p[:-1], 0)
    in_e, in_t = depth_e[:-1] > 0, depth_t[:-1] > 0
    return (
        _sum_by(g[:-1], width * in_e, n_groups),
        _sum_by(g[:-1], width * in_t, n_groups),
        _sum_by(g[:-1], width * (in_e & in_t), n_groups),
    )


def _sum_by(groups: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Exact integer sums of ``values`` per group (float64 bincount is exact below 2**53)."""
    return np.rint(np.bincount(groups, weights=values, minlength=n)).astype(np.int64)


def overlapping_pairs(
    a: tuple[np.ndarray, np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair (i of ``a``, j of ``b``) of the same group whose intervals share a character, with the
    number of shared characters: (i, j, overlap), ordered by i.

    ``b`` is sorted by (group, start) once; the candidates of ``a[i]`` are the intervals of its group that
    start before ``a[i]`` ends and after ``a[i].start - longest`` (``longest``: the longest interval of ``b``
    in that group), found by two binary searches; the few that end before ``a[i]`` starts are dropped.

    >>> a = (np.array([0, 0]), np.array([0, 6]), np.array([4, 7]))
    >>> b = (np.array([0, 0, 0]), np.array([0, 3, 5]), np.array([3, 6, 10]))
    >>> [x.tolist() for x in overlapping_pairs(a, b)]
    [[0, 0, 1], [0, 1, 2], [3, 1, 1]]
    """
    a_g, a_s, a_e = (np.asarray(x, dtype=np.int64) for x in a)
    b_g, b_s, b_e = (np.asarray(x, dtype=np.int64) for x in b)
    empty = np.zeros(0, dtype=np.int64)
    if not len(a_g) or not len(b_g):
        return empty, empty, empty
    order = np.lexsort((b_s, b_g))
    n_groups = int(max(a_g.max(), b_g.max())) + 1
    longest = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(longest, b_g, b_e - b_s)
    span = span_of(a_e, b_e)
    key = sort_key(b_g[order], b_s[order], span)
    lo = np.searchsorted(key, sort_key(a_g, np.maximum(a_s - longest[a_g] + 1, 0), span), side="left")
    hi = np.searchsorted(key, sort_key(a_g, a_e, span), side="left")
    at, i = ragged_arange(lo, hi)
    j = order[at]
    overlap = np.minimum(a_e[i], b_e[j]) - np.maximum(a_s[i], b_s[j])
    keep = overlap > 0
    return i[keep], j[keep], overlap[keep]
