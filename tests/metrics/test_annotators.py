"""Per-annotator quality: hand-worked tables for gold accuracy, time, leniency and drift; the Wilson interval
against statsmodels and kappa against gold against scikit-learn; the simulated team's careless, lenient and
speeding raters found; bad input named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from crowd_simulation import CAREFUL, CARELESS, GRADES, LENIENT, SPEEDER, simulate_team
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from metrics.agreement import behaviour_rates, drift, gold_scores, leniency, time_scores
from metrics.errors import QrelForgeError, UndefinedMetricWarning

SCALE = [0, 1, 2, 3]

# ------------------------------------------------------------------------------------------------------ gold

# a is always right; b is one grade high on two of four gold items; c is three grades off on one of two;
# d labelled no gold item. x1 is not gold.
GOLD = {"g1": 0, "g2": 1, "g3": 2, "g4": 3}
GOLD_TABLE = pd.DataFrame(
    [
        ("g1", "a", 0), ("g2", "a", 1), ("g3", "a", 2), ("g4", "a", 3), ("x1", "a", 2),
        ("g1", "b", 1), ("g2", "b", 1), ("g3", "b", 3), ("g4", "b", 3),
        ("g1", "c", 3), ("g2", "c", 1), ("x1", "c", 0),
        ("x1", "d", 1),
    ],
    columns=["item", "rater", "label"],
)  # fmt: skip


@pytest.mark.parametrize(
    ("rater", "n_gold", "exact", "within_one"),
    [("a", 4, 1.0, 1.0), ("b", 4, 0.5, 1.0), ("c", 2, 0.5, 0.5)],
)
def test_gold_accuracy_by_hand(rater, n_gold, exact, within_one):
    scores = gold_scores(GOLD_TABLE, GOLD, labels=SCALE).scores
    assert list(scores.index) == ["a", "b", "c"]  # d labelled no gold item
    row = scores.loc[rater]
    assert (row["n_gold"], row["exact"], row["within_one"]) == (n_gold, exact, within_one)


@pytest.mark.parametrize(
    ("weights", "kappas"),
    [
        # b: observed disagreement 1/6, expected 5/12 (linear); 1/18 and 5/18 (quadratic); 1/2 and 3/4.
        # c: observed 1/2 = expected 1/2 (linear), so 0.
        ("linear", {"a": 1.0, "b": 0.6, "c": 0.0}),
        ("quadratic", {"a": 1.0, "b": 0.8}),
        (None, {"a": 1.0, "b": 1 / 3}),
    ],
)
def test_kappa_against_gold_by_hand_and_against_sklearn(weights, kappas):
    scores = gold_scores(GOLD_TABLE, GOLD, labels=SCALE, weights=weights).scores
    for rater, kappa in kappas.items():
        assert scores.loc[rater, "kappa"] == pytest.approx(kappa, abs=1e-12)
        rows = GOLD_TABLE[(GOLD_TABLE["rater"] == rater) & GOLD_TABLE["item"].isin(GOLD)]
        expected = rows["item"].map(GOLD)
        theirs = cohen_kappa_score(expected, rows["label"], labels=SCALE, weights=weights)
        assert scores.loc[rater, "kappa"] == pytest.approx(theirs, abs=1e-12)


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99])
def test_wilson_intervals_match_statsmodels(confidence):
    scores = gold_scores(GOLD_TABLE, GOLD, labels=SCALE, confidence=confidence).scores
    for name in ("exact", "within_one"):
        hits = (scores[name] * scores["n_gold"]).round().astype(int)
        low, high = proportion_confint(hits, scores["n_gold"], alpha=1 - confidence, method="wilson")
        np.testing.assert_allclose(scores[f"{name}_low"], low, atol=1e-12)
        np.testing.assert_allclose(scores[f"{name}_high"], high, atol=1e-12)


def test_wilson_interval_by_hand():
    """b: 2 of 4 exact; center (2 + z²/2) / (4 + z²) = 0.5, half-width z √(1 + z²/4) / (4 + z²) = 0.34997."""
    row = gold_scores(GOLD_TABLE, GOLD, labels=SCALE).scores.loc["b"]
    assert (round(row["exact_low"], 4), round(row["exact_high"], 4)) == (0.1500, 0.8500)


def test_kappa_against_gold_undefined_warns():
    table = pd.DataFrame({"item": ["g1", "g2"], "rater": "a", "label": [1, 1]})
    with pytest.warns(UndefinedMetricWarning, match="kappa against gold for 1 rater"):
        scores = gold_scores(table, {"g1": 1, "g2": 1}, labels=SCALE).scores
    assert np.isnan(scores.loc["a", "kappa"]) and scores.loc["a", "exact"] == 1.0


@pytest.mark.parametrize(
    ("gold", "options", "message"),
    [
        ({"g1": 7}, {}, "gold grade 7 of item 'g1' is not one of [0, 1, 2, 3]"),
        ([0, 1], {}, "gold must map item to expected grade (a dict or Series); got list"),
        (GOLD, {"confidence": 1.0}, "confidence must be a number strictly between 0 and 1; got 1.0"),
        (GOLD, {"weights": "cubic"}, "weights must be None, 'linear' or 'quadratic'; got 'cubic'"),
    ],
)
def test_gold_bad_input(gold, options, message):
    with pytest.raises(QrelForgeError) as caught:
        gold_scores(GOLD_TABLE, gold, labels=SCALE, **options)
    assert message in str(caught.value)


def test_gold_series_with_missing_grades_is_a_mapping():
    gold = pd.Series({"g1": 0, "g2": 1, "g3": 2, "g4": 3, "x1": None})
    scores = gold_scores(GOLD_TABLE, gold, labels=SCALE).scores
    assert scores.loc["a", "n_gold"] == 4


# ------------------------------------------------------------------------------------------------------ time


@pytest.mark.parametrize(
    ("seconds", "floor", "median", "share"),
    [
        ([10, 20, 30, 2], 5, 15.0, 0.25),
        ([5, 5, 6], 5, 5.0, 0.0),  # exactly the floor is not too fast
        ([1, None, 3], 5, 2.0, 1.0),  # a missing time is left out
        ([4.5, 6.5], 5.5, 5.5, 0.5),
    ],
)
def test_time_scores_by_hand(seconds, floor, median, share):
    table = pd.DataFrame({"rater": "a", "seconds": seconds})
    row = time_scores(table, floor=floor).scores.loc["a"]
    assert (row["median_seconds"], row["speeder_share"]) == (median, share)
    assert row["n_labels"] == len(seconds) and row["n_timed"] == sum(s is not None for s in seconds)


@pytest.mark.parametrize(
    ("seconds", "floor", "message"),
    [
        ([1, -2], 5, "column 'seconds' must hold seconds >= 0; got -2 at row 1"),
        (["1", "soon"], 5, "column 'seconds' must hold seconds >= 0; got 'soon' at row 1"),
        ([1, float("inf")], 5, "column 'seconds' must hold seconds >= 0; got inf at row 1"),
        ([1], 0, "floor must be a number of seconds > 0; got 0"),
        ([1], True, "floor must be a number of seconds > 0; got True"),
    ],
)
def test_time_bad_input(seconds, floor, message):
    with pytest.raises(QrelForgeError) as caught:
        time_scores(pd.DataFrame({"rater": "a", "seconds": seconds}), floor=floor)
    assert message in str(caught.value)


# -------------------------------------------------------------------------------------------------- leniency

# item 1: a 2, b 1; item 2: a 3, b 3; item 3: a 1, b 0, c 0; item 4: only d.
LENIENCY_TABLE = pd.DataFrame(
    {"item": [1, 1, 2, 2, 3, 3, 3, 4], "rater": list("abababcd"), "label": [2, 1, 3, 3, 1, 0, 0, 3]}
)


@pytest.mark.parametrize(
    ("rater", "n_compared", "value", "mean_grade"),
    [
        ("a", 3, (1 + 0 + 1) / 3, 2.0),  # 2 − 1, 3 − 3, 1 − mean(0, 0)
        ("b", 3, (-1 + 0 - 0.5) / 3, 4 / 3),  # 1 − 2, 3 − 3, 0 − mean(1, 0)
        ("c", 1, -0.5, 0.0),  # 0 − mean(1, 0)
        ("d", 0, np.nan, 3.0),  # nobody else labelled item 4
    ],
)
def test_leniency_by_hand(rater, n_compared, value, mean_grade):
    result = leniency(LENIENCY_TABLE, labels=SCALE)
    row = result.scores.loc[rater]
    assert row["n_compared"] == n_compared and row["mean_grade"] == pytest.approx(mean_grade)
    assert row["leniency"] == pytest.approx(value, nan_ok=True)
    assert row["team_mean_grade"] == pytest.approx(13 / 8)


def test_leniency_distributions():
    result = leniency(LENIENCY_TABLE, labels=SCALE)
    assert result.distribution.loc["a"].tolist() == [0.0, 1 / 3, 1 / 3, 1 / 3]
    assert result.team.tolist() == [2 / 8, 2 / 8, 1 / 8, 3 / 8]
    np.testing.assert_allclose(result.distribution.sum(axis=1), 1.0)


def test_leniency_of_an_empty_table_is_empty():
    result = leniency(LENIENCY_TABLE.iloc[:0], labels=SCALE)
    assert result.scores.empty and result.team.tolist() == [0.0] * 4


def test_leniency_is_on_scale_positions():
    """A scale of strings: positions, not values, so 'high' is one grade above 'mid'."""
    table = pd.DataFrame({"item": [1, 1], "rater": ["a", "b"], "label": ["high", "mid"]})
    scores = leniency(table, labels=["low", "mid", "high"]).scores
    assert scores["leniency"].tolist() == [1.0, -1.0]


# ----------------------------------------------------------------------------------------------------- drift

# a agrees with b on items 1 and 2, then not on 3 and 4; rows shuffled: order comes from "at".
DRIFT_TABLE = pd.DataFrame(
    {
        "item": [1, 2, 3, 4, 1, 2, 3, 4],
        "rater": list("aaaabbbb"),
        "label": [1, 1, 0, 0, 1, 1, 1, 1],
        "at": [10, 20, 30, 40, 11, 21, 31, 41],
    }
).iloc[[5, 2, 7, 0, 3, 6, 1, 4]]


def test_drift_windows_by_hand():
    result = drift(DRIFT_TABLE, window=2, gold={1: 1, 2: 1, 3: 1, 4: 1}, labels=[0, 1])
    a = result.windows[result.windows["rater"] == "a"]
    assert a[["window", "first", "last", "n_labels"]].values.tolist() == [[0, 10, 20, 2], [1, 30, 40, 2]]
    assert a["agreement"].tolist() == [1.0, 0.0] and a["gold_accuracy"].tolist() == [1.0, 0.0]
    assert result.change.loc["a"].tolist() == [-1.0, -1.0]
    assert result.change.loc["b"].tolist() == [-1.0, 0.0]  # b agrees with a less, but stays right on gold


@pytest.mark.parametrize("window", [3, 10])
def test_drift_needs_two_full_windows_for_a_change(window):
    """With 3, each rater has a full window and a short one of 1 label; with 10, one short window."""
    result = drift(DRIFT_TABLE, window=window, labels=[0, 1])
    expected = [3, 1] if window == 3 else [4]
    assert result.windows.groupby("rater")["n_labels"].apply(list).to_dict() == {"a": expected, "b": expected}
    assert result.windows["gold_accuracy"].isna().all() and (result.windows["n_gold"] == 0).all()
    assert list(result.change.index) == ["a", "b"] and result.change.isna().all().all()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"window": 0}, "window must be an int >= 1; got 0"),
        ({"window": 2, "order": "when"}, "table has no column 'when'"),
    ],
)
def test_drift_bad_input(options, message):
    with pytest.raises(QrelForgeError) as caught:
        drift(DRIFT_TABLE, labels=[0, 1], **options)
    assert message in str(caught.value)


def test_drift_missing_order_is_named():
    table = DRIFT_TABLE.astype({"at": float})
    table.loc[table.index[0], "at"] = np.nan
    with pytest.raises(QrelForgeError, match="column 'at' has a missing value at row 5"):
        drift(table, window=2, labels=[0, 1])


# -------------------------------------------------------------------------------------- the simulated team


@pytest.fixture(scope="module")
def team() -> pd.DataFrame:
    return simulate_team(seed=5)


def test_gold_finds_the_careless_and_the_lenient(team):
    truth = team.groupby("item")["truth"].first()
    gold = truth.iloc[::5]  # every fifth item is gold
    scores = gold_scores(team, gold, labels=GRADES).scores
    assert scores["exact"].idxmin() == CARELESS
    assert scores.loc[CAREFUL, "exact"].min() > scores.loc[LENIENT, "exact"] > scores.loc[CARELESS, "exact"]
    assert scores.loc[LENIENT, "within_one"] > 0.9 > scores.loc[CARELESS, "within_one"]  # near misses
    assert (scores["exact_low"] < scores["exact"]).all() and (scores["exact"] < scores["exact_high"]).all()


def test_time_finds_the_speeder(team):
    scores = time_scores(team, floor=5.0).scores
    assert scores["median_seconds"].idxmin() == SPEEDER and scores.loc[SPEEDER, "speeder_share"] == 1.0
    assert scores.drop(SPEEDER)["speeder_share"].max() < 0.01


def test_leniency_finds_the_lenient(team):
    result = leniency(team, labels=GRADES)
    assert result.scores.loc[LENIENT, "leniency"] > 0.3 > result.scores.loc[CAREFUL, "leniency"].max()
    assert result.distribution[0].idxmin() == LENIENT  # the lenient rater hardly gives a 0


def test_drift_finds_a_rater_who_turns_careless(team):
    worse = team.copy()
    late = (worse["rater"] == CAREFUL[0]) & (
        worse["at"] >= worse["at"][worse["rater"] == CAREFUL[0]].median()
    )
    worse.loc[late, "label"] = np.random.default_rng(0).choice(GRADES, size=int(late.sum()))
    gold = worse.groupby("item")["truth"].first().iloc[::2]
    half = int((worse["rater"] == CAREFUL[0]).sum()) // 2
    change = drift(worse, window=half, gold=gold, labels=GRADES).change
    assert change.loc[CAREFUL[0], "agreement"] < -0.2 and change.loc[CAREFUL[0], "gold_accuracy"] < -0.3
    assert change.drop(CAREFUL[0]).abs().max().max() < 0.15


@pytest.mark.parametrize(
    "call",
    [
        lambda: gold_scores(GOLD_TABLE, GOLD, labels=None),
        lambda: leniency(LENIENCY_TABLE, labels=None),
        lambda: drift(DRIFT_TABLE, window=2, labels=None),
    ],
)
def test_grade_distances_need_the_declared_scale(call):
    with pytest.raises(
        QrelForgeError, match=r"labels must be the grade scale in order, e.g. \[0, 1, 2, 3\]; got None"
    ):
        call()


# ------------------------------------------------------------------------------------------------- behaviour

# (unsure flags, versions, skips) of one rater -> (unsure_share, skip_rate, edit_rate)
BEHAVIOUR = [
    ([0, 0, 0, 0], [1, 1, 1, 1], 0, (0.0, 0.0, 0.0)),
    ([1, 0, 0, 1], [1, 2, 1, 1], 0, (0.5, 0.0, 0.25)),
    ([True, True], [3, 2], 2, (1.0, 0.5, 1.0)),  # bool flags; any version above 1 is an edit
    ([0], [1], 3, (0.0, 0.75, 0.0)),
    ([], [], 4, (np.nan, 1.0, np.nan)),  # skipped only: no label to take a share of
]


@pytest.mark.parametrize(("unsure", "version", "skips", "expected"), BEHAVIOUR)
def test_behaviour_rates_by_hand(unsure, version, skips, expected):
    table = pd.DataFrame({"rater": ["a"] * len(unsure), "unsure": unsure, "version": version})
    row = behaviour_rates(table, skips={"a": skips} if skips else None).scores.loc["a"]
    got = (row["unsure_share"], row["skip_rate"], row["edit_rate"])
    np.testing.assert_equal(got, expected)
    assert (row["n_labels"], row["n_skips"]) == (len(unsure), skips)


def test_behaviour_rates_of_several_raters_are_their_own():
    table = pd.DataFrame({"rater": ["b", "a", "b", "a"], "unsure": [1, 0, 0, 0], "version": [1, 1, 2, 1]})
    scores = behaviour_rates(table, skips=pd.Series({"b": 2, "z": 1})).scores
    assert scores.index.tolist() == ["a", "b", "z"]
    assert scores["unsure_share"].tolist()[:2] == [0.0, 0.5]
    assert scores["skip_rate"].tolist() == [0.0, 0.5, 1.0]
    assert scores["edit_rate"].tolist()[:2] == [0.0, 0.5]


@pytest.mark.parametrize(
    ("unsure", "version", "skips", "message"),
    [
        ([2], [1], None, "column 'unsure' must hold true/false (or 0/1); got 2 at row 0"),
        (["yes"], [1], None, "column 'unsure' must hold true/false (or 0/1); got 'yes' at row 0"),
        ([0], [0], None, "column 'version' must hold label versions (integers >= 1); got 0 at row 0"),
        ([0], [1.5], None, "column 'version' must hold label versions (integers >= 1); got 1.5 at row 0"),
        ([0], [1], {"a": -1}, "skips must be counts >= 0; got -1 for rater 'a'"),
        ([0], [1], {"a": 1.0}, "skips must be counts >= 0; got 1.0 for rater 'a'"),
        ([0], [1], [("a", 1)], "skips must be a mapping rater -> count; got list"),
    ],
)
def test_behaviour_bad_input(unsure, version, skips, message):
    with pytest.raises(QrelForgeError) as caught:
        behaviour_rates(pd.DataFrame({"rater": "a", "unsure": unsure, "version": version}), skips=skips)
    assert message in str(caught.value)
