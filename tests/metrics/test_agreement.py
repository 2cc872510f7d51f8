"""Agreement statistics: published worked examples, cross-checks against scikit-learn, statsmodels and
krippendorff, the long-table helpers, and every error and undefined case by its message."""

from __future__ import annotations

import doctest
import math
import re
import warnings
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

import metrics.agreement as agreement
from metrics.agreement import (
    KappaResult,
    agreement_summary,
    binarize,
    cohen_kappa,
    disagreements,
    fleiss_kappa,
    group_agreement,
    gwet_ac1,
    interpret,
    item_agreement,
    krippendorff_alpha,
    pairwise_kappa,
    percent_agreement,
    scott_pi,
)
from metrics.errors import QrelForgeError, UndefinedMetricWarning

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SEEDS = [0, 1, 2, 3, 4]
TIGHT = 1e-9  # agreement with the reference libraries
PUBLISHED = 1e-3  # agreement with published (rounded) values


# ------------------------------------------------------------------------------------------------- fixtures


def expand_counts(counts) -> list[list]:
    """items × categories counts → items × raters ratings (category index per rating)."""
    return [[k for k, n in enumerate(row) for _ in range(int(n))] for row in np.asarray(counts)]


def expand_table(table) -> tuple[np.ndarray, np.ndarray]:
    """K × K contingency table → two rating sequences (category indexes)."""
    table = np.asarray(table)
    k = table.shape[0]
    return np.repeat(np.repeat(np.arange(k), k), table.ravel()), np.repeat(
        np.tile(np.arange(k), k), table.ravel()
    )


@pytest.fixture(scope="module")
def fleiss1971() -> list[list]:
    counts = pd.read_csv(FIXTURES / "agreement_fleiss1971.csv", comment="#", index_col="subject")
    return expand_counts(counts.to_numpy())


@pytest.fixture(scope="module")
def krippendorff2011() -> pd.DataFrame:
    return pd.read_csv(FIXTURES / "agreement_krippendorff2011.csv", comment="#", index_col="unit")


@pytest.fixture(scope="module")
def artstein_poesio2008() -> tuple[list, list]:
    table = pd.read_csv(FIXTURES / "agreement_artstein_poesio2008.csv", comment="#", index_col="coder_a")
    a, b = expand_table(table.to_numpy())
    names = np.array(table.columns)
    return list(names[a]), list(names[b])


# Wikipedia, "Fleiss' kappa", worked example: 10 subjects × 14 raters × 5 categories;
# P̄ = 0.378, P̄e = 0.213, κ = 0.210.
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]
# Krippendorff (2011), section A: binary data, two observers, ten units; α = 0.095.
KRIPPENDORFF_BINARY = [[0, 1], [1, 1], [0, 1], [0, 0], [0, 0], [0, 1], [0, 0], [0, 0], [1, 0], [0, 0]]
# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., via the irrCAC package documentation: the
# "cont3x3abstractors" table (2 raters, 100 subjects): κ 0.7964094 (SE 0.05891072), π 0.7962397,
# AC1 0.8493305, α 0.7972585, percent agreement 0.89.
GWET_3X3 = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]


# ---------------------------------------------------------------------------------------- published examples


def test_fleiss_1971(fleiss1971):
    assert abs(fleiss_kappa(fleiss1971) - 0.430) < PUBLISHED
    assert abs(percent_agreement(fleiss1971) - 0.556) < PUBLISHED


def test_fleiss_1971_first_15_subjects_as_in_gwet(fleiss1971):
    """irrCAC's distrib.6raters (Gwet 2014) is the first 15 subjects: κ 0.4139265, AC1 0.4448007,
    P̄ 0.5511111."""
    first = fleiss1971[:15]
    assert fleiss_kappa(first) == pytest.approx(0.4139265, abs=1e-7)
    assert gwet_ac1(first, labels=range(5)) == pytest.approx(0.4448007, abs=1e-7)
    assert percent_agreement(first) == pytest.approx(0.5511111, abs=1e-7)


def test_fleiss_wikipedia():
    ratings = expand_counts(WIKIPEDIA_FLEISS)
    assert abs(fleiss_kappa(ratings) - 0.210) < PUBLISHED
    assert abs(percent_agreement(ratings) - 0.378) < PUBLISHED


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_2011(krippendorff2011, level, published):
    assert abs(krippendorff_alpha(krippendorff2011, level=level) - published) < PUBLISHED
    assert (
        abs(krippendorff_alpha(krippendorff2011, level=level, labels=[1, 2, 3, 4, 5]) - published) < PUBLISHED
    )


def test_krippendorff_2011_binary():
    assert abs(krippendorff_alpha(KRIPPENDORFF_BINARY) - 0.095) < PUBLISHED


def test_gwet_ac1_on_krippendorff_data(krippendorff2011):
    """Gwet's irrCAC documents this data set as cac.raw4raters: AC1 0.77544 (p_a 0.8181818), α 0.74342."""
    assert gwet_ac1(krippendorff2011, labels=[1, 2, 3, 4, 5]) == pytest.approx(0.77544, abs=5e-6)
    assert percent_agreement(krippendorff2011) == pytest.approx(0.8181818, abs=1e-7)
    assert krippendorff_alpha(krippendorff2011) == pytest.approx(0.74342, abs=5e-6)


def test_artstein_poesio_2008(artstein_poesio2008):
    a, b = artstein_poesio2008
    result = cohen_kappa(a, b)
    assert abs(result.observed - 0.88) < PUBLISHED
    assert abs(result.kappa - 0.8013) < PUBLISHED
    assert abs(scott_pi(a, b) - 0.7995) < PUBLISHED
    assert abs(fleiss_kappa(list(zip(a, b, strict=True))) - 0.7995) < PUBLISHED


def test_gwet_3x3_table():
    r1, r2 = expand_table(GWET_3X3)
    result = cohen_kappa(r1, r2)
    assert result.kappa == pytest.approx(0.7964094, abs=1e-7)
    assert result.std_err == pytest.approx(0.05891072, abs=1e-8)
    assert scott_pi(r1, r2) == pytest.approx(0.7962397, abs=1e-7)
    assert gwet_ac1(np.c_[r1, r2], labels=[0, 1, 2]) == pytest.approx(0.8493305, abs=1e-7)
    assert krippendorff_alpha(np.c_[r1, r2]) == pytest.approx(0.7972585, abs=1e-7)
    assert percent_agreement(np.c_[r1, r2]) == pytest.approx(0.89, abs=1e-12)


# --------------------------------------------------------------------------------------- reference libraries


def graded(seed: int, n_items: int = 60, n_raters: int = 2, missing: float = 0.0) -> np.ndarray:
    """Correlated grades on the scale 0..3 that never use grade 2 (an unused declared grade);
    NaN = missing."""
    rng = np.random.default_rng(seed)
    truth = rng.choice([0, 1, 3], size=n_items, p=[0.5, 0.3, 0.2])
    noise = rng.random((n_items, n_raters)) < 0.3
    ratings = np.where(noise, rng.choice([0, 1, 3], size=(n_items, n_raters)), truth[:, None]).astype(float)
    ratings[rng.random(ratings.shape) < missing] = np.nan
    return ratings


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_matches_sklearn_with_declared_labels(seed, weights):
    r = graded(seed)
    ours = cohen_kappa(r[:, 0], r[:, 1], weights=weights, labels=[0, 1, 2, 3]).kappa
    theirs = cohen_kappa_score(r[:, 0], r[:, 1], weights=weights, labels=[0, 1, 2, 3])
    assert ours == pytest.approx(theirs, abs=TIGHT)


@pytest.mark.parametrize("seed", SEEDS)
def test_cohen_unweighted_matches_sklearn_without_labels(seed):
    r = graded(seed)
    assert cohen_kappa(r[:, 0], r[:, 1]).kappa == pytest.approx(
        cohen_kappa_score(r[:, 0], r[:, 1]), abs=TIGHT
    )


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_sklearn_observed_label_weights_differ(weights):
    """Documented difference: sklearn without labels spaces weights over the observed grades {0, 1, 3}."""
    r = graded(0)
    ours = cohen_kappa(r[:, 0], r[:, 1], weights=weights, labels=[0, 1, 2, 3]).kappa
    observed_only = cohen_kappa_score(r[:, 0], r[:, 1], weights=weights)
    assert abs(ours - observed_only) > 1e-3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_std_err_and_ci_match_statsmodels(seed, weights):
    r = graded(seed)
    ours = cohen_kappa(r[:, 0], r[:, 1], weights=weights, labels=[0, 1, 2, 3])
    theirs = cohens_kappa(ours.table, wt=weights) if weights else cohens_kappa(ours.table)
    assert ours.kappa == pytest.approx(theirs.kappa, abs=TIGHT)
    assert ours.std_err == pytest.approx(theirs.std_kappa, abs=TIGHT)
    low, high = ours.confint(0.95)
    assert (low, high) == pytest.approx((theirs.kappa_low, theirs.kappa_upp), abs=TIGHT)


@pytest.mark.parametrize("seed", SEEDS)
def test_fleiss_matches_statsmodels(seed):
    r = graded(seed, n_items=80, n_raters=5)
    counts, _ = aggregate_raters(r.astype(int))
    assert fleiss_kappa(r, labels=[0, 1, 2, 3]) == pytest.approx(sm_fleiss_kappa(counts), abs=TIGHT)


def test_statsmodels_counts_nan_as_a_category():
    """Documented difference: aggregate_raters makes NaN a category; we drop missing ratings."""
    r = graded(0, n_items=20, n_raters=3)
    r[0, 0] = np.nan
    counts, categories = aggregate_raters(r)
    assert np.isnan(categories[-1]) and counts.sum(axis=1).tolist() == [3] * 20
    with pytest.raises(QrelForgeError, match=re.escape("most items have 3, but these differ: 0 (2)")):
        fleiss_kappa(r)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_matches_package(seed, level):
    r = graded(seed, n_items=50, n_raters=4, missing=0.25)
    ours = krippendorff_alpha(r, level=level, labels=[0, 1, 2, 3])
    theirs = krippendorff.alpha(r.T, level_of_measurement=level, value_domain=[0, 1, 2, 3])
    assert ours == pytest.approx(theirs, abs=TIGHT)
    assert krippendorff_alpha(r, level=level) == pytest.approx(theirs, abs=TIGHT)


def test_ordinal_alpha_is_rank_based_not_weights():
    """Krippendorff's ordinal metric depends on the marginal frequencies, so it is not interval alpha over
    ranks."""
    r = graded(3, n_items=50, n_raters=4, missing=0.25)
    ranks = np.vectorize({0: 0.0, 1: 1.0, 3: 2.0}.get, otypes=[float])(r)
    assert abs(krippendorff_alpha(r, level="ordinal") - krippendorff_alpha(ranks, level="interval")) > 1e-3


@pytest.mark.parametrize("seed", SEEDS)
def test_scott_pi_equals_two_rater_fleiss(seed):
    r = graded(seed)
    assert scott_pi(r[:, 0], r[:, 1]) == pytest.approx(fleiss_kappa(r), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_percent_agreement_two_raters_is_share_of_equal_pairs(seed):
    r = graded(seed)
    assert percent_agreement(r) == pytest.approx(np.mean(r[:, 0] == r[:, 1]), abs=1e-12)


# ----------------------------------------------------------------------------------------- behaviour and CI


def test_missing_pairs_are_dropped_and_counted():
    result = cohen_kappa([0, 1, None, 1, float("nan"), 0], [0, 1, 1, None, 0, 1])
    assert (result.n_items, result.n_dropped) == (3, 3)
    assert result.kappa == pytest.approx(cohen_kappa_score([0, 1, 0], [0, 1, 1]), abs=TIGHT)


def test_dataframe_and_list_inputs_agree(krippendorff2011):
    rows = [[None if pd.isna(v) else int(v) for v in row] for row in krippendorff2011.to_numpy()]
    assert krippendorff_alpha(rows) == krippendorff_alpha(krippendorff2011)
    assert krippendorff_alpha(krippendorff2011.to_numpy()) == krippendorff_alpha(krippendorff2011)


def test_string_categories(artstein_poesio2008):
    a, b = artstein_poesio2008
    assert cohen_kappa(a, b, labels=["stat", "ireq", "chck"]).kappa == pytest.approx(cohen_kappa(a, b).kappa)
    assert cohen_kappa(a, b).labels == ("chck", "ireq", "stat")


def test_float_of_result_is_kappa():
    result = cohen_kappa([0, 1, 1], [0, 1, 0])
    assert float(result) == result.kappa


def test_bootstrap_ci_is_reproducible_and_brackets_kappa():
    r = graded(1, n_items=200)
    result = cohen_kappa(r[:, 0], r[:, 1], weights="quadratic", labels=[0, 1, 2, 3])
    first = result.confint(method="bootstrap", n_boot=500, seed=7)
    assert first == result.confint(method="bootstrap", n_boot=500, seed=7)
    assert first != result.confint(method="bootstrap", n_boot=500, seed=8)
    assert first[0] < result.kappa < first[1]
    analytic = result.confint()
    assert abs((first[1] - first[0]) - (analytic[1] - analytic[0])) < 0.05


def test_ci_of_undefined_kappa_is_nan():
    with pytest.warns(UndefinedMetricWarning):
        result = cohen_kappa([1, 1], [1, 1])
    assert all(math.isnan(x) for x in result.confint()) and math.isnan(result.std_err)


@pytest.mark.parametrize(
    ("value", "band"),
    [
        (-1.0, "poor"),
        (-1e-9, "poor"),
        (0.0, "slight"),
        (0.2, "slight"),
        (0.2000001, "fair"),
        (0.4, "fair"),
        (0.41, "moderate"),
        (0.6, "moderate"),
        (0.8, "substantial"),
        (0.8000001, "almost perfect"),
        (1.0, "almost perfect"),
        (np.float64(0.5), "moderate"),
        (float("nan"), "undefined"),
    ],
)
def test_interpret_bands(value, band):
    assert interpret(value) == band


def test_interpret_accepts_kappa_result():
    assert interpret(cohen_kappa([0, 1, 1, 0], [0, 1, 1, 0])) == "almost perfect"


@pytest.mark.parametrize(
    ("ratings", "cutoff", "expected"),
    [
        ([0, 1, 2, 3], 2, [0.0, 0.0, 1.0, 1.0]),
        ([0, None, 3], 1, [0.0, np.nan, 1.0]),
        ([[0, 3], [2, float("nan")]], 2, [[0.0, 1.0], [1.0, np.nan]]),
    ],
)
def test_binarize(ratings, cutoff, expected):
    np.testing.assert_array_equal(binarize(ratings, cutoff), np.array(expected))


def test_binarize_keeps_pandas_shape():
    frame = pd.DataFrame({"a": [0, 3], "b": [2, None]}, index=["x", "y"])
    out = binarize(frame, 2)
    assert list(out.index) == ["x", "y"] and list(out.columns) == ["a", "b"]
    assert out.loc["x", "b"] == 1.0 and math.isnan(out.loc["y", "b"])


# --------------------------------------------------------------------------------------- undefined statistics


@pytest.mark.parametrize(
    ("compute", "message"),
    [
        (
            lambda: cohen_kappa([2, 2, 2], [2, 2, 2]).kappa,
            "cohen_kappa is undefined: every rating is in one category",
        ),
        (
            lambda: cohen_kappa([2, 2], [2, 2], weights="linear", labels=[0, 1, 2, 3]).kappa,
            "cohen_kappa is undefined: every rating is in one category",
        ),
        (lambda: scott_pi(["a", "a"], ["a", "a"]), "scott_pi is undefined: every rating is in one category"),
        (
            lambda: fleiss_kappa([[1, 1, 1], [1, 1, 1]]),
            "fleiss_kappa is undefined: every rating is in one category",
        ),
        (
            lambda: krippendorff_alpha([[3, 3, None], [3, None, 3]], labels=[1, 2, 3]),
            "krippendorff_alpha is undefined: fewer than two distinct values are pairable",
        ),
        (
            lambda: krippendorff_alpha([[3, 3], [3, 3]], level="interval"),
            "krippendorff_alpha is undefined: fewer than two distinct values are pairable",
        ),
    ],
)
def test_undefined_is_nan_with_warning(compute, message):
    with pytest.warns(UndefinedMetricWarning, match=re.escape(message) + r".*returning NaN"):
        assert math.isnan(compute())


def test_gwet_ac1_is_defined_when_every_rating_is_in_one_category():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gwet_ac1([[1, 1], [1, 1]], labels=[0, 1]) == 1.0


# ----------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("compute", "message"),
    [
        (
            lambda: cohen_kappa([0], [0], weights="cubic"),
            "weights must be None, 'linear' or 'quadratic'; got 'cubic'",
        ),
        (
            lambda: cohen_kappa([0, 1], [0, 1], weights="linear"),
            "weights='linear' needs labels, the declared rating scale (e.g. labels=[0, 1, 2, 3]); "
            "got labels=None",
        ),
        (
            lambda: cohen_kappa([0, 1], [0, 5], labels=[0, 1, 2, 3]),
            "r2 has a rating outside labels: 5 is not one of [0, 1, 2, 3]",
        ),
        (
            lambda: cohen_kappa([0, 1, 2], [0, 1]),
            "r1 and r2 must have the same length (one rating per item); got 3 and 2",
        ),
        (
            lambda: cohen_kappa([0, None], [None, 1]),
            "r1 and r2 have no item rated by both: each of the 2 pairs has a missing rating",
        ),
        (lambda: cohen_kappa([], []), "r1 and r2 have no item rated by both: they are empty"),
        (lambda: cohen_kappa("0101", "0101"), "r1 must be a sequence of ratings; got str"),
        (lambda: cohen_kappa([[0, 1]], [[0, 1]]), "r1 must be 1-D (one rating per item); got 2-D"),
        (
            lambda: scott_pi([None], [1]),
            "r1 and r2 have no item rated by both: each of the 1 pairs has a missing rating",
        ),
        (lambda: cohen_kappa([0], [0], labels=[0, 1, 1]), "labels must be distinct; got [0, 1, 1]"),
        (
            lambda: cohen_kappa([0], [0], labels=[0, None]),
            "labels must not contain a missing value; got [0, None]",
        ),
        (
            lambda: cohen_kappa([0], [0], labels="0123"),
            "labels must be a sequence of categories such as [0, 1, 2, 3]; got '0123'",
        ),
        (
            lambda: cohen_kappa([0, 1], [0, 1]).confint(1.5),
            "confidence_level must be a number between 0 and 1 (exclusive); got 1.5",
        ),
        (
            lambda: cohen_kappa([0, 1], [0, 1]).confint(method="jackknife"),
            "method must be 'analytic' or 'bootstrap'; got 'jackknife'",
        ),
        (
            lambda: cohen_kappa([0, 1], [0, 1]).confint(method="bootstrap", n_boot=0),
            "n_boot must be a positive integer; got 0",
        ),
        (
            lambda: fleiss_kappa([[1, 1, 1], [1, 2, None], [2, None, None], [1, 2, 2]]),
            "fleiss_kappa needs the same number of ratings for every item; most items have 3, "
            "but these differ: 1 (2), 2 (1)",
        ),
        (
            lambda: fleiss_kappa(
                pd.DataFrame({"a": [1, 1, 2], "b": [1, None, 2]}, index=["q1/d1", "q1/d2", "q2/d1"])
            ),
            "fleiss_kappa needs the same number of ratings for every item; most items have 2, "
            "but these differ: 'q1/d2' (1)",
        ),
        (
            lambda: fleiss_kappa([[1, None], [2, None]]),
            "fleiss_kappa needs at least 2 ratings per item; got 1",
        ),
        (lambda: fleiss_kappa([[None, None]]), "fleiss_kappa needs at least one rated item; got none"),
        (
            lambda: krippendorff_alpha([[1, None], [None, 2]]),
            "krippendorff_alpha needs at least one item rated by two or more raters; got none",
        ),
        (
            lambda: krippendorff_alpha([[1, 1]], level="metric"),
            "level must be 'nominal', 'ordinal', 'interval' or 'ratio'; got 'metric'",
        ),
        (
            lambda: krippendorff_alpha([["a", "b"]], level="interval"),
            "level='interval' needs numeric ratings; got 'a'",
        ),
        (
            lambda: krippendorff_alpha([[-1, 1]], level="ratio"),
            "level='ratio' needs non-negative ratings; got -1",
        ),
        (
            lambda: krippendorff_alpha([[1, 2], [1]]),
            "ratings rows must all have the same length (one column per rater, None for a missing rating); "
            "row 0 has 2, row 1 has 1",
        ),
        (
            lambda: krippendorff_alpha([1, 2, 3]),
            "ratings row 0 must be a sequence of ratings (one per rater); got 1",
        ),
        (lambda: krippendorff_alpha(np.array([1, 2])), "ratings must be 2-D (items × raters); got 1-D"),
        (
            lambda: krippendorff_alpha("ab"),
            "ratings must be an items × raters table (a list of rows, a 2-D array or a DataFrame); got str",
        ),
        (
            lambda: gwet_ac1([[1, None]], labels=[1, 2]),
            "gwet_ac1 needs at least one item rated by two or more raters; got none",
        ),
        (lambda: gwet_ac1([[1, 1]], labels=[1]), "labels must have at least 2 categories; got [1]"),
        (
            lambda: gwet_ac1([[1, 3]], labels=[1, 2]),
            "ratings has a rating outside labels: 3 is not one of [1, 2]",
        ),
        (
            lambda: percent_agreement([[1, None]]),
            "percent_agreement needs at least one item rated by two or more raters; got none",
        ),
        (lambda: interpret(1.01), "value must be at most 1 (an agreement coefficient); got 1.01"),
        (lambda: interpret("high"), "value must be a real number or NaN; got 'high'"),
        (lambda: interpret(True), "value must be a real number or NaN; got True"),
        (lambda: binarize([0, "rel"], 1), "binarize needs numeric ratings; got 'rel'"),
        (lambda: binarize([0, 1], "2"), "cutoff must be a number; got '2'"),
    ],
)
def test_errors(compute, message):
    with pytest.raises(QrelForgeError, match=f"^{re.escape(message)}$"):
        compute()


# ----------------------------------------------------------------------------------- long table (app helpers)


def long_labels(seed: int, n_items: int = 120, n_raters: int = 6, per_item: int = 3, n_queries: int = 8):
    """A long labels table: each item (query–document pair) rated by `per_item` of the raters, grades 0..3."""
    rng = np.random.default_rng(seed)
    truth = rng.choice([0, 1, 2, 3], size=n_items, p=[0.4, 0.3, 0.2, 0.1])
    raters = np.array([rng.choice(n_raters, size=per_item, replace=False) for _ in range(n_items)]).ravel()
    items = np.repeat(np.arange(n_items), per_item)
    noise = rng.random(len(items)) < 0.35
    labels = np.where(noise, rng.choice(4, size=len(items)), truth[items])
    return pd.DataFrame(
        {
            "query": [f"q{i % n_queries}" for i in items],
            "item": [f"q{i % n_queries}/d{i}" for i in items],
            "rater": [f"r{r}" for r in raters],
            "label": labels,
        }
    )


def wide(table: pd.DataFrame) -> pd.DataFrame:
    return table.pivot(index="item", columns="rater", values="label")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_pairwise_cells_equal_cohen_and_sklearn(seed, weights):
    table = long_labels(seed)
    result = pairwise_kappa(table, labels=[0, 1, 2, 3], weights=weights)
    ratings = wide(table)
    for a in ratings.columns:
        for b in ratings.columns:
            shared = ratings[[a, b]].dropna()
            assert result.n_items.loc[a, b] == len(shared)
            if a == b:
                assert math.isnan(result.kappa.loc[a, b])
                continue
            expected = cohen_kappa_score(shared[a], shared[b], weights=weights, labels=[0, 1, 2, 3])
            assert result.kappa.loc[a, b] == pytest.approx(expected, abs=TIGHT, nan_ok=True)


def test_pairwise_to_long_and_no_overlap():
    table = pd.DataFrame({"item": [1, 1, 2, 2], "rater": ["a", "b", "c", "a"], "label": [0, 1, 1, 1]})
    with pytest.warns(UndefinedMetricWarning, match="for 1 rater pair"):  # a and c share one item, both 1
        cells = pairwise_kappa(table).to_long()
    assert cells[["rater_a", "rater_b"]].values.tolist() == [["a", "b"], ["a", "c"], ["b", "c"]]
    assert cells["n_items"].tolist() == [1, 1, 0]
    assert math.isnan(cells["kappa"].iloc[2])


def test_pairwise_warns_once_for_undefined_pairs():
    table = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "rater": list("ababac"), "label": [1, 1, 1, 1, 0, 1]})
    with pytest.warns(
        UndefinedMetricWarning, match=r"^Cohen's kappa for 1 rater pair is undefined: .* their cells are NaN$"
    ):
        result = pairwise_kappa(table)
    assert math.isnan(result.kappa.loc["a", "b"]) and result.n_items.loc["a", "b"] == 2


@pytest.mark.parametrize("seed", SEEDS)
def test_cutoff_is_binary_agreement(seed):
    table = long_labels(seed)
    result = pairwise_kappa(table, labels=[0, 1, 2, 3], cutoff=2)
    ratings = wide(table)
    shared = ratings[["r0", "r1"]].dropna()
    expected = cohen_kappa_score(shared["r0"] >= 2, shared["r1"] >= 2)
    assert result.kappa.loc["r0", "r1"] == pytest.approx(expected, abs=TIGHT)
    summary = agreement_summary(table, cutoff=2)
    assert summary["krippendorff_alpha"] == pytest.approx(krippendorff_alpha(binarize(ratings, 2)), abs=TIGHT)


@pytest.mark.parametrize("seed", SEEDS)
def test_item_agreement_matches_percent_agreement(seed):
    table = long_labels(seed)
    items = item_agreement(table, labels=[0, 1, 2, 3])
    assert items["agreement"].mean() == pytest.approx(percent_agreement(wide(table)), abs=1e-12)
    np.testing.assert_allclose(items["disagreement"], 1 - items["agreement"], atol=1e-12)
    assert items[[f"n[{g}]" for g in range(4)]].sum(axis=1).tolist() == items["n_ratings"].tolist()


def test_item_agreement_columns():
    table = pd.DataFrame(
        {
            "q": ["x", "x", "x", "y", "y"],
            "item": [1, 1, 1, 2, 2],
            "rater": list("abcab"),
            "label": [0, 3, 3, 2, 2],
        }
    )
    items = item_agreement(table, labels=[0, 1, 2, 3], weights="linear", group="q")
    first = items.iloc[0]
    assert list(items.columns[:3]) == ["item", "q", "n_ratings"]
    assert (first["n_ratings"], first["n_distinct"], first["majority"]) == (3, 2, 3)
    assert first["majority_share"] == pytest.approx(2 / 3)
    assert first["agreement"] == pytest.approx(2 / 6)
    assert first["disagreement"] == pytest.approx(4 / 6)  # 4 of 6 ordered pairs are 0-vs-3, weight 1
    assert first["spread"] == 3 and first["n[1]"] == 0


def test_disagreements_nominal_ties_broken_by_spread():
    table = pd.DataFrame(
        {"item": ["a", "a", "b", "b", "c", "c"], "rater": ["r1", "r2"] * 3, "label": [2, 3, 0, 3, 1, 1]}
    )
    nominal = disagreements(table, labels=[0, 1, 2, 3])
    assert nominal["item"].tolist() == ["b", "a"]  # both 1 − P_i = 1; spread 3 before spread 1
    linear = disagreements(table, labels=[0, 1, 2, 3], weights="linear")
    assert linear["disagreement"].tolist() == pytest.approx([1.0, 1 / 3])


def test_disagreements_weighted_order_differs_from_nominal():
    """x = (1, 2) disagrees fully but by one grade; y = (0, 0, 0, 3) half its pairs, by three grades."""
    table = pd.DataFrame(
        {
            "item": ["x", "x", "y", "y", "y", "y"],
            "rater": ["r1", "r2", "r1", "r2", "r3", "r4"],
            "label": [1, 2, 0, 0, 0, 3],
        }
    )
    assert disagreements(table, labels=[0, 1, 2, 3])["item"].tolist() == ["x", "y"]
    linear = disagreements(table, labels=[0, 1, 2, 3], weights="linear")
    assert linear["item"].tolist() == ["y", "x"]
    assert linear["disagreement"].tolist() == pytest.approx([0.5, 1 / 3])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_group_agreement_matches_per_group_alpha(seed, level):
    table = long_labels(seed)
    groups = group_agreement(table, group="query", labels=[0, 1, 2, 3], level=level)
    for _, row in groups.iterrows():
        subset = table[table["query"] == row["query"]]
        assert row["alpha"] == pytest.approx(krippendorff_alpha(wide(subset), level=level), abs=TIGHT)
        assert row["agreement"] == pytest.approx(percent_agreement(wide(subset)), abs=1e-12)
        assert row["n_items"] == subset["item"].nunique() and row["n_ratings"] == len(subset)


def test_group_agreement_warns_for_undefined_groups():
    table = pd.DataFrame(
        {
            "query": ["q1"] * 4 + ["q2"] * 2,
            "item": [1, 1, 2, 2, 3, 3],
            "rater": list("ababab"),
            "label": [0, 1, 1, 1, 2, 2],
        }
    )
    with pytest.warns(UndefinedMetricWarning, match=r"^krippendorff_alpha for 1 group is undefined"):
        groups = group_agreement(table, group="query")
    assert math.isnan(groups.loc[groups["query"] == "q2", "alpha"].item())


@pytest.mark.parametrize("seed", SEEDS)
def test_summary_matches_the_single_functions(seed):
    table = long_labels(seed)
    ratings = wide(table)
    summary = agreement_summary(table, labels=[0, 1, 2, 3], level="ordinal", weights="quadratic")
    pairs = pairwise_kappa(table, labels=[0, 1, 2, 3], weights="quadratic").to_long()
    assert summary["n_items"] == 120 and summary["n_raters"] == 6 and summary["n_ratings"] == 360
    assert summary["percent_agreement"] == pytest.approx(percent_agreement(ratings), abs=1e-12)
    assert summary["krippendorff_alpha"] == pytest.approx(
        krippendorff_alpha(ratings, level="ordinal"), abs=TIGHT
    )
    assert summary["fleiss_kappa"] == pytest.approx(fleiss_kappa(ratings), abs=TIGHT)
    assert summary["gwet_ac1"] == pytest.approx(gwet_ac1(ratings, labels=[0, 1, 2, 3]), abs=TIGHT)
    assert summary["mean_pairwise_kappa"] == pytest.approx(pairs["kappa"].mean(), abs=TIGHT)


def test_summary_without_fleiss_when_raters_per_item_vary():
    table = pd.DataFrame({"item": [1, 1, 2, 2, 2], "rater": list("ababc"), "label": [0, 1, 1, 1, 0]})
    summary = agreement_summary(table)
    assert summary["fleiss_kappa"] is None and summary["gwet_ac1"] is None


def test_missing_labels_in_long_table_are_not_ratings():
    table = pd.DataFrame({"item": [1, 1, 2, 2], "rater": list("abab"), "label": [0, 1, 1, None]})
    items = item_agreement(table)
    assert items["n_ratings"].tolist() == [2, 1]


SMALL = pd.DataFrame(
    {
        "query": ["q1", "q1", "q1", "q2", "q2"],
        "item": ["q1/d1", "q1/d1", "q1/d2", "q2/d3", "q2/d3"],
        "rater": ["ann", "bob", "ann", "ann", "bob"],
        "label": [0, 3, 2, 1, 1],
    }
)


@pytest.mark.parametrize(
    ("compute", "message"),
    [
        (
            lambda t: pairwise_kappa(t.rename(columns={"rater": "annotator"})),
            "table has no column 'rater'; its columns are ['query', 'item', 'annotator', 'label']",
        ),
        (
            lambda t: pairwise_kappa(t.to_dict()),
            "table must be a DataFrame with columns ['item', 'rater', 'label']; got dict",
        ),
        (
            lambda t: item_agreement(pd.concat([t, t.iloc[[0]]])),
            "table has 1 repeated (item, rater) row, e.g. item 'q1/d1' by rater 'ann'; "
            "keep one label per rater and item",
        ),
        (
            lambda t: item_agreement(t.assign(query=["q9", "q1", "q1", "q2", "q2"]), group="query"),
            "column 'query' must hold one value per item; item 'q1/d1' has 'q1' and 'q9'",
        ),
        (
            lambda t: item_agreement(t, labels=[0, 1, 2]),
            "column 'label' has a rating outside labels: 3 is not one of [0, 1, 2]",
        ),
        (
            lambda t: pairwise_kappa(t, weights="linear"),
            "weights='linear' needs labels, the declared rating scale (e.g. labels=[0, 1, 2, 3]); "
            "got labels=None",
        ),
        (
            lambda t: group_agreement(t, group="query", level="ranked"),
            "level must be 'nominal', 'ordinal', 'interval' or 'ratio'; got 'ranked'",
        ),
        (
            lambda t: agreement_summary(t.drop_duplicates("item")),
            "agreement_summary needs at least one item rated by two or more raters; got none",
        ),
        (
            lambda t: item_agreement(t.assign(rater=[None, "bob", "ann", "ann", "bob"])),
            "column 'rater' has a missing value at row 0",
        ),
        (lambda t: item_agreement(t, cutoff="2"), "cutoff must be a number; got '2'"),
        (
            lambda t: item_agreement(t.assign(label=["no", "yes", "no", "no", "no"]), cutoff=1),
            "binarize needs numeric ratings; got 'no'",
        ),
    ],
)
def test_long_table_errors(compute, message):
    with pytest.raises(QrelForgeError, match=f"^{re.escape(message)}$"):
        compute(SMALL)


def test_docstring_examples():
    assert doctest.testmod(agreement, raise_on_error=False).failed == 0


def test_kappa_result_is_exported_type():
    assert isinstance(cohen_kappa([0, 1], [0, 1]), KappaResult)
