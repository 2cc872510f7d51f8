"""Judges compared on the same pairs: κ against sklearn, paired bootstrap intervals and tests, the best judge
only when significant, and every validation error by its message."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from metrics.errors import QrelForgeError
from metrics.stats import judge_compare
from metrics.stats.judge_compare import compare_judges, kappa_of

rng = np.random.default_rng(7)
HUMAN = rng.integers(0, 4, 200)


def _noisy(error_rate: float, seed: int) -> np.ndarray:
    r = np.random.default_rng(seed)
    wrong = r.random(len(HUMAN)) < error_rate
    return np.where(wrong, (HUMAN + r.integers(1, 4, len(HUMAN))) % 4, HUMAN)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("rate", [0.1, 0.5, 0.9])
def test_kappa_against_sklearn(weighted, rate):
    judge = _noisy(rate, 1)
    want = cohen_kappa_score(HUMAN, judge, weights="linear" if weighted else None, labels=[0, 1, 2, 3])
    assert kappa_of(HUMAN, judge, 4, weighted=weighted) == pytest.approx(want)


def test_the_better_judge_is_best_and_significant():
    res = compare_judges(HUMAN, {"good": _noisy(0.05, 2), "bad": _noisy(0.5, 3)}, labels=[0, 1, 2, 3])
    (diff,) = res.differences
    assert res.best == "good" and diff.significant and diff.p_value < 0.01 and diff.ci[0] > 0
    good = res.judges[0]
    assert good.kappa_ci[0] < good.kappa < good.kappa_ci[1]
    leniency = float(np.mean(_noisy(0.05, 2) - HUMAN))
    assert good.leniency == pytest.approx(leniency) and good.leniency_ci[0] < leniency < good.leniency_ci[1]


def test_judges_of_the_same_accuracy_have_no_best():
    res = compare_judges(
        HUMAN, {"a": _noisy(0.3, 4), "b": _noisy(0.3, 5), "c": _noisy(0.3, 6)}, labels=[0, 1, 2, 3]
    )
    assert res.best is None and not any(d.significant for d in res.differences)


def test_the_same_seed_gives_the_same_intervals():
    judged = {"a": _noisy(0.3, 4), "b": _noisy(0.2, 5)}
    assert compare_judges(HUMAN, judged, labels=[0, 1, 2, 3], seed=3) == compare_judges(
        HUMAN, judged, labels=[0, 1, 2, 3], seed=3
    )


@pytest.mark.parametrize(
    ("human", "judged", "options", "message"),
    [
        ([], {"a": [], "b": []}, {}, "human must hold at least one grade; got none"),
        ([0, 1], {"a": [0, 1]}, {}, "compare at least 2 judges; got 1"),
        ([0, 1], {"a": [0, 1], "b": [0]}, {}, "judge 'b' must grade every pair of human (2); got 1 grades"),
        ([0, 1], {"a": [0, 5], "b": [0, 1]}, {}, "judge 'a' holds a grade off the scale [0, 1, 2, 3]: 5"),
        ("01", {"a": [0, 1], "b": [0, 1]}, {}, "human must be a sequence of grades; got str"),
        (
            [0, 1],
            {"a": [0, 1], "b": [0, 1]},
            {"n_bootstrap": 10},
            "n_bootstrap must be an integer >= 100; got 10",
        ),
        ([0, 1], {"a": [0, 1], "b": [0, 1]}, {"confidence": 1.0}, "confidence must be in (0, 1); got 1.0"),
    ],
)
def test_errors(human, judged, options, message):
    with pytest.raises(QrelForgeError) as error:
        compare_judges(human, judged, labels=[0, 1, 2, 3], **options)
    assert str(error.value) == message


def test_doctests():
    assert doctest.testmod(judge_compare).failed == 0
