"""Per-annotator quality on the long labels table: accuracy against gold (`gold_scores`, `GoldScores`), time
and speed (`time_scores`, `TimeScores`), unsure, skip and edit rates (`behaviour_rates`, `BehaviourRates`),
leniency against the team (`leniency`, `Leniency`) and drift over the annotator's own stream (`drift`,
`Drift`) (private; re-exported by `metrics.agreement`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics._proportions import wilson_interval
from metrics._text import _shown
from metrics._validate import check_int, check_probability
from metrics.agreement._core import (
    WEIGHTS,
    Weights,
    _check_choice,
    _disagreement_weights,
    _kappa,
    _warn_undefined,
)
from metrics.agreement._long import _check_columns, _Long, _long_table
from metrics.errors import QrelForgeError

# ---------------------------------------------------------------------------------------------------- gold


@dataclass(frozen=True, eq=False)
class GoldScores:
    """Each rater against the gold grades, one row per rater who labelled a gold item (sorted by rater).

    ``scores`` columns: ``n_gold`` (gold items the rater labelled); ``exact`` (share equal to the gold grade)
    and ``within_one`` (share at most one grade away on the declared scale), each with its Wilson interval
    ``exact_low``, ``exact_high``, ``within_one_low``, ``within_one_high`` at ``confidence``; ``kappa``
    (Cohen's kappa of the rater's grades against the gold grades, with ``weights``; NaN where undefined).
    """

    scores: pd.DataFrame
    confidence: float
    weights: str | None


def _scaled(table, item, rater, label, labels) -> _Long:
    """The encoded long table on a declared scale (grade distances need the scale, not the grades seen)."""
    if labels is None:
        raise QrelForgeError("labels must be the grade scale in order, e.g. [0, 1, 2, 3]; got None")
    return _long_table(table, item, rater, label, labels, None)


def _gold_codes(long: _Long, gold) -> np.ndarray:
    """The gold grade's code of every rating (-1 where the item is not gold); a grade off the scale raises."""
    return _gold_items(long, gold)[long.item]


def _gold_items(long: _Long, gold) -> np.ndarray:
    """The gold grade's code of every item (-1 where the item is not gold); a grade off the scale raises."""
    if not isinstance(gold, Mapping | pd.Series):
        raise QrelForgeError(
            f"gold must map item to expected grade (a dict or Series); got {type(gold).__name__}"
        )
    series = pd.Series(gold, dtype=object) if isinstance(gold, Mapping) else gold.astype(object)
    series = series[series.notna()]
    codes = long.categories.get_indexer(pd.Index(series.to_numpy()))
    if (codes < 0).any():
        bad = series.to_numpy()[codes < 0][0]
        raise QrelForgeError(
            f"gold grade {_shown(bad)!r} of item {_shown(series.index[codes < 0][0])!r} is not one of "
            f"{list(long.categories)!r}"
        )
    per_item = np.full(len(long.items), -1)
    position = long.items.get_indexer(series.index)
    per_item[position[position >= 0]] = codes[position >= 0]
    return per_item


def gold_scores(
    table,
    gold,
    *,
    labels,
    item="item",
    rater="rater",
    label="label",
    weights=Weights.LINEAR,
    confidence: float = 0.95,
) -> GoldScores:
    """Each rater's exact and within-one accuracy on the gold items, with Wilson intervals, and kappa vs gold.

    For rater r with n gold labels of which k equal the gold grade, ``exact`` = k / n and its interval is
    Wilson's: (k + z²/2) / (n + z²) ± z √(k (n − k) / n + z²/4) / (n + z²), z the normal quantile of
    (1 + confidence) / 2. ``within_one`` counts a grade one step from gold on the declared scale as right.
    ``kappa`` is Cohen's kappa of the (gold, given) pairs with ``weights`` (None, 'linear', 'quadratic').

    Args:
        table: the long labels table (columns ``item``, ``rater``, ``label``; names configurable).
        gold: item → expected grade (a dict or Series); items not in the table are ignored.
        item, rater, label: the names of the table's item, rater and label columns.
        labels: the grade scale in order, e.g. ``[0, 1, 2, 3]``.
        weights: the kappa's disagreement weights.
        confidence: the level of the Wilson intervals, strictly between 0 and 1.

    Returns:
        A `GoldScores`; raters without a gold label are left out.

    Raises:
        QrelForgeError: a bad table, a gold grade off the scale, or a bad option.

    >>> t = pd.DataFrame({"item": [1, 2, 3, 4], "rater": "a", "label": [0, 1, 3, 3]})
    >>> s = gold_scores(t, {1: 0, 2: 1, 3: 2, 4: 3}, labels=[0, 1, 2, 3]).scores
    >>> int(s.loc["a", "n_gold"]), float(s.loc["a", "exact"]), round(float(s.loc["a", "exact_low"]), 4)
    (4, 0.75, 0.3006)
    """
    weights = _check_choice("weights", weights, WEIGHTS)
    confidence = check_probability(confidence, "confidence")
    long = _scaled(table, item, rater, label, labels)
    gold_code = _gold_codes(long, gold)
    on_gold = gold_code >= 0
    r, k = len(long.raters), len(long.categories)
    raters, given, expected = long.rater[on_gold], long.code[on_gold], gold_code[on_gold]
    n = np.bincount(raters, minlength=r)
    exact = np.bincount(raters, given == expected, minlength=r)
    near = np.bincount(raters, np.abs(given - expected) <= 1, minlength=r)
    tables = np.bincount((raters * k + expected) * k + given, minlength=r * k * k).reshape(r, k, k)
    kappa = _kappa(tables, _disagreement_weights(k, weights))[0]
    kept = n > 0
    undefined = int(np.isnan(kappa[kept]).sum())
    if undefined:
        _warn_undefined(
            f"kappa against gold for {undefined} rater{'s' if undefined > 1 else ''}",
            "every gold and given grade is in one category",
            "their kappa is NaN",
        )
    scores = pd.DataFrame({"n_gold": n}, index=long.raters.rename(rater))
    for name, hits in (("exact", exact), ("within_one", near)):
        with np.errstate(divide="ignore", invalid="ignore"):
            scores[name] = hits / n
        scores[f"{name}_low"], scores[f"{name}_high"] = wilson_interval(hits, n, confidence)
    scores["kappa"] = kappa
    return GoldScores(scores=scores[kept], confidence=confidence, weights=weights)


# ---------------------------------------------------------------------------------------------------- time


@dataclass(frozen=True, eq=False)
class TimeScores:
    """Time per label, one row per rater (sorted by rater).

    ``scores`` columns: ``n_labels``; ``n_timed`` (labels with a time); ``median_seconds``; ``speeder_share``
    (share of the timed labels made in less than ``floor`` seconds; NaN without a timed label).
    """

    scores: pd.DataFrame
    floor: float


def time_scores(table, *, floor: float, rater="rater", seconds="seconds") -> TimeScores:
    """The median seconds per label and the share of labels faster than ``floor`` (speeders), per rater.

    A missing time (NaN) is not counted in either figure; a negative or infinite time raises.

    Args:
        table: one row per label, with columns ``rater`` and ``seconds`` (names configurable).
        floor: the speeder threshold in seconds, > 0: a label made in less time is too fast.
        rater, seconds: the names of the table's rater and seconds columns.

    Returns:
        A `TimeScores`.

    Raises:
        QrelForgeError: a bad table, a bad time, or a bad floor.

    >>> t = pd.DataFrame({"rater": ["a"] * 4 + ["b"] * 2, "seconds": [10, 20, 30, 2, 8, None]})
    >>> time_scores(t, floor=5).scores.reset_index()
      rater  n_labels  n_timed  median_seconds  speeder_share
    0     a         4        4            15.0           0.25
    1     b         2        1             8.0           0.00
    """
    if isinstance(floor, bool) or not isinstance(floor, int | float) or not 0 < floor < math.inf:
        raise QrelForgeError(f"floor must be a number of seconds > 0; got {floor!r}")
    _check_columns(table, [rater, seconds])
    times = pd.to_numeric(table[seconds], errors="coerce").astype(float)
    bad = (times.isna() & table[seconds].notna()) | (times < 0) | np.isinf(times)
    if bad.any():
        where = bad.to_numpy().argmax()
        raise QrelForgeError(
            f"column {seconds!r} must hold seconds >= 0; got {_shown(table[seconds].iloc[where])!r} "
            f"at row {_shown(table.index[where])!r}"
        )
    frame = pd.DataFrame({rater: table[rater].to_numpy(), "t": times.to_numpy()})
    frame["fast"] = (frame["t"] < floor).where(frame["t"].notna())
    scores = frame.groupby(rater, sort=True).agg(
        n_labels=("t", "size"),
        n_timed=("t", "count"),
        median_seconds=("t", "median"),
        speeder_share=("fast", "mean"),
    )
    scores["speeder_share"] = scores["speeder_share"].astype(float)
    return TimeScores(scores=scores, floor=float(floor))


# --------------------------------------------------------------------------------------------- behaviour


@dataclass(frozen=True, eq=False)
class BehaviourRates:
    """How each rater works, one row per rater who labelled or skipped (sorted by rater).

    ``scores`` columns: ``n_labels``, ``n_unsure`` (labels marked unsure), ``n_edited`` (labels whose version
    is above 1), ``n_skips``; ``unsure_share`` = n_unsure / n_labels, ``edit_rate`` = n_edited / n_labels
    (both NaN without a label) and ``skip_rate`` = n_skips / (n_labels + n_skips).
    """

    scores: pd.DataFrame


def behaviour_rates(
    table, *, skips=None, rater="rater", unsure="unsure", version="version"
) -> BehaviourRates:
    """The share of labels marked unsure, the skip rate and the edit rate, per rater.

    With n the rater's labels, u those marked unsure, e those with a version above 1 (edited after the first
    save) and s the items the rater skipped: unsure_share = u / n, edit_rate = e / n, skip_rate = s / (n + s).

    Args:
        table: one row per (current) label, with columns ``rater``, ``unsure`` (bool or 0/1) and ``version``
            (integer >= 1) (names configurable).
        skips: how many items each rater skipped, a mapping or Series rater → count >= 0 (default: none); a
            rater who only skipped gets a row with skip_rate 1.
        rater: the name of the rater column.
        unsure: the name of the unsure-flag column.
        version: the name of the label-version column.

    Returns:
        A `BehaviourRates`.

    Raises:
        QrelForgeError: a bad table, flag, version or skip count.

    >>> t = pd.DataFrame({"rater": ["a", "a", "a", "a", "b"], "unsure": [1, 0, 0, 1, 0],
    ...                   "version": [1, 2, 1, 1, 3]})
    >>> rates = behaviour_rates(t, skips={"b": 1, "c": 2}).scores
    >>> rates[["n_labels", "n_skips", "unsure_share", "skip_rate", "edit_rate"]].reset_index()
      rater  n_labels  n_skips  unsure_share  skip_rate  edit_rate
    0     a         4        0           0.5        0.0       0.25
    1     b         1        1           0.0        0.5       1.00
    2     c         0        2           NaN        1.0        NaN
    """
    _check_columns(table, [rater, unsure, version])
    flags = _flags(table[unsure], unsure, table.index)
    versions = pd.to_numeric(table[version], errors="coerce")
    bad = versions.isna() | (versions < 1) | (versions != versions.round())
    if bad.any():
        where = bad.to_numpy().argmax()
        raise QrelForgeError(
            f"column {version!r} must hold label versions (integers >= 1); got "
            f"{_shown(table[version].iloc[where])!r} at row {_shown(table.index[where])!r}"
        )
    frame = pd.DataFrame({"r": table[rater].to_numpy(), "u": flags, "e": versions.to_numpy() > 1})
    counts = frame.groupby("r", sort=True).agg(
        n_labels=("u", "size"), n_unsure=("u", "sum"), n_edited=("e", "sum")
    )
    skipped = _skip_counts(skips)
    scores = counts.reindex(counts.index.union(skipped.index).sort_values()).fillna(0).astype(np.int64)
    scores["n_skips"] = skipped.reindex(scores.index, fill_value=0).astype(np.int64)
    labelled = scores["n_labels"].where(scores["n_labels"] > 0).astype(float)
    scores["unsure_share"] = scores["n_unsure"] / labelled
    scores["skip_rate"] = scores["n_skips"] / (scores["n_labels"] + scores["n_skips"])
    scores["edit_rate"] = scores["n_edited"] / labelled
    scores.index.name = rater
    return BehaviourRates(scores=scores)


def _flags(column: pd.Series, name: str, index: pd.Index) -> np.ndarray:
    """A column of unsure flags (bool, or 0/1) as bool; anything else raises."""
    values = column.to_numpy()
    ok = np.array(
        [isinstance(v, bool | np.bool_) or (v in (0, 1) and not isinstance(v, str)) for v in values]
    )
    if not ok.all():
        where = int((~ok).argmax())
        raise QrelForgeError(
            f"column {name!r} must hold true/false (or 0/1); got {_shown(values[where])!r} at row "
            f"{_shown(index[where])!r}"
        )
    return values.astype(bool)


def _skip_counts(skips) -> pd.Series:
    if skips is None:
        return pd.Series(dtype=np.int64)
    if not isinstance(skips, Mapping | pd.Series):
        raise QrelForgeError(f"skips must be a mapping rater -> count; got {type(skips).__name__}")
    series = pd.Series(dict(skips) if isinstance(skips, Mapping) else skips, dtype=object)
    for who, count in series.items():
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
            raise QrelForgeError(
                f"skips must be counts >= 0; got {_shown(count)!r} for rater {_shown(who)!r}"
            )
    return series.astype(np.int64)


# ------------------------------------------------------------------------------------------------ leniency


@dataclass(frozen=True, eq=False)
class Leniency:
    """Each rater's grades against the team's.

    ``distribution`` is raters × grades, the share of each rater's labels in each grade; ``team`` is the
    same share over every label. ``scores`` columns, one row per rater: ``n_labels``; ``mean_grade`` and
    ``team_mean_grade`` (means of scale positions 0 … K − 1); ``n_compared`` (the rater's labels on items
    someone else labelled too); ``leniency``, the mean over those labels of (the rater's position − the
    mean position the others gave the same item): above 0 lenient, below 0 strict, in grades (NaN when
    nothing is compared).
    """

    distribution: pd.DataFrame
    team: pd.Series
    scores: pd.DataFrame


def leniency(table, *, labels, item="item", rater="rater", label="label") -> Leniency:
    """How lenient (positive) or strict (negative) each rater grades, against the others on the same items.

    With x_n the scale position of label n (item i), S_i and m_i the sum and count of positions on item i:
    leniency_r = mean over r's labels with m_i ≥ 2 of x_n − (S_i − x_n) / (m_i − 1). Comparing on the same
    items keeps a rater who drew harder items from looking strict.

    Args:
        table: the long labels table (columns ``item``, ``rater``, ``label``; names configurable).
        labels: the grade scale in order, e.g. ``[0, 1, 2, 3]``.
        item, rater, label: the names of the table's item, rater and label columns.

    Returns:
        A `Leniency`.

    Raises:
        QrelForgeError: a bad table or a grade off the scale.

    >>> t = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3, 3], "rater": list("abababc"),
    ...                   "label": [2, 1, 3, 3, 1, 0, 0]})
    >>> leniency(t, labels=[0, 1, 2, 3]).scores["leniency"].round(4).tolist()
    [0.6667, -0.5, -0.5]
    """
    long = _scaled(table, item, rater, label, labels)
    r, k = len(long.raters), len(long.categories)
    x = long.code.astype(float)
    total = np.bincount(long.item, x, minlength=len(long.items))[long.item]
    count = np.bincount(long.item, minlength=len(long.items))[long.item]
    compared = count >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(compared, x - (total - x) / (count - 1), 0.0)
    n = np.bincount(long.rater, minlength=r)
    n_compared = np.bincount(long.rater, compared, minlength=r)
    counts = np.bincount(long.rater * k + long.code, minlength=r * k).reshape(r, k)
    index = long.raters.rename(rater)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = pd.DataFrame(
            {
                "n_labels": n,
                "mean_grade": np.bincount(long.rater, x, minlength=r) / n,
                "team_mean_grade": x.sum() / len(x) if len(x) else math.nan,
                "n_compared": n_compared.astype(int),
                "leniency": np.bincount(long.rater, shift, minlength=r) / n_compared,
            },
            index=index,
        )
    return Leniency(
        distribution=pd.DataFrame(counts / n[:, None], index=index, columns=long.categories),
        team=pd.Series(counts.sum(axis=0) / max(len(x), 1), index=long.categories, name="team"),
        scores=scores,
    )


# --------------------------------------------------------------------------------------------------- drift


@dataclass(frozen=True, eq=False)
class Drift:
    """Each rater's quality over their own stream, in windows of ``window`` consecutive labels.

    ``windows`` has one row per (rater, window): ``rater``, ``window`` (0 first), ``first`` and ``last`` (the
    ``order`` values it spans), ``n_labels``; ``n_compared`` and ``agreement`` (the mean share of the other
    raters of an item who gave the same grade, over the window's labels on items someone else labelled);
    ``n_gold`` and ``gold_accuracy`` (exact accuracy on the window's gold items; NaN without gold).
    ``change`` has one row per rater: the last full window's ``agreement`` and ``gold_accuracy`` minus the
    first full window's, over the full windows where each is defined (NaN with fewer than two); a short
    last window is left out of it, as its figures rest on few labels. Negative is a decline.
    """

    windows: pd.DataFrame
    change: pd.DataFrame
    window: int


def _first_to_last(values: pd.Series) -> float:
    defined = values.dropna()
    return float(defined.iloc[-1] - defined.iloc[0]) if len(defined) >= 2 else math.nan


def drift(
    table,
    *,
    window: int,
    order="at",
    gold=None,
    labels,
    item="item",
    rater="rater",
    label="label",
) -> Drift:
    """Agreement with the others and gold accuracy per window of each rater's labels, in ``order``.

    A label's agreement is (n_ig − 1) / (m_i − 1): of the other m_i − 1 ratings of its item, the share that
    gave its grade g. Each rater's labels are sorted by ``order`` (a time or a sequence number; ties keep
    the table's order) and cut into windows of ``window`` labels, the last one possibly shorter.

    Args:
        table: the long labels table with an ``order`` column (names configurable).
        window: labels per window, ≥ 1.
        order: the name of the column that orders each rater's labels (a time or a sequence number).
        gold: item → expected grade (optional), as in :func:`gold_scores`.
        labels: the grade scale in order.
        item, rater, label: the names of the table's item, rater and label columns.

    Returns:
        A `Drift`.

    Raises:
        QrelForgeError: a bad table, a missing ``order`` value, a gold grade off the scale, or a bad window.

    >>> t = pd.DataFrame({"item": [1, 2, 3, 4, 1, 2, 3, 4], "rater": list("aaaabbbb"),
    ...                   "label": [1, 1, 0, 0, 1, 1, 1, 1], "at": [1, 2, 3, 4, 1, 2, 3, 4]})
    >>> drift(t, window=2, labels=[0, 1]).change["agreement"].tolist()
    [-1.0, -1.0]
    """
    window = check_int(window, "window", 1)
    _check_columns(table, [item, rater, label, order])
    rated = table[table[label].notna()]
    if rated[order].isna().any():
        where = rated.index[rated[order].isna().to_numpy().argmax()]
        raise QrelForgeError(f"column {order!r} has a missing value at row {_shown(where)!r}")
    long = _scaled(rated, item, rater, label, labels)
    counts = long.counts()
    m = counts.sum(axis=1)[long.item]
    same = counts[long.item, long.code]
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = np.where(m >= 2, (same - 1) / (m - 1), np.nan)
    gold_code = _gold_codes(long, gold) if gold is not None else np.full(len(long.code), -1)
    frame = pd.DataFrame(
        {
            rater: long.raters.take(long.rater),
            "order": rated[order].to_numpy(),
            "agreement": agreement,
            "gold_hit": np.where(gold_code >= 0, (gold_code == long.code).astype(float), np.nan),
        }
    )
    frame = frame.sort_values([rater, "order"], kind="stable")
    frame["window"] = frame.groupby(rater, sort=False).cumcount() // window
    windows = (
        frame.groupby([rater, "window"], sort=True)
        .agg(
            first=("order", "first"),
            last=("order", "last"),
            n_labels=("order", "size"),
            n_compared=("agreement", "count"),
            agreement=("agreement", "mean"),
            n_gold=("gold_hit", "count"),
            gold_accuracy=("gold_hit", "mean"),
        )
        .reset_index()
    )
    full = windows[windows["n_labels"] == window]
    change = full.groupby(rater, sort=True).agg(
        agreement=("agreement", _first_to_last), gold_accuracy=("gold_accuracy", _first_to_last)
    )
    change = change.reindex(long.raters.rename(rater))
    return Drift(windows=windows, change=change, window=window)
