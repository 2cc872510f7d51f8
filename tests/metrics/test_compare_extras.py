"""Context measures (against a plain-Python reference), assessor sensitivity, judging coverage and threshold
checks from metrics.compare."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

from metrics import evaluate, parse_measure, read_qrels
from metrics.compare import (
    assessor_sensitivity,
    check_thresholds,
    judging_coverage,
    majority_qrels,
    parse_threshold,
)

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
QRELS, RUN_A, RUN_B = (str(SAMPLE / n) for n in ("qrels.trec", "run_a.trec", "run_b.trec"))


# ------------------------------------------------------------------------------------- context measures
def reference_context_precision(
    ranking: list[str], grades: dict[str, int], k: int, rel: int = 1
) -> float | None:
    """Straight from the definition: mean of P@i over the relevant ranks i <= k."""
    if not any(g >= rel for g in grades.values()):
        return None
    top = ranking[:k]
    precisions = [
        sum(grades.get(d, 0) >= rel for d in top[:i]) / i
        for i in range(1, len(top) + 1)
        if grades.get(top[i - 1], 0) >= rel
    ]
    return sum(precisions) / len(precisions) if precisions else 0.0


def random_case(seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(25):
        docs = [f"D{j}" for j in range(30)]
        judged = rng.choice(30, size=12, replace=False)
        qrels[f"q{q}"] = {docs[j]: int(rng.integers(0, 4)) if q % 7 else 0 for j in judged}
        run[f"q{q}"] = [docs[j] for j in rng.permutation(30)[: int(rng.integers(0, 30))]]
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k, rel", [(1, 1), (5, 1), (10, 2), (40, 1)])
def test_context_precision_matches_reference(seed, k, rel):
    qrels, run = random_case(seed)
    got = evaluate(qrels, run, [f"ContextPrecision(rel={rel})@{k}"]).per_query_dict()
    for q, ranking in run.items():
        expected = reference_context_precision(ranking, qrels[q], k, rel)
        value = got[q][f"ContextPrecision(rel={rel})@{k}" if rel != 1 else f"ContextPrecision@{k}"]
        assert value == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize(
    "ranking, expected",
    [
        (["D1", "D3", "D2"], (1 + 2 / 3) / 2),  # relevant at 1 and 3
        (["D3", "D1"], 1 / 2),  # relevant at 2 only
        (["D3", "D4", "D5"], 0.0),  # relevant documents exist, none in the top k
        ([], 0.0),
    ],
)
def test_context_precision_worked_examples(ranking, expected):
    result = evaluate({"q1": {"D1": 1, "D2": 1, "D3": 0}}, {"q1": ranking}, ["CtxP@3"])
    assert result.mean["ContextPrecision@3"] == pytest.approx(expected)


def test_context_precision_undefined_without_relevant_documents():
    result = evaluate({"q1": {"D1": 0}, "q2": {"D2": 1}}, {"q1": ["D1"], "q2": ["D2"]}, ["CtxP@3", "CtxR@3"])
    assert result.per_query_dict()["q1"] == {"ContextPrecision@3": None, "ContextRecall@3": None}
    assert result.n == {"ContextPrecision@3": 1, "ContextRecall@3": 1}


@pytest.mark.parametrize("seed", [0, 1])
def test_context_recall_equals_recall(seed):
    qrels, run = random_case(seed)
    result = evaluate(qrels, run, ["CtxR@5", "R@5", "ContextRecall(rel=2)@10", "R(rel=2)@10"])
    values = result.per_query
    assert np.array_equal(values["ContextRecall@5"].to_numpy(), values["R@5"].to_numpy(), equal_nan=True)
    assert np.array_equal(
        values["ContextRecall(rel=2)@10"].to_numpy(), values["R(rel=2)@10"].to_numpy(), equal_nan=True
    )


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("CtxP@5", "ContextPrecision@5"),
        ("ctxr@3", "ContextRecall@3"),
        ("ContextPrecision(rel=2)@4", "ContextPrecision(rel=2)@4"),
    ],
)
def test_context_measure_names(text, canonical):
    assert str(parse_measure(text)) == canonical


def test_context_measures_need_a_cutoff():
    with pytest.raises(
        ValueError, match=re.escape("ContextPrecision needs a cutoff, e.g. 'ContextPrecision@10'")
    ):
        parse_measure("CtxP")


# -------------------------------------------------------------------------------------- sensitivity
def labels_frame() -> pd.DataFrame:
    """Three annotators over the sample qrels: ann1 agrees with the release, ann2 calls D4 relevant for q2
    and D6 not relevant for q3, ann3 judged only q1 (and disagrees on D1)."""
    release = read_qrels(QRELS).to_dataframe()
    rows = [(r.query_id, r.doc_id, "ann1", r.relevance) for r in release.itertuples()]
    for r in release.itertuples():
        grade = {("q2", "D4"): 2, ("q3", "D6"): 0}.get((r.query_id, r.doc_id), r.relevance)
        rows.append((r.query_id, r.doc_id, "ann2", grade))
    rows += [
        (r.query_id, r.doc_id, "ann3", 0 if r.doc_id == "D1" else r.relevance)
        for r in release.itertuples()
        if r.query_id == "q1"
    ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "annotator", "grade"])


@pytest.fixture(scope="module")
def sensitivity():
    return assessor_sensitivity(
        labels_frame(), [RUN_A, RUN_B], ["P@3", "R@3"], release=QRELS, n_bootstrap=500
    )


def test_sensitivity_scores_under_each_qrels(sensitivity):
    scores = sensitivity.to_dataframe("scores").set_index(["qrels", "run", "measure"])["mean"]
    assert sensitivity.variants == [
        "release",
        "majority",
        "annotator:ann1",
        "annotator:ann2",
        "annotator:ann3",
    ]
    assert scores["release", "scheme_b", "P@3"] == pytest.approx(5 / 9)
    assert scores["annotator:ann1", "scheme_b", "P@3"] == pytest.approx(5 / 9)
    # ann2: q2 gains D4 (B retrieves it: 2/3), q3 loses D6 (B: 1/3)
    assert scores["annotator:ann2", "scheme_b", "P@3"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3) / 3)
    # ann3 only judged q1 (D1 not relevant); q2 and q3 come from the release
    assert scores["annotator:ann3", "scheme_a", "P@3"] == pytest.approx((0 + 1 / 3 + 1 / 3) / 3)


def test_sensitivity_spread_and_tau(sensitivity):
    spread = sensitivity.to_dataframe("spread").set_index(["run", "measure"])
    a = spread.loc[("scheme_a", "P@3")]
    assert (a["min"], a["max"], a["min_qrels"]) == (
        pytest.approx(2 / 9),
        pytest.approx(1 / 3),
        "annotator:ann3",
    )
    values = sensitivity.to_dataframe("scores").query("run == 'scheme_a' and measure == 'P@3'")["mean"]
    assert a["std"] == pytest.approx(np.std(values))
    tau = sensitivity.to_dataframe("tau")
    assert tau["tau"].tolist() == [1.0] * 8 and tau["same_top"].all()
    assert tau.iloc[0]["top"] == ["scheme_b"]


def test_sensitivity_bootstrap_is_deterministic_and_sane(sensitivity):
    boot = sensitivity.to_dataframe("bootstrap")
    assert boot["p_first"].groupby(boot["measure"]).sum().tolist() == pytest.approx([1.0, 1.0])
    assert (boot["ci_low"] <= boot["mean"]).all() and (boot["mean"] <= boot["ci_high"]).all()
    again = assessor_sensitivity(
        labels_frame(), [RUN_A, RUN_B], ["P@3", "R@3"], release=QRELS, n_bootstrap=500
    )
    pd.testing.assert_frame_equal(boot, again.to_dataframe("bootstrap"))
    taus = sensitivity.to_dataframe("bootstrap_tau")
    assert ((taus["p_same_ranking"] > 0) & (taus["p_same_ranking"] <= 1)).all()


def test_sensitivity_renders(sensitivity):
    md = sensitivity.to_markdown()
    assert "| annotator:ann2 | 0.3333 | 0.5556 |" in md and "## Bootstrap over queries and annotators" in md
    data = json.loads(json.dumps(sensitivity.to_dict(), allow_nan=False))
    assert data["reference"] == "release" and len(data["bootstrap"]["bootstrap"]) == 4


def test_sensitivity_without_release_or_fill():
    s = assessor_sensitivity(labels_frame(), [RUN_A, RUN_B], ["P@3"], fill=False)
    assert s.reference == "majority" and s.variants[0] == "majority"
    scores = s.to_dataframe("scores").set_index(["qrels", "run"])["mean"]
    # ann3 without fill: only q1 is judged, so only q1 is evaluated
    assert scores["annotator:ann3", "scheme_b"] == pytest.approx(1 / 3)
    with pytest.raises(
        ValueError, match=re.escape("no bootstrap was run; pass n_bootstrap > 0 to get 'bootstrap'")
    ):
        s.to_dataframe("bootstrap")


def test_sensitivity_tau_against_scipy_when_rankings_differ():
    qrels = {"q1": {"D1": 1, "D2": 1, "D3": 1}}
    runs = {"a": {"q1": ["D1", "D9"]}, "b": {"q1": ["D2", "D9"]}, "c": {"q1": ["D3", "D2"]}}
    labels = pd.DataFrame(
        [("q1", d, "x", g) for d, g in (("D1", 1), ("D2", 0), ("D3", 0))]
        + [("q1", d, "y", 1) for d in ("D1", "D2", "D3")],
        columns=["query_id", "doc_id", "annotator", "grade"],
    )
    s = assessor_sensitivity(labels, runs, ["P@1"], release=qrels)
    tau = s.to_dataframe("tau").set_index("qrels")
    x = [1.0, 0.0, 0.0]  # under annotator x only D1 is relevant
    assert tau.loc["annotator:x", "tau"] == pytest.approx(
        st.kendalltau(x, [1.0, 1.0, 1.0]).statistic, nan_ok=True
    )
    assert math.isnan(tau.loc["annotator:x", "tau"]) and tau.loc["annotator:x", "top"] == ["a"]
    assert not tau.loc["annotator:x", "same_top"]


@pytest.mark.parametrize(
    "grades, tie, expected",
    [
        ([2, 2, 0], "lower", 2),
        ([2, 0], "lower", 0),
        ([2, 0], "higher", 2),
        ([3, 1, 1, 3, 0], "lower", 1),
    ],
)
def test_majority_tie_rule(grades, tie, expected):
    labels = pd.DataFrame(
        {
            "query_id": "q1",
            "doc_id": "D1",
            "annotator": [f"a{i}" for i in range(len(grades))],
            "grade": grades,
        }
    )
    assert majority_qrels(labels, tie=tie).to_dict() == {"q1": {"D1": expected}}


@pytest.mark.parametrize(
    "frame, message",
    [
        (
            pd.DataFrame({"query_id": ["q1"], "doc_id": ["D1"], "grade": [1]}),
            "labels: missing column ['annotator']: \"['query_id', 'doc_id', 'grade']\"",
        ),
        (
            pd.DataFrame(
                {"query_id": ["q1", "q1"], "doc_id": ["D1", "D1"], "annotator": ["a", "a"], "grade": [1, 0]}
            ),
            "labels row 2: duplicate label of 'D1' for query 'q1' by annotator 'a' (first at row 1); "
            "pass each annotator's current label only: 'q1 D1 a'",
        ),
        (
            pd.DataFrame({"query_id": ["q1"], "doc_id": ["D1"], "annotator": ["a"], "grade": [1.5]}),
            "labels row 1: grade must be an integer: '1.5'",
        ),
        (
            pd.DataFrame({"query_id": ["q1"], "doc_id": [None], "annotator": ["a"], "grade": [1]}),
            "labels row 1: doc_id is missing: ''",
        ),
        (
            pd.DataFrame(columns=["query_id", "doc_id", "annotator", "grade"]),
            "labels has no labels; nothing to score",
        ),
    ],
)
def test_bad_labels(frame, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        assessor_sensitivity(frame, [RUN_A], ["P@3"])


def test_bad_tie_rule():
    with pytest.raises(ValueError, match=re.escape("tie must be 'lower' or 'higher'; got 'mean'")):
        majority_qrels(labels_frame(), tie="mean")


# ----------------------------------------------------------------------------------------- coverage
def test_coverage_counts_unjudged_and_pool_additions():
    qrels = {"q1": {"D1": 1, "D4": 0}, "q2": {"D7": 0}}
    runs = {
        "a": {"q1": ["D1", "D2", "D5", "D4"], "q9": ["D1"]},
        "b": {"q1": ["D2", "D3"], "q2": ["D7", "D8"]},
    }
    cov = judging_coverage(qrels, runs, k=3)
    assert cov.unjudged.values.tolist() == [
        ["a", "q1", 2, "D2"],
        ["a", "q1", 3, "D5"],
        ["b", "q1", 1, "D2"],
        ["b", "q1", 2, "D3"],
        ["b", "q2", 2, "D8"],
    ]
    assert cov.pool.values.tolist() == [["a", 2, 1], ["b", 3, 2]] and cov.pool_total == 4
    judged = evaluate(qrels, runs["a"], ["Judged@3"]).mean["Judged@3"]
    assert cov.judged.values.tolist()[0] == ["a", pytest.approx(judged), 2]


def test_coverage_on_the_sample_runs_is_complete():
    cov = judging_coverage(QRELS, [RUN_A, RUN_B], k=3)
    assert cov.judged["Judged@3"].tolist() == [1.0, 1.0] and cov.pool_total == 0 and cov.unjudged.empty
    assert "adds 0 unjudged (query, document) pairs" in cov.to_markdown()
    assert json.loads(json.dumps(cov.to_dict()))["pool"][0] == {
        "run": "scheme_a",
        "unjudged_pairs": 0,
        "only_this_run": 0,
    }


def test_coverage_bad_k():
    with pytest.raises(ValueError, match=re.escape("k must be an int >= 1; got 0")):
        judging_coverage(QRELS, [RUN_A], k=0)


# ------------------------------------------------------------------------------------ threshold checks
def test_check_names_every_missed_threshold():
    result = check_thresholds(
        QRELS, RUN_A, minimum=["R@3=0.7", "nDCG@3=0.5", "P@3=0.4"], maximum={"FirstRel": 1.2}
    )
    assert not result.passed and [r.measure for r in result.failures] == ["R@3", "P@3", "FirstRel"]
    assert result.message() == (
        "FAIL: 3 of 4 thresholds missed: R@3 = 0.6667 < 0.7 (minimum); P@3 = 0.3333 < 0.4 "
        "(minimum); FirstRel = 1.3333 > 1.2 (maximum)"
    )


def test_check_passes_and_undefined_fails():
    assert check_thresholds(QRELS, RUN_B, minimum={"R@3": 1.0}).message() == "PASS: 1 threshold met"
    result = check_thresholds({"q1": {"D1": 0}}, {"q1": ["D1"]}, minimum=["R@1=0.1"])
    assert (
        result.message() == "FAIL: 1 of 1 threshold missed: R@1 is undefined (no query where it is defined)"
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ("R@5", "threshold must look like MEASURE=VALUE, e.g. 'R@5=0.7'; got 'R@5'"),
        ("R@5=high", "threshold value must be a finite number; got 'high' in 'R@5=high'"),
        ("R@5=nan", "threshold value must be a finite number; got 'nan' in 'R@5=nan'"),
        ("Recal@5=0.5", "unknown measure 'Recal' in 'Recal@5'"),
    ],
)
def test_bad_threshold_text(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_threshold(text)


def test_bad_threshold_sets():
    with pytest.raises(ValueError, match=re.escape("R@3 has two minimum thresholds: 0.5 and 0.6")):
        check_thresholds(QRELS, RUN_A, minimum=["R@3=0.5", "Recall@3=0.6"])
    with pytest.raises(
        ValueError,
        match=re.escape("check_thresholds needs at least one minimum or maximum threshold; got none"),
    ):
        check_thresholds(QRELS, RUN_A)
    with pytest.raises(ValueError, match=re.escape("threshold for R@3 must be a finite number; got '0.5'")):
        check_thresholds(QRELS, RUN_A, minimum={"R@3": "0.5"})
