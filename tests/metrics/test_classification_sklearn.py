"""The classification measures against scikit-learn on randomized labels and scores: equal wherever
scikit-learn is defined, and each documented difference (the table in `metrics.stats.classification`) asserted
as it is."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from sklearn.exceptions import UndefinedMetricWarning as SklearnUndefined
from sklearn.metrics import average_precision_score, precision_recall_curve, precision_recall_fscore_support

from metrics import evaluate
from metrics.errors import QrelForgeError, UndefinedMetricWarning
from metrics.stats.classification import (
    average_scores,
    binary_scores,
    class_scores,
    confusion_counts,
    partial_match,
)
from metrics.stats.pr_curves import pr_curve, run_pr_curve

SEEDS = range(20)
TIGHT = 1e-9


def labels(seed: int):
    """Labels over 0..4 where some classes are never predicted or never true (0/0 terms happen)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    truth = rng.choice([0, 1, 2, 3], size=n, p=[0.4, 0.3, 0.2, 0.1])
    pred = np.where(rng.random(n) < 0.6, truth, rng.choice([0, 1, 4], size=n))
    return truth, pred


def sklearn_prfs(truth, pred, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SklearnUndefined)
        return precision_recall_fscore_support(truth, pred, **kwargs)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("seed", SEEDS)
def test_class_scores_are_prfs_per_class(seed, beta):
    truth, pred = labels(seed)
    classes = sorted(set(truth) | set(pred))
    for zero_division in (0, 1):
        ours = class_scores(truth, pred, beta=beta, zero_division=zero_division)
        p, r, f, support = sklearn_prfs(truth, pred, beta=beta, labels=classes, zero_division=zero_division)
        for column, theirs in (("precision", p), ("recall", r), ("f_beta", f), ("support", support)):
            np.testing.assert_allclose(ours[column].to_numpy(float), theirs, atol=TIGHT)
    # "warn": NaN where scikit-learn says 0 with a warning (its zero_division=np.nan gives the NaNs too)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ours = class_scores(truth, pred, beta=beta)
    p, r, f, _ = sklearn_prfs(truth, pred, beta=beta, labels=classes, zero_division=np.nan)
    for column, theirs in (("precision", p), ("recall", r), ("f_beta", f)):
        np.testing.assert_allclose(ours[column].to_numpy(float), theirs, atol=TIGHT, equal_nan=True)


@pytest.mark.parametrize("average", ["macro", "micro", "weighted"])
@pytest.mark.parametrize("seed", SEEDS)
def test_average_scores_are_prfs_averages(seed, average):
    truth, pred = labels(seed)
    classes = sorted(set(truth) | set(pred))
    for zero_division in (0, 1):
        ours = average_scores(truth, pred, average=average, beta=2.0, zero_division=zero_division)
        theirs = sklearn_prfs(
            truth, pred, average=average, beta=2.0, labels=classes, zero_division=zero_division
        )
        assert [ours["precision"], ours["recall"], ours["f_beta"]] == pytest.approx(theirs[:3], abs=TIGHT)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = average_scores(truth, pred, average=average, beta=2.0)
    theirs = sklearn_prfs(truth, pred, average=average, beta=2.0, labels=classes, zero_division=0)
    for i, key in enumerate(("precision", "recall", "f_beta")):
        if ours[key] is None:  # a 0/0 term: undefined here, averaged as 0 by scikit-learn
            assert any(issubclass(w.category, UndefinedMetricWarning) for w in caught)
        else:
            assert ours[key] == pytest.approx(theirs[i], abs=TIGHT), key


@pytest.mark.parametrize("seed", SEEDS)
def test_binary_scores_are_prfs_binary(seed):
    truth, pred = labels(seed)
    for pos_label in (0, 1):
        counts = confusion_counts(truth, pred, pos_label=pos_label)
        ours = binary_scores(*counts, beta=0.5, zero_division=0)
        binary = (truth == pos_label, pred == pos_label)  # scikit-learn's binary average wants two classes
        theirs = sklearn_prfs(*binary, average="binary", pos_label=True, beta=0.5, zero_division=0)
        assert [ours["precision"], ours["recall"], ours["f_beta"]] == pytest.approx(theirs[:3], abs=TIGHT)


@pytest.mark.parametrize("seed", SEEDS)
def test_partial_match_is_the_samples_average(seed):
    rng = np.random.default_rng(seed)
    n = 15
    truth = [set(rng.choice(5, size=rng.integers(1, 4), replace=False).tolist()) for _ in range(n)]
    pred = [set(rng.choice(5, size=rng.integers(1, 4), replace=False).tolist()) for _ in range(n)]
    ours = partial_match(truth, pred, zero_division=0)
    from sklearn.preprocessing import MultiLabelBinarizer

    binarize = MultiLabelBinarizer(classes=list(range(5))).fit([range(5)])
    theirs = sklearn_prfs(binarize.transform(truth), binarize.transform(pred), average="samples")
    assert (ours.precision, ours.recall) == pytest.approx(theirs[:2], abs=TIGHT)


def test_labels_leaving_out_a_class_raise_where_sklearn_ignores_it():
    truth, pred = [0, 1, 2], [0, 1, 1]
    assert sklearn_prfs(truth, pred, labels=[0, 1], average="macro", zero_division=0)[0] == 0.75
    with pytest.raises(QrelForgeError, match="y_true has a label outside labels: 2"):
        class_scores(truth, pred, labels=[0, 1])


# ----------------------------------------------------------------------------------- precision–recall curves
def scored(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 80))
    grades = rng.integers(0, 4, n)
    scores = np.round(grades * 0.3 + rng.normal(0, 0.6, n), int(rng.integers(0, 3)))  # ties, many or few
    return grades, scores


@pytest.mark.parametrize("rel", [1, 2, 3])
@pytest.mark.parametrize("seed", SEEDS)
def test_pr_curve_is_precision_recall_curve_and_average_precision_score(seed, rel):
    grades, scores = scored(seed)
    truth = grades >= rel
    if not truth.any():
        pytest.skip("no relevant item: see test_pr_curve_without_relevant_items_differs")
    ours = pr_curve(grades, scores, rel=rel)
    precision, recall, thresholds = precision_recall_curve(truth, scores)
    np.testing.assert_allclose(ours.precision, precision[::-1], atol=TIGHT)
    np.testing.assert_allclose(ours.recall, recall[::-1], atol=TIGHT)
    np.testing.assert_allclose(ours.thresholds[1:], thresholds[::-1], atol=TIGHT)
    assert ours.average_precision == pytest.approx(average_precision_score(truth, scores), abs=TIGHT)


def test_pr_curve_without_relevant_items_differs():
    truth, scores = [0, 0, 0], [0.3, 0.2, 0.1]
    with pytest.warns(UserWarning, match="No positive class found in y_true"):
        assert average_precision_score(truth, scores) == 0.0
    with pytest.warns(UserWarning, match="No positive class found in y_true"):
        assert precision_recall_curve(truth, scores)[1].tolist() == [1.0, 1.0, 1.0, 0.0]
    with pytest.warns(UndefinedMetricWarning):
        ours = pr_curve(truth, scores)
    assert ours.average_precision is None and np.isnan(ours.recall).all()


def test_run_pr_curve_differs_from_trec_eval_only_on_ties_and_evaluate_does_not():
    # Two documents tie: trec_eval ranks "b" (the larger ID) first; both enter together in run_pr_curve.
    qrels = {"q": {"a": 0, "b": 1}}
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 1.0]})
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate({"q": {"a": 1.0, "b": 1.0}})
    curve = run_pr_curve(run, qrels)
    assert trec["q"]["iprec_at_recall_1.00"] == 1.0 and curve.per_query.loc["q", "iprec@1"] == 0.5
    ours = evaluate(qrels, {"q": {"a": 1.0, "b": 1.0}}, ["IPrec@1"]).per_query_dict()
    assert ours["q"]["IPrec@1"] == 1.0
