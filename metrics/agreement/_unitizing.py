"""Agreement on spans: Krippendorff's unitizing alpha (`unitizing_alpha`, `UnitizingAlpha`) and the
character-overlap F1 between raters (`pairwise_span_f1`, `PairwiseSpanF1`) (private; re-exported by
`metrics.agreement`).

The input is a long *spans table*: one row per span, columns ``item`` (a continuum: one document for one
query), ``rater``, ``start``, ``end`` (``[start, end)`` in characters) and optionally a category. A row whose
``start`` and ``end`` are both missing records that the rater judged the item and marked nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from metrics._text import _shown
from metrics.agreement._long import _check_columns
from metrics.errors import QrelForgeError, UndefinedMetricWarning, quoted
from metrics.passages import _intervals

__all__ = ["unitizing_alpha", "UnitizingAlpha", "pairwise_span_f1", "PairwiseSpanF1"]


@dataclass(frozen=True, eq=False)
class UnitizingAlpha:
    """Krippendorff's αu with its parts. ``float(result)`` is ``alpha``.

    Attributes:
        alpha: 1 − ΣD_o / ΣD_e over the categories (NaN when ΣD_e = 0).
        categories: per category (the index): ``units``, ``observed`` (D_o), ``expected`` (D_e), ``alpha``.
        raters: m, the number of raters.
        length: L, the length of the continuum (the items laid end to end).
    """

    alpha: float
    categories: pd.DataFrame
    raters: int
    length: int

    def __float__(self) -> float:
        return float(self.alpha)


def unitizing_alpha(
    table: pd.DataFrame,
    lengths: Mapping[Any, int] | pd.Series,
    *,
    item: str = "item",
    rater: str = "rater",
    start: str = "start",
    end: str = "end",
    category: str | None = None,
    raters: list | None = None,
) -> UnitizingAlpha:
    """Krippendorff's unitizing alpha αu (Krippendorff 1995; 2004, section 11.6; as DKPro Statistics and
    INCEpTION compute it) for m raters who each cut the same continuum into units and gaps.

    The continuum is the items laid end to end (length L = Σ ``lengths``); a gap ends where its item ends,
    so no unit can be thought to straddle two items. For each category c, every rater's continuum is a
    sequence of segments: its units of c and the gaps between them. With δ² the distance between two
    overlapping segments g (of rater i) and h (of rater j): ``(b_g − b_h)² + (e_g − e_h)²`` for two units,
    ``l_g²`` for a unit g inside a gap h (and ``l_h²`` the other way round), else 0::

        cD_o = Σ_{i≠j} Σ_g Σ_h δ²(g, h) / (m (m − 1) L²)
        cD_e = (2/L) Σ_units u [ (N_c − 1)(2l³ − 3l² + l)/3 + l² Σ_gaps γ max(0, l_γ − l + 1) ]
               / (mL (mL − 1) − Σ_units l (l − 1))          (l = l_u; N_c units; gaps of all raters)
        cαu = 1 − cD_o / cD_e;   αu = 1 − Σ_c cD_o / Σ_c cD_e

    Every rater listed is taken to have unitized every item (no span: all gap). Units of one rater in one
    category may not overlap; units of different categories may.

    Args:
        table: the spans table (see `metrics.agreement._unitizing`).
        lengths: ``{item: length}``; every item of ``table`` must be in it; items without spans count too.
        item, rater, start, end: column names.
        category: the category column; None: one category.
        raters: the raters (default: those of ``table``); at least two.

    Returns:
        `UnitizingAlpha`; a category (or the whole) whose D_e is 0 gets NaN with an
        `~metrics.errors.UndefinedMetricWarning`.

    Raises:
        QrelForgeError: a missing column, an item without a length, a bad span (empty, out of its item,
            overlapping another of the same rater and category), fewer than two raters.

    >>> t = pd.DataFrame({"item": ["d"] * 3, "rater": ["a", "b", "b"],
    ...                   "start": [2, 2, 6], "end": [6, 6, 8]})
    >>> round(float(unitizing_alpha(t, {"d": 10})), 4)
    0.5884
    """
    frame, names, lengths_arr = _spans_table(table, lengths, item, rater, start, end, category, raters)
    offset = np.concatenate([[0], np.cumsum(lengths_arr)[:-1]])
    total = int(lengths_arr.sum())
    m = len(names)
    rows = []
    for value, units in frame.groupby("category", sort=True):
        segments = [_segments(units[units["rater"] == r], offset, lengths_arr) for r in range(m)]
        observed = _observed(segments, m, total)
        expected = _expected(segments, m, total)
        rows.append({"category": value, "units": len(units), "observed": observed, "expected": expected})
    categories = pd.DataFrame(rows, columns=["category", "units", "observed", "expected"]).set_index(
        "category"
    )
    categories["alpha"] = [
        _alpha(o, e, f"unitizing alpha of category {quoted(c)}")
        for c, o, e in zip(categories.index, categories["observed"], categories["expected"], strict=True)
    ]
    alpha = _alpha(categories["observed"].sum(), categories["expected"].sum(), "unitizing alpha")
    return UnitizingAlpha(alpha, categories, m, total)


def _alpha(observed: float, expected: float, what: str) -> float:
    if expected <= 0:
        warnings.warn(
            f"{what} is undefined: the expected disagreement is 0 (no unit, or units fill the continuum); "
            "returning NaN",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return float("nan")
    return 1.0 - observed / expected


def _spans_table(table, lengths, item, rater, start, end, category, raters):
    """The spans with absolute offsets: a frame (rater code, category, start, end), the raters, lengths."""
    _check_columns(table, [item, rater, start, end] + ([category] if category is not None else []))
    sizes = pd.Series(lengths) if not isinstance(lengths, pd.Series) else lengths
    if not len(sizes) or not all(isinstance(v, int | np.integer) and v > 0 for v in sizes.to_numpy()):
        shown = {_shown(k): _shown(v) for k, v in sizes.items()}
        raise QrelForgeError(f"lengths must map each item to an int > 0; got {quoted(shown)}")
    marked = table[table[start].notna() | table[end].notna()]
    names = list(dict.fromkeys(raters if raters is not None else table[rater].tolist()))
    if len(names) < 2:
        listed = [_shown(n) for n in names]
        raise QrelForgeError(f"unitizing alpha needs at least 2 raters; got {len(names)} ({quoted(listed)})")
    item_at = sizes.index.get_indexer(marked[item])
    if (item_at < 0).any():
        bad = _shown(marked[item].to_numpy()[int(np.argmax(item_at < 0))])
        raise QrelForgeError(f"item {quoted(bad)} of the table has no length in lengths")
    rater_at = pd.Index(names).get_indexer(marked[rater])
    if (rater_at < 0).any():
        bad = _shown(marked[rater].to_numpy()[int(np.argmax(rater_at < 0))])
        raise QrelForgeError(
            f"rater {quoted(bad)} of the table is not in raters={quoted([_shown(n) for n in names])}"
        )
    s, e = _whole(marked[start], start), _whole(marked[end], end)
    size = sizes.to_numpy().astype(np.int64)[item_at]
    for bad, reason in (((e <= s), "is empty"), ((s < 0) | (e > size), "is out of its item")):
        if bad.any():
            row = int(np.argmax(bad))
            raise QrelForgeError(
                f"span [{s[row]}, {e[row]}) of rater {quoted(_shown(marked[rater].iloc[row]))} on item "
                f"{quoted(_shown(marked[item].iloc[row]))} {reason} (item length {size[row]})"
            )
    offset = np.concatenate([[0], np.cumsum(sizes.to_numpy().astype(np.int64))[:-1]])
    frame = pd.DataFrame(
        {
            "rater": rater_at,
            "category": marked[category].to_numpy() if category is not None else "unit",
            "start": s + offset[item_at],
            "end": e + offset[item_at],
            "item": marked[item].to_numpy(),
        }
    ).sort_values(["rater", "category", "start"], kind="stable")
    _no_overlap(frame, names)
    return frame, names, sizes.to_numpy().astype(np.int64)


def _whole(series: pd.Series, name: str) -> np.ndarray:
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        row = int(np.argmax(bad))
        raise QrelForgeError(
            f"column {name!r} must hold ints; got {quoted(_shown(series.iloc[row]))} at row {row}"
        )
    return values.astype(np.int64)


def _no_overlap(frame: pd.DataFrame, names: list) -> None:
    same = (frame["rater"].to_numpy()[1:] == frame["rater"].to_numpy()[:-1]) & (
        frame["category"].to_numpy()[1:] == frame["category"].to_numpy()[:-1]
    )
    clash = same & (frame["start"].to_numpy()[1:] < frame["end"].to_numpy()[:-1])  # sorted by start
    if clash.any():
        at = int(np.argmax(clash))
        a, b = frame.iloc[at], frame.iloc[at + 1]
        who, where = quoted(_shown(names[int(b["rater"])])), quoted(_shown(b["item"]))
        raise QrelForgeError(
            f"spans of rater {who} on item {where} overlap: "
            f"[{a['start']}, {a['end']}) and [{b['start']}, {b['end']}) (offsets in the continuum)"
        )


@dataclass(frozen=True)
class _Segments:
    """One rater's continuum for one category: segments sorted by start, tiling [0, L)."""

    start: np.ndarray
    end: np.ndarray
    unit: np.ndarray  # True for a unit, False for a gap


def _segments(units: pd.DataFrame, offset: np.ndarray, lengths: np.ndarray) -> _Segments:
    """The rater's units and the gaps between them; a gap ends at each item boundary."""
    bounds = np.concatenate([offset, offset + lengths])
    starts = np.concatenate([units["start"].to_numpy(), bounds])  # zero-length marks at item boundaries
    ends = np.concatenate([units["end"].to_numpy(), bounds])
    order = np.lexsort((ends, starts))
    starts, ends = starts[order], ends[order]
    gap_start, gap_end = ends[:-1], starts[1:]
    gap = gap_end > gap_start
    real = ends > starts
    start = np.concatenate([starts[real], gap_start[gap]])
    end = np.concatenate([ends[real], gap_end[gap]])
    unit = np.concatenate([np.ones(int(real.sum()), bool), np.zeros(int(gap.sum()), bool)])
    order = np.argsort(start, kind="stable")
    return _Segments(start[order], end[order], unit[order])


def _observed(segments: list[_Segments], m: int, length: int) -> float:
    """cD_o: the δ² of every overlapping pair of segments of two raters, over m(m − 1)L²."""
    total = 0.0
    for i in range(m):
        for j in range(i + 1, m):
            a, b = segments[i], segments[j]
            cuts = np.unique(np.concatenate([a.start, b.start]))  # each rater's segments tile [0, L)
            ga = np.searchsorted(a.start, cuts, side="right") - 1
            gb = np.searchsorted(b.start, cuts, side="right") - 1
            keep = np.r_[True, (ga[1:] != ga[:-1]) | (gb[1:] != gb[:-1])]
            ga, gb = ga[keep], gb[keep]
            total += 2.0 * float(_distance(a, ga, b, gb).sum())
    return total / (m * (m - 1) * float(length) ** 2)


def _distance(a: _Segments, ga: np.ndarray, b: _Segments, gb: np.ndarray) -> np.ndarray:
    """δ² of overlapping segments ``a[ga]`` and ``b[gb]``."""
    sa, ea, ua = a.start[ga].astype(np.float64), a.end[ga].astype(np.float64), a.unit[ga]
    sb, eb, ub = b.start[gb].astype(np.float64), b.end[gb].astype(np.float64), b.unit[gb]
    both = ua & ub
    a_in_gap = ua & ~ub & (sb <= sa) & (ea <= eb)
    b_in_gap = ub & ~ua & (sa <= sb) & (eb <= ea)
    return np.select(
        [both, a_in_gap, b_in_gap],
        [(sa - sb) ** 2 + (ea - eb) ** 2, (ea - sa) ** 2, (eb - sb) ** 2],
        0.0,
    )


def _expected(segments: list[_Segments], m: int, length: int) -> float:
    """cD_e, the disagreement expected when every unit could lie in any place that fits it."""
    units = np.concatenate([(s.end - s.start)[s.unit] for s in segments]).astype(np.float64)
    gaps = np.sort(np.concatenate([(s.end - s.start)[~s.unit] for s in segments]).astype(np.float64))
    n = len(units)
    if not n:
        return 0.0
    # Σ over gaps γ >= l of (γ − l + 1), for each unit length l, from suffix sums of the sorted gaps
    suffix = np.concatenate([np.cumsum(gaps[::-1])[::-1], [0.0]])
    first = np.searchsorted(gaps, units, side="left")
    fits = suffix[first] - (units - 1) * (len(gaps) - first)
    inner = (n - 1) * (2 * units**3 - 3 * units**2 + units) / 3 + units**2 * fits
    total = float(m) * length
    return float((2.0 / length) * inner.sum() / (total * (total - 1) - float((units * (units - 1)).sum())))


# ------------------------------------------------------------------------------------------ character F1
@dataclass(frozen=True, eq=False)
class PairwiseSpanF1:
    """The character-overlap F1 of every pair of raters.

    Attributes:
        table: one row per pair (``rater_a``, ``rater_b``): ``items`` both judged, ``chars_a``, ``chars_b``
            (their marked characters on those items), ``overlap`` (characters both marked) and ``f1`` =
            2·overlap / (chars_a + chars_b), NaN when neither marked anything.
        mean: the mean of the defined ``f1`` (None when none is).
        pooled: 2·Σ overlap / Σ (chars_a + chars_b) over all pairs (None when nothing was marked).
    """

    table: pd.DataFrame
    mean: float | None
    pooled: float | None


def pairwise_span_f1(
    table: pd.DataFrame, *, item: str = "item", rater: str = "rater", start: str = "start", end: str = "end"
) -> PairwiseSpanF1:
    """The character-overlap F1 between each two raters' spans, over the items both judged.

    With A and B the characters two raters marked on the items both judged (a rater judged an item when it
    has a row for it; a row without ``start`` and ``end`` marks nothing)::

        F1 = 2 |A ∩ B| / (|A| + |B|)

    It is symmetric, 1 for identical spans, 0 for disjoint ones; overlapping spans of one rater count their
    characters once.

    Args:
        table: one row per (item, rater) span, or a row without ``start`` and ``end`` for an item judged
            without a span.
        item, rater: the names of the table's item and rater columns.
        start, end: the names of the columns holding each span's first and past-the-end character offsets.

    Returns:
        `PairwiseSpanF1`.

    Raises:
        QrelForgeError: a missing column, a span with only one end, an empty or reversed span.

    >>> t = pd.DataFrame({"item": ["d", "d"], "rater": ["a", "b"], "start": [0, 5], "end": [10, 15]})
    >>> pairwise_span_f1(t).table[["rater_a", "rater_b", "overlap", "f1"]].to_dict("records")
    [{'rater_a': 'a', 'rater_b': 'b', 'overlap': 5, 'f1': 0.5}]
    """
    _check_columns(table, [item, rater, start, end])
    half = table[start].isna() != table[end].isna()
    if half.any():
        row = table.index[int(np.argmax(half.to_numpy()))]
        raise QrelForgeError(f"row {quoted(row)} has only one of {start!r} and {end!r}")
    items, item_code = np.unique(table[item].astype(str).to_numpy(), return_inverse=True)
    names = list(dict.fromkeys(table[rater].tolist()))
    rater_code = pd.Index(names).get_indexer(table[rater])
    judged = np.zeros((len(names), len(items)), dtype=bool)
    judged[rater_code, item_code] = True
    marked = table[start].notna().to_numpy()
    s, e = _whole(table[start][marked], start), _whole(table[end][marked], end)
    if (e <= s).any():
        row = int(np.argmax(e <= s))
        raise QrelForgeError(
            f"span [{s[row]}, {e[row]}) is empty or reversed (rater {quoted(table[rater][marked].iloc[row])})"
        )
    m_rater, m_item = rater_code[marked], item_code[marked]
    rows = []
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            shared = judged[a] & judged[b]
            sa, sb = (m_rater == a) & shared[m_item], (m_rater == b) & shared[m_item]
            size_a, size_b, both = (
                int(x.sum())
                for x in _intervals.coverage(
                    len(items), (m_item[sa], s[sa], e[sa]), (m_item[sb], s[sb], e[sb])
                )
            )
            f1 = 2 * both / (size_a + size_b) if size_a + size_b else float("nan")
            rows.append((names[a], names[b], int(shared.sum()), size_a, size_b, both, f1))
    frame = pd.DataFrame(rows, columns=["rater_a", "rater_b", "items", "chars_a", "chars_b", "overlap", "f1"])
    defined = frame["f1"].dropna()
    marked_total = int((frame["chars_a"] + frame["chars_b"]).sum())
    return PairwiseSpanF1(
        frame,
        float(defined.mean()) if len(defined) else None,
        2 * int(frame["overlap"].sum()) / marked_total if marked_total else None,
    )
