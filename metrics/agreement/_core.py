"""Input checks, encodings, count tables and the arithmetic shared by every agreement coefficient (private).

The enums of the choices (`Weights`, `Level`, `CIMethod`, `Band`) live here and are re-exported by
`metrics.agreement`.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from metrics._choice import Choice
from metrics._text import _shown
from metrics.errors import QrelForgeError, UndefinedMetricWarning, quoted


class Weights(Choice):
    """Disagreement weights of a weighted kappa (None: unweighted)."""

    LINEAR = "linear"
    QUADRATIC = "quadratic"


class Level(Choice):
    """Krippendorff's levels of measurement (the distance between two ratings)."""

    NOMINAL = "nominal"
    ORDINAL = "ordinal"
    INTERVAL = "interval"
    RATIO = "ratio"


class CIMethod(Choice):
    """How `KappaResult.confidence_interval` computes its interval."""

    ANALYTIC = "analytic"
    BOOTSTRAP = "bootstrap"


class Band(Choice):
    """Landis & Koch (1977) bands of an agreement coefficient (`interpret`)."""

    POOR = "poor"
    SLIGHT = "slight"
    FAIR = "fair"
    MODERATE = "moderate"
    SUBSTANTIAL = "substantial"
    ALMOST_PERFECT = "almost perfect"
    UNDEFINED = "undefined"  # NaN


WEIGHTS = (None, *Weights)
LEVELS = tuple(Level)
CI_METHODS = tuple(CIMethod)

# Landis & Koch (1977): upper bounds of the bands above "poor" (value < 0), each band closed on the right.
_BAND_TOPS = (0.2, 0.4, 0.6, 0.8, 1.0)
_BAND_NAMES = (Band.SLIGHT, Band.FAIR, Band.MODERATE, Band.SUBSTANTIAL, Band.ALMOST_PERFECT)


# ------------------------------------------------------------------------------------------------- validation


def _or_list(choices) -> str:
    shown = [repr(c) for c in choices]
    return ", ".join(shown[:-1]) + " or " + shown[-1]


def _check_choice(name: str, value, choices):
    """Return `value` if it is one of `choices` (None or strings), else raise naming `name` and the value."""
    if (value is None or isinstance(value, str)) and value in choices:
        return next(c for c in choices if c == value)  # the enum member for a plain string
    raise QrelForgeError(f"{name} must be {_or_list(choices)}; got {value!r}")


def _is_sequence(value) -> bool:
    return isinstance(value, (Sequence, np.ndarray, pd.Index, pd.Series)) and not isinstance(
        value, (str, bytes)
    )


def _declared_labels(labels, *, minimum: int = 1) -> pd.Index:
    """The declared scale as an Index: a sequence of distinct, non-missing categories, in scale order."""
    if not _is_sequence(labels) or np.ndim(labels) != 1:
        raise QrelForgeError(f"labels must be a sequence of categories such as [0, 1, 2, 3]; got {labels!r}")
    shown = [_shown(v) for v in labels]
    index = pd.Index(shown, dtype=object if len(shown) == 0 else None, tupleize_cols=False)
    if index.hasnans:
        raise QrelForgeError(f"labels must not contain a missing value; got {shown!r}")
    if index.has_duplicates:
        raise QrelForgeError(f"labels must be distinct; got {shown!r}")
    if len(index) < minimum:
        raise QrelForgeError(f"labels must have at least {minimum} categories; got {shown!r}")
    return index


def _weights_need_labels(weights, labels) -> None:
    if weights is not None and labels is None:
        raise QrelForgeError(
            f"weights={_shown(weights)!r} needs labels, the declared rating scale "
            "(e.g. labels=[0, 1, 2, 3]); got labels=None"
        )


def _numeric_values(categories: pd.Index, level: str):
    """Category values as floats for the interval and ratio levels (None for nominal and ordinal)."""
    if level in (Level.NOMINAL, Level.ORDINAL):
        return None
    bad = _non_numeric(np.asarray(categories, dtype=object))
    if bad is not None:
        raise QrelForgeError(f"level={_shown(level)!r} needs numeric ratings; got {bad!r}")
    try:
        values = np.asarray(categories, dtype=float)
    except OverflowError:  # an int beyond float64's range
        values = np.array([float("inf")])
    if not np.isfinite(values).all():  # NaN is missing (dropped before); ±inf or 10**400 has no distance
        bad = next(v for v in categories if not np.isfinite(_as_float(v)))
        raise QrelForgeError(f"level={_shown(level)!r} needs finite ratings; got {_shown_value(bad)}")
    if level == Level.RATIO and (values < 0).any():
        raise QrelForgeError(f"level='ratio' needs non-negative ratings; got {values[values < 0][0]:g}")
    return values


def _as_float(value) -> float:
    try:
        return float(value)
    except OverflowError:
        return float("inf")


def _shown_value(value) -> str:
    return quoted(value.item() if isinstance(value, np.generic) else value)


_ONE_CATEGORY = "every rating is in one category, so expected agreement is 1"


def _warn_undefined(what: str, why: str = _ONE_CATEGORY, result: str = "returning NaN") -> None:
    warnings.warn(f"{what} is undefined: {why}; {result}", UndefinedMetricWarning, stacklevel=3)


def _non_numeric(values: np.ndarray):
    """The first value of a 1-D array that is not a real number, or None when all are (vectorized check)."""
    if values.dtype.kind in "biuf":
        return None
    values = values.astype(object)
    kind = pd.api.types.infer_dtype(values, skipna=True)
    if kind in ("integer", "floating", "mixed-integer-float", "boolean", "empty"):
        return None
    return next((v for v in values if isinstance(v, (str, bytes)) or not isinstance(v, numbers.Real)), None)


# --------------------------------------------------------------------------------------------------- encoding


def _factorize(flat: np.ndarray) -> tuple[np.ndarray, pd.Index]:
    """Codes (-1 for missing) and sorted uniques; insertion order when the values cannot be sorted."""
    try:
        codes, uniques = pd.factorize(flat, sort=True)
    except TypeError:
        codes, uniques = pd.factorize(flat)
    return codes, pd.Index(uniques, tupleize_cols=False)


def _encode(values: np.ndarray, labels, name: str) -> tuple[np.ndarray, pd.Index]:
    """Integer category codes of `values` (any shape, -1 = missing) and the categories they index.

    With `labels` the categories are the declared scale and a value outside it raises; without, they are the
    observed values, sorted.
    """
    flat = np.asarray(values).ravel()
    if labels is None:
        codes, categories = _factorize(flat)
        return codes.reshape(np.shape(values)), categories
    categories = _declared_labels(labels)
    missing = pd.isna(flat)
    codes = categories.get_indexer(pd.Index(flat)) if flat.size else np.empty(0, dtype=np.intp)
    bad = (codes < 0) & ~missing
    if bad.any():
        raise QrelForgeError(
            f"{name} has a rating outside labels: {_shown(flat[bad][0])!r} is not one of {list(categories)!r}"
        )
    codes[missing] = -1
    return codes.reshape(np.shape(values)), categories


def _sequence(values, name: str) -> np.ndarray:
    """A 1-D array of one rater's ratings."""
    if not _is_sequence(values):
        raise QrelForgeError(f"{name} must be a sequence of ratings; got {type(values).__name__}")
    array = (
        values.to_numpy(dtype=object)
        if isinstance(values, (pd.Series, pd.Index))
        else np.asarray(values, dtype=object)
    )
    if array.ndim != 1:
        raise QrelForgeError(f"{name} must be 1-D (one rating per item); got {array.ndim}-D")
    return array


def _check_rows(rows, name: str) -> None:
    """Every row of a list-of-rows table is a sequence, all of the same length (one column per rater)."""
    for i, row in enumerate(rows):
        if not _is_sequence(row):
            raise QrelForgeError(f"{name} row {i} must be a sequence of ratings (one per rater); got {row!r}")
    lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
    odd = np.flatnonzero(lengths != lengths[0]) if len(rows) else np.zeros(0, dtype=np.intp)
    if len(odd):
        raise QrelForgeError(
            f"{name} rows must all have the same length (one column per rater, None for a missing rating); "
            f"row 0 has {lengths[0]}, row {odd[0]} has {lengths[odd[0]]}"
        )


def _ratings_table(ratings, name: str = "ratings") -> tuple[np.ndarray, list]:
    """(items × raters values, item names) from a DataFrame, a 2-D array or a list of rows."""
    if isinstance(ratings, pd.DataFrame):
        return ratings.to_numpy(), list(ratings.index)
    if not _is_sequence(ratings):
        raise QrelForgeError(
            f"{name} must be an items × raters table (a list of rows, a 2-D array or a DataFrame); "
            f"got {type(ratings).__name__}"
        )
    if not isinstance(ratings, np.ndarray):
        _check_rows(ratings, name)
        ratings = np.asarray(ratings, dtype=object) if len(ratings) else np.empty((0, 0), dtype=object)
    if ratings.ndim != 2:
        raise QrelForgeError(f"{name} must be 2-D (items × raters); got {ratings.ndim}-D")
    return ratings, list(range(ratings.shape[0]))


def _counts(item_codes: np.ndarray, codes: np.ndarray, n_items: int, n_categories: int) -> np.ndarray:
    """items × categories: how many ratings put item i in category k (ratings with code -1 are skipped)."""
    valid = codes >= 0
    flat = item_codes[valid] * n_categories + codes[valid]
    return np.bincount(flat, minlength=n_items * n_categories).reshape(n_items, n_categories)


def _table_counts(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """Category counts per row of an items × raters code table."""
    rows = np.broadcast_to(np.arange(codes.shape[0])[:, None], codes.shape)
    return _counts(rows.ravel(), codes.ravel(), codes.shape[0], n_categories)


def _encoded_counts(ratings, labels) -> tuple[np.ndarray, pd.Index, list]:
    """(items × categories counts, categories, item names) of a ratings table."""
    values, names = _ratings_table(ratings)
    codes, categories = _encode(values, labels, "ratings")
    return _table_counts(codes, len(categories)), categories, names


def _pairable(counts: np.ndarray, what: str) -> np.ndarray:
    """Counts of the items rated by two raters or more; no such item is an error."""
    keep = counts.sum(axis=1) >= 2
    if not keep.any():
        raise QrelForgeError(f"{what} needs at least one item rated by two or more raters; got none")
    return counts[keep]


# ----------------------------------------------------------------------------------------------- coefficients


def _disagreement_weights(n_categories: int, weights) -> np.ndarray:
    """K×K disagreement weights over scale positions i, j: nominal [i != j], linear |i-j|/(K-1),
    quadratic ((i-j)/(K-1))². Agreement weights are 1 minus these (Cohen 1968)."""
    position = np.arange(n_categories, dtype=float)
    distance = np.abs(position[:, None] - position[None, :])
    if weights is None:
        return (distance > 0).astype(float)
    scaled = distance / max(n_categories - 1, 1)
    return scaled if weights == Weights.LINEAR else scaled**2


def _kappa(tables: np.ndarray, dis: np.ndarray):
    """Cohen's kappa, observed and expected agreement of (..., K, K) contingency tables; kappa is NaN where
    the expected disagreement is 0 (a sum of non-negative terms, so the test is exact)."""
    tables = np.asarray(tables, dtype=float)
    n = tables.sum(axis=(-2, -1))
    observed = np.einsum("...ij,ij->...", tables, dis)
    expected = np.einsum("...i,...j,ij->...", tables.sum(-1), tables.sum(-2), dis)
    with np.errstate(divide="ignore", invalid="ignore"):
        d_o, d_e = observed / n, expected / n**2
        kappa = np.where(expected > 0, 1.0 - d_o / d_e, np.nan)
    return kappa, 1.0 - d_o, 1.0 - d_e


def _kappa_std_err(table: np.ndarray, dis: np.ndarray, kappa: float) -> float:
    """Large-sample standard error of (weighted) kappa, Fleiss, Cohen & Everitt (1969)."""
    n = table.sum()
    p = table / n
    w = 1.0 - dis
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    p_e = rows @ w @ cols
    spread = (w - ((w @ cols)[:, None] + (rows @ w)[None, :]) * (1.0 - kappa)) ** 2
    var = ((p * spread).sum() - (kappa - p_e * (1.0 - kappa)) ** 2) / (n * (1.0 - p_e) ** 2)
    return math.sqrt(max(var, 0.0))


def _bootstrap_ci(table: np.ndarray, dis: np.ndarray, level: float, n_boot: int, seed: int):
    """Percentile interval of kappa over `n_boot` resamples of the items (with replacement).

    Resampling n items with replacement is a multinomial draw of the n pairs over the table's cells, so the
    resamples are drawn from the table directly. Resamples in which kappa is undefined are left out.
    """
    n = int(table.sum())
    draws = np.random.default_rng(seed).multinomial(n, table.ravel() / n, size=n_boot)
    kappas = _kappa(draws.reshape(n_boot, *table.shape), dis)[0]
    kappas = kappas[np.isfinite(kappas)]
    if kappas.size == 0:
        return (math.nan, math.nan)
    low, high = np.percentile(kappas, [50.0 * (1.0 - level), 50.0 * (1.0 + level)])
    return (float(low), float(high))


def _item_agreement(counts: np.ndarray) -> np.ndarray:
    """P_i = Σ_k n_ik (n_ik − 1) / (m_i (m_i − 1)): the share of agreeing ordered rater pairs on item i."""
    m = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(m >= 2, (counts * (counts - 1)).sum(axis=1) / (m * (m - 1)), np.nan)


def _coincidences(counts: np.ndarray) -> np.ndarray:
    """Krippendorff's coincidence matrix o_ck = Σ_u (n_uc n_uk − [c = k] n_uc) / (m_u − 1), over items with
    m_u ≥ 2.

    The diagonal is summed as Σ_u n_uc (n_uc − 1)/(m_u − 1), non-negative terms, so an unused value has an
    exactly zero row.
    """
    counts = counts[counts.sum(axis=1) >= 2].astype(float)
    scaled = counts / (counts.sum(axis=1) - 1.0)[:, None]
    o = scaled.T @ counts
    np.fill_diagonal(o, (scaled * (counts - 1.0)).sum(axis=0))
    return o


def _delta(values, n_c: np.ndarray, level: str) -> np.ndarray:
    """Squared difference δ²_ck of Krippendorff's metric at `level`, batched over leading axes of n_c (...,
    K).

    Ordinal is Krippendorff's rank-based metric: (Σ_{g=c..k} n_g − (n_c + n_k)/2)², from the pairable-value
    marginals n_g, not merely weights over positions.
    """
    k = n_c.shape[-1]
    if level == Level.NOMINAL:
        return 1.0 - np.eye(k)
    if level == Level.ORDINAL:
        index = np.arange(k)
        low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
        between = np.cumsum(n_c, axis=-1)[..., high] - np.cumsum(n_c, axis=-1)[..., low] + n_c[..., low]
        return (between - (n_c[..., :, None] + n_c[..., None, :]) / 2.0) ** 2
    diff = values[:, None] - values[None, :]
    if level == Level.INTERVAL:
        return diff**2
    total = values[:, None] + values[None, :]
    return np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2


def _alpha(o: np.ndarray, values, level: str) -> np.ndarray:
    """α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck for (..., K, K) coincidence matrices; NaN where fewer
    than two distinct values are pairable (expected disagreement 0) or nothing is pairable."""
    n_c = o.sum(axis=-1)
    delta = _delta(values, n_c, level)
    observed = (o * delta).sum(axis=(-2, -1))
    expected = np.einsum("...c,...k,...ck->...", n_c, n_c, delta)
    defined = np.count_nonzero(n_c > 0, axis=-1) > 1
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(defined, 1.0 - (n_c.sum(axis=-1) - 1.0) * observed / expected, np.nan)


def _fleiss(counts: np.ndarray) -> float:
    """Fleiss' kappa of an items × categories count table with the same number of ratings per item."""
    totals = counts.sum(axis=0)
    if np.count_nonzero(totals) <= 1:
        return math.nan
    p_bar = _item_agreement(counts).mean()
    p_e = ((totals / totals.sum()) ** 2).sum()
    return float((p_bar - p_e) / (1.0 - p_e))


def _ac1(counts: np.ndarray, n_categories: int) -> float:
    """Gwet's AC1: p_a over items with ≥ 2 ratings, π_k over items with ≥ 1 rating (Gwet 2008, 2014)."""
    m = counts.sum(axis=1)
    p_a = np.nanmean(_item_agreement(counts[m >= 2]))
    pi = (counts[m >= 1] / m[m >= 1, None]).mean(axis=0)
    p_e = (pi * (1.0 - pi)).sum() / (n_categories - 1)
    return float((p_a - p_e) / (1.0 - p_e))
