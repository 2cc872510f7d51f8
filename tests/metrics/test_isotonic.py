"""`metrics.stats.isotonic`: pool-adjacent-violators against scikit-learn's IsotonicRegression, the ordinal
grade map, and the cross-fitting helpers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.isotonic import IsotonicRegression

from metrics.errors import QrelForgeError
from metrics.stats.isotonic import (
    crossfit_folds,
    crossfit_values,
    fit_grade_map,
    isotonic_regression,
    judge_score,
)


@pytest.mark.parametrize("seed", range(12))
def test_isotonic_regression_equals_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    x = rng.integers(0, 8, size=n).astype(float) + (rng.random(n) if seed % 2 else 0.0)  # ties when even
    y = 0.5 * x + rng.normal(0, 2.0, size=n)
    w = rng.uniform(0.1, 3.0, size=n) if seed % 3 == 0 else None
    ours = isotonic_regression(x, y, weights=w)
    theirs = IsotonicRegression(out_of_bounds="clip").fit(x, y, sample_weight=w)
    probe = np.concatenate([x, np.linspace(x.min() - 2, x.max() + 2, 41)])
    assert ours.predict(probe) == pytest.approx(theirs.predict(probe), abs=1e-9)
    assert ours.predict(x) == pytest.approx(theirs.predict(x), abs=1e-9)
    assert np.all(np.diff(ours.values) >= -1e-12)


def test_isotonic_regression_on_a_decreasing_sequence_pools_everything():
    fit = isotonic_regression([1, 2, 3], [3.0, 2.0, 1.0], weights=[1, 1, 2])
    assert fit.values.tolist() == [1.75, 1.75, 1.75]


@pytest.mark.parametrize(
    ("x", "y", "weights", "message"),
    [
        ([], [], None, "isotonic regression needs at least one point; got none"),
        ([1, 2], [1], None, "x, y and weights must have the same length; got 2, 1, 2"),
        ([1, np.nan], [1, 2], None, "x must hold finite numbers; got nan at position 1"),
        ([1, 2], [1, 2], [1, 0], "weights must be positive; got 0.0"),
        (["a"], [1], None, "x must hold numbers only"),
    ],
)
def test_isotonic_regression_refuses_bad_input_by_name(x, y, weights, message):
    with pytest.raises(QrelForgeError, match=f"^{message}$"):
        isotonic_regression(x, y, weights=weights)


def test_the_score_moves_a_doubtful_grade_to_the_middle():
    assert judge_score([0, 1, 1, 0], [None, 1.0, 0.0, np.nan], scale=(0, 1)).tolist() == [0.0, 1.0, 0.5, 0.0]
    assert judge_score([3, 0], [0.5, 0.5], scale=(0, 3)).tolist() == [2.25, 0.75]
    with pytest.raises(QrelForgeError, match=r"^confidence must lie in \[0, 1\]; got 1\.5$"):
        judge_score([1], [1.5], scale=(0, 3))
    with pytest.raises(QrelForgeError, match="^confidence must have one value per grade; got 1 for 2$"):
        judge_score([1, 2], [0.5], scale=(0, 3))


def _lenient_pairs(seed: int, n: int = 400) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 4, size=n)
    judge = np.minimum(human + (rng.random(n) < 0.6), 3)
    confidence = rng.choice([0.5, 0.75, 1.0], size=n)
    return judge, human, confidence


@pytest.mark.parametrize("with_confidence", [False, True])
def test_the_grade_map_is_sklearns_isotonic_fit_of_each_threshold(with_confidence):
    judge, human, confidence = _lenient_pairs(1)
    c = confidence if with_confidence else None
    grade_map = fit_grade_map(judge, human, confidence=c, scale=(0, 3))
    score = judge_score(judge, c, scale=(0, 3))
    probe_grades = np.repeat([0, 1, 2, 3], 3)
    probe_confidence = np.tile([0.5, 0.75, 1.0], 4) if with_confidence else None
    probe_score = judge_score(probe_grades, probe_confidence, scale=(0, 3))
    theirs = np.stack(
        [
            IsotonicRegression(out_of_bounds="clip")
            .fit(score, (human >= g).astype(float))
            .predict(probe_score)
            for g in (1, 2, 3)
        ]
    )
    assert grade_map.grades == (0, 1, 2, 3) and grade_map.n_pairs == 400
    # thresholds do not cross here, so making them non-increasing in g changes nothing
    assert grade_map.at_least(probe_grades, probe_confidence) == pytest.approx(theirs, abs=1e-9)
    assert grade_map.expected(probe_grades, probe_confidence) == pytest.approx(theirs.sum(axis=0), abs=1e-9)


def test_imputed_grades_follow_the_fitted_distribution():
    judge, human, _ = _lenient_pairs(2)
    grade_map = fit_grade_map(judge, human, scale=(0, 3))
    uniforms = np.random.default_rng(0).random(20_000)
    drawn = grade_map.impute(np.full(20_000, 3), uniforms=uniforms)
    share = [(drawn >= g).mean() for g in (1, 2, 3)]
    assert share == pytest.approx(grade_map.at_least([3])[:, 0].tolist(), abs=0.01)
    assert set(np.unique(drawn)) <= {0, 1, 2, 3}
    # the lenient judge's 3 is a 2 or a 3 for the humans: about 0.6 of the 2s were raised into it
    assert grade_map.expected([3])[0] == pytest.approx(human[judge == 3].mean())


def test_a_grade_map_refuses_bad_input_by_name():
    with pytest.raises(
        QrelForgeError, match="^a grade map needs at least one pair labelled by both; got none$"
    ):
        fit_grade_map([], [])
    with pytest.raises(QrelForgeError, match="^human_grades must be integers; got 1.5$"):
        fit_grade_map([1, 2], [1.5, 2])
    with pytest.raises(QrelForgeError, match="^judge_grades and human_grades must have the same length"):
        fit_grade_map([1, 2], [1])


def test_folds_are_balanced_random_and_reproducible():
    queries = [f"q{i}" for i in range(23)]
    folds = crossfit_folds(queries, 5, seed=7)
    sizes = np.bincount(list(folds.values()))
    assert sorted(folds) == sorted(queries) and sizes.tolist() in ([5, 5, 5, 4, 4],)
    assert crossfit_folds(queries, 5, seed=7) == folds and crossfit_folds(queries, 5, seed=8) != folds
    assert sorted(set(crossfit_folds(["a", "b", "c"], 5).values())) == [0, 1, 2]  # at most a fold a query
    with pytest.raises(QrelForgeError, match="^folds must be an int >= 2; got 1$"):
        crossfit_folds(queries, 1)
    with pytest.raises(QrelForgeError, match="^cross-fitting needs at least 2 human queries; got 1$"):
        crossfit_folds(["q1"], 5)


def test_a_human_query_takes_only_the_map_that_never_saw_it():
    by_fold = [
        pd.Series({"h0": 10.0, "h1": 11.0, "u": 1.0, "gone": np.nan}),
        pd.Series({"h0": 20.0, "h1": 21.0, "u": 3.0, "gone": np.nan}),
    ]
    out = crossfit_values(by_fold, {"h0": 0, "h1": 1})
    assert out.to_dict() == {"h0": 10.0, "h1": 21.0, "u": 2.0}
    with pytest.raises(QrelForgeError, match=r"^fold numbers must lie in 0\.\.1; got \[0, 2\]$"):
        crossfit_values(by_fold, {"h0": 0, "h1": 2})
