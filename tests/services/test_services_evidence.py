"""Evidence passages on labels: stored with the label (versioned, idempotent), refused when bad (messages
naming the span and the document length), asked for by the project setting, carried on re-import."""

from __future__ import annotations

import json

import pytest

from annotate_app.services import imports, labels, pooling, projects, queue, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import DocumentChanged, InvalidInput

TEXT = "The battery lasts ten hours. Charge it overnight. The screen is bright."  # 71 characters
#       0         1         2         3         4         5         6         7
#       01234567890123456789012345678901234567890123456789012345678901234567890


def _docs(text: str) -> bytes:
    return (json.dumps({"doc_id": "D0", "title": "phone", "text": text}) + "\n").encode()


@pytest.fixture
def project(db):
    """Project ``ev`` (evidence optional, one pair q0 · D0 with `TEXT`); returns (db, annotator actor)."""
    projects.create_project(db, SYSTEM, "ev", annotators_per_pair=1, evidence="optional")
    imports.import_documents(db, SYSTEM, "ev", _docs(TEXT), filename="docs.jsonl")
    imports.import_queries(
        db, SYSTEM, "ev", b'{"query_id": "q0", "text": "battery life"}\n', filename="q.jsonl"
    )
    imports.import_run(db, SYSTEM, "ev", b"q0 Q0 D0 1 1 sys\n", filename="run.trec")
    pooling.pool(db, SYSTEM, "ev", depth=1)
    users.create_user(db, SYSTEM, "ann", "ann-password-1")
    projects.assign(db, SYSTEM, "ev", ["ann"])
    return db, authenticate(db, "ann", "ann-password-1")


def _save(db, actor, evidence, grade=2, **kw):
    view = queue.next_pair(db, actor, "ev")
    pair_id = view.pair_id if view is not None else 1
    return labels.save_label(db, actor, "ev", pair_id, grade=grade, reason="because", evidence=evidence, **kw)


BAD_SPANS = [
    ([(5, 5)], "evidence: span [5, 5) is empty (document length 71)"),
    ([(60, 80)], "evidence: span [60, 80) is out of range (document length 71)"),
    ([(-1, 3)], "evidence: span [-1, 3) is out of range (document length 71)"),
    ([(0, 10), (5, 20)], "evidence: spans [0, 10) and [5, 20) overlap (document length 71)"),
    ([(9, 3)], "evidence: span [9, 3) ends before it starts (document length 71)"),
    ("0-5", "evidence must be a list of (start, end) pairs; got '0-5'"),
]


@pytest.mark.parametrize(("evidence", "message"), BAD_SPANS)
def test_bad_spans_are_refused_naming_the_span_and_the_length(project, evidence, message):
    db, actor = project
    with pytest.raises(InvalidInput) as caught:
        _save(db, actor, evidence)
    assert str(caught.value) == message
    assert labels.my_labels(db, actor, "ev") == []


def test_spans_are_stored_with_the_label_sorted_and_a_resave_adds_nothing(project):
    db, actor = project
    first = _save(db, actor, [(29, 49), (4, 27)])
    assert (first.evidence, first.evidence_version, first.version) == (((4, 27), (29, 49)), 1, 1)
    again = _save(db, actor, [(4, 27), (29, 49)], expected_version=1)
    assert (again.version, again.label_id) == (1, first.label_id)  # idempotent
    edited = _save(db, actor, [(4, 27)], expected_version=1)
    assert (edited.version, edited.evidence) == (2, ((4, 27),))  # only the passages changed: a new version
    history = labels.pair_history(db, SYSTEM, "ev", first.pair_id)
    assert [(h.version, h.evidence) for h in history] == [(2, ((4, 27),)), (1, ((4, 27), (29, 49)))]
    assert labels.my_labels(db, actor, "ev")[0].evidence == ((4, 27),)


SETTING = [  # (setting, grade, evidence, message or None)
    ("off", 2, [(0, 3)], "project 'ev' does not collect evidence (its evidence setting is off)"),
    ("off", 2, None, None),
    ("optional", 2, None, None),
    ("required", 2, None, "grade 2 needs evidence: mark at least one passage (required for grades >= 1)"),
    ("required", 2, [], "grade 2 needs evidence: mark at least one passage (required for grades >= 1)"),
    ("required", 0, None, None),
    ("required", 1, [(0, 3)], None),
]


@pytest.mark.parametrize(("setting", "grade", "evidence", "message"), SETTING)
def test_the_project_setting(project, setting, grade, evidence, message):
    db, actor = project
    projects.update_settings(db, SYSTEM, "ev", evidence=setting)
    if message is None:
        assert _save(db, actor, evidence, grade=grade).grade == grade
    else:
        with pytest.raises(InvalidInput) as caught:
            _save(db, actor, evidence, grade=grade)
        assert str(caught.value) == message


def test_a_bad_setting_is_refused(project):
    db, _ = project
    with pytest.raises(InvalidInput) as caught:
        projects.update_settings(db, SYSTEM, "ev", evidence="always")
    assert str(caught.value) == "evidence must be one of 'off', 'optional', 'required'; got 'always'"


REIMPORT = [  # (new text, evidence then, stale then)
    ("Note: " + TEXT, ((10, 33), (35, 55)), ()),  # both moved by 6 characters
    (TEXT.replace("Charge it overnight.", "Never charge it."), ((4, 27),), ((29, 49),)),  # one text is gone
    (TEXT + " Charge it overnight.", ((4, 27),), ((29, 49),)),  # one text now occurs twice
]


@pytest.mark.parametrize(("new_text", "evidence", "stale"), REIMPORT)
def test_a_reimport_carries_each_span_whose_text_occurs_once_and_flags_the_rest(
    project, new_text, evidence, stale
):
    db, actor = project
    saved = _save(db, actor, [(4, 27), (29, 49)])
    imports.import_documents(db, SYSTEM, "ev", _docs(new_text), filename="docs2.jsonl")
    (now,) = labels.my_labels(db, actor, "ev")
    assert (now.evidence, now.stale_evidence, now.evidence_version, now.stale) == (evidence, stale, 2, True)
    assert now.label_id == saved.label_id


def test_spans_on_a_replaced_version_are_refused(project):
    db, actor = project
    view = queue.next_pair(db, actor, "ev")
    imports.import_documents(db, SYSTEM, "ev", _docs("Note: " + TEXT), filename="docs2.jsonl")
    with pytest.raises(DocumentChanged) as caught:
        labels.save_label(
            db, actor, "ev", view.pair_id, grade=2, reason="because", evidence=[(4, 27)], doc_version=1
        )
    assert str(caught.value) == (
        "this document changed while you read it; please judge it again "
        "(evidence [4, 27) is on version 1 (document length 71); the document is now version 2)"
    )


def test_a_release_carries_the_passages_and_its_hash_covers_them(demo):
    from app_helpers import PASSWORDS, judge_with_evidence

    from annotate_app.services import export, queue, releases

    pair_id = judge_with_evidence(demo, {"alice": [(0, 5)], "bob": [(3, 9)]})  # the same grade
    rita = authenticate(demo, "rita", PASSWORDS["rita"])
    release = releases.create_release(demo, rita, "demo", justification="a test release of the demo corpus")
    text = queue.get_pair(demo, authenticate(demo, "alice", PASSWORDS["alice"]), "demo", pair_id).doc_text
    lines = export.export_release(demo, rita, "demo", format="passages").decode().splitlines()
    passage = {"query_id": "q1", "doc_id": "D1", "doc_version": 1, "start": 0, "end": 9, "grade": 2}
    assert [json.loads(x) for x in lines] == [{**passage, "text": text[:9]}]  # the union of both
    trec = export.export_release(demo, rita, "demo", format="trec").decode()  # the integrity check passes
    assert release.content_hash == releases.sha256_text(trec + "q1\tD1\t1\t0\t9\t2\n")


def test_passage_agreement_pairwise_f1_and_unitizing_alpha(demo):
    """alice marks [0, 5) and bob [3, 9) of q1 · D1 (length n): overlap 2, F1 = 2·2 / (5 + 6) = 4/11. αu
    agrees with `metrics.agreement.unitizing_alpha` on the same spans and texts laid end to end."""
    import pandas as pd
    from app_helpers import PASSWORDS, judge_with_evidence, sample_grades

    from annotate_app.services import passage_agreement, queue
    from metrics.agreement import unitizing_alpha

    pair_id = judge_with_evidence(demo, {"alice": [(0, 5)], "bob": [(3, 9)]})
    rita = authenticate(demo, "rita", PASSWORDS["rita"])
    found = passage_agreement.passage_agreement(demo, rita, "demo")
    table = found.pairwise[["rater_a", "rater_b", "overlap", "f1"]].to_dict("records")
    assert table == [{"rater_a": "alice", "rater_b": "bob", "overlap": 2, "f1": pytest.approx(4 / 11)}]
    relevant = [key for key, grade in sample_grades().items() if grade >= 1]
    assert (found.n_pairs, found.n_passages, found.mean_f1) == (len(relevant), 2, pytest.approx(4 / 11))
    alice = authenticate(demo, "alice", PASSWORDS["alice"])
    lengths = {}
    for label in labels.my_labels(demo, alice, "demo", limit=100):
        if (label.query_id, label.doc_id) in relevant:
            lengths[label.pair_id] = len(queue.get_pair(demo, alice, "demo", label.pair_id).doc_text)
    spans = pd.DataFrame({"item": [pair_id, pair_id], "rater": ["r1", "r2"], "start": [0, 3], "end": [5, 9]})
    expected = unitizing_alpha(spans, lengths, raters=["r1", "r2"]).alpha
    assert found.alpha == pytest.approx(expected)


GATE = [  # (passage_threshold, what blocks a release)
    (None, None),
    (-1.0, None),
    (0.99, "passage agreement (unitizing alpha) {alpha:.3f} is below the passage threshold 0.990"),
]


@pytest.mark.parametrize(("threshold", "message"), GATE)
def test_a_release_may_be_gated_on_passage_agreement(demo, threshold, message):
    from app_helpers import PASSWORDS, judge_with_evidence

    from annotate_app.services import gate, passage_agreement, releases
    from annotate_app.services.errors import Conflict

    judge_with_evidence(demo, {"alice": [(0, 5)], "bob": [(3, 9)]})
    projects.update_settings(demo, SYSTEM, "demo", passage_threshold=threshold)
    rita = authenticate(demo, "rita", PASSWORDS["rita"])
    alpha = passage_agreement.passage_agreement(demo, rita, "demo").alpha
    if message is None:
        assert gate.blockers(demo, rita, "demo").hard == ()
        assert releases.create_release(demo, rita, "demo").version == 1
    else:
        assert gate.blockers(demo, rita, "demo").hard == (message.format(alpha=alpha),)
        assert releases.preview_release(demo, rita, "demo").blocked == (message.format(alpha=alpha),)
        with pytest.raises(Conflict) as caught:
            releases.create_release(demo, rita, "demo")
        assert str(caught.value) == "release blocked: " + message.format(alpha=alpha)


def test_a_bad_passage_threshold_is_refused(project):
    db, _ = project
    with pytest.raises(InvalidInput) as caught:
        projects.update_settings(db, SYSTEM, "ev", passage_threshold=2)
    assert str(caught.value) == "passage_threshold must be a number in [-1, 1] or None; got 2"


COMBINE = [  # (how, final passages of alice [(0, 5)] and bob [(3, 9)])
    ("union", ((0, 9),)),
    ("intersection", ((3, 5),)),
    ("alice", ((0, 5),)),
    ("bob", ((3, 9),)),
]


@pytest.mark.parametrize(("how", "final"), COMBINE)
def test_a_reviewer_adjudicates_the_passages_and_the_release_takes_them(demo, how, final):
    from app_helpers import PASSWORDS, judge_with_evidence

    from annotate_app.services import export, passage_adjudication, releases

    pair_id = judge_with_evidence(demo, {"alice": [(0, 5)], "bob": [(3, 9)]})
    rita = authenticate(demo, "rita", PASSWORDS["rita"])
    (item,) = passage_adjudication.passage_disagreements(demo, rita, "demo")
    assert (item.pair_id, item.spans, item.adjudicated) == (
        pair_id,
        {"alice": ((0, 5),), "bob": ((3, 9),)},
        None,
    )
    chosen = passage_adjudication.combine(item.spans, how)
    assert chosen == final
    saved = passage_adjudication.adjudicate_passages(
        demo, rita, "demo", pair_id, spans=chosen, reason="the answer"
    )
    assert saved == final
    assert passage_adjudication.passage_disagreements(demo, rita, "demo")[0].adjudicated == final
    releases.create_release(demo, rita, "demo")
    lines = export.export_release(demo, rita, "demo", format="passages").decode().splitlines()
    assert [(json.loads(x)["start"], json.loads(x)["end"]) for x in lines] == list(final)


ADJUDICATION_ERRORS = [
    ({"spans": [(0, 500)], "reason": "the answer"}, InvalidInput, "evidence: span [0, 500) is out of range"),
    ({"spans": [(0, 5)], "reason": "no"}, InvalidInput, "reason must have at least 5 characters; got 2"),
    ({"spans": [(0, 5)], "reason": "the answer", "pair_id": 2}, None, "pair 2 has no passage disagreement"),
]


@pytest.mark.parametrize(("call", "error", "message"), ADJUDICATION_ERRORS)
def test_a_bad_passage_adjudication_is_refused(demo, call, error, message):
    from app_helpers import PASSWORDS, judge_with_evidence

    from annotate_app.services import passage_adjudication
    from annotate_app.services.errors import Conflict

    pair_id = judge_with_evidence(demo, {"alice": [(0, 5)], "bob": [(3, 9)]})
    rita = authenticate(demo, "rita", PASSWORDS["rita"])
    args = {"pair_id": pair_id, **call}
    with pytest.raises(error or Conflict) as caught:
        passage_adjudication.adjudicate_passages(demo, rita, "demo", args.pop("pair_id"), **args)
    assert str(caught.value).startswith(message)
