"""Judge calibration (metrics.stats.calibration): a hand-computed case, cross-checks against scikit-learn,
krippendorff and scipy, the stuffing probe, and every validation error by its exact message."""

from __future__ import annotations

import doctest
import math
import re
import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

import metrics.stats.calibration as calibration
from metrics import evaluate
from metrics.errors import QrelForgeError, UndefinedMetricWarning
from metrics.stats.calibration import (
    AgreementMode,
    calibrate_judges,
    ranking_agreement,
    ranking_agreement_from_qrels,
)
from metrics.stats.probe import probe_summary, stuff_query_terms

SCALE = [0, 1, 2, 3]
TIGHT = 1e-12

# ------------------------------------------------------------------------------------- the hand-made case
#
# pair  query  a  b  J   (a, b: human annotators; J: the judge; "-": no label)
# i1    q1     0  0  1
# i2    q1     1  2  2
# i3    q1     3  3  3
# i4    q2     2  -  3
# i5    q2     -  1  1
# i6    q2     0  1  0
# i7    q3     2  -  -   (no judge label: ignored)
# i8    q3     -  -  2   (no human label: not shared)
#
# Shared pairs i1..i6: n_pairs = 6; couples (human, judge), one per human label on a shared pair:
#   a: (0,1) (1,2) (3,3) (2,3) (0,0)      b: (0,1) (2,2) (3,3) (1,1) (1,0)      n_labels = 10
HUMAN = pd.DataFrame(
    [
        ("i1", "q1", "a", 0),
        ("i1", "q1", "b", 0),
        ("i2", "q1", "a", 1),
        ("i2", "q1", "b", 2),
        ("i3", "q1", "a", 3),
        ("i3", "q1", "b", 3),
        ("i4", "q2", "a", 2),
        ("i5", "q2", "b", 1),
        ("i6", "q2", "a", 0),
        ("i6", "q2", "b", 1),
        ("i7", "q3", "a", 2),
    ],
    columns=["item", "query", "annotator", "grade"],
)
JUDGE = pd.DataFrame(
    [("i1", "q1", 1), ("i2", "q1", 2), ("i3", "q1", 3), ("i4", "q2", 3), ("i5", "q2", 1), ("i6", "q2", 0)]
    + [("i8", "q3", 2)],
    columns=["item", "query", "grade"],
).assign(judge="J")[["item", "query", "judge", "grade"]]

# Leniency: judge − human over the 10 couples: a: 1 1 0 1 0, b: 1 0 0 0 −1 → 3 / 10.
LENIENCY = 0.3
# Per human grade: 0: (1, 0, 1) → 2/3; 1: (1, 0, −1) → 0; 2: (1, 0) → 0.5; 3: (0, 0) → 0.
LENIENCY_BY_GRADE = [2 / 3, 0.0, 0.5, 0.0]
# Confusion, rows human grade, columns judge grade.
CONFUSION = [[1, 2, 0, 0], [1, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 2]]
# BINARY at cutoff 2. a vs J on i1 i2 i3 i4 i6: a = 0 0 1 1 0, J = 0 1 1 1 0: p_o = 4/5,
#   p_e = 3/5·2/5 + 2/5·3/5 = 0.48, κ = 0.32/0.52 = 8/13.  b vs J: identical (0 1 1 0 0): κ = 1.
KAPPA_BINARY = (8 / 13 + 1) / 2
# GRADED (nominal). a vs J: p_o = 2/5, marginals a (2,1,1,1), J (1,1,1,2): p_e = 6/25, κ = 0.16/0.76 = 4/19.
#   b vs J: p_o = 3/5, marginals (1,2,1,1) both: p_e = 7/25, κ = 0.32/0.72 = 4/9.
KAPPA_GRADED = (4 / 19 + 4 / 9) / 2
# Linear weights |i − j|/3. a vs J: D_o = 3/15, D_e = Σ n_i m_j |i − j| / (25·3) = 35/75: κ_w = 1 − 3/7 = 4/7.
#   b vs J: D_o = 2/15, D_e = 28/75: κ_w = 1 − 10/28 = 9/14.
WEIGHTED_KAPPA = (4 / 7 + 9 / 14) / 2
# Per query: q1 has i1 i2 i3 (6 couples, 3 equal, differences sum 3); q2 has i4 i5 i6 (4 couples, 2 equal,
# differences sum 0); q3 has no shared pair.
PER_QUERY = pd.DataFrame(
    {
        "query": ["q1", "q2"],
        "n_pairs": [3, 3],
        "n_labels": [6, 4],
        "exact_agreement": [0.5, 0.5],
        "mean_difference": [0.5, 0.0],
    }
)
# Ordinal alpha units = the shared pairs i1..i6, raters a, b, J (raters × units, NaN = no label).
ALPHA_UNITS = [
    [0, 1, 3, 2, np.nan, 0],
    [0, 2, 3, np.nan, 1, 1],
    [1, 2, 3, 3, 1, 0],
]


def calibrate(mode="binary", **options):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedMetricWarning)
        return calibrate_judges(HUMAN, JUDGE, labels=SCALE, mode=mode, cutoff=2, **options)["J"]


def test_hand_case_binary():
    cal = calibrate()
    assert (cal.judge, cal.mode, cal.cutoff, cal.n_pairs, cal.n_labels) == (
        "J",
        AgreementMode.BINARY,
        2,
        6,
        10,
    )
    assert cal.kappa == pytest.approx(KAPPA_BINARY, abs=TIGHT)
    assert cal.weighted_kappa == pytest.approx(WEIGHTED_KAPPA, abs=TIGHT)
    assert cal.leniency == pytest.approx(LENIENCY, abs=TIGHT)
    np.testing.assert_allclose(cal.leniency_by_grade.to_numpy(), LENIENCY_BY_GRADE, atol=TIGHT)
    assert list(cal.leniency_by_grade.index) == SCALE
    np.testing.assert_array_equal(cal.confusion.to_numpy(), CONFUSION)
    assert (cal.confusion.index.name, cal.confusion.columns.name) == ("human", "judge")
    pd.testing.assert_frame_equal(cal.per_query, PER_QUERY, check_dtype=False)
    expected_alpha = krippendorff.alpha(
        reliability_data=ALPHA_UNITS, level_of_measurement="ordinal", value_domain=SCALE
    )
    assert cal.alpha_ordinal == pytest.approx(expected_alpha, abs=TIGHT)


def test_hand_case_graded_changes_only_kappa():
    binary, graded = calibrate("binary"), calibrate(AgreementMode.GRADED)
    assert graded.mode is AgreementMode.GRADED
    assert graded.kappa == pytest.approx(KAPPA_GRADED, abs=TIGHT)
    assert graded.weighted_kappa == binary.weighted_kappa
    assert graded.alpha_ordinal == binary.alpha_ordinal


def test_hand_case_per_annotator():
    table = calibrate().per_annotator
    assert list(table["annotator"]) == ["a", "b"]
    assert list(table["n_pairs"]) == [5, 5]
    np.testing.assert_allclose(table["kappa"], [8 / 13, 1.0], atol=TIGHT)
    np.testing.assert_allclose(table["weighted_kappa"], [4 / 7, 9 / 14], atol=TIGHT)


def test_sequences_and_column_names():
    rows = [tuple(r) for r in HUMAN.itertuples(index=False)]
    judged = [dict(zip(["pair", "qid", "model", "label"], r, strict=True)) for r in JUDGE.to_numpy()]
    mappings = [dict(zip(["pair", "qid", "who", "label"], r, strict=True)) for r in HUMAN.to_numpy()]
    names = {"item": "pair", "query": "qid", "annotator": "who", "judge": "model", "grade": "label"}
    cal = calibrate_judges(rows, JUDGE, labels=SCALE, cutoff=2)["J"]
    named = calibrate_judges(mappings, judged, labels=SCALE, cutoff=2, **names)["J"]
    assert cal.kappa == named.kappa == pytest.approx(KAPPA_BINARY, abs=TIGHT)
    assert list(named.per_query["qid"]) == ["q1", "q2"]


def random_labels(seed: int):
    """3 annotators label ~70% of 60 pairs; judges J1 (lenient) and J2 (noisy) label 50 of them."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, size=60)
    items = [f"d{i}" for i in range(60)]
    queries = [f"q{i % 7}" for i in range(60)]
    rows = []
    for who in ["ann", "bob", "cat"]:
        for i in np.flatnonzero(rng.random(60) < 0.7):
            grade = truth[i] if rng.random() < 0.7 else rng.integers(0, 4)
            rows.append((items[i], queries[i], who, int(grade)))
    judged = []
    for i in range(50):
        judged.append((items[i], queries[i], "J1", int(min(truth[i] + (rng.random() < 0.4), 3))))
        judged.append(
            (items[i], queries[i], "J2", int(truth[i] if rng.random() < 0.5 else rng.integers(0, 4)))
        )
    columns = ["item", "query", "annotator", "grade"]
    return pd.DataFrame(rows, columns=columns), pd.DataFrame(judged, columns=columns[:2] + ["judge", "grade"])


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("mode", list(AgreementMode))
def test_matches_sklearn_and_krippendorff(seed, mode):
    human, judges = random_labels(seed)
    results = calibrate_judges(human, judges, labels=SCALE, mode=mode, cutoff=2)
    assert list(results) == ["J1", "J2"]
    for name, cal in results.items():
        mine = judges[judges["judge"] == name][["item", "grade"]].rename(columns={"grade": "judge"})
        couples = human.merge(mine, on="item")
        plain, weighted = [], []
        for _, part in couples.groupby("annotator"):
            h, j = part["grade"].to_numpy(), part["judge"].to_numpy()
            if mode is AgreementMode.BINARY:
                plain.append(cohen_kappa_score(h >= 2, j >= 2))
            else:
                plain.append(cohen_kappa_score(h, j, labels=SCALE))
            weighted.append(cohen_kappa_score(h, j, labels=SCALE, weights="linear"))
        assert cal.kappa == pytest.approx(np.mean(plain), abs=1e-9)
        assert cal.weighted_kappa == pytest.approx(np.mean(weighted), abs=1e-9)
        units = couples["item"].unique()
        table = human[human["item"].isin(units)].pivot(index="annotator", columns="item", values="grade")
        table.loc["judge"] = mine.set_index("item")["judge"]
        expected = krippendorff.alpha(
            reliability_data=table[units].to_numpy(dtype=float),
            level_of_measurement="ordinal",
            value_domain=SCALE,
        )
        assert cal.alpha_ordinal == pytest.approx(expected, abs=1e-9)
        assert cal.n_pairs == len(units) and cal.n_labels == len(couples)
        assert cal.confusion.to_numpy().sum() == len(couples)
        assert cal.leniency == pytest.approx((couples["judge"] - couples["grade"]).mean(), abs=1e-12)


def test_judge_sharing_no_pair_is_nan_with_warnings():
    lonely = pd.DataFrame([("i8", "q3", "K", 2)], columns=["item", "query", "judge", "grade"])
    with pytest.warns(UndefinedMetricWarning) as caught:
        cal = calibrate_judges(HUMAN, pd.concat([JUDGE, lonely]), labels=SCALE)["K"]
    assert cal.n_pairs == 0 and cal.n_labels == 0
    assert all(math.isnan(x) for x in (cal.kappa, cal.weighted_kappa, cal.alpha_ordinal, cal.leniency))
    assert cal.confusion.to_numpy().sum() == 0 and len(cal.per_query) == 0
    messages = [str(w.message) for w in caught]
    assert "kappa of judge 'K' is undefined" in " ".join(messages)
    assert "leniency of judge 'K' is undefined: it shares no pair with a human; returning NaN" in messages


def test_one_category_kappa_is_nan_not_one():
    human = pd.DataFrame([("i1", "q", "a", 3), ("i2", "q", "a", 3)], columns=HUMAN.columns)
    judge = pd.DataFrame([("i1", "q", "J", 3), ("i2", "q", "J", 3)], columns=JUDGE.columns)
    with pytest.warns(UndefinedMetricWarning) as caught:
        cal = calibrate_judges(human, judge, labels=SCALE)["J"]
    messages = " | ".join(str(w.message) for w in caught)
    assert "Cohen's kappa between judge 'J' and 1 annotator is undefined" in messages
    assert "alpha_ordinal of judge 'J' is undefined: one grade only on the shared pairs" in messages
    assert "leniency_by_grade of judge 'J' is undefined for human grade(s) [0, 1, 2]" in messages
    assert math.isnan(cal.kappa) and math.isnan(cal.weighted_kappa) and math.isnan(cal.alpha_ordinal)
    assert cal.leniency == 0.0 and cal.per_query["exact_agreement"].tolist() == [1.0]


def test_unused_human_grade_leniency_is_nan_with_warning():
    human = HUMAN[HUMAN["grade"] != 3]
    with pytest.warns(UndefinedMetricWarning, match=re.escape("for human grade(s) [3]")):
        cal = calibrate_judges(human, JUDGE, labels=SCALE, cutoff=2)["J"]
    assert math.isnan(cal.leniency_by_grade.loc[3]) and cal.leniency_by_grade.loc[0] == pytest.approx(2 / 3)


COLUMNS = ["item", "query", "annotator", "grade"]
CUTOFF = "cutoff must be a number above the lowest grade and at most the highest (0 < cutoff <= 3); got "


def human_with(*rows):
    return pd.concat([HUMAN, pd.DataFrame(list(rows), columns=COLUMNS)], ignore_index=True)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"labels": "0123"}, "labels must be a sequence of grades such as [0, 1, 2, 3]; got '0123'"),
        ({"labels": [1]}, "labels must be at least two numbers such as [0, 1, 2, 3]; got [1]"),
        ({"labels": [0, "1"]}, "labels must be at least two numbers such as [0, 1, 2, 3]; got [0, '1']"),
        ({"labels": [0, 2, 1]}, "labels must be distinct and in increasing order; got [0, 2, 1]"),
        ({"mode": "weighted"}, "mode must be 'binary' or 'graded'; got 'weighted'"),
        (
            {"cutoff": 0},
            CUTOFF + "0",
        ),
        (
            {"cutoff": True},
            CUTOFF + "True",
        ),
        (
            {"human": "labels.csv"},
            "human must be a DataFrame or a sequence of rows (item, query, annotator, ",
        ),
        (
            {"human": [("i1", "q1", 0)]},
            "human rows must be (item, query, annotator, grade); got ('i1', 'q1', 0)",
        ),
        ({"judges": JUDGE.drop(columns="judge")}, "judges has no column 'judge'; its columns are ['item', "),
        (
            {"human": human_with(("i9", "q1", "a", 4))},
            "human has a grade outside labels: 4 is not one of [0, 1, ",
        ),
        (
            {"human": human_with(("i9", "q1", "a", "2"))},
            "human has a grade outside labels: '2' is not one of ",
        ),
        (
            {"human": human_with(("i9", None, "a", 2))},
            "human row 11 has a missing value: {'item': 'i9', 'query'",
        ),
        ({"human": human_with(("i1", "q1", "a", 2))}, "human labels item 'i1' twice by annotator 'a'"),
        (
            {"human": human_with(("i1", "q9", "c", 2))},
            "human puts item 'i1' in more than one query: ['q1', 'q9']",
        ),
        (
            {"human": human_with(("i8", "q9", "c", 2))},
            "human and judges puts item 'i8' in more than one query: ['q3', 'q9']",
        ),
    ],
)
def test_validation_errors(options, message):
    arguments = {"human": HUMAN, "judges": JUDGE, "labels": SCALE, **options}
    human, judges = arguments.pop("human"), arguments.pop("judges")
    with pytest.raises(QrelForgeError) as error:
        calibrate_judges(human, judges, **arguments)
    assert str(error.value).startswith(message)


# ------------------------------------------------------------------------------------------ run rankings

# r1 > r2 > r3 > r4 by human; the judge swaps r1 and r2: 5 concordant, 1 discordant pair → τ = 4/6.
# Top 3 (r1, r2, r3): pairs (r1, r2) discordant, (r1, r3) and (r2, r3) concordant → τ = 1/3.
HUMAN_SCORES = {"r1": 0.5, "r2": 0.4, "r3": 0.3, "r4": 0.2}
JUDGE_SCORES = {"r1": 0.45, "r2": 0.5, "r3": 0.3, "r4": 0.1}


def test_ranking_agreement_hand_case():
    res = ranking_agreement(HUMAN_SCORES, JUDGE_SCORES, top=3)
    assert res.tau == pytest.approx(4 / 6) and res.tau_top == pytest.approx(1 / 3)
    assert (res.n_runs, res.top_runs) == (4, ("r1", "r2", "r3"))
    assert ranking_agreement(HUMAN_SCORES, JUDGE_SCORES).top_runs == ("r1", "r2", "r3", "r4")


@pytest.mark.parametrize("seed", range(6))
def test_ranking_agreement_matches_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    runs = [f"run{i}" for i in range(12)]
    human = dict(zip(runs, rng.integers(0, 5, size=12) / 10, strict=True))  # many ties
    judge = {r: human[r] + rng.integers(-1, 2) / 10 for r in runs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # a tied top set has an undefined tau
        res = ranking_agreement(human, judge, top=5)
    assert res.tau == pytest.approx(
        kendalltau(list(human.values()), list(judge.values())).statistic, abs=1e-12
    )
    top = list(res.top_runs)
    assert top == sorted(runs, key=lambda r: (-human[r], r))[:5]
    expected_top = kendalltau([human[r] for r in top], [judge[r] for r in top]).statistic
    if math.isnan(expected_top):
        assert math.isnan(res.tau_top)
    else:
        assert res.tau_top == pytest.approx(expected_top, abs=1e-12)


def test_ranking_agreement_undefined_cases():
    with pytest.warns(UndefinedMetricWarning, match="it needs at least 3 runs, got 2"):
        res = ranking_agreement({"a": 0.1, "b": 0.2}, {"a": 0.3, "b": 0.1})
    assert math.isnan(res.tau) and math.isnan(res.tau_top) and res.n_runs == 2
    with pytest.warns(UndefinedMetricWarning, match="every run has the same score in one ranking"):
        res = ranking_agreement({"a": 0.1, "b": 0.2, "c": 0.3}, {"a": 0.5, "b": 0.5, "c": 0.5})
    assert math.isnan(res.tau)


@pytest.mark.parametrize(
    ("human", "judge", "top", "message"),
    [
        ([0.1], JUDGE_SCORES, 5, "human_scores must be a mapping run -> mean metric; got list"),
        (
            HUMAN_SCORES,
            {**JUDGE_SCORES, "r2": None},
            5,
            "judge_scores must map every run to a number; got None ",
        ),
        (
            HUMAN_SCORES,
            {**JUDGE_SCORES, "r2": math.nan},
            5,
            "judge_scores must map every run to a number; got nan",
        ),
        (
            HUMAN_SCORES,
            {"r1": 0.1},
            5,
            "human_scores and judge_scores must score the same runs; judge_scores lacks",
        ),
        (
            {"r1": 0.1},
            JUDGE_SCORES,
            5,
            "human_scores and judge_scores must score the same runs; human_scores lacks",
        ),
        (HUMAN_SCORES, JUDGE_SCORES, 2, "top must be an integer >= 3 (tau needs 3 runs); got 2"),
        (HUMAN_SCORES, JUDGE_SCORES, 3.0, "top must be an integer >= 3 (tau needs 3 runs); got 3.0"),
    ],
)
def test_ranking_agreement_errors(human, judge, top, message):
    with pytest.raises(QrelForgeError) as error:
        ranking_agreement(human, judge, top=top)
    assert str(error.value).startswith(message)


def test_ranking_agreement_from_qrels_calls_evaluate():
    human = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 0, "d6": 2}}
    judge = {"q1": {"d1": 2, "d2": 2, "d3": 1}, "q2": {"d4": 1, "d5": 1, "d6": 1}}
    runs = {
        "a": {"q1": ["d1", "d2"], "q2": ["d4", "d6"]},
        "b": {"q1": ["d2", "d3"], "q2": ["d5"]},
        "c": {"q1": ["d3", "d1"], "q2": ["d5", "d4"]},
        "d": {"q1": ["d1", "d3"], "q2": ["d6", "d4"]},
    }

    def means(qrels):
        return {name: evaluate(qrels, run, ["nDCG@2"]).mean["nDCG@2"] for name, run in runs.items()}

    res = ranking_agreement_from_qrels(human, judge, runs, measure="nDCG@2", top=3)
    assert res == ranking_agreement(means(human), means(judge), top=3)
    with pytest.raises(QrelForgeError, match=re.escape("runs must be a mapping name -> run; got list")):
        ranking_agreement_from_qrels(human, judge, [runs["a"]], measure="P@1")


# ---------------------------------------------------------------------------------------- stuffing probe

DOCUMENT = "Solar panels convert light. They work best\nin direct sun! Costs fell."


def test_stuff_query_terms_method():
    stuffed = stuff_query_terms(DOCUMENT, "solar panel cost, solar", seed=7)
    assert stuffed == stuff_query_terms(DOCUMENT, "solar panel cost, solar", seed=7)
    assert stuffed.startswith("Solar panels convert light solar panel cost. ")
    words, before = re.findall(r"\w+", stuffed), re.findall(r"\w+", DOCUMENT)
    for term in ["solar", "panel", "cost"]:
        assert words.count(term) == before.count(term) + 2
    original = iter(words)
    assert all(word in original for word in before)  # the document's words, in order
    assert "\n" in stuffed  # whitespace is kept
    seeds = {stuff_query_terms(DOCUMENT, "solar panel cost", seed=s) for s in range(10)}
    assert len(seeds) > 1


def test_stuff_query_terms_without_sentence_end_or_text():
    assert stuff_query_terms("no end here", "cat", seed=0) == "no end here cat cat"
    assert stuff_query_terms("", "cat dog", seed=0).split() == ["cat", "dog", "cat", "dog"]


@pytest.mark.parametrize(
    ("document", "query", "seed", "message"),
    [
        (None, "q", 0, "document_text must be a string; got NoneType"),
        ("doc", b"q", 0, "query_text must be a string; got bytes"),
        ("doc", " ,;", 0, "query_text must contain at least one word; got ' ,;'"),
        ("doc", "q", -1, "seed must be a non-negative integer; got -1"),
        ("doc", "q", 1.5, "seed must be a non-negative integer; got 1.5"),
        ("doc", "q", True, "seed must be a non-negative integer; got True"),
    ],
)
def test_stuff_query_terms_errors(document, query, seed, message):
    with pytest.raises(QrelForgeError) as error:
        stuff_query_terms(document, query, seed=seed)
    assert str(error.value) == message


def test_probe_summary_hand_case():
    # changes: +1, 0, −1, +2, 0 → 2 raised, 1 lowered, 2 unchanged; mean rise 2/5.
    res = probe_summary([0, 1, 2, 1, 3], np.array([1, 1, 1, 3, 3]))
    assert (res.n_pairs, res.n_raised, res.n_lowered, res.n_unchanged) == (5, 2, 1, 2)
    assert res.share_raised == pytest.approx(0.4) and res.mean_rise == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        ("0123", [0], "before_grades must be a sequence of grades; got str"),
        ([], [], "before_grades must not be empty; got []"),
        ([0, None], [0, 1], "before_grades must hold numbers only; got None"),
        ([0, 1], [0, "2"], "after_grades must hold numbers only; got '2'"),
        (
            [0, 1],
            [0],
            "before_grades and after_grades must have the same length (one grade per pair); got 2 and 1",
        ),
    ],
)
def test_probe_summary_errors(before, after, message):
    with pytest.raises(QrelForgeError) as error:
        probe_summary(before, after)
    assert str(error.value) == message


def test_doctests():
    assert doctest.testmod(calibration).failed == 0
