"""Calibrated machine grades: a monotone map from a judge's grade (and confidence) to the human grade, fitted
on the pairs both labelled, and the cross-fitting that keeps prediction-powered inference honest with it.

A label's score is s = c·g + (1 − c)·m for grade g with confidence c (m the scale's midpoint: the expected
grade of a judge that gives g with probability c, else a uniform grade), or s = g without a confidence.
`isotonic_regression` (pool-adjacent-violators) fits f = argmin Σ wᵢ(yᵢ − f(sᵢ))² over non-decreasing f;
a `GradeMap` fits P̂(h ≥ g | s) so for each human grade g (an ordinal map) and draws human grades from it.
`crossfit_folds` and `crossfit_values` fit it without each fold of human queries and use it only on that
fold (docs/modules.md).
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics.errors import QrelForgeError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Calibration",
    "GradeMap",
    "IsotonicFit",
    "crossfit_folds",
    "crossfit_values",
    "fit_grade_map",
    "isotonic_regression",
    "judge_score",
]


class Calibration(StrEnum):
    """How machine grades are calibrated against human ones: ``ISOTONIC``, a `GradeMap`."""

    ISOTONIC = "isotonic"


@dataclass(frozen=True)
class IsotonicFit:
    """A non-decreasing step function through ``knots`` (distinct x, ascending) and ``values`` (the fitted
    f at each); `predict` interpolates linearly between knots and holds the end values outside them, as
    scikit-learn's ``IsotonicRegression(out_of_bounds="clip")``."""

    knots: np.ndarray
    values: np.ndarray

    def predict(self, x: Any) -> np.ndarray:
        """f at each of ``x`` (array-like of finite numbers), as floats."""
        points = _finite(x, "x")
        if len(self.knots) == 1:
            return np.full(points.shape, float(self.values[0]))
        return np.interp(points, self.knots, self.values)


def _finite(values: Any, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise QrelForgeError(f"{name} must hold numbers only") from None
    bad = ~np.isfinite(array)
    if bad.any():
        raise QrelForgeError(
            f"{name} must hold finite numbers; got {float(array[bad][0])!r} at position {int(np.argmax(bad))}"
        )
    return array


def isotonic_regression(x: Any, y: Any, *, weights: Any = None) -> IsotonicFit:
    """The least-squares non-decreasing fit of y on x, by pool-adjacent-violators.

    f minimises Σ wᵢ (yᵢ − f(xᵢ))² over non-decreasing f: points with equal x are first pooled into their
    weighted mean (total weight kept), then adjacent blocks whose means decrease are merged into their
    weighted mean until none does. Equal to scikit-learn's ``IsotonicRegression`` (tests check it).

    Args:
        x: the predictor, finite numbers.
        y: the response, finite numbers, as many as ``x``.
        weights: a positive weight per point (default 1 each).

    Returns:
        The `IsotonicFit`: one knot per distinct x.

    Raises:
        QrelForgeError: no point, lengths that differ, a value that is not finite, a weight that is not
            positive.

    >>> fit = isotonic_regression([0, 1, 2, 3], [0.0, 2.0, 1.0, 3.0])
    >>> fit.values.tolist(), fit.predict([0.5, 9]).tolist()
    ([0.0, 1.5, 1.5, 3.0], [0.75, 3.0])
    """
    xs, ys = _finite(x, "x"), _finite(y, "y")
    ws = np.ones_like(xs) if weights is None else _finite(weights, "weights")
    if not len(xs) == len(ys) == len(ws):
        raise QrelForgeError(
            f"x, y and weights must have the same length; got {len(xs)}, {len(ys)}, {len(ws)}"
        )
    if len(xs) == 0:
        raise QrelForgeError("isotonic regression needs at least one point; got none")
    if (ws <= 0).any():
        raise QrelForgeError(f"weights must be positive; got {float(ws[ws <= 0][0])!r}")
    knots, where = np.unique(xs, return_inverse=True)
    total = np.bincount(where, weights=ws)
    means = np.bincount(where, weights=ws * ys) / total
    return IsotonicFit(knots=knots, values=_pool_adjacent_violators(means, total))


def _pool_adjacent_violators(means: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted non-decreasing least-squares fit of ``means`` in their order."""
    block_mean: list[float] = []
    block_weight: list[float] = []
    block_size: list[int] = []
    for mean, weight in zip(means.tolist(), weights.tolist(), strict=True):
        block_mean.append(mean)
        block_weight.append(weight)
        block_size.append(1)
        while len(block_mean) > 1 and block_mean[-2] > block_mean[-1]:
            m2, w2, n2 = block_mean.pop(), block_weight.pop(), block_size.pop()
            m1, w1, n1 = block_mean.pop(), block_weight.pop(), block_size.pop()
            block_mean.append((m1 * w1 + m2 * w2) / (w1 + w2))
            block_weight.append(w1 + w2)
            block_size.append(n1 + n2)
    return np.repeat(np.array(block_mean), block_size)


def judge_score(grades: Any, confidence: Any = None, *, scale: tuple[int, int]) -> np.ndarray:
    """The score a `GradeMap` reads: s = c·g + (1 − c)·(low + high)/2, or s = g where c is unknown.

    The expected grade of a judge that gives its grade g with probability c and otherwise a grade drawn
    uniformly from the scale: a doubtful grade moves towards the middle. On a binary scale it is the
    probability of relevance (1 + c)/2 or (1 − c)/2.

    Args:
        grades: the judge's grades, integers on ``scale``.
        confidence: the judge's confidence in each grade, in [0, 1], NaN or None where unknown; None: all
            unknown.
        scale: (lowest, highest) grade of the judge's scale.

    Returns:
        The scores, floats.

    Raises:
        QrelForgeError: a confidence outside [0, 1] or a length that differs from ``grades``.

    >>> judge_score([0, 3, 3], [None, 1.0, 0.5], scale=(0, 3)).tolist()
    [0.0, 3.0, 2.25]
    """
    g = _finite(grades, "grades")
    if confidence is None:
        return g
    c = np.array(
        [np.nan if v is None else v for v in np.asarray(confidence, dtype=object).ravel()], dtype=float
    )
    if len(c) != len(g):
        raise QrelForgeError(f"confidence must have one value per grade; got {len(c)} for {len(g)}")
    known = ~np.isnan(c)
    if ((c[known] < 0) | (c[known] > 1)).any():
        raise QrelForgeError(
            f"confidence must lie in [0, 1]; got {float(c[known][(c[known] < 0) | (c[known] > 1)][0])!r}"
        )
    middle = (scale[0] + scale[1]) / 2.0
    return np.where(known, np.nan_to_num(c) * g + (1.0 - np.nan_to_num(c)) * middle, g)


@dataclass(frozen=True)
class GradeMap:
    """A fitted map from a judge's (grade, confidence) to the human grade's distribution (an ordinal map).

    For each human grade g above the lowest, ``fits[g]`` is the isotonic fit of 1[h ≥ g] on the score s
    (`judge_score`): P̂(h ≥ g | s), made non-increasing in g. ``grades`` are the human grades, ``scale`` the
    judge's (lowest, highest) grade and ``n_pairs`` the pairs it was fitted on.
    """

    grades: tuple[int, ...]
    fits: tuple[IsotonicFit, ...]
    scale: tuple[int, int]
    n_pairs: int

    def at_least(self, grades: Any, confidence: Any = None) -> np.ndarray:
        """P̂(h ≥ g | s): one row per human grade above the lowest, one column per label."""
        score = judge_score(grades, confidence, scale=self.scale)
        if not self.fits:
            return np.zeros((0, len(score)))
        return np.minimum.accumulate(np.stack([fit.predict(score) for fit in self.fits]), axis=0)

    def expected(self, grades: Any, confidence: Any = None) -> np.ndarray:
        """Ê[h | s] = lowest + Σ_g (g − g₋) · P̂(h ≥ g | s) of each label, as floats."""
        steps = np.diff(np.array(self.grades, dtype=float))[:, None]
        return self.grades[0] + (steps * self.at_least(grades, confidence)).sum(axis=0)

    def impute(self, grades: Any, confidence: Any = None, *, uniforms: Any) -> np.ndarray:
        """Human grades drawn from P̂(h | s) by the inverse of its distribution function: label i gets the
        highest g with P̂(h ≥ g | sᵢ) > uᵢ for its uniform uᵢ in [0, 1) (the lowest grade if none)."""
        u = _finite(uniforms, "uniforms")
        above = self.at_least(grades, confidence) > u[None, :]
        levels = np.array(self.grades, dtype=np.int64)
        return levels[above.sum(axis=0)]


def fit_grade_map(
    judge_grades: Any, human_grades: Any, *, confidence: Any = None, scale: tuple[int, int] | None = None
) -> GradeMap:
    """Fit the map from a judge's grade (and confidence) to the human grade on pairs both labelled.

    For each human grade g above the lowest, P̂(h ≥ g | s) = `isotonic_regression` of 1[h ≥ g] on the score
    s = c·g_judge + (1 − c)·m (`judge_score`), non-increasing in g. Pass one row per human label (a pair
    labelled by two people counts twice).

    Args:
        judge_grades: the judge's grade of each pair, integers.
        human_grades: the human grade of the same pairs, integers.
        confidence: the judge's confidence per pair in [0, 1] (None or NaN where unknown).
        scale: the judge's (lowest, highest) grade; default the lowest and highest of ``judge_grades``.

    Returns:
        The `GradeMap`.

    Raises:
        QrelForgeError: no pair, lengths that differ, a grade that is not an integer, a bad confidence.

    >>> lenient = fit_grade_map([1, 1, 2, 2, 3, 3, 3, 3], [0, 0, 1, 0, 2, 3, 2, 1], scale=(0, 3))
    >>> lenient.at_least([1, 2, 3]).tolist()
    [[0.0, 0.5, 1.0], [0.0, 0.0, 0.75], [0.0, 0.0, 0.25]]
    >>> lenient.expected([0, 3]).tolist(), lenient.impute([3, 3], uniforms=[0.1, 0.5]).tolist()
    ([0.0, 2.0], [3, 2])
    """
    g, h = _grades(judge_grades, "judge_grades"), _grades(human_grades, "human_grades")
    if len(g) != len(h):
        raise QrelForgeError(
            f"judge_grades and human_grades must have the same length; got {len(g)} and {len(h)}"
        )
    if len(g) == 0:
        raise QrelForgeError("a grade map needs at least one pair labelled by both; got none")
    bounds = (int(g.min()), int(g.max())) if scale is None else (int(scale[0]), int(scale[1]))
    score = judge_score(g, confidence, scale=bounds)
    levels = tuple(int(v) for v in np.unique(h))
    fits = tuple(isotonic_regression(score, (h >= level).astype(float)) for level in levels[1:])
    return GradeMap(grades=levels, fits=fits, scale=bounds, n_pairs=len(g))


def _grades(values: Any, name: str) -> np.ndarray:
    array = _finite(values, name)
    if (array != np.round(array)).any():
        raise QrelForgeError(f"{name} must be integers; got {float(array[array != np.round(array)][0])!r}")
    return array.astype(np.int64)


def crossfit_folds(queries: Sequence[Hashable], folds: int = 5, *, seed: int = 0) -> dict[Hashable, int]:
    """Split the human queries at random into ``min(folds, len(queries))`` folds of near-equal size.

    Args:
        queries: the distinct queries of the human sample.
        folds: the number of folds wanted, an int >= 2.
        seed: the seed of the random split (the same seed, the same folds).

    Returns:
        ``{query: fold}`` with folds numbered from 0.

    Raises:
        QrelForgeError: ``folds`` not an int >= 2, fewer than 2 queries, or a query given twice.

    >>> sorted(crossfit_folds(["q1", "q2", "q3", "q4"], 2, seed=1).values())
    [0, 0, 1, 1]
    """
    if isinstance(folds, bool) or not isinstance(folds, numbers.Integral) or folds < 2:
        raise QrelForgeError(f"folds must be an int >= 2; got {folds!r}")
    items = list(queries)
    if len(items) < 2:
        raise QrelForgeError(f"cross-fitting needs at least 2 human queries; got {len(items)}")
    if len(set(items)) != len(items):
        raise QrelForgeError("queries must be distinct")
    k = min(int(folds), len(items))
    order = np.random.default_rng(seed).permutation(len(items))
    return {items[i]: position % k for position, i in enumerate(order.tolist())}


def crossfit_values(by_fold: Sequence[pd.Series], fold_of: Mapping[Hashable, int]) -> pd.Series:
    """Combine per-query values computed with each fold's map into one cross-fitted value per query.

    ``by_fold[k]`` holds each query's value (a metric, say) under the map fitted without fold k. A query of
    the human sample in fold k takes ``by_fold[k]`` (a map that never saw it); every other query the mean
    over the folds (NaN ignored). Queries whose value is NaN are dropped.

    Args:
        by_fold: one Series per fold, indexed by query.
        fold_of: ``{human query: fold}``, as `crossfit_folds` gives.

    Returns:
        The cross-fitted values, indexed by query, in the order of ``by_fold[0]`` then the others.

    Raises:
        QrelForgeError: no fold, or a fold number with no Series.

    >>> import pandas as pd
    >>> a = pd.Series({"q1": 1.0, "q2": 0.0, "q3": 0.4})
    >>> b = pd.Series({"q1": 0.0, "q2": 1.0, "q3": 0.6})
    >>> crossfit_values([a, b], {"q1": 0, "q2": 1}).to_dict()
    {'q1': 1.0, 'q2': 1.0, 'q3': 0.5}
    """
    import pandas as pd  # only here: the rest of the module needs numpy alone

    if not by_fold:
        raise QrelForgeError("crossfit_values needs the values of at least one fold")
    if fold_of and not 0 <= min(fold_of.values()) <= max(fold_of.values()) < len(by_fold):
        raise QrelForgeError(
            f"fold numbers must lie in 0..{len(by_fold) - 1}; got {sorted(set(fold_of.values()))}"
        )
    table = pd.concat([s.astype(float) for s in by_fold], axis=1, keys=range(len(by_fold)))
    mean = table.mean(axis=1, skipna=True).to_numpy()
    fold = np.array([fold_of.get(query, -1) for query in table.index])
    own = table.to_numpy()[np.arange(len(fold)), np.maximum(fold, 0)]
    out = pd.Series(np.where(fold >= 0, own, mean), index=table.index)
    return out.dropna()
