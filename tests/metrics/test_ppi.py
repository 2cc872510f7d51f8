"""Prediction-powered inference (metrics.stats.ppi): a hand-computed case, the perfect-judge and useless-judge
properties, vectorisation over runs, the paired difference, and every validation error by its message."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metrics.stats.ppi as ppi
from metrics.errors import QrelForgeError, UndefinedMetricWarning
from metrics.stats.ppi import Interval, Method, ppi_difference, ppi_mean

Z = 1.959963984540054  # normal 97.5% quantile
T2 = float(stats.t.ppf(0.975, 2))  # Student t 97.5% quantile, 2 degrees of freedom: 4.3027

# ------------------------------------------------------------------------------------- the hand-made case
#
# query  judge J  human H  H − J
# q1     0.5      0.3      −0.2
# q2     0.7      0.6      −0.1
# q3     0.2      0.0      −0.2
# q4     0.9
# q5     0.4
# q6     0.6
QUERIES = ["q1", "q2", "q3", "q4", "q5", "q6"]
JUDGE = pd.DataFrame({"A": [0.5, 0.7, 0.2, 0.9, 0.4, 0.6]}, index=QUERIES)
HUMAN = pd.DataFrame({"A": [0.3, 0.6, 0.0]}, index=QUERIES[:3])
# mean_N(J) = 3.3/6 = 0.55; mean_n(H − J) = −0.5/3; θ̂ = 0.55 − 1/6.
ESTIMATE = 0.55 - 0.5 / 3
# var_N(J) = (0.05² + 0.15² + 0.35² + 0.35² + 0.15² + 0.05²)/5 = 0.295/5 = 0.059.
# var_n(H − J): deviations from −1/6 are −1/30, 2/30, −1/30: (6/900)/2 = 1/300.
VAR_J, VAR_D = 0.059, 1 / 300
SE = math.sqrt(VAR_J / 6 + VAR_D / 3)  # = √0.0109444… = 0.104616…
# Human-only: mean 0.3, var_n(H) = (0 + 0.09 + 0.09)/2 = 0.09, se = √(0.09/3).
HUMAN_SE = math.sqrt(0.09 / 3)
# PPI++: cov_n(H, J) = (0·(1/30) + 0.3·(7/30) + (−0.3)·(−8/30))/2 = 0.075; var_n(J) = 0.19/3 = 0.0633…;
# λ̂ = (0.075/3) / (0.059/6 + 0.0633…/3); θ̂_λ = λ·0.55 + mean_n(H) − λ·mean_n(J) = 0.3 + λ·(0.55 − 1.4/3).
LAMBDA = (0.075 / 3) / (0.059 / 6 + (0.19 / 3) / 3)
TUNED_ESTIMATE = 0.3 + LAMBDA * (0.55 - 1.4 / 3)
# var_n(H − λJ) = var_n(H) − 2λ cov + λ² var_n(J).
TUNED_SE = math.sqrt(LAMBDA**2 * 0.059 / 6 + (0.09 - 2 * LAMBDA * 0.075 + LAMBDA**2 * 0.19 / 3) / 3)


def test_hand_case_ppi():
    res = ppi_mean(JUDGE, HUMAN)["A"]
    assert (res.run, res.method, res.level, res.n_human, res.n_total) == ("A", Method.PPI, 0.95, 3, 6)
    assert res.lambda_ == 1.0
    assert res.estimate == pytest.approx(ESTIMATE, abs=1e-12)
    assert (res.ci_low, res.ci_high) == pytest.approx((ESTIMATE - Z * SE, ESTIMATE + Z * SE), abs=1e-12)
    assert res.width == pytest.approx(2 * Z * SE, abs=1e-12)
    assert res.human_interval is Interval.NORMAL
    assert res.human_mean == pytest.approx(0.3, abs=1e-12)
    assert (res.human_ci_low, res.human_ci_high) == pytest.approx((0.3 - Z * HUMAN_SE, 0.3 + Z * HUMAN_SE))
    assert res.human_width == pytest.approx(2 * Z * HUMAN_SE, abs=1e-12)
    assert res.to_dict()["estimate"] == res.estimate


def test_hand_case_ppi_plus_plus():
    assert 0 < LAMBDA < 1
    res = ppi_mean(JUDGE, HUMAN, method="ppi++")["A"]
    assert res.method is Method.PPI_PLUS_PLUS
    assert res.lambda_ == pytest.approx(LAMBDA, abs=1e-12)
    assert res.estimate == pytest.approx(TUNED_ESTIMATE, abs=1e-12)
    assert res.width == pytest.approx(2 * Z * TUNED_SE, abs=1e-12)
    assert res.width <= ppi_mean(JUDGE, HUMAN)["A"].width  # λ̂ minimises the variance formula


def test_hand_case_t_interval_and_level():
    res = ppi_mean(JUDGE, HUMAN, human_interval="t")["A"]
    assert res.human_width == pytest.approx(2 * T2 * HUMAN_SE, abs=1e-12)
    assert res.width == pytest.approx(2 * Z * SE, abs=1e-12)  # the PPI interval stays normal
    z90 = float(stats.norm.ppf(0.95))
    assert ppi_mean(JUDGE, HUMAN, level=0.9)["A"].width == pytest.approx(2 * z90 * SE, abs=1e-12)


def random_tables(seed: int, n_total: int = 200, n_human: int = 40, runs: int = 3):
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(n_total)]
    human_all = pd.DataFrame(
        rng.random((n_total, runs)), index=queries, columns=[f"r{k}" for k in range(runs)]
    )
    judge = (human_all + 0.2 * rng.random((n_total, runs))).clip(upper=1.0)  # lenient and noisy
    chosen = rng.choice(n_total, size=n_human, replace=False)
    return judge, human_all.iloc[chosen], human_all


# The overlap variance on the hand case: cov_n(J, H − J) over q1..q3, J deviations from 7/15 are 1/30, 7/30,
# −8/30 and H − J deviations from −1/6 are −1/30, 2/30, −1/30: (−1 + 14 + 8)/900/2 = 7/600.
OVERLAP_SE = math.sqrt(VAR_J / 6 + VAR_D / 3 + 2 * (7 / 600) / 6)


def test_hand_case_overlap_variance():
    res = ppi_mean(JUDGE, HUMAN, variance="overlap")["A"]
    assert res.estimate == pytest.approx(ESTIMATE, abs=1e-12)  # the estimate does not change
    assert res.width == pytest.approx(2 * Z * OVERLAP_SE, abs=1e-12)
    assert res.variance == ppi.Variance.OVERLAP
    assert ppi_mean(JUDGE, HUMAN)["A"].variance == ppi.Variance.INDEPENDENT


def test_overlap_variance_is_the_variance_of_the_estimate_when_the_human_queries_are_among_the_n():
    # A reference computation by simulation: each column is one draw of N = 60 queries, X ~ N(0, 1), the
    # human value H = X + ε (ε ~ N(0, 1)) and a judge that shrinks, J = X/2, so H − J = X/2 + ε rises
    # with J. The first 40 queries get human values (a uniformly random 40, the queries being i.i.d.).
    # Var(θ̂) = Var(J)/N + Var(H − J)/n + 2·Cov(J, H − J)/N = 0.25/60 + 1.25/40 + 2·0.25/60 = 0.04375;
    # leaving the covariance out gives 0.0354, 19% too small.
    rng = np.random.default_rng(7)
    draws, big_n, n = 20_000, 60, 40
    x = rng.normal(size=(big_n, draws))
    judge, human = pd.DataFrame(x / 2), pd.DataFrame(x[:n] + rng.normal(size=(n, draws)))
    exact = 0.25 / 60 + 1.25 / 40 + 2 * 0.25 / 60
    overlap = ppi_mean(judge, human, variance="overlap")
    independent = ppi_mean(judge, human)
    estimates = np.array([r.estimate for r in overlap.values()])
    assert estimates.mean() == pytest.approx(0.0, abs=0.005)
    assert estimates.var() == pytest.approx(exact, rel=0.04)  # the estimate's own spread
    se2 = np.array([(r.width / (2 * Z)) ** 2 for r in overlap.values()])
    assert se2.mean() == pytest.approx(exact, rel=0.02)
    assert np.mean([(r.width / (2 * Z)) ** 2 for r in independent.values()]) < 0.85 * exact
    covered = np.mean([r.ci_low <= 0 <= r.ci_high for r in overlap.values()])
    assert covered == pytest.approx(0.95, abs=0.006)


def test_overlap_ppi_plus_plus_uses_the_regression_coefficient():
    # λ̂ = cov_n(H, J)/var_n(J), here inside (0, 1), and θ̂ and se follow the formulas with that λ (whose
    # covariance term is 0: this λ̂ leaves H − λ̂J uncorrelated with J on the human queries).
    rng = np.random.default_rng(3)
    x = rng.normal(size=30)
    judge = pd.DataFrame({"A": x})
    human = pd.DataFrame({"A": 0.6 * x[:12] + rng.normal(size=12)}, index=range(12))
    res = ppi_mean(judge, human, method="ppi++", variance="overlap")["A"]
    lam = np.cov(human["A"], x[:12])[0, 1] / np.var(x[:12], ddof=1)
    assert 0 < lam < 1 and res.lambda_ == pytest.approx(lam, abs=1e-12)
    rectifier = human["A"].to_numpy() - lam * x[:12]
    assert res.estimate == pytest.approx(lam * x.mean() + rectifier.mean(), abs=1e-12)
    var = lam**2 * np.var(x, ddof=1) / 30 + np.var(rectifier, ddof=1) / 12
    var += 2 * lam * np.cov(x[:12], rectifier)[0, 1] / 30
    assert res.width == pytest.approx(2 * Z * math.sqrt(var), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_perfect_judge_gives_the_all_human_interval(seed):
    """With J = H the correction H − J is 0, so θ̂ = mean_N(J) and the variance is var_N(J)/N: the PPI interval
    is the classical interval with human labels on all N queries (not the human-only interval on n)."""
    _, _, human_all = random_tables(seed)
    subset = human_all.sample(n=40, random_state=seed)
    got = ppi_mean(human_all, subset)
    full = ppi_mean(human_all, human_all)  # n = N: the human-only interval is the all-human one
    for run in human_all.columns:
        assert got[run].estimate == pytest.approx(human_all[run].mean(), abs=1e-12)
        assert (got[run].ci_low, got[run].ci_high) == pytest.approx(
            (full[run].human_ci_low, full[run].human_ci_high), abs=1e-12
        )
        assert got[run].width < got[run].human_width  # narrower than the human-only interval on n
        assert full[run].width == pytest.approx(full[run].human_width, abs=1e-12)


def test_constant_judge_ppi_plus_plus_falls_back_to_human_only():
    """A judge that says nothing (constant) has no covariance with the humans: λ̂ = 0, and PPI++ is the
    human-only normal interval exactly."""
    judge, human, _ = random_tables(3)
    constant = judge * 0 + 0.5
    res = ppi_mean(constant, human, method=Method.PPI_PLUS_PLUS)
    for run in judge.columns:
        assert res[run].lambda_ == 0.0
        assert res[run].estimate == pytest.approx(human[run].mean(), abs=1e-12)
        assert (res[run].ci_low, res[run].ci_high) == pytest.approx(
            (res[run].human_ci_low, res[run].human_ci_high), abs=1e-12
        )


def test_ppi_plus_plus_lambda_is_clipped_to_0_and_1():
    """λ̂ = cov/(…) is < 0 for a judge anti-correlated with the humans (clipped to 0: human-only) and > 1 for a
    judge that shrinks the differences between queries (clipped to 1: plain PPI)."""
    _, human, human_all = random_tables(7)
    anti = ppi_mean(1.0 - human_all, human, method="ppi++")
    shrunk, plain = ppi_mean(0.3 * human_all, human, method="ppi++"), ppi_mean(0.3 * human_all, human)
    for run in human.columns:
        assert anti[run].lambda_ == 0.0
        assert anti[run].estimate == pytest.approx(human[run].mean(), abs=1e-12)
        assert shrunk[run].lambda_ == 1.0
        assert shrunk[run].to_dict() | {"method": Method.PPI} == pytest.approx(plain[run].to_dict())


def test_bias_is_corrected():
    """A judge offset by a constant c gives the PPI estimate of a perfect judge: the rectifier removes c."""
    judge, human, human_all = random_tables(4)
    shifted = ppi_mean(human_all + 0.3, human)
    exact = ppi_mean(human_all, human)
    for run in judge.columns:
        assert shifted[run].estimate == pytest.approx(exact[run].estimate, abs=1e-12)
        assert shifted[run].width == pytest.approx(exact[run].width, abs=1e-12)


@pytest.mark.parametrize("method", list(Method))
def test_vectorised_over_runs_equals_one_run_at_a_time(method):
    judge, human, _ = random_tables(5)
    together = ppi_mean(judge, human.iloc[::-1][["r2", "r0", "r1"]], method=method, human_interval="t")
    assert list(together) == ["r0", "r1", "r2"]
    for run in judge.columns:
        alone = ppi_mean(judge[run], human[run], method=method, human_interval="t")[run]
        assert together[run].to_dict() == pytest.approx(alone.to_dict())


def test_series_without_a_name_is_one_run():
    res = ppi_mean(JUDGE["A"].rename(None), HUMAN["A"].rename(None))
    assert list(res) == ["run"] and res["run"].estimate == pytest.approx(ESTIMATE, abs=1e-12)


@pytest.mark.parametrize("variance", ["independent", "overlap"])
def test_paired_difference(variance):
    judge, human, _ = random_tables(6)
    res = ppi_difference(judge, human, run_a="r0", run_b="r2", method="ppi++", variance=variance)
    expected = ppi_mean(
        judge["r0"] - judge["r2"], human["r0"] - human["r2"], method="ppi++", variance=variance
    )["run"]
    assert res.run == "r0 - r2" and res.variance == variance
    assert {k: v for k, v in res.to_dict().items() if k != "run"} == pytest.approx(
        {k: v for k, v in expected.to_dict().items() if k != "run"}
    )


def test_one_human_query_has_nan_bounds_with_warning():
    with pytest.warns(UndefinedMetricWarning, match="they need at least 2 human queries, got 1"):
        res = ppi_mean(JUDGE, HUMAN.iloc[:1], method="ppi++")["A"]
    assert res.estimate == pytest.approx(0.55 - 0.2, abs=1e-12)
    assert all(math.isnan(x) for x in (res.ci_low, res.ci_high, res.width, res.human_ci_low, res.human_width))


NOT_NUMBER = JUDGE.astype(object)
NOT_NUMBER.iloc[1, 0] = "x"
MISSING = JUDGE.copy()
MISSING.iloc[2, 0] = np.nan


@pytest.mark.parametrize(
    ("judge", "human", "options", "message"),
    [
        ([0.1, 0.2], HUMAN, {}, "judge must be a DataFrame (queries × runs) or a Series (one run); got list"),
        (JUDGE, JUDGE.iloc[:0], {}, "human must have at least one query and one run; got shape (0, 1)"),
        (JUDGE.iloc[[0, 0, 1]], HUMAN, {}, "judge has query 'q1' twice"),
        (pd.concat([JUDGE, JUDGE], axis=1), HUMAN, {}, "judge has run 'A' twice"),
        (NOT_NUMBER, HUMAN, {}, "judge must hold numbers only; got 'x'"),
        (
            MISSING,
            HUMAN,
            {},
            "judge has a missing or infinite value for run 'A' at query 'q3': nan; leave the queries where "
            "the metric is undefined out of both tables first",
        ),
        (JUDGE.iloc[1:], HUMAN, {}, "human has queries without judge values: ['q1']"),
        (
            JUDGE,
            HUMAN.rename(columns={"A": "B"}),
            {},
            "human and judge must have the same runs; human lacks ['A']",
        ),
        (JUDGE.assign(B=0.1), HUMAN, {}, "human and judge must have the same runs; human lacks ['B']"),
        (JUDGE, HUMAN.assign(B=0.1), {}, "human and judge must have the same runs; judge lacks ['B']"),
        (JUDGE, HUMAN, {"level": 95}, "level must be a number strictly between 0 and 1; got 95"),
        (JUDGE, HUMAN, {"level": True}, "level must be a number strictly between 0 and 1; got True"),
        (JUDGE, HUMAN, {"method": "ppi+"}, "method must be 'ppi' or 'ppi++'; got 'ppi+'"),
        (JUDGE, HUMAN, {"human_interval": "z"}, "human_interval must be 'normal' or 't'; got 'z'"),
        (
            JUDGE,
            HUMAN,
            {"variance": "both"},
            "variance must be 'independent' or 'overlap'; got 'both'",
        ),
    ],
)
def test_validation_errors(judge, human, options, message):
    with pytest.raises(QrelForgeError) as error:
        ppi_mean(judge, human, **options)
    assert str(error.value) == message


@pytest.mark.parametrize(
    ("run_a", "run_b", "message"),
    [
        ("A", "C", "run_b must be one of the runs ['A', 'B']; got 'C'"),
        ("A", "A", "run_a and run_b must be different runs; got 'A' twice"),
    ],
)
def test_difference_errors(run_a, run_b, message):
    with pytest.raises(QrelForgeError) as error:
        ppi_difference(JUDGE.assign(B=0.1), HUMAN.assign(B=0.2), run_a=run_a, run_b=run_b)
    assert str(error.value) == message


def test_doctests():
    assert doctest.testmod(ppi).failed == 0
