"""Vectorized helpers on the app's long labels table (``item``, ``rater``, ``label``, optional ``group``):
`pairwise_kappa` (`PairwiseKappa`), `item_agreement`, `disagreements`, `group_agreement`, `agreement_summary`
(private; re-exported by `metrics.agreement`)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metrics._lazy import lazy
from metrics._text import _shown
from metrics.agreement._coefficients import binarize
from metrics.agreement._core import (
    LEVELS,
    WEIGHTS,
    Level,
    _ac1,
    _alpha,
    _check_choice,
    _coincidences,
    _counts,
    _disagreement_weights,
    _encode,
    _factorize,
    _fleiss,
    _item_agreement,
    _kappa,
    _numeric_values,
    _pairable,
    _warn_undefined,
    _weights_need_labels,
)
from metrics.errors import QrelForgeError

if TYPE_CHECKING:
    from scipy import sparse
else:
    sparse = lazy("scipy.sparse")  # imported on first use: not by pages that only read a run

# ------------------------------------------------------------------------------------ long labels table (app)


@dataclass(frozen=True, eq=False)
class _Long:
    """A long labels table, encoded: one entry per rating."""

    item: np.ndarray
    rater: np.ndarray
    code: np.ndarray
    items: pd.Index
    raters: pd.Index
    categories: pd.Index
    groups: np.ndarray | None

    def counts(self) -> np.ndarray:
        return _counts(self.item, self.code, len(self.items), len(self.categories))


def _check_columns(table, columns: list, name: str = "table") -> None:
    if not isinstance(table, pd.DataFrame):
        raise QrelForgeError(
            f"{name} must be a DataFrame with columns {columns!r}; got {type(table).__name__}"
        )
    absent = [c for c in columns if c not in table.columns]
    if absent:
        raise QrelForgeError(f"{name} has no column {absent[0]!r}; its columns are {list(table.columns)!r}")


def _key_codes(column: pd.Series, name: str) -> tuple[np.ndarray, pd.Index]:
    codes, uniques = _factorize(column.to_numpy())
    if (codes < 0).any():
        raise QrelForgeError(
            f"column {name!r} has a missing value at row {_shown(column.index[int(np.argmax(codes < 0))])!r}"
        )
    return codes, uniques


def _label_codes(raw: np.ndarray, labels, cutoff, label: str) -> tuple[np.ndarray, pd.Index]:
    """Category codes of the label column; with `cutoff`, of the binarized labels (scale [0, 1])."""
    if cutoff is None:
        return _encode(raw, labels, f"column {label!r}")
    if labels is not None:
        _encode(raw, labels, f"column {label!r}")
    return _encode(binarize(raw, cutoff), [0, 1], f"column {label!r}")


def _check_unique_pairs(long_item, long_rater, items, raters) -> None:
    key = pd.Index(long_item.astype(np.int64) * len(raters) + long_rater)
    repeated = key.duplicated()
    if repeated.any():
        first, count = int(np.argmax(repeated)), int(repeated.sum())
        raise QrelForgeError(
            f"table has {count} repeated (item, rater) row{'s' if count > 1 else ''}, "
            f"e.g. item {items[long_item[first]]!r} "
            f"by rater {raters[long_rater[first]]!r}; keep one label per rater and item"
        )


def _item_groups(column: pd.Series, item_codes: np.ndarray, items: pd.Index, name: str) -> np.ndarray:
    """The group of each item (by item code); an item in two groups raises."""
    codes, names = _key_codes(column, name)
    per_item = pd.Series(codes).groupby(item_codes, sort=True)
    low, high = per_item.min().to_numpy(), per_item.max().to_numpy()
    if (low != high).any():
        bad = int(np.argmax(low != high))
        raise QrelForgeError(
            f"column {name!r} must hold one value per item; item {items[bad]!r} has "
            f"{names[low[bad]]!r} and {names[high[bad]]!r}"
        )
    return names.take(low).to_numpy()


def _long_table(table, item, rater, label, labels, cutoff, group=None) -> _Long:
    """Validate and encode a long labels table; rows with a missing label are not ratings and are dropped."""
    _check_columns(table, [item, rater, label] + ([group] if group is not None else []))
    rated = table[table[label].notna()]
    code, categories = _label_codes(rated[label].to_numpy(), labels, cutoff, label)
    item_codes, items = _key_codes(rated[item], item)
    rater_codes, raters = _key_codes(rated[rater], rater)
    _check_unique_pairs(item_codes, rater_codes, items, raters)
    groups = _item_groups(rated[group], item_codes, items, group) if group is not None else None
    return _Long(
        item=item_codes,
        rater=rater_codes,
        code=code,
        items=items,
        raters=raters,
        categories=categories,
        groups=groups,
    )


def _prepare(table, item, rater, label, labels, weights, cutoff, group=None) -> _Long:
    weights = _check_choice("weights", weights, WEIGHTS)
    if cutoff is None:
        _weights_need_labels(weights, labels)
    return _long_table(table, item, rater, label, labels, cutoff, group)


def _joint_tables(long: _Long) -> np.ndarray:
    """(R, R, K, K): for raters a, b, how many items a put in category i and b in category j."""
    k, r = len(long.categories), len(long.raters)
    onehot = sparse.csr_matrix(
        (np.ones(len(long.code), dtype=np.int64), (long.item, long.rater * k + long.code)),
        shape=(len(long.items), r * k),
    )
    joint = (onehot.T @ onehot).toarray()
    return joint.reshape(r, k, r, k).transpose(0, 2, 1, 3)


@dataclass(frozen=True, eq=False)
class PairwiseKappa:
    """Cohen's kappa between every pair of raters, over the items both rated.

    ``kappa`` and ``n_items`` are raters × raters DataFrames. ``n_items`` counts the shared items (on the
    diagonal: the items that rater labelled). ``kappa`` is NaN on the diagonal, for pairs without a shared
    item (``n_items`` 0), and for pairs whose shared ratings are all in one category (undefined, with a
    warning).
    """

    kappa: pd.DataFrame
    n_items: pd.DataFrame

    def to_long(self) -> pd.DataFrame:
        """One row per unordered pair: ``rater_a``, ``rater_b``, ``kappa``, ``n_items``."""
        raters = self.kappa.index
        a, b = np.triu_indices(len(raters), k=1)
        return pd.DataFrame(
            {
                "rater_a": raters[a],
                "rater_b": raters[b],
                "kappa": self.kappa.to_numpy()[a, b],
                "n_items": self.n_items.to_numpy()[a, b],
            }
        )


def _pairwise(long: _Long, weights) -> PairwiseKappa:
    joint = _joint_tables(long)
    kappa = _kappa(joint, _disagreement_weights(len(long.categories), weights))[0]
    n_items = joint.sum(axis=(-2, -1))
    np.fill_diagonal(kappa, np.nan)
    a, b = np.triu_indices(len(long.raters), k=1)
    undefined = int((np.isnan(kappa[a, b]) & (n_items[a, b] > 0)).sum())
    if undefined:
        _warn_undefined(
            f"Cohen's kappa for {undefined} rater pair{'s' if undefined > 1 else ''}",
            "every shared rating is in one category",
            "their cells are NaN",
        )
    raters = long.raters
    return PairwiseKappa(
        kappa=pd.DataFrame(kappa, index=raters, columns=raters),
        n_items=pd.DataFrame(n_items, index=raters, columns=raters),
    )


def pairwise_kappa(
    table, *, item="item", rater="rater", label="label", labels=None, weights=None, cutoff=None
) -> PairwiseKappa:
    """Cohen's kappa between every pair of raters of a long labels table, with the number of shared items.

    One sparse product gives all R × R contingency tables at once. Each cell equals `cohen_kappa` on the two
    raters' shared items.

    Args:
        table: a DataFrame, one row per rating; a missing label is not a rating.
        item, rater, label: the names of its columns.
        labels: the grade scale in order, e.g. ``[0, 1, 2, 3]``; required for ``weights`` unless ``cutoff``
            is given.
        weights: None, ``"linear"`` or ``"quadratic"``, as in `cohen_kappa`.
        cutoff: binary agreement at a relevance cut-off: labels ≥ ``cutoff`` count as relevant (1), the
            others as 0.

    Returns:
        A `PairwiseKappa`: ``kappa`` and ``n_items`` (shared items), each a raters × raters DataFrame.

    Raises:
        QrelForgeError: a missing column, the same (item, rater) twice, a label outside ``labels``, or a bad
            option, naming the parameter and value.

    >>> t = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "rater": list("ababab"), "label": [0, 0, 1, 1, 1, 0]})
    >>> res = pairwise_kappa(t)
    >>> float(res.kappa.loc["a", "b"]), int(res.n_items.loc["a", "b"])
    (0.4, 3)
    """
    long = _prepare(table, item, rater, label, labels, weights, cutoff)
    return _pairwise(long, weights)


def _spread(counts: np.ndarray, categories: pd.Index) -> np.ndarray:
    """max − min of each item's ratings for numeric scales; NaN for other scales."""
    try:
        values = _numeric_values(categories, Level.INTERVAL)
    except QrelForgeError:
        return np.full(len(counts), np.nan)
    present = np.where(counts > 0, values[None, :], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmax(present, axis=1) - np.nanmin(present, axis=1)


def _item_frame(long: _Long, counts: np.ndarray, weights, item: str, group) -> pd.DataFrame:
    m = counts.sum(axis=1)
    dis = _disagreement_weights(len(long.categories), weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        disagreement = np.where(m >= 2, np.einsum("ic,ck,ik->i", counts, dis, counts) / (m * (m - 1)), np.nan)
    frame = pd.DataFrame(
        {
            item: long.items,
            "n_ratings": m,
            "n_distinct": np.count_nonzero(counts, axis=1),
            "majority": long.categories.take(counts.argmax(axis=1)),
            "majority_share": counts.max(axis=1) / m,
            "agreement": _item_agreement(counts),
            "disagreement": disagreement,
            "spread": _spread(counts, long.categories),
        }
    )
    if group is not None:
        frame.insert(1, group, long.groups)
    counted = pd.DataFrame(counts, columns=[f"n[{c}]" for c in long.categories])
    return pd.concat([frame, counted], axis=1)


def item_agreement(
    table, *, item="item", rater="rater", label="label", labels=None, weights=None, cutoff=None, group=None
) -> pd.DataFrame:
    """Agreement on each item of a long labels table, one row per item (sorted by item).

    Columns: the item; the ``group`` column when given (e.g. the query of a query–document pair, which must be
    constant per item); ``n_ratings``; ``n_distinct`` (distinct labels); ``majority`` (most frequent label,
    ties to the first in scale order) and ``majority_share``; ``agreement`` = P_i, the share of agreeing rater
    pairs (as in Fleiss' P̄; NaN with fewer than 2 ratings); ``disagreement`` = the mean disagreement weight
    over rater pairs, Σ_c≠k n_c n_k d_ck / (m (m − 1)) with the ``weights`` of :func:`cohen_kappa` (1 −
    agreement when unweighted); ``spread`` = highest − lowest label for numeric scales (NaN otherwise); and
    one count column ``n[<label>]`` per category of the scale.

    Args:
        table: a DataFrame, one row per rating; a missing label is not a rating.
        item, rater, label: the names of its columns.
        labels: the grade scale in order, e.g. ``[0, 1, 2, 3]``.
        weights: None, ``"linear"`` or ``"quadratic"``, as in `cohen_kappa`.
        cutoff: binarize the labels first: ≥ ``cutoff`` is 1, the others 0.
        group: a column constant per item (e.g. the query of a query–document pair), kept in the result.

    Returns:
        A DataFrame with the columns above, one row per item.

    Raises:
        QrelForgeError: a missing column, the same (item, rater) twice, a label outside ``labels``, or a bad
            option, naming the parameter and value; a ``group`` that varies within an item.

    >>> t = pd.DataFrame({"item": [1, 1, 2, 2], "rater": list("abab"), "label": [0, 3, 2, 2]})
    >>> item_agreement(t, labels=[0, 1, 2, 3])[["item", "agreement", "spread", "n[3]"]]
       item  agreement  spread  n[3]
    0     1        0.0     3.0     1
    1     2        1.0     0.0     0
    """
    long = _prepare(table, item, rater, label, labels, weights, cutoff, group)
    return _item_frame(long, long.counts(), weights, item, group)


def disagreements(
    table, *, item="item", rater="rater", label="label", labels=None, weights=None, cutoff=None, group=None
) -> pd.DataFrame:
    """The items whose raters disagree (more than one distinct label), most disagreeing first.

    Rows as in :func:`item_agreement`, sorted by ``disagreement`` (highest first; weighted when ``weights`` is
    given, so a 0-vs-3 split outranks a 2-vs-3 split), then ``spread``, then ``n_ratings`` (both highest
    first), then item.

    Args:
        table, item, rater, label, labels, weights, cutoff, group: as in `item_agreement`.

    Returns:
        The rows of `item_agreement` for the disagreeing items, in that order, the index reset.

    Raises:
        QrelForgeError: as `item_agreement`.

    >>> t = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "rater": list("ababab"), "label": [0, 3, 2, 3, 1, 1]})
    >>> disagreements(t, labels=[0, 1, 2, 3], weights="linear")[["item", "disagreement"]]
       item  disagreement
    0     1      1.000000
    1     2      0.333333
    """
    frame = item_agreement(
        table, item=item, rater=rater, label=label, labels=labels, weights=weights, cutoff=cutoff, group=group
    )
    frame = frame[frame["n_distinct"] > 1]
    order = ["disagreement", "spread", "n_ratings"]
    return frame.sort_values(order, ascending=False, kind="stable", na_position="last").reset_index(drop=True)


def _group_alpha(
    counts: np.ndarray, group_codes: np.ndarray, n_groups: int, values, level: str
) -> np.ndarray:
    """Krippendorff's alpha within each group, from per-item coincidence contributions summed by group."""
    m = counts.sum(axis=1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(m >= 2, 1.0 / (m - 1.0), 0.0)
    contrib = (
        counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(counts.shape[1])
    ) * scale[:, None, None]
    by_group = sparse.csr_matrix(
        (np.ones(len(m)), (group_codes, np.arange(len(m)))), shape=(n_groups, len(m))
    )
    o = (by_group @ contrib.reshape(len(m), -1)).reshape(n_groups, counts.shape[1], counts.shape[1])
    return _alpha(o, values, level)


def group_agreement(
    table,
    *,
    group,
    item="item",
    rater="rater",
    label="label",
    labels=None,
    weights=None,
    cutoff=None,
    level=Level.NOMINAL,
) -> pd.DataFrame:
    """Agreement per group of items (e.g. per query, when items are query–document pairs).

    One row per group value (sorted), with ``n_items``, ``n_ratings``, ``n_compared`` (items with ≥ 2
    ratings), ``agreement`` (mean P_i over compared items, i.e. percent agreement within the group),
    ``disagreement`` (mean per-item disagreement, see :func:`item_agreement`), ``n_disagreeing`` (items with
    more than one distinct label) and ``alpha`` (Krippendorff's alpha at ``level`` over the group's items).
    Groups whose alpha is undefined (no item rated twice, or one value only) get NaN, with one
    UndefinedMetricWarning for the call.

    Args:
        table, item, rater, label, labels, weights, cutoff: as in `item_agreement`.
        group: the column that groups the items (constant per item).
        level: the level of measurement of alpha, as in `krippendorff_alpha`.

    Returns:
        A DataFrame with the ``group`` column and the columns above, one row per group.

    Raises:
        QrelForgeError: as `item_agreement`; an unknown ``level``.

    >>> t = pd.DataFrame({"query": ["q1"] * 4 + ["q2"] * 4, "item": [1, 1, 2, 2, 3, 3, 4, 4],
    ...                   "rater": list("abababab"), "label": [0, 0, 1, 1, 0, 1, 1, 1]})
    >>> group_agreement(t, group="query")[["query", "agreement", "alpha"]]
      query  agreement  alpha
    0    q1        1.0    1.0
    1    q2        0.5    0.0
    """
    level = _check_choice("level", level, LEVELS)
    long = _prepare(table, item, rater, label, labels, weights, cutoff, group)
    counts = long.counts()
    values = _numeric_values(long.categories, level)
    per_item = _item_frame(long, counts, weights, item, group).assign(
        disagreeing=lambda f: f["n_distinct"] > 1
    )
    if long.groups is None:  # group=None: _prepare reads no group column
        raise QrelForgeError(f"group must name a column of table; got {group!r}")
    group_codes, group_names = _factorize(long.groups)
    summary = per_item.groupby(group_codes, sort=True).agg(
        n_items=(item, "size"),
        n_ratings=("n_ratings", "sum"),
        n_compared=("agreement", "count"),
        agreement=("agreement", "mean"),
        disagreement=("disagreement", "mean"),
        n_disagreeing=("disagreeing", "sum"),
    )
    summary["alpha"] = _group_alpha(counts, group_codes, len(group_names), values, level)
    undefined = int(summary["alpha"].isna().sum())
    if undefined:
        _warn_undefined(
            f"krippendorff_alpha for {undefined} group{'s' if undefined > 1 else ''}",
            "no item rated twice, or fewer than two distinct pairable values",
            "their alpha is NaN",
        )
    summary.insert(0, group, group_names.take(summary.index.to_numpy()))
    return summary.reset_index(drop=True)


def agreement_summary(
    table,
    *,
    item="item",
    rater="rater",
    label="label",
    labels=None,
    weights=None,
    cutoff=None,
    level=Level.NOMINAL,
) -> dict:
    """Overall agreement statistics of a long labels table, as a dict.

    Keys: ``n_items``, ``n_raters``, ``n_ratings``, ``n_items_compared`` (items with ≥ 2 ratings);
    ``percent_agreement`` (Fleiss' P̄ over compared items); ``krippendorff_alpha`` at ``level``;
    ``fleiss_kappa`` (None when the number of ratings varies by item, where Fleiss' kappa does not apply);
    ``gwet_ac1`` (None unless ``labels`` or ``cutoff`` fixes the number of categories);
    ``mean_pairwise_kappa`` (Light's kappa: the unweighted mean of the pairwise Cohen's kappas, with
    ``weights``, over the rater pairs that share an item and where kappa is defined; NaN if none); ``level``
    and ``weights``.

    Args:
        table, item, rater, label, labels, weights, cutoff: as in `item_agreement`.
        level: the level of measurement of alpha, as in `krippendorff_alpha`.

    Returns:
        The dict of the keys above.

    Raises:
        QrelForgeError: as `item_agreement`; no item rated twice; an unknown ``level``.

    >>> t = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "rater": list("ababab"), "label": [0, 0, 1, 1, 1, 0]})
    >>> s = agreement_summary(t, labels=[0, 1])
    >>> round(s["percent_agreement"], 4), round(s["fleiss_kappa"], 4), round(s["mean_pairwise_kappa"], 4)
    (0.6667, 0.3333, 0.4)
    """
    level = _check_choice("level", level, LEVELS)
    long = _prepare(table, item, rater, label, labels, weights, cutoff)
    counts = long.counts()
    pairable = _pairable(counts, "agreement_summary")
    values = _numeric_values(long.categories, level)
    m = counts.sum(axis=1)
    return {
        "n_items": len(long.items),
        "n_raters": len(long.raters),
        "n_ratings": len(long.code),
        "n_items_compared": len(pairable),
        "percent_agreement": float(_item_agreement(pairable).mean()),
        "krippendorff_alpha": _summary_alpha(pairable, values, level),
        "fleiss_kappa": _summary_fleiss(counts) if (m == m[0]).all() else None,
        "gwet_ac1": _ac1(counts, len(long.categories)) if labels is not None or cutoff is not None else None,
        "mean_pairwise_kappa": _light_kappa(_pairwise(long, weights)),
        "level": level,
        "weights": weights,
    }


def _summary_alpha(pairable: np.ndarray, values, level: str) -> float:
    alpha = float(_alpha(_coincidences(pairable), values, level))
    if math.isnan(alpha):
        _warn_undefined("krippendorff_alpha", "fewer than two distinct values are pairable")
    return alpha


def _summary_fleiss(counts: np.ndarray) -> float:
    kappa = _fleiss(counts)
    if math.isnan(kappa):
        _warn_undefined("fleiss_kappa")
    return kappa


def _light_kappa(pairs: PairwiseKappa) -> float:
    cells = pairs.to_long()
    defined = cells["kappa"][cells["n_items"] > 0].dropna()
    return float(defined.mean()) if len(defined) else math.nan
