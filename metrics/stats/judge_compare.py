"""Judges compared on the same pairs: agreement with the human reference grade, with paired bootstrap
intervals and paired tests.

`compare_judges` takes one human reference grade per pair and each judge's grade of the same pairs. Every
bootstrap replicate resamples the pairs once for all judges, so the differences between judges are paired.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metrics.errors import QrelForgeError

__all__ = ["JudgeFigures", "JudgeDifference", "JudgeComparison", "compare_judges", "kappa_of"]


@dataclass(frozen=True)
class JudgeFigures:
    """One judge against the reference: Cohen's κ, linearly weighted κ, leniency = mean(judge − human), each
    with its bootstrap percentile interval (``*_ci``; NaN bounds when undefined)."""

    judge: str
    kappa: float
    kappa_ci: tuple[float, float]
    weighted_kappa: float
    weighted_kappa_ci: tuple[float, float]
    leniency: float
    leniency_ci: tuple[float, float]


@dataclass(frozen=True)
class JudgeDifference:
    """κ(first) − κ(second) on the same pairs, its paired bootstrap interval and two-sided p-value
    (2 · min(share of replicates ≤ 0, share ≥ 0), at most 1); ``significant``: the interval excludes 0."""

    first: str
    second: str
    difference: float
    ci: tuple[float, float]
    p_value: float
    significant: bool


@dataclass(frozen=True)
class JudgeComparison:
    """The figures of every judge (in the order given), the difference of each pair of judges, and ``best``:
    the judge of the highest κ when it is significantly above every other judge, else None."""

    n_pairs: int
    judges: tuple[JudgeFigures, ...]
    differences: tuple[JudgeDifference, ...]
    best: str | None


def kappa_of(human: np.ndarray, judge: np.ndarray, n_labels: int, *, weighted: bool = False) -> float:
    """Cohen's κ of two gradings coded 0 … n_labels − 1.

    κ = 1 − Σ W·O / Σ W·E, O the observed and E the expected (product of the marginals) shares,
    W = |i − j| / (n_labels − 1) (``weighted``, linear) or 1 − I; NaN when Σ W·E = 0.

    Args:
        human: the human grades, integer codes in [0, n_labels).
        judge: the judge's grades on the same pairs, same coding and length.
        n_labels: the number of grades.
        weighted: linear weights instead of exact agreement.

    Returns:
        κ, a float (NaN when undefined).

    >>> kappa_of(np.array([0, 1, 2, 2]), np.array([0, 1, 2, 1]), 3)
    0.6363636363636364
    """
    n = len(human)
    observed = np.bincount(human * n_labels + judge, minlength=n_labels * n_labels).reshape(n_labels, -1) / n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    index = np.arange(n_labels)
    if weighted:
        weights = np.abs(index[:, None] - index[None, :]) / max(n_labels - 1, 1)
    else:
        weights = 1.0 - np.eye(n_labels)
    chance = float((weights * expected).sum())
    return math.nan if chance == 0 else 1.0 - float((weights * observed).sum()) / chance


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if len(finite) == 0:
        return math.nan, math.nan
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


def compare_judges(
    human: Sequence[int],
    judged: Mapping[str, Sequence[int]],
    *,
    labels: Sequence[int],
    n_bootstrap: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> JudgeComparison:
    """Compare judges on the same pairs (see the module doc).

    Args:
        human: the reference grade of each pair.
        judged: judge name → its grade of each pair, aligned with ``human``.
        labels: the grades of the scale, in order.
        n_bootstrap: bootstrap replicates (>= 100).
        seed: the bootstrap's seed.
        confidence: the intervals' coverage, in (0, 1).

    Returns:
        A `JudgeComparison`.

    Raises:
        QrelForgeError: no pair, fewer than two judges, grades off the scale or of another length, or bad
            options.

    >>> judged = {"a": [0, 1, 2, 3] * 5, "b": [0, 0, 2, 2] * 5}
    >>> res = compare_judges([0, 1, 2, 3] * 5, judged, labels=[0, 1, 2, 3])
    >>> res.best, round(res.judges[1].kappa, 3)
    ('a', 0.333)
    """
    codes = {g: i for i, g in enumerate(labels)}
    reference = _coded(human, codes, "human")
    if len(reference) == 0:
        raise QrelForgeError("human must hold at least one grade; got none")
    if len(judged) < 2:
        raise QrelForgeError(f"compare at least 2 judges; got {len(judged)}")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int) or n_bootstrap < 100:
        raise QrelForgeError(f"n_bootstrap must be an integer >= 100; got {n_bootstrap!r}")
    if not 0 < confidence < 1:
        raise QrelForgeError(f"confidence must be in (0, 1); got {confidence!r}")
    grades = {name: _coded(values, codes, f"judge {name!r}") for name, values in judged.items()}
    for name, values in grades.items():
        if len(values) != len(reference):
            raise QrelForgeError(
                f"judge {name!r} must grade every pair of human ({len(reference)}); got {len(values)} grades"
            )
    k, n = len(labels), len(reference)
    values = np.asarray(labels, dtype=float)
    picks = np.random.default_rng(seed).integers(0, n, size=(n_bootstrap, n))

    def stats(h: np.ndarray, j: np.ndarray) -> tuple[float, float, float]:
        return kappa_of(h, j, k), kappa_of(h, j, k, weighted=True), float((values[j] - values[h]).mean())

    point = {name: stats(reference, g) for name, g in grades.items()}
    boot = {name: np.array([stats(reference[p], g[p]) for p in picks]) for name, g in grades.items()}
    figures = tuple(
        JudgeFigures(
            judge=name,
            kappa=point[name][0],
            kappa_ci=_interval(boot[name][:, 0], confidence),
            weighted_kappa=point[name][1],
            weighted_kappa_ci=_interval(boot[name][:, 1], confidence),
            leniency=point[name][2],
            leniency_ci=_interval(boot[name][:, 2], confidence),
        )
        for name in grades
    )
    differences = []
    for a, b in itertools.combinations(grades, 2):
        diff = boot[a][:, 0] - boot[b][:, 0]
        diff = diff[np.isfinite(diff)]
        ci = _interval(diff, confidence)
        p = min(1.0, 2 * min(float((diff <= 0).mean()), float((diff >= 0).mean()))) if len(diff) else math.nan
        significant = bool(len(diff)) and (ci[0] > 0 or ci[1] < 0)
        differences.append(JudgeDifference(a, b, point[a][0] - point[b][0], ci, p, significant))
    return JudgeComparison(
        n_pairs=n, judges=figures, differences=tuple(differences), best=_best(figures, differences)
    )


def _best(figures: Sequence[JudgeFigures], differences: Sequence[JudgeDifference]) -> str | None:
    ranked = [f for f in figures if not math.isnan(f.kappa)]
    if not ranked:
        return None
    top = max(ranked, key=lambda f: f.kappa).judge
    against = [d for d in differences if top in (d.first, d.second)]
    above = all(d.significant and (d.difference > 0) == (d.first == top) for d in against)
    return top if above else None


def _coded(values: Any, codes: Mapping[int, int], name: str) -> np.ndarray:
    if isinstance(values, (str, bytes)):
        raise QrelForgeError(f"{name} must be a sequence of grades; got {type(values).__name__}")
    items = list(values)
    bad = [v for v in items if isinstance(v, bool) or v not in codes]
    if bad:
        raise QrelForgeError(f"{name} holds a grade off the scale {list(codes)}: {bad[0]!r}")
    return np.array([codes[v] for v in items], dtype=np.int64)
