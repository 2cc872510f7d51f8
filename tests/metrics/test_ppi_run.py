"""`metrics.stats.ppi.ppi_run`: PPI of one run from qrels (what ``score --ppi`` and the Score page compute)
equals `ppi_mean` on the per-query values computed by hand; a measure without a shared query is an error
naming it."""

from __future__ import annotations

import pandas as pd
import pytest

from metrics.errors import QrelForgeError
from metrics.stats.ppi import ppi_mean, ppi_run

HUMAN = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 0, "d4": 1}}
JUDGE = {"q1": {"d1": 1}, "q2": {"d2": 1, "d5": 1}, "q3": {"d3": 1, "d4": 1}, "q4": {"d6": 1}}
RUN = {"q1": ["d1"], "q2": ["d2"], "q3": ["d3", "d4"], "q4": ["d7", "d6"]}


@pytest.mark.parametrize(
    ("measure", "judge_values", "human_values"),
    [
        # P@1 per query by hand: judge q1..q4 = 1, 1, 1, 0; human q1..q3 = 1, 1, 0
        ("P@1", [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0]),
        # P@2: judge 1/2, 1/2, 1, 1/2; human 1/2, 1/2, 1/2
        ("P@2", [0.5, 0.5, 1.0, 0.5], [0.5, 0.5, 0.5]),
    ],
)
def test_ppi_run_is_ppi_mean_of_the_per_query_values(measure, judge_values, human_values):
    got = ppi_run(HUMAN, JUDGE, RUN, [measure], name="A")[measure]
    want = ppi_mean(
        pd.DataFrame({"A": judge_values}, index=["q1", "q2", "q3", "q4"]),
        pd.DataFrame({"A": human_values}, index=["q1", "q2", "q3"]),
    )["A"]
    assert got == want


def test_a_measure_without_a_shared_query_is_an_error():
    with pytest.raises(QrelForgeError, match=r"^R@1 of run 'A': no query has both human and judge values$"):
        ppi_run({"q1": {"d1": 0}}, {"q1": {"d1": 1}}, {"q1": ["d1"]}, ["R@1"], name="A")


def _world(seed: int, queries: int = 30, docs: int = 6):
    """Human grades 0..2 on every pair, a random half of the queries in the human sample, and a run."""
    import numpy as np

    rng = np.random.default_rng(seed)
    truth = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(docs)} for i in range(queries)}
    sample = sorted(rng.choice(list(truth), size=queries // 2, replace=False).tolist())
    human = {q: truth[q] for q in sample}
    run = {q: [f"d{j}" for j in rng.permutation(docs).tolist()] for q in truth}
    return truth, human, run


def _per_query(qrels, run, measure):
    from metrics import evaluate

    return evaluate(qrels, run, [measure]).per_query[measure].dropna()


@pytest.mark.parametrize("measure", ["P@3", "nDCG@5"])
def test_a_calibrated_judge_that_is_a_monotone_relabelling_recovers_the_human_grades(measure):
    truth, human, run = _world(1)
    shifted = {q: {d: g + 1 for d, g in docs.items()} for q, docs in truth.items()}  # lenient, monotone
    raw = ppi_run(human, shifted, run, [measure], name="A")[measure]
    calibrated = ppi_run(human, shifted, run, [measure], name="A", calibrate="isotonic")[measure]
    want = ppi_mean(
        pd.DataFrame({"A": _per_query(truth, run, measure)}),
        pd.DataFrame({"A": _per_query(human, run, measure)}),
        variance="overlap",  # a calibrated judge's interval (ppi_run)
    )["A"]
    # every fold's map sends judge grade g + 1 back to g: the judge's metric is the humans' on every query
    assert calibrated.estimate == pytest.approx(want.estimate) and calibrated.width == pytest.approx(
        want.width
    )
    # P@3 counts grade >= 1: the raw judge calls every document relevant, the calibrated one does not
    assert calibrated.width < raw.width or measure != "P@3"
    assert (calibrated.n_human, calibrated.n_total) == (raw.n_human, raw.n_total) == (15, 30)


def test_the_judges_confidence_separates_what_its_grade_alone_cannot():
    truth, human, run = _world(2)
    binary = {q: {d: int(g >= 1) for d, g in docs.items()} for q, docs in truth.items()}
    human = {q: binary[q] for q in human}
    # the judge calls every relevant document and every third non-relevant one relevant; it is sure of
    # the first (1.0), unsure of the second (0.6), sure of its zeros
    judge, confidence = {}, {}
    for i, (q, docs) in enumerate(binary.items()):
        for j, (d, g) in enumerate(docs.items()):
            lenient = g == 0 and (i + j) % 3 == 0
            judge.setdefault(q, {})[d] = 1 if g or lenient else 0
            confidence.setdefault(q, {})[d] = 0.6 if lenient else 1.0
    want = ppi_mean(
        pd.DataFrame({"A": _per_query(binary, run, "P@3")}),
        pd.DataFrame({"A": _per_query(human, run, "P@3")}),
        variance="overlap",  # a calibrated judge's interval (ppi_run)
    )["A"]
    blind = ppi_run(human, judge, run, ["P@3"], name="A", calibrate="isotonic")["P@3"]
    sure = ppi_run(human, judge, run, ["P@3"], name="A", calibrate="isotonic", judge_confidence=confidence)
    frame = pd.DataFrame(
        [(q, d, c) for q, docs in confidence.items() for d, c in docs.items()],
        columns=["query_id", "doc_id", "confidence"],
    )
    from_frame = ppi_run(human, judge, run, ["P@3"], name="A", calibrate="isotonic", judge_confidence=frame)
    assert sure["P@3"].estimate == pytest.approx(want.estimate) and sure["P@3"].width == pytest.approx(
        want.width
    )
    assert from_frame == sure
    assert blind.width > sure["P@3"].width


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"calibrate": "platt"}, "calibrate must be 'isotonic'; got 'platt'"),
        ({"calibrate": "isotonic", "draws": 0}, "draws must be an int >= 1; got 0"),
        ({"calibrate": "isotonic", "folds": 1}, "folds must be an int >= 2; got 1"),
        ({"calibrate": "isotonic", "judge_confidence": [0.5]}, "judge_confidence must be a mapping"),
    ],
)
def test_bad_calibration_options_are_refused_by_name(options, message):
    truth, human, run = _world(3, queries=6)
    with pytest.raises(QrelForgeError, match=f"^{message}"):
        ppi_run(human, truth, run, ["P@3"], name="A", **options)


def test_a_fold_without_a_pair_to_learn_from_is_an_error():
    judge = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 0}}
    human = {"q1": {"d1": 1}, "q2": {"dX": 0}}  # q2's human pair was never judged by the machine
    with pytest.raises(QrelForgeError, match=r"^calibration: fold \d of 2 leaves no pair labelled by both"):
        ppi_run(human, judge, {"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]}, ["P@1"], calibrate="isotonic")


def test_a_human_querys_judge_value_comes_from_the_map_fitted_without_it():
    # the judge says 1 everywhere; humans gave qA's documents 0 and qB's 2. With two folds, qA's value
    # comes from the map fitted on qB alone (1 -> 2: P@1 = 1), qB's from the one fitted on qA (1 -> 0:
    # P@1 = 0), and the queries no human judged take their mean. A map fitted on both would give ~0.5 each.
    docs = ["d1", "d2", "d3"]
    queries = ["qA", "qB", "q3", "q4", "q5"]
    judge = {q: dict.fromkeys(docs, 1) for q in queries}
    human = {"qA": dict.fromkeys(docs, 0), "qB": dict.fromkeys(docs, 2)}
    run = {q: docs for q in queries}
    got = ppi_run(human, judge, run, ["P@1"], name="A", calibrate="isotonic", folds=2)["P@1"]
    want = ppi_mean(
        pd.DataFrame({"A": [1.0, 0.0, 0.5, 0.5, 0.5]}, index=queries),
        pd.DataFrame({"A": [0.0, 1.0]}, index=["qA", "qB"]),
        variance="overlap",  # a calibrated judge's interval (ppi_run)
    )["A"]
    assert got == want
