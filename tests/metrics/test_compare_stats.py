"""metrics.stats against scipy and statsmodels on fixed data: paired t-test, randomization test (exact
enumeration equals scipy's exact permutation_test), bootstrap interval, Holm, Kendall's tau-b, Wilson,
two-proportion z-test; and the A/B analysis with its input checks."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from metrics import stats
from metrics.errors import FormatError

RNG = np.random.default_rng(2024)
SMALL = [
    np.array([1 / 3, 0, 1 / 3]),  # seed 000, P@3
    np.array([0.1, -0.2, 0.3, 0.05, 0.0, 0.25, -0.1, 0.4]),
    np.round(RNG.normal(0.05, 0.2, 10), 3),
    np.array([0.5, 0.5, -0.5, 0.5, 0.25, -0.25, 0.0, 0.5, 0.5, 0.75, -0.25, 0.5]),  # many ties
]


def scipy_permutation_p(d: np.ndarray, n_resamples: float = np.inf) -> float:
    res = st.permutation_test(
        (d,),
        lambda x, axis: np.mean(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=0,
    )
    return float(res.pvalue)


@pytest.mark.parametrize("d", SMALL, ids=["seed000", "n8", "n10", "ties"])
def test_exact_permutation_equals_scipy_exact(d):
    ours = stats.permutation_test(d, n_permutations=10_000)
    assert bool(ours.exact[0]) and int(ours.resamples[0]) == 2 ** len(d)
    assert ours.p[0] == pytest.approx(scipy_permutation_p(d), rel=1e-12)


def test_random_permutation_is_close_to_scipy():
    d = np.round(RNG.normal(0.04, 0.2, 40), 4)
    ours = stats.permutation_test(d, n_permutations=20_000, seed=3)
    assert not ours.exact[0]
    assert ours.p[0] == pytest.approx(scipy_permutation_p(d, 100_000), abs=0.01)


def test_columns_are_tested_independently_with_their_own_nan_pairs():
    d = np.column_stack([SMALL[1], np.r_[SMALL[1][:-2], np.nan, np.nan]])
    ours = stats.permutation_test(d)
    assert ours.n.tolist() == [8, 6]
    assert ours.p[1] == pytest.approx(scipy_permutation_p(SMALL[1][:-2]), rel=1e-12)


@pytest.mark.parametrize("d", SMALL[1:], ids=["n8", "n10", "ties"])
def test_paired_t_equals_scipy(d):
    x = RNG.random(len(d))
    t, p, n = stats.paired_t(x + d - x)
    ref = st.ttest_rel(x + d, x)
    assert (t[0], p[0], n[0]) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue), len(d))


@pytest.mark.parametrize(
    "d, expected",
    [
        ([0.0, 0.0, 0.0], (0.0, 1.0)),
        ([0.2, 0.2, 0.2], (math.inf, 0.0)),
        ([-0.2, -0.2], (-math.inf, 0.0)),
        ([0.3], (math.nan, math.nan)),
    ],
)
def test_paired_t_edge_cases(d, expected):
    t, p, _ = stats.paired_t(d)
    assert (t[0], p[0]) == pytest.approx(expected, nan_ok=True)


def test_bootstrap_interval_is_close_to_scipy_percentile():
    d = np.round(RNG.normal(0.05, 0.2, 50), 4)
    low, high = stats.bootstrap_ci(d, n_bootstrap=20_000, seed=1)
    ref = st.bootstrap(
        (d,), np.mean, n_resamples=20_000, method="percentile", random_state=1
    ).confidence_interval
    assert (low[0], high[0]) == (pytest.approx(ref.low, abs=0.006), pytest.approx(ref.high, abs=0.006))


@pytest.mark.parametrize("p", [[0.01, 0.04, 0.03, 0.5], [0.2], [0.001, 0.001, 0.9], [0.04, 0.03]])
@pytest.mark.parametrize("method", ["holm", "bonferroni"])
def test_adjust_equals_statsmodels(p, method):
    assert stats.adjust(p, method).tolist() == pytest.approx(multipletests(p, method=method)[1].tolist())


def test_adjust_leaves_nan_out_of_the_family():
    assert stats.adjust([0.01, np.nan, 0.04], "holm").tolist() == pytest.approx(
        [0.02, np.nan, 0.04], nan_ok=True
    )


@pytest.mark.parametrize(
    "x, y",
    [
        ([1, 2, 3, 4], [1, 3, 2, 4]),
        ([1, 2, 2, 3], [3, 1, 2, 2]),
        ([0.1, 0.5, 0.3], [0.3, 0.2, 0.1]),
        ([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]),
    ],
)
def test_kendall_tau_b_equals_scipy(x, y):
    assert stats.kendall_tau(x, y) == pytest.approx(st.kendalltau(x, y).statistic)


def test_kendall_tau_rows_and_constant_input():
    rows = stats.kendall_tau(np.array([[1, 2, 3], [3, 2, 1]]), np.array([[1, 2, 3], [1, 2, 3]]))
    assert rows.tolist() == [1.0, -1.0] and math.isnan(stats.kendall_tau([1, 1, 1], [1, 2, 3]))


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (8, 10), (10, 10), (47, 120)])
def test_wilson_equals_statsmodels(k, n):
    low, high = stats.wilson_interval(k, n)
    assert (float(low), float(high)) == pytest.approx(proportion_confint(k, n, method="wilson"))


@pytest.mark.parametrize("k1, n1, k2, n2", [(30, 100, 45, 100), (5, 20, 9, 25), (120, 400, 100, 390)])
def test_two_proportion_z_equals_statsmodels(k1, n1, k2, n2):
    z, p = stats.two_proportion_z(k1, n1, k2, n2)
    ref_z, ref_p = proportions_ztest([k1, k2], [n1, n2])
    assert (z, p) == (pytest.approx(ref_z), pytest.approx(ref_p))


def test_two_proportion_z_all_same_outcome():
    assert stats.two_proportion_z(10, 10, 5, 5) == (0.0, 1.0)


# ------------------------------------------------------------------------------------------------ A/B
def log(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["user_id", "group", "query", "feedback", "timestamp"])


def ab_rows(n_a: int, k_a: int, n_b: int, k_b: int) -> list[tuple]:
    rows = [(f"a{i}", "A", "q", int(i < k_a), "2024-05-01T10:00:00Z") for i in range(n_a)]
    return rows + [(f"b{i}", "B", "q", int(i < k_b), 1714557600) for i in range(n_b)]


def test_ab_rates_intervals_and_z_test():
    report = stats.ab_test(log(ab_rows(100, 30, 100, 45)))
    arms = report.to_dataframe()
    assert arms[["group", "users", "interactions", "satisfied"]].values.tolist() == [
        ["A", 100, 100, 30],
        ["B", 100, 100, 45],
    ]
    assert arms.loc[1, ["ci_low", "ci_high"]].tolist() == pytest.approx(
        proportion_confint(45, 100, method="wilson")
    )
    test = report.to_dataframe("tests").iloc[0]
    assert test["group"] == "B" and test["control"] == "A" and test["diff"] == pytest.approx(0.15)
    assert test["p"] == pytest.approx(proportions_ztest([45, 30], [100, 100])[1])
    assert math.isnan(test["p_fisher"]) and test["significant"]


def test_ab_small_counts_use_fisher():
    report = stats.ab_test(log(ab_rows(6, 1, 6, 5)))
    test = report.to_dataframe("tests").iloc[0]
    fisher = st.fisher_exact([[5, 1], [1, 5]]).pvalue
    assert test["p_fisher"] == pytest.approx(fisher) and test["p_adjusted"] == pytest.approx(fisher)


def test_ab_three_arms_chi_square_and_holm():
    rows = ab_rows(50, 20, 50, 30) + [(f"c{i}", "C", "q", int(i < 22), "2024-05-02") for i in range(50)]
    report = stats.ab_test(log(rows), control="A")
    table = [[20, 30], [30, 20], [22, 28]]
    assert report.chi_square == pytest.approx(tuple(st.chi2_contingency(table, correction=False)[:2]))
    tests = report.to_dataframe("tests")
    assert tests["p_adjusted"].tolist() == pytest.approx(multipletests(tests["p"], method="holm")[1].tolist())
    assert json.loads(json.dumps(report.to_dict(), allow_nan=False))["chi_square"]["p"] == pytest.approx(
        report.chi_square[1]
    )


def test_ab_mixed_users_error_or_drop():
    rows = ab_rows(4, 2, 4, 2) + [("a0", "B", "q", 1, "2024-05-03"), ("b1", "A", "q", 0, "2024-05-03")]
    with pytest.raises(
        ValueError,
        match=re.escape(
            "log: 2 users appear in more than one group (allow_mixed=True, "
            "or --allow-mixed, drops them): 'a0' (A at row 1, B at row 9); "
            "'b1' (B at row 6, A at row 10)"
        ),
    ):
        stats.ab_test(log(rows))
    report = stats.ab_test(log(rows), allow_mixed=True)
    assert report.dropped_users == ["a0", "b1"] and report.dropped_rows == 4
    assert report.arms["interactions"].tolist() == [3, 3]
    assert "note: dropped 2 users seen in more than one group (4 rows): 'a0', 'b1'" in report.to_text()


@pytest.mark.parametrize(
    "row, message",
    [
        (("u9", "A", "q", 2, "2024-05-01"), "log:5: feedback must be 0 or 1: '2'"),
        (("u9", "A", "q", True, "2024-05-01"), "log:5: feedback must be 0 or 1: 'True'"),
        (("u9", " ", "q", 1, "2024-05-01"), "log:5: group must be a non-empty string: ' '"),
        (("u9", "A", "", 1, "2024-05-01"), "log:5: query must be a non-empty string: ''"),
        (("u9", "A", "q", 1, "yesterday"), "log:5: timestamp must be ISO 8601 or epoch seconds: 'yesterday'"),
        ((None, "A", "q", 1, "2024-05-01"), "log:5: user_id is missing: ''"),
        (("u9", "A", "q", 1, None), "log:5: timestamp is missing: ''"),
    ],
)
def test_ab_bad_rows_name_the_line(row, message):
    rows = ab_rows(2, 1, 2, 1) + [row]
    with pytest.raises(FormatError, match=re.escape(message)):
        stats.ab_test(log(rows), source="log", lines=[1, 2, 3, 4, 5])


def test_ab_rows_without_lines_are_numbered_as_rows():
    rows = ab_rows(2, 1, 2, 1) + [("u9", "A", "q", "x", "2024-05-01")]
    with pytest.raises(FormatError, match=re.escape("log row 5: feedback must be 0 or 1: 'x'")):
        stats.ab_test(log(rows))


@pytest.mark.parametrize(
    "kwargs, frame, message",
    [
        ({}, log(ab_rows(3, 1, 0, 0)), "log: an A/B test needs at least two groups; got ['A']"),
        ({"control": "Z"}, log(ab_rows(3, 1, 3, 1)), "control must be one of the groups ['A', 'B']; got 'Z'"),
        ({"alpha": 0}, log(ab_rows(3, 1, 3, 1)), "alpha must be a number strictly between 0 and 1; got 0"),
        (
            {},
            log(ab_rows(3, 1, 3, 1)).drop(columns=["timestamp"]),
            "log: missing column ['timestamp']: \"['user_id', 'group', 'query', 'feedback']\"",
        ),
    ],
)
def test_ab_bad_input(kwargs, frame, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        stats.ab_test(frame, **kwargs)
