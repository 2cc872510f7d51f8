"""Agreement between annotators: Cohen's kappa, Scott's pi, Fleiss' kappa, Krippendorff's alpha, Gwet's AC1 and
percent agreement, plus vectorized helpers that work on the app's long labels table (``item``, ``rater``, ``label``).

Input conventions
-----------------
* A *ratings table* is items × raters: a list of rows, a 2-D array or a DataFrame, one row per item and one column
  per rater. ``None``, ``NaN`` and ``pd.NA`` mark a missing rating. (The ``krippendorff`` package expects the
  transpose, raters × items.)
* Two-rater functions take two equal-length sequences; position ``i`` of both is the same item (pandas indexes are
  not aligned).
* ``labels`` declares the rating scale, in order, e.g. ``[0, 1, 2, 3]``. A rating outside it is an error. Weights
  and the ordinal metric are computed over this declared scale, never over the categories that happen to be
  observed. Without ``labels`` the categories are the observed values, sorted.
* A statistic whose expected agreement is 1 (every rating in one category) is undefined: it is returned as NaN with
  an :class:`~metrics.errors.UndefinedMetricWarning`, never as a silent 1.0 or 0.0.
* No item rated by two raters is an error (:class:`~metrics.errors.QrelForgeError`), as is any other bad input.

Where the reference libraries differ (the tests match them to 1e-9 everywhere else)
------------------------------------------------------------------------------------
* scikit-learn ``cohen_kappa_score``: without ``labels`` its weighted kappa spaces the weights over the categories
  observed in ``y1 ∪ y2``, so an unused grade changes the weights; ours requires ``labels`` for weighted kappa. With
  ``labels`` it silently drops pairs holding a value outside ``labels``; ours raises. It does not accept missing
  ratings; ours drops those pairs and reports how many.
* statsmodels ``aggregate_raters`` counts NaN as one more category (``np.unique`` of the raw values), so missing
  ratings become agreement; ours ignores missing ratings. Its ``fleiss_kappa`` takes an items × categories count
  table and checks the number of raters per item only with ``assert``; ours names the items that differ. Its
  ``cohens_kappa`` takes a contingency table; the standard error is the same (Fleiss, Cohen & Everitt 1969).
* ``krippendorff.alpha``: raters × items orientation; it raises ``ValueError`` when the value domain has a single
  value and returns NaN with a numpy ``RuntimeWarning`` when all pairable values are equal; ours returns NaN with
  ``UndefinedMetricWarning`` in both cases.
"""

from __future__ import annotations

import bisect
import math
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse, stats

from metrics.errors import QrelForgeError, UndefinedMetricWarning

__all__ = [
    "KappaResult",
    "PairwiseKappa",
    "agreement_summary",
    "binarize",
    "cohen_kappa",
    "disagreements",
    "fleiss_kappa",
    "group_agreement",
    "gwet_ac1",
    "interpret",
    "item_agreement",
    "krippendorff_alpha",
    "pairwise_kappa",
    "percent_agreement",
    "scott_pi",
]

WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval", "ratio")
CI_METHODS = ("analytic", "bootstrap")

# Landis & Koch (1977): upper bounds of the bands above "poor" (value < 0), each band closed on the right.
_BAND_TOPS = (0.2, 0.4, 0.6, 0.8, 1.0)
_BAND_NAMES = ("slight", "fair", "moderate", "substantial", "almost perfect")


# --------------------------------------------------------------------------------------------------- validation


def _shown(value):
    """A value as Python shows it, so that messages print ``3``, not ``np.int64(3)``."""
    return value.item() if isinstance(value, np.generic) else value


def _or_list(choices) -> str:
    shown = [repr(c) for c in choices]
    return ", ".join(shown[:-1]) + " or " + shown[-1]


def _check_choice(name: str, value, choices):
    """Return `value` if it is one of `choices` (None or strings), else raise naming `name` and the value."""
    if (value is None or isinstance(value, str)) and value in choices:
        return value
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
            f"weights={weights!r} needs labels, the declared rating scale (e.g. labels=[0, 1, 2, 3]); got labels=None"
        )


def _numeric_values(categories: pd.Index, level: str):
    """Category values as floats for the interval and ratio levels (None for nominal and ordinal)."""
    if level in ("nominal", "ordinal"):
        return None
    bad = _non_numeric(np.asarray(categories, dtype=object))
    if bad is not None:
        raise QrelForgeError(f"level={level!r} needs numeric ratings; got {bad!r}")
    values = np.asarray(categories, dtype=float)
    if level == "ratio" and (values < 0).any():
        raise QrelForgeError(f"level='ratio' needs non-negative ratings; got {values[values < 0][0]:g}")
    return values


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


# ------------------------------------------------------------------------------------------------------ encoding


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
    codes = categories.get_indexer(flat) if flat.size else np.empty(0, dtype=np.intp)
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
    """Every row of a list-of-rows table is a sequence, and all have the same length (one column per rater)."""
    for i, row in enumerate(rows):
        if not _is_sequence(row):
            raise QrelForgeError(f"{name} row {i} must be a sequence of ratings (one per rater); got {row!r}")
    lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
    odd = np.flatnonzero(lengths != lengths[0]) if len(rows) else []
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


# ------------------------------------------------------------------------------------------------ coefficients


def _disagreement_weights(n_categories: int, weights) -> np.ndarray:
    """K×K disagreement weights over scale positions i, j: nominal [i != j], linear |i-j|/(K-1),
    quadratic ((i-j)/(K-1))². Agreement weights are 1 minus these (Cohen 1968)."""
    position = np.arange(n_categories, dtype=float)
    distance = np.abs(position[:, None] - position[None, :])
    if weights is None:
        return (distance > 0).astype(float)
    scaled = distance / max(n_categories - 1, 1)
    return scaled if weights == "linear" else scaled**2


def _kappa(tables: np.ndarray, dis: np.ndarray):
    """Cohen's kappa, observed and expected agreement of (..., K, K) contingency tables; kappa is NaN where the
    expected disagreement is 0 (a sum of non-negative terms, so the test is exact)."""
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
    """Krippendorff's coincidence matrix o_ck = Σ_u (n_uc n_uk − [c = k] n_uc) / (m_u − 1), over items with m_u ≥ 2.

    The diagonal is summed as Σ_u n_uc (n_uc − 1)/(m_u − 1), non-negative terms, so an unused value has an
    exactly zero row.
    """
    counts = counts[counts.sum(axis=1) >= 2].astype(float)
    scaled = counts / (counts.sum(axis=1) - 1.0)[:, None]
    o = scaled.T @ counts
    np.fill_diagonal(o, (scaled * (counts - 1.0)).sum(axis=0))
    return o


def _delta(values, n_c: np.ndarray, level: str) -> np.ndarray:
    """Squared difference δ²_ck of Krippendorff's metric at `level`, batched over leading axes of n_c (..., K).

    Ordinal is Krippendorff's rank-based metric: (Σ_{g=c..k} n_g − (n_c + n_k)/2)², from the pairable-value
    marginals n_g, not merely weights over positions.
    """
    k = n_c.shape[-1]
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "ordinal":
        index = np.arange(k)
        low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
        between = np.cumsum(n_c, axis=-1)[..., high] - np.cumsum(n_c, axis=-1)[..., low] + n_c[..., low]
        return (between - (n_c[..., :, None] + n_c[..., None, :]) / 2.0) ** 2
    diff = values[:, None] - values[None, :]
    if level == "interval":
        return diff**2
    total = values[:, None] + values[None, :]
    return np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2


def _alpha(o: np.ndarray, values, level: str) -> np.ndarray:
    """α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck for (..., K, K) coincidence matrices; NaN where fewer than
    two distinct values are pairable (expected disagreement 0) or nothing is pairable."""
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


# -------------------------------------------------------------------------------------------- two-rater measures


@dataclass(frozen=True, eq=False)
class KappaResult:
    """Cohen's kappa with what it was computed from. ``float(result)`` is the kappa.

    Attributes
    ----------
    kappa : float
        The coefficient; NaN when undefined.
    observed, expected : float
        Observed agreement p_o and chance agreement p_e (weighted when ``weights`` is set).
    n_items : int
        Pairs used (both ratings present).
    n_dropped : int
        Pairs dropped because one rating or both were missing.
    table : ndarray
        K × K contingency table over ``labels`` (rows: r1, columns: r2).
    labels : tuple
        The categories, in scale order.
    weights : None, 'linear' or 'quadratic'
    """

    kappa: float
    observed: float
    expected: float
    n_items: int
    n_dropped: int
    table: np.ndarray = field(repr=False)
    labels: tuple
    weights: str | None

    def __float__(self) -> float:
        return float(self.kappa)

    @property
    def std_err(self) -> float:
        """Large-sample standard error (Fleiss, Cohen & Everitt 1969), the ``std_kappa`` of statsmodels'
        ``cohens_kappa``::

            var = [Σ_ij p_ij (w_ij − (w̄_i. + w̄_.j)(1 − κ))² − (κ − p_e (1 − κ))²] / (n (1 − p_e)²)

        with agreement weights w, w̄_i. = Σ_j p_.j w_ij and w̄_.j = Σ_i p_i. w_ij. NaN when kappa is undefined.
        """
        if math.isnan(self.kappa):
            return math.nan
        return _kappa_std_err(self.table, _disagreement_weights(len(self.labels), self.weights), self.kappa)

    def confint(
        self, confidence_level: float = 0.95, *, method: str = "analytic", n_boot: int = 2000, seed: int = 0
    ):
        """Two-sided confidence interval ``(low, high)`` for kappa.

        ``method="analytic"`` (default): κ ± z·SE with the Fleiss–Cohen–Everitt standard error :attr:`std_err`
        (normal approximation; the bounds are not clipped to [−1, 1]).
        ``method="bootstrap"``: percentile interval over ``n_boot`` resamples of the items with replacement, drawn
        with ``numpy.random.default_rng(seed)``, so the same seed gives the same interval. Resamples in which kappa
        is undefined are left out. Both give ``(nan, nan)`` when kappa is undefined.

        >>> res = cohen_kappa([0, 1, 1, 0, 1, 1, 0, 1], [0, 1, 0, 0, 1, 1, 1, 1])
        >>> [round(x, 3) for x in res.confint()]
        [-0.166, 1.099]
        """
        level = confidence_level
        if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1:
            raise QrelForgeError(
                f"confidence_level must be a number between 0 and 1 (exclusive); got {level!r}"
            )
        method = _check_choice("method", method, CI_METHODS)
        if isinstance(n_boot, bool) or not isinstance(n_boot, numbers.Integral) or n_boot < 1:
            raise QrelForgeError(f"n_boot must be a positive integer; got {n_boot!r}")
        if math.isnan(self.kappa):
            return (math.nan, math.nan)
        if method == "bootstrap":
            dis = _disagreement_weights(len(self.labels), self.weights)
            return _bootstrap_ci(self.table, dis, level, int(n_boot), seed)
        half = float(stats.norm.ppf(0.5 + level / 2.0)) * self.std_err
        return (self.kappa - half, self.kappa + half)


def _paired_codes(r1, r2, labels):
    """Codes of the pairs with both ratings present, the categories, and how many pairs were dropped."""
    v1, v2 = _sequence(r1, "r1"), _sequence(r2, "r2")
    if len(v1) != len(v2):
        raise QrelForgeError(
            f"r1 and r2 must have the same length (one rating per item); got {len(v1)} and {len(v2)}"
        )
    if labels is not None:
        (c1, categories), (c2, _) = _encode(v1, labels, "r1"), _encode(v2, labels, "r2")
    else:
        codes, categories = _encode(np.concatenate([v1, v2]), None, "r1 and r2")
        c1, c2 = codes[: len(v1)], codes[len(v1) :]
    both = (c1 >= 0) & (c2 >= 0)
    if not both.any():
        detail = "they are empty" if len(v1) == 0 else f"each of the {len(v1)} pairs has a missing rating"
        raise QrelForgeError(f"r1 and r2 have no item rated by both: {detail}")
    return c1[both], c2[both], categories, int(len(v1) - both.sum())


def _pair_table(c1: np.ndarray, c2: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(c1 * k + c2, minlength=k * k).reshape(k, k)


def cohen_kappa(r1, r2, *, weights=None, labels=None) -> KappaResult:
    """Cohen's kappa between two raters (Cohen 1960), optionally weighted (Cohen 1968).

    κ = 1 − D_o / D_e, with D_o = Σ_ij d_ij p_ij the observed and D_e = Σ_ij d_ij p_i. p_.j the chance
    disagreement; d_ij is 1 − [i = j] (unweighted), |i − j|/(K − 1) (``"linear"``) or ((i − j)/(K − 1))²
    (``"quadratic"``), where i, j are positions in ``labels``. Unweighted, this is (p_o − p_e)/(1 − p_e).

    Parameters
    ----------
    r1, r2 : sequences of equal length
        Ratings of the same items by two raters; None or NaN for a missing rating.
    weights : None, 'linear' or 'quadratic'
        Weighted kappa needs ``labels``: weights are spaced over the declared scale, never over the categories
        that happen to be observed (an unused grade still counts).
    labels : sequence, optional
        The rating scale in order, e.g. ``[0, 1, 2, 3]``. A rating outside it raises.

    Returns
    -------
    KappaResult
        ``.kappa``, ``.n_items`` (pairs used), ``.n_dropped`` (pairs with a missing rating, dropped),
        ``.std_err`` and ``.confint()``.

    Edge cases: pairs with a missing rating are dropped and counted in ``n_dropped``; no pair left raises
    QrelForgeError; when both raters put every item in one and the same category, expected agreement is 1 and
    kappa is NaN with an UndefinedMetricWarning.

    >>> res = cohen_kappa([0, 1, 1, 0, 1, None], [0, 1, 0, 0, 1, 1])
    >>> round(res.kappa, 4), res.n_items, res.n_dropped
    (0.6154, 5, 1)
    >>> round(cohen_kappa([0, 1, 3], [0, 2, 3], weights="linear", labels=[0, 1, 2, 3]).kappa, 4)
    0.7692
    """
    weights = _check_choice("weights", weights, WEIGHTS)
    _weights_need_labels(weights, labels)
    c1, c2, categories, n_dropped = _paired_codes(r1, r2, labels)
    table = _pair_table(c1, c2, len(categories))
    kappa, observed, expected = (
        float(x) for x in _kappa(table, _disagreement_weights(len(categories), weights))
    )
    if math.isnan(kappa):
        _warn_undefined("cohen_kappa")
    return KappaResult(kappa, observed, expected, len(c1), n_dropped, table, tuple(categories), weights)


def scott_pi(r1, r2, *, labels=None) -> float:
    """Scott's pi between two raters (Scott 1955): chance agreement from the pooled distribution of both raters.

    π = (p_o − p_e) / (1 − p_e), p_e = Σ_k ((n_1k + n_2k) / 2n)². Equal to Fleiss' kappa with two raters.
    Pairs with a missing rating are dropped; no pair left raises QrelForgeError; every rating in one category
    gives NaN with an UndefinedMetricWarning.

    >>> round(scott_pi(["a", "a", "b", "b"], ["a", "b", "b", "b"]), 4)
    0.4667
    """
    c1, c2, categories, _ = _paired_codes(r1, r2, labels)
    table = _pair_table(c1, c2, len(categories))
    pooled = table.sum(axis=0) + table.sum(axis=1)
    if np.count_nonzero(pooled) <= 1:
        _warn_undefined("scott_pi")
        return math.nan
    n = table.sum()
    p_o, p_e = np.trace(table) / n, ((pooled / (2.0 * n)) ** 2).sum()
    return float((p_o - p_e) / (1.0 - p_e))


# ------------------------------------------------------------------------------------------- many-rater measures


def _check_constant_raters(counts: np.ndarray, names: list) -> np.ndarray:
    """Counts of the rated items, which must all have the same number of ratings (else name the odd items)."""
    m = counts.sum(axis=1)
    rated = counts[m > 0]
    if len(rated) == 0:
        raise QrelForgeError("fleiss_kappa needs at least one rated item; got none")
    sizes, freq = np.unique(m[m > 0], return_counts=True)
    if len(sizes) > 1:
        usual = sizes[np.argmax(freq)]
        odd = np.flatnonzero((m > 0) & (m != usual))
        shown = ", ".join(f"{_shown(names[i])!r} ({m[i]})" for i in odd[:5])
        more = f" and {len(odd) - 5} more" if len(odd) > 5 else ""
        raise QrelForgeError(
            "fleiss_kappa needs the same number of ratings for every item; "
            f"most items have {usual}, but these differ: {shown}{more}"
        )
    return rated


def fleiss_kappa(ratings, *, labels=None) -> float:
    """Fleiss' kappa (Fleiss 1971) for a fixed number n of ratings per item (the raters may differ by item).

    P_i = (Σ_k n_ik² − n) / (n (n − 1)), P̄ = mean_i P_i, p_k = Σ_i n_ik / (N n), P̄_e = Σ_k p_k²,
    κ = (P̄ − P̄_e) / (1 − P̄_e).

    ``ratings`` is items × raters; None/NaN are missing. Items without any rating are ignored; the others must
    all have the same number of ratings, else QrelForgeError names the items that differ. Fewer than two ratings
    per item raises; every rating in one category gives NaN with an UndefinedMetricWarning. ``labels`` only
    validates the scale (an unused category does not change the value).

    >>> round(fleiss_kappa([[1, 1, 2], [2, 2, 2], [1, 1, 1]]), 4)
    0.55
    """
    counts, _, names = _encoded_counts(ratings, labels)
    rated = _check_constant_raters(counts, names)
    per_item = int(rated[0].sum())
    if per_item < 2:
        raise QrelForgeError(f"fleiss_kappa needs at least 2 ratings per item; got {per_item}")
    kappa = _fleiss(rated)
    if math.isnan(kappa):
        _warn_undefined("fleiss_kappa")
    return kappa


def krippendorff_alpha(ratings, *, level="nominal", labels=None) -> float:
    """Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").

    From the coincidence matrix o_ck = Σ_u (n_uc n_uk − [c = k] n_uc)/(m_u − 1), n_c = Σ_k o_ck, n = Σ_c n_c:
    α = 1 − (n − 1) Σ_ck o_ck δ²_ck / Σ_ck n_c n_k δ²_ck, where δ² is

    * nominal: [c ≠ k];
    * ordinal: (Σ_{g=c..k} n_g − (n_c + n_k)/2)², Krippendorff's rank-based metric over the scale order (the
      order of ``labels``, else the sorted values);
    * interval: (c − k)²;  ratio: ((c − k)/(c + k))² (values must be numeric, and non-negative for ratio).

    ``ratings`` is items × raters with None/NaN for missing values (the transpose of the ``krippendorff``
    package's input). Items rated by only one rater are not pairable and are ignored; no item rated twice raises
    QrelForgeError. Fewer than two distinct pairable values gives NaN with an UndefinedMetricWarning.

    >>> data = [[1, 1, None], [2, 2, 2], [3, 3, 2], [None, 1, 1]]
    >>> round(krippendorff_alpha(data), 4), round(krippendorff_alpha(data, level="interval"), 4)
    (0.7188, 0.8393)
    """
    level = _check_choice("level", level, LEVELS)
    counts, categories, _ = _encoded_counts(ratings, labels)
    values = _numeric_values(categories, level)
    alpha = float(_alpha(_coincidences(_pairable(counts, "krippendorff_alpha")), values, level))
    if math.isnan(alpha):
        _warn_undefined("krippendorff_alpha", "fewer than two distinct values are pairable")
    return alpha


def gwet_ac1(ratings, *, labels) -> float:
    """Gwet's AC1 (Gwet 2008), for any number of raters and missing ratings.

    p_a = mean over items with m_i ≥ 2 of Σ_k n_ik (n_ik − 1) / (m_i (m_i − 1));
    π_k = mean over items with m_i ≥ 1 of n_ik / m_i;  p_e = Σ_k π_k (1 − π_k) / (q − 1);
    AC1 = (p_a − p_e) / (1 − p_e), where q = len(labels) is the number of categories of the scale, used or not
    (hence ``labels`` is required). p_e < 1 always, so AC1 is always defined; no item rated twice raises.

    >>> round(gwet_ac1([[1, 1], [1, 1], [1, 2]], labels=[1, 2]), 4)
    0.5385
    """
    categories = _declared_labels(labels, minimum=2)
    counts, _, _ = _encoded_counts(ratings, categories)
    _pairable(counts, "gwet_ac1")
    return _ac1(counts, len(categories))


def percent_agreement(ratings) -> float:
    """Percent agreement as Fleiss' P̄: the mean over items of the share of agreeing rater pairs,
    P_i = Σ_k n_ik (n_ik − 1) / (m_i (m_i − 1)), over the items rated by two raters or more (m_i ≥ 2).

    With two raters this is the share of items on which they agree. Not chance-corrected. Missing ratings are
    allowed; no item rated twice raises QrelForgeError.

    >>> round(percent_agreement([[1, 1, 1], [1, 1, 2], [1, None, None]]), 4)
    0.6667
    """
    counts, _, _ = _encoded_counts(ratings, None)
    return float(_item_agreement(_pairable(counts, "percent_agreement")).mean())


def interpret(value) -> str:
    """The Landis & Koch (1977) band of an agreement coefficient.

    ============== =====================
    value          band
    ============== =====================
    < 0            ``"poor"``
    [0, 0.20]      ``"slight"`` (0 itself is slight, as in Landis & Koch's "0.00–0.20")
    (0.20, 0.40]   ``"fair"``
    (0.40, 0.60]   ``"moderate"``
    (0.60, 0.80]   ``"substantial"``
    (0.80, 1]      ``"almost perfect"``
    NaN            ``"undefined"``
    ============== =====================

    A value above 1 or one that is not a real number raises QrelForgeError. A :class:`KappaResult` is accepted.

    >>> interpret(0.0), interpret(0.2), interpret(0.21), interpret(-0.1), interpret(float("nan"))
    ('slight', 'slight', 'fair', 'poor', 'undefined')
    """
    if isinstance(value, KappaResult):
        value = value.kappa
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise QrelForgeError(f"value must be a real number or NaN; got {value!r}")
    value = float(value)
    if math.isnan(value):
        return "undefined"
    if value > 1.0:
        raise QrelForgeError(f"value must be at most 1 (an agreement coefficient); got {value!r}")
    return "poor" if value < 0.0 else _BAND_NAMES[bisect.bisect_left(_BAND_TOPS, value)]


def binarize(ratings, cutoff):
    """Binary relevance at a cut-off: 1.0 where rating ≥ cutoff, 0.0 below, NaN where missing.

    Accepts a sequence, an array of any shape, a Series or a DataFrame, and returns the same kind (pandas
    objects keep their index and columns). Ratings must be numeric.

    >>> binarize([0, 3, None, 2], 2)
    array([ 0.,  1., nan,  1.])
    """
    if isinstance(cutoff, bool) or not isinstance(cutoff, numbers.Real) or math.isnan(cutoff):
        raise QrelForgeError(f"cutoff must be a number; got {cutoff!r}")
    values = ratings.to_numpy() if isinstance(ratings, (pd.DataFrame, pd.Series)) else ratings
    values = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    missing = pd.isna(values)
    bad = _non_numeric(values[~missing].ravel())
    if bad is not None:
        raise QrelForgeError(f"binarize needs numeric ratings; got {bad!r}")
    present = np.where(missing, 0, values).astype(float)
    out = np.where(missing, np.nan, (present >= cutoff).astype(float))
    if isinstance(ratings, pd.DataFrame):
        return pd.DataFrame(out, index=ratings.index, columns=ratings.columns)
    if isinstance(ratings, pd.Series):
        return pd.Series(out, index=ratings.index, name=ratings.name)
    return out


# ------------------------------------------------------------------------------------- long labels table (app)


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
            f"column {name!r} has a missing value at row {_shown(column.index[np.argmax(codes < 0)])!r}"
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
    return _Long(item_codes, rater_codes, code, items, raters, categories, groups)


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
    diagonal: the items that rater labelled). ``kappa`` is NaN on the diagonal, for pairs without a shared item
    (``n_items`` 0), and for pairs whose shared ratings are all in one category (undefined, with a warning).
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
    frame = {"index": long.raters, "columns": long.raters}
    return PairwiseKappa(pd.DataFrame(kappa, **frame), pd.DataFrame(n_items, **frame))


def pairwise_kappa(
    table, *, item="item", rater="rater", label="label", labels=None, weights=None, cutoff=None
) -> PairwiseKappa:
    """Cohen's kappa between every pair of raters of a long labels table, with the number of shared items.

    One sparse product gives all R × R contingency tables at once, so 20 raters and 100k labels take
    milliseconds. Each cell equals ``cohen_kappa`` on the two raters' shared items.

    Parameters
    ----------
    table : DataFrame
        One row per rating, columns ``item``, ``rater``, ``label`` (names configurable). A missing label is not a
        rating; the same (item, rater) twice raises.
    labels : sequence, optional
        The grade scale, e.g. ``[0, 1, 2, 3]``; required for ``weights`` unless ``cutoff`` is given.
    weights : None, 'linear' or 'quadratic'
    cutoff : number, optional
        Binary agreement at a relevance cut-off: labels ≥ cutoff count as relevant (1), the others as 0.

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
        values = _numeric_values(categories, "interval")
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
    constant per item); ``n_ratings``; ``n_distinct`` (distinct labels); ``majority`` (most frequent label, ties
    to the first in scale order) and ``majority_share``; ``agreement`` = P_i, the share of agreeing rater pairs
    (as in Fleiss' P̄; NaN with fewer than 2 ratings); ``disagreement`` = the mean disagreement weight over rater
    pairs, Σ_c≠k n_c n_k d_ck / (m (m − 1)) with the ``weights`` of :func:`cohen_kappa` (1 − agreement when
    unweighted); ``spread`` = highest − lowest label for numeric scales (NaN otherwise); and one count column
    ``n[<label>]`` per category of the scale. ``cutoff`` binarizes the labels first (≥ cutoff → 1).

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
    given, so a 0-vs-3 split outranks a 2-vs-3 split), then ``spread``, then ``n_ratings`` (both highest first),
    then item. The index is reset.

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
    level="nominal",
) -> pd.DataFrame:
    """Agreement per group of items (e.g. per query, when items are query–document pairs).

    One row per group value (sorted), with ``n_items``, ``n_ratings``, ``n_compared`` (items with ≥ 2 ratings),
    ``agreement`` (mean P_i over compared items, i.e. percent agreement within the group), ``disagreement`` (mean
    per-item disagreement, see :func:`item_agreement`), ``n_disagreeing`` (items with more than one distinct
    label) and ``alpha`` (Krippendorff's alpha at ``level`` over the group's items). Groups whose alpha is
    undefined (no item rated twice, or one value only) get NaN, with one UndefinedMetricWarning for the call.

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
    level="nominal",
) -> dict:
    """Overall agreement statistics of a long labels table, as a dict.

    Keys: ``n_items``, ``n_raters``, ``n_ratings``, ``n_items_compared`` (items with ≥ 2 ratings);
    ``percent_agreement`` (Fleiss' P̄ over compared items); ``krippendorff_alpha`` at ``level``;
    ``fleiss_kappa`` (None when the number of ratings varies by item, where Fleiss' kappa does not apply);
    ``gwet_ac1`` (None unless ``labels`` or ``cutoff`` fixes the number of categories); ``mean_pairwise_kappa``
    (Light's kappa: the unweighted mean of the pairwise Cohen's kappas, with ``weights``, over the rater pairs
    that share an item and where kappa is defined; NaN if none); ``level`` and ``weights``.
    No item rated twice raises QrelForgeError.

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
