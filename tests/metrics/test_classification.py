"""Classification measures: the seed worked example, zero division, cross-checks against scikit-learn and
pytrec_eval, and every error case by its message."""

from __future__ import annotations

import doctest
import math
import re

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from sklearn.metrics import (
    auc,
    average_precision_score,
    confusion_matrix,
    precision_recall_curve,
    precision_recall_fscore_support,
    precision_score,
    recall_score,
)
from sklearn.preprocessing import MultiLabelBinarizer

import metrics.stats.classification as classification
from metrics.errors import QrelForgeError, UndefinedMetricWarning
from metrics.stats.classification import (
    ConfusionCounts,
    accuracy,
    average_scores,
    binary_scores,
    class_scores,
    confusion_counts,
    f1,
    f_beta,
    partial_match,
    precision,
    recall,
)
from metrics.stats.pr_curves import pr_curve, run_pr_curve

SEEDS = [0, 1, 2, 3, 4]
TIGHT = 1e-9

# Seed 001's worked example.
SEED_001 = ConfusionCounts(tp=12, fp=3, fn=8, tn=9977)


# --------------------------------------------------------------------------------------------- binary counts


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        (lambda c: accuracy(*c), 0.9989),
        (lambda c: precision(c.tp, c.fp), 0.8),
        (lambda c: recall(c.tp, c.fn), 0.6),
        (lambda c: f1(c.tp, c.fp, c.fn), 0.6857),
        (lambda c: f_beta(c.tp, c.fp, c.fn, beta=1), 0.6857),
        (lambda c: binary_scores(*c)["f1"], 0.6857),
    ],
)
def test_seed_001_worked_example(measure, expected):
    assert round(measure(SEED_001), 4) == expected


def test_seed_001_from_labels():
    y_true = [1] * 20 + [0] * 9980
    y_pred = [1] * 12 + [0] * 8 + [1] * 3 + [0] * 9977
    assert confusion_counts(y_true, y_pred) == SEED_001


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_binary_scores_match_sklearn(seed, beta):
    rng = np.random.default_rng(seed)
    y_true, y_pred = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    counts = confusion_counts(y_true, y_pred)
    tn, fp, fn, tp = confusion_matrix(y_true, y_pred, labels=[0, 1]).ravel()
    assert counts == (tp, fp, fn, tn)
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, beta=beta, average="binary")
    scores = binary_scores(*counts, beta=beta)
    assert (scores["precision"], scores["recall"], scores["f_beta"]) == pytest.approx((p, r, f), abs=TIGHT)
    assert scores["accuracy"] == pytest.approx(np.mean(y_true == y_pred), abs=TIGHT)


def test_pos_label_with_strings():
    counts = confusion_counts(["rel", "non", "rel"], ["rel", "rel", "non"], pos_label="rel")
    assert counts == ConfusionCounts(tp=1, fp=1, fn=1, tn=0)


@pytest.mark.parametrize(
    ("measure", "message"),
    [
        (lambda z: accuracy(0, 0, 0, 0, zero_division=z), "accuracy is undefined (no samples)"),
        (
            lambda z: precision(0, 0, zero_division=z),
            "precision is undefined (no predicted positives: tp + fp = 0)",
        ),
        (
            lambda z: recall(0, 0, zero_division=z),
            "recall is undefined (no true positives exist: tp + fn = 0)",
        ),
        (lambda z: f1(0, 0, 0, zero_division=z), "F-score is undefined (tp + fp + fn = 0)"),
        (lambda z: f_beta(0, 0, 0, beta=2, zero_division=z), "F-score is undefined (tp + fp + fn = 0)"),
    ],
)
def test_zero_division(measure, message):
    with pytest.warns(UndefinedMetricWarning, match=f"^{re.escape(message)}; returning None$"):
        assert measure("warn") is None
    assert measure(0) == 0.0 and isinstance(measure(0), float)
    assert measure(1) == 1.0


def test_f_score_is_zero_when_precision_is_undefined_but_recall_is_zero():
    assert f1(0, 0, 5) == 0.0


# ----------------------------------------------------------------------------------------------- multi-class


def multiclass(seed: int, n: int = 150):
    """Labels 0..3 where class 3 never occurs in y_true and class 2 is never predicted (undefined terms)."""
    rng = np.random.default_rng(seed)
    y_true = rng.choice([0, 1, 2], size=n, p=[0.5, 0.3, 0.2])
    y_pred = np.where(rng.random(n) < 0.6, y_true, rng.choice([0, 1, 3], size=n))
    y_pred[y_pred == 2] = 0
    return y_true, y_pred


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("zero_division", [0, 1])
@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_class_scores_match_sklearn(seed, zero_division, beta):
    y_true, y_pred = multiclass(seed)
    ours = class_scores(y_true, y_pred, labels=[0, 1, 2, 3], beta=beta, zero_division=zero_division)
    p, r, f, support = precision_recall_fscore_support(
        y_true, y_pred, labels=[0, 1, 2, 3], beta=beta, zero_division=zero_division
    )
    np.testing.assert_allclose(ours[["precision", "recall", "f_beta"]].to_numpy().T, [p, r, f], atol=TIGHT)
    assert ours["support"].tolist() == support.tolist()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("average", ["macro", "micro", "weighted"])
@pytest.mark.parametrize("zero_division", [0, 1])
@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_average_scores_match_sklearn(seed, average, zero_division, beta):
    y_true, y_pred = multiclass(seed)
    ours = average_scores(
        y_true, y_pred, average=average, labels=[0, 1, 2, 3], beta=beta, zero_division=zero_division
    )
    p, r, f, _ = precision_recall_fscore_support(
        y_true, y_pred, labels=[0, 1, 2, 3], average=average, beta=beta, zero_division=zero_division
    )
    assert (ours["precision"], ours["recall"], ours["f_beta"]) == pytest.approx((p, r, f), abs=TIGHT)


def test_micro_average_is_accuracy_for_single_label():
    y_true, y_pred = multiclass(0)
    scores = average_scores(y_true, y_pred, average="micro")
    assert scores["precision"] == scores["recall"] == pytest.approx(np.mean(y_true == y_pred), abs=TIGHT)


def test_undefined_class_makes_the_macro_average_none():
    with pytest.warns(
        UndefinedMetricWarning,
        match=re.escape("precision is undefined for labels [2] (no predicted samples)"),
    ):
        scores = average_scores([0, 1, 2], [0, 1, 1], average="macro")
    assert scores["precision"] is None
    assert scores["recall"] == pytest.approx(2 / 3)


def test_weighted_average_ignores_classes_without_support():
    with pytest.warns(UndefinedMetricWarning) as record:
        scores = average_scores([0, 1], [0, 1], average="weighted", labels=[0, 1, 3])
    assert scores == {"precision": 1.0, "recall": 1.0, "f_beta": 1.0}  # class 3 has no support: weight 0
    assert [str(w.message).split(" (")[0] for w in record] == [
        "precision is undefined for labels [3]",
        "recall is undefined for labels [3]",
        "f_beta is undefined for labels [3]",
    ]


def test_class_scores_frame_has_nan_for_undefined():
    with pytest.warns(UndefinedMetricWarning):
        frame = class_scores(["a", "b"], ["a", "a"])
    assert math.isnan(frame.loc["b", "precision"]) and frame.loc["b", "recall"] == 0.0
    assert frame.index.name == "label"


# ----------------------------------------------------------------------------------------------- multi-label


def label_sets(seed: int, n: int = 80):
    rng = np.random.default_rng(seed)
    pool = ["a", "b", "c", "d", "e"]

    def draw():
        return [set(rng.choice(pool, size=rng.integers(0, 4), replace=False)) for _ in range(n)]

    return draw(), draw()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("zero_division", [0, 1])
def test_partial_match_matches_sklearn_samples_average(seed, zero_division):
    y_true, y_pred = label_sets(seed)
    binarizer = MultiLabelBinarizer(classes=["a", "b", "c", "d", "e"]).fit([])
    t, p = binarizer.transform(y_true), binarizer.transform(y_pred)
    ours = partial_match(y_true, y_pred, zero_division=zero_division)
    assert ours.precision == pytest.approx(
        precision_score(t, p, average="samples", zero_division=zero_division), abs=TIGHT
    )
    assert ours.recall == pytest.approx(
        recall_score(t, p, average="samples", zero_division=zero_division), abs=TIGHT
    )


def test_partial_match_per_sample_and_duplicates():
    result = partial_match([["a", "b", "b"], ["c"]], [("a", "z"), ["c"]])
    assert result.per_sample[["n_true", "n_pred", "overlap"]].values.tolist() == [[2, 2, 1], [1, 1, 1]]
    assert (result.precision, result.recall) == (0.75, 0.75)


def test_partial_match_warn_mode_returns_none():
    with pytest.warns(
        UndefinedMetricWarning, match=re.escape("precision is undefined for 1 sample (no predicted label)")
    ):
        result = partial_match([{"a"}, {"b"}], [set(), {"b"}])
    assert result.precision is None and result.recall == 0.5
    assert math.isnan(result.per_sample.loc[0, "precision"])


# ----------------------------------------------------------------------------------- precision–recall curves


def scored(seed: int, n: int = 60, ties: bool = True):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)  # grades 0..3
    score = y * 0.3 + rng.normal(0, 0.5, n)
    return y, np.round(score, 1) if ties else score


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rel", [1, 2])
def test_pr_curve_matches_sklearn_with_ties(seed, rel):
    grades, score = scored(seed)
    ours = pr_curve(grades, score, rel=rel)
    p, r, t = precision_recall_curve(grades >= rel, score)
    np.testing.assert_allclose(ours.precision, p[::-1], atol=TIGHT)
    np.testing.assert_allclose(ours.recall, r[::-1], atol=TIGHT)
    np.testing.assert_allclose(ours.thresholds[1:], t[::-1], atol=TIGHT)
    assert ours.average_precision == pytest.approx(average_precision_score(grades >= rel, score), abs=TIGHT)
    assert ours.auc == pytest.approx(auc(r, p), abs=TIGHT)


def test_pr_curve_dataframe_and_anchor():
    frame = pr_curve([True, False, True], [0.9, 0.5, 0.5]).to_dataframe()
    assert frame.columns.tolist() == ["threshold", "tp", "fp", "precision", "recall"]
    assert frame.iloc[0].tolist() == [np.inf, 0, 0, 1.0, 0.0]
    assert frame["tp"].tolist() == [0, 1, 2] and frame["recall"].tolist() == [0.0, 0.5, 1.0]


def test_pr_curve_counts_unretrieved_relevant():
    curve = pr_curve([1, 0, 1], [3.0, 2.0, 1.0], n_relevant=4)
    assert curve.recall.tolist() == [0.0, 0.25, 0.25, 0.5]
    assert curve.average_precision == pytest.approx((1 + 2 / 3) / 4)


def test_pr_curve_without_relevant_items():
    with pytest.warns(UndefinedMetricWarning, match="^recall is undefined: there is no relevant item"):
        curve = pr_curve([0, 0], [0.2, 0.1])
    assert curve.average_precision is None and curve.auc is None and np.isnan(curve.recall).all()


def make_run(seed: int, n_queries: int = 6, depth: int = 25):
    """A run with distinct scores and qrels judging some retrieved and some unretrieved documents."""
    rng = np.random.default_rng(seed)
    rows, qrels = [], {}
    for q in range(n_queries):
        qid = f"q{q}"
        grades = rng.choice([0, 0, 1, 2], size=depth + 5)
        grades[rng.integers(depth)] = 2  # at least one relevant document retrieved
        scores = rng.permutation(depth) + rng.random(depth) * 0.5
        qrels[qid] = {f"d{d}": int(g) for d, g in enumerate(grades) if rng.random() < 0.8 or d >= depth}
        rows += [(qid, f"d{d}", float(s)) for d, s in enumerate(scores)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]), qrels


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rel", [1, 2])
def test_run_pr_curve_matches_trec_eval(seed, rel):
    run, qrels = make_run(seed)
    ours = run_pr_curve(run, qrels, rel=rel)
    binary = {q: {d: int(g >= rel) for d, g in docs.items()} for q, docs in qrels.items()}
    as_dict = {q: dict(zip(g["doc_id"], g["score"], strict=True)) for q, g in run.groupby("query_id")}
    trec = pytrec_eval.RelevanceEvaluator(binary, {"map", "iprec_at_recall"}).evaluate(as_dict)
    for qid, row in ours.per_query.iterrows():
        assert row["average_precision"] == pytest.approx(trec[qid]["map"], abs=TIGHT)
        for level in range(11):
            expected = trec[qid][f"iprec_at_recall_{level / 10:.2f}"]
            assert row[f"iprec@{level / 10:g}"] == pytest.approx(expected, abs=TIGHT)
    assert ours.mean_average_precision == pytest.approx(np.mean([v["map"] for v in trec.values()]), abs=TIGHT)


@pytest.mark.parametrize("seed", SEEDS)
def test_run_pr_curve_queries_match_pr_curve(seed):
    run, qrels = make_run(seed)
    run["score"] = run["score"].round(0)  # ties
    ours = run_pr_curve(run, qrels)
    for qid, group in run.groupby("query_id"):
        grades = [qrels[qid].get(d, 0) for d in group["doc_id"]]
        n_rel = sum(g >= 1 for g in qrels[qid].values())
        curve = pr_curve(grades, group["score"], n_relevant=n_rel)
        assert ours.per_query.loc[qid, "average_precision"] == pytest.approx(
            curve.average_precision, abs=TIGHT
        )
        points = ours.points[ours.points["query_id"] == qid]
        np.testing.assert_allclose(points["recall"], curve.recall[1:], atol=TIGHT)


def test_run_pr_curve_skips_queries_without_relevant_documents():
    run = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
    with pytest.warns(
        UndefinedMetricWarning, match=re.escape("recall is undefined for 1 run query without a relevant")
    ):
        result = run_pr_curve(run, {"q1": {"b": 1}, "q2": {"c": 0}})
    assert result.skipped_queries == ("q2",)
    assert result.mean_average_precision == 0.5
    assert result.to_dataframe()["precision"].tolist() == [0.5] * 11
    assert result.auc == pytest.approx(0.5)


# ------------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("compute", "message"),
    [
        (lambda: precision(1, 0, zero_division="nan"), "zero_division must be 'warn', 0 or 1; got 'nan'"),
        (lambda: precision(1, 0, zero_division=2), "zero_division must be 'warn', 0 or 1; got 2"),
        (lambda: precision(1, 0, zero_division=True), "zero_division must be 'warn', 0 or 1; got True"),
        (lambda: precision(-1, 0), "tp must be a non-negative integer; got -1"),
        (lambda: recall(1, 2.5), "fn must be a non-negative integer; got 2.5"),
        (lambda: accuracy(1, 1, 1, True), "tn must be a non-negative integer; got True"),
        (lambda: f_beta(1, 1, 1, beta=0), "beta must be a positive number; got 0"),
        (lambda: f_beta(1, 1, 1, beta=float("inf")), "beta must be a positive number; got inf"),
        (lambda: confusion_counts([1, 0], [1]), "y_true and y_pred must have the same length; got 2 and 1"),
        (lambda: confusion_counts([], []), "y_true and y_pred are empty"),
        (lambda: confusion_counts([1, None], [1, 0]), "y_true has a missing label at position 1"),
        (lambda: confusion_counts("10", "10"), "y_true must be a sequence of labels; got str"),
        (
            lambda: class_scores([0], [0], labels=np.array([0, 0])),
            "labels must be a non-empty sequence of distinct classes; got [0, 0]",
        ),
        (
            lambda: class_scores([0, 1], [0, 5], labels=[0, 1]),
            "y_pred has a label outside labels: 5 is not one of [0, 1]",
        ),
        (
            lambda: class_scores([0, 1], [0, 1], labels=[0, 0]),
            "labels must be a non-empty sequence of distinct classes; got [0, 0]",
        ),
        (
            lambda: average_scores([0], [0], average="samples"),
            "average must be 'macro', 'micro' or 'weighted'; got 'samples'",
        ),
        (
            lambda: partial_match([{"a"}], [{"a"}, {"b"}]),
            "y_true and y_pred must have the same length; got 1 and 2",
        ),
        (
            lambda: partial_match(["ab"], [{"a"}]),
            "y_true[0] must be a collection of labels (set, list or tuple); got 'ab'",
        ),
        (lambda: partial_match([], []), "y_true and y_pred are empty"),
        (lambda: pr_curve([1, 0], [0.5]), "y_true and y_score must have the same length; got 2 and 1"),
        (lambda: pr_curve([1, 0], [0.5, float("nan")]), "y_score has a missing label at position 1"),
        (lambda: pr_curve([1, 0], [0.5, float("inf")]), "y_score must be finite; got inf"),
        (lambda: pr_curve([1, 0], [0.5, "high"]), "y_score must hold numbers; got 'high'"),
        (lambda: pr_curve([], []), "y_true and y_score are empty"),
        (lambda: pr_curve(["rel"], [1.0]), "y_true must hold numeric grades or booleans"),
        (
            lambda: pr_curve([1, 1, 0], [3, 2, 1], n_relevant=1),
            "n_relevant must be at least the 2 relevant items in y_true; got 1",
        ),
        (lambda: pr_curve([1], [1.0], rel="1"), "rel must be a number; got '1'"),
        (
            lambda: run_pr_curve(pd.DataFrame({"qid": ["q"], "doc_id": ["d"], "score": [1.0]}), {}),
            "run has no column 'query_id'; its columns are ['qid', 'doc_id', 'score']",
        ),
        (
            lambda: run_pr_curve(
                pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["d", "d"], "score": [1.0, 2.0]}), {}
            ),
            "run has 1 repeated (query_id, doc_id) rows, e.g. ('q', 'd')",
        ),
        (
            lambda: run_pr_curve(
                pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]}), [("q", "d", 1)]
            ),
            "qrels must be a mapping {query_id: {doc_id: grade}}; got list",
        ),
        (
            lambda: run_pr_curve(
                pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]}), {"q": {"d": "high"}}
            ),
            "qrels grades must be numbers; got 'high'",
        ),
        (
            lambda: run_pr_curve(
                pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]}),
                {"q": {"x": 1}},
                recall_levels=1,
            ),
            "recall_levels must be an integer of at least 2; got 1",
        ),
    ],
)
def test_errors(compute, message):
    with pytest.raises(QrelForgeError, match=f"^{re.escape(message)}$"):
        compute()


def test_run_without_any_evaluable_query():
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]})
    with (
        pytest.warns(UndefinedMetricWarning),
        pytest.raises(
            QrelForgeError,
            match="^run_pr_curve needs at least one run query with a relevant judged document; got none$",
        ),
    ):
        run_pr_curve(run, {"q": {"d": 0}})


def test_docstring_examples():
    assert doctest.testmod(classification, raise_on_error=False).failed == 0
