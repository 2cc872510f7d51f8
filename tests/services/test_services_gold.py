"""Gold pairs: marking them (by hand, from adjudications, from prior qrels), the queue's gold draw, and gold
labels kept out of agreement — on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from annotate_app.services import _gold_draw, adjudication, gold, imports, labels, projects, queue, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import InvalidInput, NotFound
from annotate_app.store import annotation
from annotate_app.store.enums import ClaimDraw
from annotate_app.store.models import Assignment

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"


@pytest.fixture
def always_gold(monkeypatch):
    """Every claim of a project with a gold rate comes up gold (the draw's coin forced)."""
    monkeypatch.setattr(_gold_draw.random, "random", lambda: 0.0)


def test_add_list_and_remove_by_hand(demo, actors):
    rita = actors["rita"]
    added = gold.add_gold(demo, rita, "demo", "q1", "D1", grade=2, explanation="answers half of it")
    assert (added.query_id, added.doc_id, added.grade, added.source) == ("q1", "D1", 2, "hand")
    gold.add_gold(demo, rita, "demo", "q1", "D1", grade=3, explanation="answers all of it")  # replaces
    assert [(g.query_id, g.doc_id, g.grade, g.explanation) for g in gold.list_gold(demo, rita, "demo")] == [
        ("q1", "D1", 3, "answers all of it")
    ]
    gold.remove_gold(demo, rita, "demo", "q1", "D1")
    assert gold.list_gold(demo, rita, "demo") == []
    with pytest.raises(NotFound, match="not a gold pair"):
        gold.remove_gold(demo, rita, "demo", "q1", "D1")


BAD_ADDS = [  # (query, doc, grade, explanation, error, message)
    ("q1", "D1", 7, "a fine explanation", InvalidInput, "grade must be one of"),
    ("q1", "D1", 1, "no", InvalidInput, "explanation"),
    ("q1", "NOPE", 1, "a fine explanation", NotFound, "is not in the pool"),
]


@pytest.mark.parametrize(("query", "doc", "grade", "explanation", "error", "message"), BAD_ADDS)
def test_bad_gold_is_refused_and_stores_nothing(demo, actors, query, doc, grade, explanation, error, message):
    with pytest.raises(error, match=message):
        gold.add_gold(demo, actors["rita"], "demo", query, doc, grade=grade, explanation=explanation)
    assert gold.list_gold(demo, actors["rita"], "demo") == []


@pytest.mark.parametrize("rate", [-0.1, 1.0, float("nan"), "0.1", True])
def test_the_gold_rate_is_a_share_below_one(demo, actors, rate):
    with pytest.raises(InvalidInput, match="gold rate"):
        gold.set_gold_rate(demo, actors["rita"], "demo", rate)


def _label_all(db, who, grade_of=lambda view: 1) -> None:
    while (view := queue.next_pair(db, who, "demo")) is not None:
        labels.save_label(db, who, "demo", view.pair_id, grade=grade_of(view), reason="judged it")


def test_from_adjudications_takes_the_latest_grade_and_reason(demo, actors):
    alice, bob, rita = actors["alice"], actors["bob"], actors["rita"]
    _label_all(demo, alice, lambda v: 0)
    _label_all(demo, bob, lambda v: 3 if (v.query_id, v.doc_id) == ("q1", "D1") else 0)
    pair_id = pairs_by_key(demo, rita)[("q1", "D1")]
    adjudication.adjudicate(demo, rita, "demo", pair_id, grade=1, reason="partly on topic")
    assert gold.gold_from_adjudications(demo, rita, "demo") == 1
    assert [
        (g.query_id, g.doc_id, g.grade, g.explanation, g.source) for g in gold.list_gold(demo, rita, "demo")
    ] == [("q1", "D1", 1, "partly on topic", "adjudication")]


def test_from_prior_qrels_takes_their_grades(demo, actors):
    rita = actors["rita"]
    imports.import_qrels(demo, SYSTEM, "demo", SAMPLE / "qrels.trec", name="prior")
    expected = {(q, d): int(g) for q, _, d, g in (line.split() for line in (SAMPLE / "qrels.trec").open())}
    pool = pairs_by_key(demo, rita)
    added = gold.gold_from_prior(demo, rita, "demo", "prior", explanation="the earlier campaign's grade")
    listed = {(g.query_id, g.doc_id): g.grade for g in gold.list_gold(demo, rita, "demo")}
    assert added == len(listed) > 0
    assert listed == {k: v for k, v in expected.items() if k in pool}
    with pytest.raises(NotFound, match="judged none"):
        gold.gold_from_prior(demo, rita, "demo", "nothing", explanation="the earlier campaign's grade")


def pairs_by_key(db, rita) -> dict[tuple[str, str], int]:
    from annotate_app.services import pooling

    table = pooling.list_pairs(db, rita, "demo", limit=1000)
    return {(r.query_id, r.doc_id): int(r.pair_id) for r in table.itertuples()}


def test_gold_pairs_reach_every_annotator_beyond_n_and_stay_out_of_agreement(demo, actors, always_gold):
    """N = 2, yet alice, bob and carol all get the gold pair first; its view carries no mark of gold; their
    labels are stored, and agreement's label columns leave them out."""
    rita = actors["rita"]
    users.create_user(demo, SYSTEM, "carol", "carol-password")
    projects.assign(demo, SYSTEM, "demo", ["carol"])
    carol = authenticate(demo, "carol", "carol-password")
    target = gold.add_gold(demo, rita, "demo", "q2", "D1", grade=0, explanation="off topic entirely")
    gold.set_gold_rate(demo, rita, "demo", 0.5)
    views = []
    for who in (actors["alice"], actors["bob"], carol):
        view = queue.next_pair(demo, who, "demo")
        assert view.pair_id == target.pair_id
        views.append(view)
        labels.save_label(demo, who, "demo", view.pair_id, grade=0, reason="off topic")
    assert {f.name for f in dataclasses.fields(views[0])}.isdisjoint({"gold", "expected", "explanation"})
    second = queue.next_pair(demo, actors["alice"], "demo")  # no gold pair left for her: an ordinary draw
    assert second.pair_id != target.pair_id
    with demo.read() as s:
        draws = {a.draw for a in s.query(Assignment).filter(Assignment.pair_id == target.pair_id)}
        counted = set(annotation.current_labels(s, _project_id(s)).get("pair_id").tolist())
    assert draws == {ClaimDraw.GOLD}
    assert target.pair_id not in counted


def test_no_gold_rate_no_gold_draw(demo, actors, always_gold):
    gold.add_gold(demo, actors["rita"], "demo", "q2", "D1", grade=0, explanation="off topic entirely")
    view = queue.next_pair(demo, actors["alice"], "demo")
    assert _draw(demo, view.pair_id) == ClaimDraw.DEFAULT


def _draw(db, pair_id: int) -> str | None:
    with db.read() as s:
        return s.query(Assignment.draw).filter(Assignment.pair_id == pair_id).scalar()


def _project_id(s) -> int:
    from annotate_app.store.models import Project

    return s.query(Project.id).filter(Project.name == "demo").scalar()
