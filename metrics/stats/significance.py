"""Statistical tests behind `metrics.compare`: paired tests over queries, multiple-comparison corrections,
rank correlation, and the proportion statistics of an online A/B test (`metrics.stats.ablog`).

Paired tests take per-query differences, one column per comparison; NaN drops a pair from its column, and
each column reports its ``n``. `paired_t`, `permutation_test` (exact when ``2**n`` fits in
``n_permutations``, else p = (hits + 1) / (n_permutations + 1)), `bootstrap_ci`, `adjust` (Holm,
Bonferroni), `kendall_tau`, `wilson_interval`, `two_proportion_z`. Where they differ from SciPy:
docs/modules.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from metrics._choice import Choice
from metrics._proportions import wilson_interval
from metrics._validate import check_int, check_probability
from metrics.errors import QrelForgeError

__all__ = [
    "StatTest",
    "Correction",
    "TESTS",
    "CORRECTIONS",
    "PermutationResult",
    "paired_t",
    "permutation_test",
    "bootstrap_ci",
    "adjust",
    "kendall_tau",
    "wilson_interval",
    "two_proportion_z",
    "check_int",
    "check_probability",
]

_CELLS = 1 << 22  # float64 cells per random chunk (32 MiB)
_BOOT_CELLS = 1 << 17  # query draws per bootstrap chunk (counts stay in cache)


class StatTest(Choice):
    """The paired tests `metrics.compare` can run."""

    T = "t"  # paired t-test
    PERMUTATION = "permutation"  # Fisher's randomization test (sign flips)
    BOOTSTRAP = "bootstrap"  # percentile bootstrap interval of the mean difference


class Correction(Choice):
    """Multiple-comparison corrections of `adjust`."""

    HOLM = "holm"
    BONFERRONI = "bonferroni"
    NONE = "none"


TESTS: tuple[StatTest, ...] = tuple(StatTest)
CORRECTIONS: tuple[Correction, ...] = tuple(Correction)


def _as_matrix(diffs: Any) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    if d.ndim != 2:
        raise QrelForgeError(f"diffs must be a 1-D or 2-D array of paired differences; got shape {d.shape}")
    if np.isinf(d).any():
        raise QrelForgeError("diffs must be finite (NaN marks a dropped pair); got an infinite value")
    return d


def _mask_groups(d: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(kept rows, columns) for each distinct set of non-NaN rows among the columns."""
    valid = ~np.isnan(d)
    groups: dict[bytes, list[int]] = {}
    for j in range(d.shape[1]):
        groups.setdefault(np.packbits(valid[:, j]).tobytes(), []).append(j)
    return [(np.flatnonzero(valid[:, cols[0]]), np.array(cols)) for cols in groups.values()]


# ----------------------------------------------------------------------------------------------- t-test
def paired_t(diffs: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-sided paired t-test of each column of differences against 0: (t, p, n).

    t = mean(d) / (sd(d) / sqrt(n)) with the sample standard deviation (ddof=1), n - 1 degrees of freedom.
    n < 2 gives NaN. All-zero differences give t = 0, p = 1; a constant non-zero difference t = ±inf, p = 0.

    Args:
        diffs: per-query differences (run − baseline), 1-D or one column per comparison; NaN drops a pair.

    Returns:
        Arrays t, p and n, one entry per column.

    Raises:
        QrelForgeError: ``diffs`` not 1-D or 2-D, or holding an infinite value.

    >>> t, p, n = paired_t([0.1, 0.2, 0.3, 0.0])
    >>> round(float(t[0]), 4), round(float(p[0]), 4), int(n[0])
    (2.3238, 0.1027, 4)
    """
    from scipy.special import stdtr

    d = _as_matrix(diffs)
    n = (~np.isnan(d)).sum(0)
    t, p = np.full(d.shape[1], np.nan), np.full(d.shape[1], np.nan)
    for j in np.flatnonzero(n >= 2):
        x = d[~np.isnan(d[:, j]), j]
        mean, sd = x.mean(), x.std(ddof=1)
        if sd == 0 or sd <= 1e-12 * abs(mean):
            t[j], p[j] = (0.0, 1.0) if np.all(x == 0) else (math.copysign(math.inf, mean), 0.0)
        else:
            t[j] = mean / (sd / math.sqrt(len(x)))
            p[j] = 2 * stdtr(len(x) - 1, -abs(t[j]))
    return t, np.minimum(p, 1.0), n


# ------------------------------------------------------------------------------------- randomization
@dataclass(frozen=True)
class PermutationResult:
    """Per column: two-sided p-value, number of kept pairs, sign patterns used, whether they were all."""

    p: np.ndarray
    n: np.ndarray
    resamples: np.ndarray
    exact: np.ndarray


def permutation_test(diffs: Any, *, n_permutations: int = 10_000, seed: int = 0) -> PermutationResult:
    """Fisher's paired randomization (sign-flip) test of each column's mean difference, two-sided.

    Exact enumeration of all ``2**n`` sign patterns when ``2**n <= n_permutations`` (p = hits / 2**n),
    else ``n_permutations`` random patterns from ``numpy.random.default_rng([seed, 0])``, drawn in chunks
    and applied to every column with one matrix product (p = (hits + 1) / (n_permutations + 1)). A pattern is
    a hit when ``|sum of signed differences| >= |observed sum|`` (relative tolerance 1e-9 for float noise).

    Args:
        diffs: per-query differences (run − baseline), 1-D or one column per comparison; NaN drops a pair.
        n_permutations: random patterns drawn when enumeration would need more (int >= 1).
        seed: the random generator's seed (int >= 0).

    Returns:
        Per column: p, the pairs kept, the sign patterns used, and whether they were all of them.

    Raises:
        QrelForgeError: bad ``diffs``, ``n_permutations`` or ``seed``.

    >>> r = permutation_test([1 / 3, 0, 1 / 3])
    >>> float(r.p[0]), int(r.resamples[0]), bool(r.exact[0])
    (0.5, 8, True)
    """
    n_permutations = check_int(n_permutations, "n_permutations", 1)
    seed = check_int(seed, "seed", 0)
    d = _as_matrix(diffs)
    m = d.shape[1]
    p, n = np.full(m, np.nan), (~np.isnan(d)).sum(0)
    resamples, exact = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=bool)
    for rows, cols in _mask_groups(d):
        if not len(rows):
            continue
        block = d[np.ix_(rows, cols)]
        if 2 ** len(rows) <= n_permutations:
            p[cols] = _sign_hits(block, _all_patterns(len(rows))) / 2 ** len(rows)
            resamples[cols], exact[cols] = 2 ** len(rows), True
        else:
            rng = np.random.default_rng([seed, 0])
            hits = _sign_hits(block, _random_patterns(len(rows), n_permutations, rng))
            p[cols], resamples[cols] = (hits + 1) / (n_permutations + 1), n_permutations
    return PermutationResult(p=np.minimum(p, 1.0), n=n, resamples=resamples, exact=exact)


def _sign_hits(block: np.ndarray, patterns: Iterator[np.ndarray]) -> np.ndarray:
    """Per column, how many sign patterns give ``|signed sum| >= |observed sum|`` (relative tolerance 1e-9).

    A pattern is a row of bits in {0, 1} (1 keeps the sign); its signed sum is ``2 * (bits @ d) - sum(d)``, so
    every column is done with one matrix product per chunk of patterns.
    """
    total = block.sum(0)
    bound = np.abs(total) - 1e-9 * np.abs(block).sum(0)
    hits = np.zeros(block.shape[1], dtype=np.int64)
    for bits in patterns:
        hits += (np.abs(2.0 * (bits @ block) - total) >= bound).sum(0)
    return hits


def _all_patterns(n: int) -> Iterator[np.ndarray]:
    """Every one of the 2**n sign patterns, in chunks."""
    chunk = max(1, _CELLS // n)
    for start in range(0, 2**n, chunk):
        codes = np.arange(start, min(start + chunk, 2**n), dtype=np.int64)
        yield ((codes[:, None] >> np.arange(n)) & 1).astype(np.float64)


def _random_patterns(n: int, count: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """``count`` random sign patterns in chunks, from random bytes (one bit per query), in one buffer."""
    chunk = max(1, min(count, _CELLS // n))
    buffer = np.empty((chunk, n))
    for start in range(0, count, chunk):
        rows = min(chunk, count - start)
        bits = np.unpackbits(np.frombuffer(rng.bytes((rows * n + 7) // 8), dtype=np.uint8), count=rows * n)
        np.copyto(buffer[:rows], bits.reshape(rows, n))
        yield buffer[:rows]


# ----------------------------------------------------------------------------------------- bootstrap
def bootstrap_ci(
    diffs: Any, *, n_bootstrap: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of each column's mean difference: (low, high).

    Each of ``n_bootstrap`` resamples draws the kept queries with replacement (``default_rng([seed, 1])``);
    the interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles (linear
    interpolation) of the resampled means. n = 0 gives NaN; identical runs give [0, 0].

    Args:
        diffs: per-query differences (run − baseline), 1-D or one column per comparison; NaN drops a pair.
        n_bootstrap: resamples (int >= 1).
        seed: the random generator's seed (int >= 0).
        confidence: the interval's coverage, in (0, 1).

    Returns:
        Arrays low and high, one entry per column.

    Raises:
        QrelForgeError: bad ``diffs``, ``n_bootstrap``, ``seed`` or ``confidence``.

    >>> low, high = bootstrap_ci([0.0, 0.0, 0.0])
    >>> float(low[0]), float(high[0])
    (0.0, 0.0)
    """
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", 1)
    seed = check_int(seed, "seed", 0)
    confidence = check_probability(confidence, "confidence")
    d = _as_matrix(diffs)
    low, high = np.full(d.shape[1], np.nan), np.full(d.shape[1], np.nan)
    for rows, cols in _mask_groups(d):
        if len(rows):
            means = _bootstrap_means(d[np.ix_(rows, cols)], n_bootstrap, np.random.default_rng([seed, 1]))
            low[cols], high[cols] = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
    return low, high


def _bootstrap_means(block: np.ndarray, n_bootstrap: int, rng: np.random.Generator) -> np.ndarray:
    """Resampled column means: counts of each query per resample (bincount), times the block, over n."""
    n = block.shape[0]
    chunk = max(1, min(n_bootstrap, _BOOT_CELLS // n))
    offsets = (np.arange(chunk, dtype=np.int64) * n)[:, None]
    weights = np.empty((chunk, n))
    out = np.empty((n_bootstrap, block.shape[1]))
    for start in range(0, n_bootstrap, chunk):
        rows = min(chunk, n_bootstrap - start)
        picks = rng.integers(0, n, size=(rows, n)) + offsets[:rows]
        np.copyto(weights[:rows], np.bincount(picks.ravel(), minlength=rows * n).reshape(rows, n))
        out[start : start + rows] = weights[:rows] @ block / n
    return out


# ------------------------------------------------------------------------------------------ corrections
def adjust(p: Any, method: str | None = Correction.HOLM) -> np.ndarray:
    """Adjusted p-values for a family of tests; NaN entries are left out of the family and stay NaN.

    ``"holm"``: sort the m p-values ascending, adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j)).
    ``"bonferroni"``: min(1, m p). ``"none"`` (or None): unchanged.

    Args:
        p: the family's p-values.
        method: ``"holm"``, ``"bonferroni"``, ``"none"`` or None.

    Returns:
        The adjusted p-values, in the order given.

    Raises:
        QrelForgeError: an unknown ``method``.

    >>> adjust([0.01, 0.04, 0.03]).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    method = Correction.NONE if method is None else method
    if method not in CORRECTIONS:
        raise QrelForgeError(f"correction must be one of {', '.join(CORRECTIONS)}; got {method!r}")
    p = np.asarray(p, dtype=np.float64).copy()
    kept = np.flatnonzero(~np.isnan(p))
    m = len(kept)
    if method == Correction.NONE or m == 0:
        return p
    if method == Correction.BONFERRONI:
        p[kept] = np.minimum(1.0, m * p[kept])
        return p
    order = kept[np.argsort(p[kept], kind="stable")]
    p[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return p


# ------------------------------------------------------------------------------------------- kendall
def kendall_tau(x: Any, y: Any) -> np.ndarray | float:
    """Kendall's tau-b between ``x`` and ``y`` (1-D: a float; 2-D: one value per row).

    tau-b = (C - D) / sqrt((P - Tx) (P - Ty)) over the P = n(n-1)/2 pairs, C/D the concordant/discordant
    pairs, Tx/Ty the pairs tied in x/y. NaN when x or y is constant (or n < 2). Equal to
    ``scipy.stats.kendalltau(x, y).statistic``.

    Args:
        x: scores, 1-D, or 2-D with one vector per row.
        y: scores of the same shape.

    Returns:
        tau-b: a float for 1-D inputs, else one value per row.

    >>> kendall_tau([1, 2, 3], [1, 3, 2])
    0.3333333333333333
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    flat = x.ndim == 1
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    i, j = np.triu_indices(x.shape[1], k=1)
    sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (sx * sy).sum(1) / np.sqrt((sx != 0).sum(1) * (sy != 0).sum(1).astype(np.float64))
    tau = np.where(np.isfinite(tau), tau, np.nan)
    return float(tau[0]) if flat else tau


# ---------------------------------------------------------------------------------------- proportions
def two_proportion_z(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float]:
    """Two-sided two-proportion z-test with pooled variance: (z, p) for H0: p1 = p2.

    z = (k1/n1 - k2/n2) / sqrt(p (1 - p) (1/n1 + 1/n2)), p = (k1 + k2) / (n1 + n2). When every outcome is
    the same (p = 0 or 1) the rates are equal: z = 0, p = 1.

    Args:
        k1: successes of the first arm, out of n1 trials (n1 >= 1).
        n1: trials of the first arm.
        k2: successes of the second arm, out of n2 trials (n2 >= 1).
        n2: trials of the second arm.

    Returns:
        (z, two-sided p).

    >>> z, p = two_proportion_z(30, 100, 45, 100)
    >>> round(z, 4), round(p, 4)
    (-2.1909, 0.0285)
    """
    from scipy.special import ndtr

    pooled = (k1 + k2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 0.0, 1.0
    z = (k1 / n1 - k2 / n2) / se
    return z, float(min(1.0, 2 * ndtr(-abs(z))))
