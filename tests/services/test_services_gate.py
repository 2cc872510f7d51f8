"""The agreement gate: verdicts per pair, figures from metrics.agreement, the disagreement queue,
adjudication."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from annotate_app.services import adjudication, gate, labels, pooling, projects, queue
from annotate_app.services._gate_state import classify
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import Conflict, InvalidInput, PermissionDenied
from metrics import agreement

# (grades of one pair, N, cut-off) -> (complete, unanimous, majority, disagreement, accepted grade)
VERDICTS = [
    ([2, 2], 2, 1, (True, True, False, False, 2)),
    ([2, 3], 2, 1, (True, False, False, True, -1)),  # N = 2: any difference is a disagreement
    ([0, 3], 2, 1, (True, False, False, True, -1)),
    ([3], 2, 1, (False, False, False, False, 3)),  # incomplete: no verdict yet
    ([2, 2, 3], 3, 1, (True, False, True, False, 2)),  # majority on one side of the cut-off
    ([0, 0, 3], 3, 1, (True, False, False, True, -1)),  # majority but straddles the cut-off
    ([0, 0, 3], 3, 4, (True, False, True, False, 0)),
    ([0, 1, 2], 3, 1, (True, False, False, True, -1)),  # no majority
]


@pytest.mark.parametrize(("grades", "n", "cutoff", "expected"), VERDICTS)
def test_verdicts(grades, n, cutoff, expected):
    table = pd.DataFrame(
        {
            "pair_id": [7] * len(grades),
            "annotator_id": range(len(grades)),
            "grade": grades,
            "label_id": range(10, 10 + len(grades)),
            "stale": [0] * len(grades),
        }
    )
    row = classify(table, n, cutoff).iloc[0]
    assert (
        bool(row.complete),
        bool(row.unanimous),
        bool(row.majority),
        bool(row.disagreement),
        row.grade,
    ) == expected
    assert row.label_state == ",".join(str(i) for i in range(10, 10 + len(grades)))


# The sample qrels as alice's grades; bob differs on two pairs.
SAMPLE = {
    ("q1", "D1"): 2,
    ("q1", "D2"): 3,
    ("q1", "D3"): 0,
    ("q1", "D4"): 0,
    ("q2", "D1"): 0,
    ("q2", "D3"): 3,
    ("q2", "D4"): 0,
    ("q2", "D6"): 0,
    ("q3", "D3"): 0,
    ("q3", "D4"): 0,
    ("q3", "D5"): 3,
    ("q3", "D6"): 2,
}
BOB = {**SAMPLE, ("q1", "D1"): 3, ("q2", "D4"): 2}


def judge(db, actor, grades: dict) -> None:
    while (view := queue.next_pair(db, actor, "demo")) is not None:
        labels.save_label(
            db,
            actor,
            "demo",
            view.pair_id,
            grade=grades[(view.query_id, view.doc_id)],
            reason=f"{actor.username} read it",
        )


@pytest.fixture
def judged(demo, actors):
    judge(demo, actors["alice"], SAMPLE)
    judge(demo, actors["bob"], BOB)
    return demo


def _reference(settings_mode: str) -> dict:
    rows = [(k, "alice", v) for k, v in SAMPLE.items()] + [(k, "bob", v) for k, v in BOB.items()]
    table = pd.DataFrame(rows, columns=["item", "rater", "label"])
    table["item"] = table["item"].astype(str)
    opts = (
        {"labels": [0, 1, 2, 3], "cutoff": 1}
        if settings_mode == "binary"
        else {"labels": [0, 1, 2, 3], "weights": "linear"}
    )
    return agreement.agreement_summary(
        table, level="nominal" if settings_mode == "binary" else "ordinal", **opts
    )


@pytest.mark.parametrize("mode", ["binary", "weighted"])
def test_agreement_matches_metrics(judged, actors, mode):
    projects.update_settings(judged, SYSTEM, "demo", agreement_mode=mode)
    summary = gate.agreement(judged, actors["rita"], "demo")
    ref = _reference(mode)
    assert summary.value == pytest.approx(ref["mean_pairwise_kappa"])
    assert summary.krippendorff_alpha == pytest.approx(ref["krippendorff_alpha"])
    assert summary.fleiss_kappa == pytest.approx(ref["fleiss_kappa"])
    assert (summary.n_pairs, summary.n_annotators, summary.n_labels) == (12, 2, 24)
    assert (summary.disagreements, summary.unadjudicated) == (2, 2)
    assert summary.pairwise.loc["alice", "bob"] == pytest.approx(ref["mean_pairwise_kappa"])
    assert int(summary.pairwise_n.loc["alice", "bob"]) == 12
    assert list(summary.per_query["query_id"]) == ["q1", "q2", "q3"]


def test_binary_figures_by_hand(judged, actors):
    summary = gate.agreement(judged, actors["rita"], "demo")
    # binary at cut-off 1: bob's (q2, D4) = 2 is the only relevance flip; 11/12 agree
    assert summary.percent_agreement == pytest.approx(11 / 12)
    assert (summary.statistic, summary.threshold, summary.mode, summary.weights) == (
        "cohen",
        0.7,
        "binary",
        None,
    )
    assert summary.passes and summary.band == agreement.interpret(summary.value)


@pytest.mark.parametrize(
    ("statistic", "key"), [("fleiss", "fleiss_kappa"), ("krippendorff", "krippendorff_alpha")]
)
def test_statistic_choice(judged, actors, statistic, key):
    projects.update_settings(judged, SYSTEM, "demo", statistic=statistic)
    assert gate.agreement(judged, actors["rita"], "demo").value == pytest.approx(_reference("binary")[key])


def test_disagreement_queue_worst_first(judged, actors):
    queue_ = gate.disagreements(judged, actors["rita"], "demo")
    assert [(d.query_id, d.doc_id) for d in queue_] == [("q2", "D4"), ("q1", "D1")]  # 0 vs 2 before 2 vs 3
    first = queue_[0]
    assert [(x.annotator, x.grade, x.reason) for x in first.labels] == [
        ("alice", 0, "alice read it"),
        ("bob", 2, "bob read it"),
    ]
    assert first.doc_title and first.query_text and first.adjudication is None and not first.resolved
    assert first.spread == 2.0


def test_adjudication_resolves_and_an_edit_reopens(judged, actors):
    rita, bob = actors["rita"], actors["bob"]
    worst = gate.disagreements(judged, rita, "demo")[0]
    info = adjudication.adjudicate(judged, rita, "demo", worst.pair_id, grade=0, reason="repair, not returns")
    assert (info.reviewer, info.grade, info.valid) == ("rita", 0, True)
    assert [d.pair_id for d in gate.disagreements(judged, rita, "demo")] != [worst.pair_id]
    resolved = gate.disagreements(judged, rita, "demo", include_resolved=True)
    assert next(d for d in resolved if d.pair_id == worst.pair_id).resolved
    labels.save_label(judged, bob, "demo", worst.pair_id, grade=1, reason="on reflection only related")
    assert not adjudication.get_adjudication(judged, rita, "demo", worst.pair_id).valid
    assert worst.pair_id in [d.pair_id for d in gate.disagreements(judged, rita, "demo")]


def test_only_disagreements_can_be_adjudicated(judged, actors):
    rita = actors["rita"]
    unanimous = pooling.get_pair_info(judged, SYSTEM, "demo", "q1", "D2").pair_id
    with pytest.raises(Conflict, match=f"pair {unanimous} is not a disagreement"):
        adjudication.adjudicate(judged, rita, "demo", unanimous, grade=3, reason="I know better")
    worst = gate.disagreements(judged, rita, "demo")[0]
    with pytest.raises(PermissionDenied, match=re.escape("alice (annotator) may not adjudicate")):
        adjudication.adjudicate(
            judged, actors["alice"], "demo", worst.pair_id, grade=3, reason="mine is right"
        )


def test_confusion_between_two_annotators(judged, actors):
    c = gate.confusion(judged, actors["rita"], "demo", "alice", "bob")
    assert c.n_pairs == 12 and int(c.table.to_numpy().sum()) == 12
    assert (int(c.table.loc[0, 2]), int(c.table.loc[2, 3]), int(c.table.loc[0, 0])) == (1, 1, 6)
    assert c.kappa == pytest.approx(gate.agreement(judged, actors["rita"], "demo").value)


def test_blockers(demo, actors):
    empty = gate.blockers(demo, actors["rita"], "demo")
    assert empty.no_pairs and empty.missing_labels == 12 and not empty.ok and math.isnan(empty.agreement)
    judge(demo, actors["alice"], SAMPLE)
    judge(demo, actors["bob"], BOB)
    block = gate.blockers(demo, actors["rita"], "demo")
    assert block.hard == ("2 disagreements are not adjudicated",) and not block.below_threshold


def test_gate_needs_a_reviewer(demo, actors):
    with pytest.raises(PermissionDenied, match=re.escape("alice (annotator) may not see agreement")):
        gate.agreement(demo, actors["alice"], "demo")


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ({"offset": "x"}, "offset must be an int >= 0; got 'x'"),
        ({"offset": -1}, "offset must be an int >= 0; got -1"),
        ({"offset": True}, "offset must be an int >= 0; got True"),
        ({"offset": 2.0}, "offset must be an int >= 0; got 2.0"),
        ({"limit": 0}, "limit must be an int >= 1; got 0"),
        ({"limit": False}, "limit must be an int >= 1; got False"),
        ({"limit": "50"}, "limit must be an int >= 1; got '50'"),
    ],
)
def test_disagreements_refuse_a_bad_page(demo, actors, page, message):
    with pytest.raises(InvalidInput, match=f"^{re.escape(message)}$"):
        gate.disagreements(demo, actors["rita"], "demo", **page)
