"""The coefficients on a ratings table or two raters' ratings: Cohen's kappa (`KappaResult`), Scott's pi,
Fleiss' kappa, Krippendorff's alpha, Gwet's AC1, percent agreement, and `interpret` / `binarize` (private;
re-exported by `metrics.agreement`)."""

from __future__ import annotations

import bisect
import math
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metrics._lazy import lazy
from metrics._text import _shown
from metrics.agreement._core import (
    _BAND_NAMES,
    _BAND_TOPS,
    CI_METHODS,
    LEVELS,
    WEIGHTS,
    Band,
    CIMethod,
    Level,
    _ac1,
    _alpha,
    _bootstrap_ci,
    _check_choice,
    _coincidences,
    _declared_labels,
    _disagreement_weights,
    _encode,
    _encoded_counts,
    _fleiss,
    _item_agreement,
    _kappa,
    _kappa_std_err,
    _non_numeric,
    _numeric_values,
    _pairable,
    _sequence,
    _warn_undefined,
    _weights_need_labels,
)
from metrics.errors import QrelForgeError

if TYPE_CHECKING:
    from scipy import stats
else:
    stats = lazy("scipy.stats")  # imported on first use: not by pages that only read a run

# ----------------------------------------------------------------------------------------- two-rater measures


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

        with agreement weights w, w̄_i. = Σ_j p_.j w_ij and w̄_.j = Σ_i p_i. w_ij. NaN when kappa is
        undefined.
        """
        if math.isnan(self.kappa):
            return math.nan
        return _kappa_std_err(self.table, _disagreement_weights(len(self.labels), self.weights), self.kappa)

    def confint(
        self,
        confidence_level: float = 0.95,
        *,
        method: str = CIMethod.ANALYTIC,
        n_boot: int = 2000,
        seed: int = 0,
    ):
        """Two-sided confidence interval ``(low, high)`` for kappa.

        ``method="analytic"`` (default): κ ± z·SE with the Fleiss–Cohen–Everitt standard error :attr:`std_err`
        (normal approximation; the bounds are not clipped to [−1, 1]). ``method="bootstrap"``: percentile
        interval over ``n_boot`` resamples of the items with replacement, drawn with
        ``numpy.random.default_rng(seed)``, so the same seed gives the same interval. Resamples in which kappa
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
        if method == CIMethod.BOOTSTRAP:
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

    Pairs with a missing rating are dropped and counted in ``n_dropped``. When both raters put every item in
    one and the same category, expected agreement is 1 and kappa is NaN with an UndefinedMetricWarning.

    Args:
        r1, r2: ratings of the same items by two raters, sequences of equal length; None or NaN for a
            missing rating.
        weights: None, ``"linear"`` or ``"quadratic"``. Weighted kappa needs ``labels``: weights are spaced
            over the declared scale, never over the categories that happen to be observed (an unused grade
            still counts).
        labels: the rating scale in order, e.g. ``[0, 1, 2, 3]``.

    Returns:
        A `KappaResult`: ``.kappa``, ``.n_items`` (pairs used), ``.n_dropped`` (pairs with a missing rating),
        ``.std_err`` and ``.confint()``.

    Raises:
        QrelForgeError: sequences of different lengths, no pair left, a rating outside ``labels``, unknown
            ``weights``, or ``weights`` without ``labels``.

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
    return KappaResult(
        kappa=kappa,
        observed=observed,
        expected=expected,
        n_items=len(c1),
        n_dropped=n_dropped,
        table=table,
        labels=tuple(categories),
        weights=weights,
    )


def scott_pi(r1, r2, *, labels=None) -> float:
    """Scott's pi between two raters (Scott 1955): chance agreement from both raters' pooled distribution.

    π = (p_o − p_e) / (1 − p_e), p_e = Σ_k ((n_1k + n_2k) / 2n)². Equal to Fleiss' kappa with two raters.
    Pairs with a missing rating are dropped; every rating in one category gives NaN with an
    UndefinedMetricWarning.

    Args:
        r1, r2: ratings of the same items by two raters; None or NaN for a missing rating.
        labels: the rating scale; a rating outside it is an error.

    Returns:
        π, a float in [−1, 1], or NaN.

    Raises:
        QrelForgeError: sequences of different lengths, no pair left, or a rating outside ``labels``.

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


# ---------------------------------------------------------------------------------------- many-rater measures


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

    Items without any rating are ignored. Every rating in one category gives NaN with an
    UndefinedMetricWarning.

    Args:
        ratings: items × raters; None or NaN for a missing rating.
        labels: the rating scale; it only validates the ratings (an unused category does not change the
            value).

    Returns:
        κ, a float at most 1, or NaN.

    Raises:
        QrelForgeError: rated items with different numbers of ratings (naming them), fewer than two ratings
            per item, no rated item, or a rating outside ``labels``.

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


def krippendorff_alpha(ratings, *, level=Level.NOMINAL, labels=None) -> float:
    """Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").

    From the coincidence matrix o_ck = Σ_u (n_uc n_uk − [c = k] n_uc)/(m_u − 1), n_c = Σ_k o_ck, n = Σ_c n_c:
    α = 1 − (n − 1) Σ_ck o_ck δ²_ck / Σ_ck n_c n_k δ²_ck, where δ² is

    * nominal: [c ≠ k];
    * ordinal: (Σ_{g=c..k} n_g − (n_c + n_k)/2)², Krippendorff's rank-based metric over the scale order (the
      order of ``labels``, else the sorted values);
    * interval: (c − k)²;  ratio: ((c − k)/(c + k))² (values must be numeric, and non-negative for ratio).

    Items rated by only one rater are not pairable and are ignored. Fewer than two distinct pairable values
    gives NaN with an UndefinedMetricWarning.

    Args:
        ratings: items × raters, None or NaN for a missing value (the transpose of the ``krippendorff``
            package's input).
        level: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``: the δ² above.
        labels: the scale in order (the ordinal order); a value outside it is an error.

    Returns:
        α, a float at most 1, or NaN.

    Raises:
        QrelForgeError: no item rated twice, an unknown ``level``, non-numeric values at the interval or
            ratio level (negative ones at the ratio level), or a value outside ``labels``.

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
    (hence ``labels`` is required). p_e < 1 always, so AC1 is always defined.

    Args:
        ratings: items × raters; None or NaN for a missing rating.
        labels: the rating scale, at least two categories.

    Returns:
        AC1, a float at most 1.

    Raises:
        QrelForgeError: no item rated twice, or a rating outside ``labels``.

    >>> round(gwet_ac1([[1, 1], [1, 1], [1, 2]], labels=[1, 2]), 4)
    0.5385
    """
    categories = _declared_labels(labels, minimum=2)
    counts, _, _ = _encoded_counts(ratings, categories)
    _pairable(counts, "gwet_ac1")
    return _ac1(counts, len(categories))


def percent_agreement(ratings) -> float:
    """Percent agreement as Fleiss' P̄: the mean over items of the share of agreeing rater pairs.

    P_i = Σ_k n_ik (n_ik − 1) / (m_i (m_i − 1)), over the items rated by two raters or more (m_i ≥ 2). With
    two raters this is the share of items on which they agree. Not chance-corrected.

    Args:
        ratings: items × raters; None or NaN for a missing rating.

    Returns:
        P̄, a float in [0, 1].

    Raises:
        QrelForgeError: no item rated twice.

    >>> round(percent_agreement([[1, 1, 1], [1, 1, 2], [1, None, None]]), 4)
    0.6667
    """
    counts, _, _ = _encoded_counts(ratings, None)
    return float(_item_agreement(_pairable(counts, "percent_agreement")).mean())


def interpret(value) -> Band:
    """The Landis & Koch (1977) band of an agreement coefficient, a `Band` (equal to its plain string).

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

    Args:
        value: a coefficient, or a `KappaResult`.

    Returns:
        The `Band`.

    Raises:
        QrelForgeError: a value above 1, or one that is not a real number.

    >>> interpret(0.0), interpret(0.2), interpret(0.21), interpret(-0.1), interpret(float("nan"))
    ('slight', 'slight', 'fair', 'poor', 'undefined')
    >>> interpret(0.5) == "moderate"
    True
    """
    if isinstance(value, KappaResult):
        value = value.kappa
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise QrelForgeError(f"value must be a real number or NaN; got {value!r}")
    value = float(value)
    if math.isnan(value):
        return Band.UNDEFINED
    if value > 1.0:
        raise QrelForgeError(f"value must be at most 1 (an agreement coefficient); got {value!r}")
    return Band.POOR if value < 0.0 else _BAND_NAMES[bisect.bisect_left(_BAND_TOPS, value)]


def binarize(ratings, cutoff):
    """Binary relevance at a cut-off: 1.0 where rating ≥ cutoff, 0.0 below, NaN where missing.

    Args:
        ratings: a sequence, an array of any shape, a Series or a DataFrame of numeric ratings.
        cutoff: the lowest rating that counts as relevant.

    Returns:
        The same kind as ``ratings`` (pandas objects keep their index and columns), of floats.

    Raises:
        QrelForgeError: a rating or the cutoff that is not a number.

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
