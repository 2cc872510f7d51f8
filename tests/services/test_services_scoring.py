"""Services of the Score page (services.scoring) and single sign-on (services.sso), on SQLite and
PostgreSQL."""

from __future__ import annotations

import re

import pytest

from annotate_app.services import labels, pooling, queue, scoring, sso
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import InvalidInput, NotFound, PermissionDenied
from metrics.evaluate import evaluate
from metrics.formats import read_run
from metrics.retrieval.bm25 import bm25_run

SAMPLE = "sample_corpus"


def test_a_stored_run_scores_as_its_file(demo, actors):
    run = scoring.stored_run(demo, actors["rita"], "demo", "scheme_a")
    assert run.name == "scheme_a" and len(run) == 9
    qrels = f"{SAMPLE}/qrels.trec"
    measures = ["P@3", "nDCG@3", "AP"]
    assert (
        evaluate(qrels, run, measures).mean
        == evaluate(qrels, read_run(f"{SAMPLE}/run_a.trec"), measures).mean
    )


@pytest.mark.parametrize(
    ("user", "error", "message"),
    [
        ("alice", PermissionDenied, "alice (annotator) may not read runs: reviewer role required"),
        ("rita", NotFound, "run 'nope' does not exist in project 'demo'"),
    ],
)
def test_stored_run_refusals(demo, actors, user, error, message):
    with pytest.raises(error, match=re.escape(message)):
        scoring.stored_run(demo, actors[user], "demo", "nope")


def test_bm25_baseline_equals_the_library_on_the_same_corpus(demo, actors):
    run = scoring.bm25_baseline(demo, actors["rita"], "demo", k=5)
    expected = bm25_run(f"{SAMPLE}/docs.jsonl", f"{SAMPLE}/queries.jsonl", k=5)
    assert run.to_dict() == expected.to_dict()


@pytest.mark.parametrize(
    ("k", "message"), [(0, "k must be an int >= 1; got 0"), (True, "k must be an int >= 1; got True")]
)
def test_bm25_baseline_checks_k(demo, actors, k, message):
    with pytest.raises(InvalidInput, match=re.escape(message)):
        scoring.bm25_baseline(demo, actors["rita"], "demo", k=k)


def test_label_table_has_current_labels_of_pairs_not_excluded(demo, actors):
    seen = {}
    for name in ("alice", "bob"):
        view = queue.next_pair(demo, actors[name], "demo")
        labels.save_label(demo, actors[name], "demo", view.pair_id, grade=2, reason="first look")
        labels.save_label(
            demo, actors[name], "demo", view.pair_id, grade=3, reason="second look", expected_version=1
        )
        seen[name] = (view.query_id, view.doc_id)
    table = scoring.label_table(demo, actors["rita"], "demo")
    assert sorted(table.itertuples(index=False, name=None)) == sorted(
        (*seen[name], name, 3) for name in ("alice", "bob")
    )
    pooling.exclude_pair(demo, actors["rita"], "demo", *seen["alice"], reason="duplicate")
    rows = scoring.label_table(demo, actors["rita"], "demo").to_dict("records")
    assert rows == [{"query_id": seen["bob"][0], "doc_id": seen["bob"][1], "annotator": "bob", "grade": 3}]


def test_queue_pairs_adds_manual_pairs_once_and_reports_the_rest(demo, actors):
    report = scoring.queue_pairs(
        demo,
        actors["rita"],
        "demo",
        [("q1", "D5"), ("q1", "D5"), ("q1", "D1"), ("q9", "D1"), ("q2", "D99")],
        note="from bm25",
    )
    assert (report.added, report.already_pooled, report.unknown) == (1, 1, (("q9", "D1"), ("q2", "D99")))
    assert report.message == (
        "1 pair sent to the judging queue; 1 already in the pool; 2 unknown to the project (first: q9 D1)"
    )
    pairs = pooling.list_pairs(demo, actors["rita"], "demo")
    added = pairs[pairs["origin"] == "manual"]
    assert added[["query_id", "doc_id", "note"]].to_dict("records") == [
        {"query_id": "q1", "doc_id": "D5", "note": "from bm25"}
    ]
    again = scoring.queue_pairs(demo, actors["rita"], "demo", [("q1", "D5")])
    assert (again.added, again.already_pooled) == (0, 1)


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([], "pairs must name at least one (query_id, doc_id) pair"),
        ([("q1",)], "pairs must be (query_id, doc_id) string pairs; got ('q1',)"),
        ([("q1", 3)], "pairs must be (query_id, doc_id) string pairs; got ('q1', 3)"),
    ],
)
def test_queue_pairs_checks_its_input(demo, actors, pairs, message):
    with pytest.raises(InvalidInput, match=re.escape(message)):
        scoring.queue_pairs(demo, actors["rita"], "demo", pairs)


def test_queue_pairs_needs_a_reviewer(demo, actors):
    with pytest.raises(
        PermissionDenied, match=re.escape("alice (annotator) may not add pairs: reviewer role")
    ):
        scoring.queue_pairs(demo, actors["alice"], "demo", [("q1", "D5")])


@pytest.mark.parametrize(
    ("email", "kwargs", "expected"),
    [
        ("Alice@Example.com", {"users": {"alice@example.com": "alice"}}, "alice"),
        ("bob@example.com", {"domain": "example.com"}, "bob"),
        ("bob@example.com.evil", {"domain": "example.com"}, None),
        ("bob@example.com", {"domain": "example.com", "verified": False}, None),
        ("Bad Name@example.com", {"domain": "example.com"}, None),
        ("no-at-sign", {"domain": "example.com"}, None),
        (None, {"users": {"x@y.z": "x"}}, None),
    ],
)
def test_username_for(email, kwargs, expected):
    assert sso.username_for(email, **kwargs) == expected


def test_sso_actor_for_an_active_user_only(demo):
    actor = sso.sso_actor(demo, "rita", identity="rita@example.com", verified=True)
    assert (actor.username, actor.role.value) == ("rita", "reviewer")
    from annotate_app.services import audit, users

    assert audit.audit_log(demo, SYSTEM, action="login_sso")[0].details == {"identity": "rita@example.com"}
    users.deactivate(demo, SYSTEM, "rita")
    with pytest.raises(PermissionDenied, match=re.escape("rita@example.com has no active QrelForge account")):
        sso.sso_actor(demo, "rita", identity="rita@example.com", verified=True)
    with pytest.raises(
        PermissionDenied, match=re.escape("ghost@example.com has no active QrelForge account")
    ):
        sso.sso_actor(demo, "ghost", identity="ghost@example.com", verified=True)
    with pytest.raises(PermissionDenied, match=re.escape("x@example.com has no active QrelForge account")):
        sso.sso_actor(demo, "bo\x00b", identity="x@example.com", verified=True)
    assert authenticate(demo, "bob", "bob-demo").username == "bob"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda db, a: scoring.stored_run(db, a, "demo", "run\x00"),
            "run name contains a NUL character (U+0000)",
        ),
        (
            lambda db, a: scoring.queue_pairs(db, a, "demo", [("q1", "D\x005")]),
            "pairs must be (query_id, doc_id) string pairs; got ('q1', 'D\\x005')",
        ),
        (
            lambda db, a: scoring.queue_pairs(db, a, "demo", [("q1", "D5")], note="n\x00"),
            "note contains a NUL character (U+0000)",
        ),
    ],
)
def test_unstorable_text_is_refused_before_the_database(demo, actors, call, message):
    with pytest.raises(InvalidInput, match=re.escape(message)):
        call(demo, actors["rita"])
