"""Gold draws and the project's N: a gold pair is shown to every annotator beyond N, so its gold claims must
neither block lowering N nor take the ordinary slots the pair needs to be complete — on SQLite and
PostgreSQL."""

from __future__ import annotations

import json

import pytest

from annotate_app.services import _gold_draw, gold, labels, projects, queue, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import Conflict


@pytest.fixture
def carol(demo):
    users.create_user(demo, SYSTEM, "carol", "carol-password")
    projects.assign(demo, SYSTEM, "demo", ["carol"])
    return authenticate(demo, "carol", "carol-password")


def _gold_first(demo, monkeypatch, people) -> int:
    """Each of ``people`` claims and labels the gold pair (q2, D1) as a gold draw; returns its pair id."""
    target = gold.add_gold(demo, SYSTEM, "demo", "q2", "D1", grade=0, explanation="off topic entirely")
    gold.set_gold_rate(demo, SYSTEM, "demo", 0.5)
    with monkeypatch.context() as patch:
        patch.setattr(_gold_draw.random, "random", lambda: 0.0)  # the draw's coin comes up gold
        for who in people:
            view = queue.next_pair(demo, who, "demo")
            assert view.pair_id == target.pair_id
            labels.save_label(demo, who, "demo", view.pair_id, grade=0, reason="off topic")
    gold.set_gold_rate(demo, SYSTEM, "demo", 0.0)
    return target.pair_id


def test_gold_draws_do_not_block_lowering_n(demo, actors, carol, monkeypatch):
    """N = 3; alice, bob and carol get the gold pair as gold draws (3 claims, none of them ordinary):
    lowering N to 2 is allowed, and refused only for ordinary claims."""
    projects.update_settings(demo, SYSTEM, "demo", annotators_per_pair=3)
    _gold_first(demo, monkeypatch, [actors["alice"], actors["bob"], carol])
    assert (
        projects.update_settings(demo, SYSTEM, "demo", annotators_per_pair=2).settings.annotators_per_pair
        == 2
    )
    projects.update_settings(demo, SYSTEM, "demo", annotators_per_pair=3)
    for who in (actors["alice"], actors["bob"], carol):  # three ordinary labels on some pair
        while (view := queue.next_pair(demo, who, "demo")) is not None:
            labels.save_label(demo, who, "demo", view.pair_id, grade=1, reason="judged it")
    with pytest.raises(Conflict, match="cannot drop to 2: a pair already has 3 annotators"):
        projects.update_settings(demo, SYSTEM, "demo", annotators_per_pair=2)


def test_gold_draws_leave_the_ordinary_slots_to_the_queue(demo, actors, carol, monkeypatch):
    """N = 2; alice and bob had the gold pair as gold draws, which do not count: carol, then a fourth
    annotator, still get it from the ordinary queue, and the pair is complete."""
    pair_id = _gold_first(demo, monkeypatch, [actors["alice"], actors["bob"]])
    users.create_user(demo, SYSTEM, "dan", "dan-password")
    projects.assign(demo, SYSTEM, "demo", ["dan"])
    dan = authenticate(demo, "dan", "dan-password")
    seen = {who.username: set() for who in (carol, dan)}
    for who in (carol, dan):
        while (view := queue.next_pair(demo, who, "demo")) is not None:
            seen[who.username].add(view.pair_id)
            labels.save_label(demo, who, "demo", view.pair_id, grade=0, reason="judged it")
    assert pair_id in seen["carol"] and pair_id in seen["dan"]
    from annotate_app.services import gate

    assert gate.blockers(demo, SYSTEM, "demo").missing_labels == 0


def test_migration_0019_recounts_the_pairs_with_gold_claims(demo, db_url, actors, carol, monkeypatch):
    """Below 0019 the gold claims count in ``pairs.claimed`` (as they did); upgraded, they do not."""
    from alembic import command
    from sqlalchemy import text

    from annotate_app.store.migrate import _run, upgrade

    pair_id = _gold_first(demo, monkeypatch, [actors["alice"], actors["bob"], carol])

    def claimed() -> int:
        with demo.read() as s:
            return int(s.execute(text("SELECT claimed FROM pairs WHERE id = :p"), {"p": pair_id}).scalar())

    assert claimed() == 0
    demo.dispose()
    _run(db_url, lambda cfg: command.downgrade(cfg, "0013_run_models"))
    assert claimed() == 3
    upgrade(db_url)
    assert claimed() == 0


def test_skipping_or_expiring_a_gold_claim_gives_no_slot_back(demo, actors, carol, monkeypatch):
    """alice holds an ordinary claim of the gold pair; bob's gold claim expires and carol skips hers: the pair
    still counts alice's claim, one."""
    from sqlalchemy import text

    from annotate_app.store import annotation

    target = gold.add_gold(demo, SYSTEM, "demo", "q1", "D1", grade=0, explanation="off topic entirely")
    view = queue.next_pair(demo, actors["alice"], "demo")
    assert view.pair_id == target.pair_id  # the queue's first pair, claimed as an ordinary pair
    gold.set_gold_rate(demo, SYSTEM, "demo", 0.5)
    monkeypatch.setattr(_gold_draw.random, "random", lambda: 0.0)
    assert queue.next_pair(demo, actors["bob"], "demo").pair_id == target.pair_id
    assert queue.next_pair(demo, carol, "demo").pair_id == target.pair_id
    queue.skip(demo, carol, "demo", target.pair_id, reason="cannot read this")
    with demo.write() as s:
        project_id = s.execute(text("SELECT id FROM projects WHERE name = 'demo'")).scalar()
        bob_id = s.execute(text("SELECT id FROM users WHERE username = 'bob'")).scalar()
        assert annotation.expire_claims(s, project_id, annotator_id=bob_id) == 1
    with demo.read() as s:
        claimed = s.execute(text("SELECT claimed FROM pairs WHERE id = :p"), {"p": target.pair_id}).scalar()
    assert claimed == 1


def _imported(demo, grade: int, reason: str = "elsewhere") -> None:
    """Import alice's label of (q2, D1)."""
    from annotate_app.services import imports

    row = {"query_id": "q2", "doc_id": "D1", "annotator": "alice", "grade": grade, "reason": reason}
    imports.import_labels(demo, SYSTEM, "demo", (json.dumps(row) + "\n").encode(), fmt="jsonl")


def test_an_imported_label_on_a_held_gold_claim_is_an_ordinary_label(demo, actors, carol, monkeypatch):
    """N = 2; alice holds a gold claim of (q2, D1), unlabelled, when an import brings her label of it: the
    label counts as an ordinary one (in the gate's labels, one of the pair's N), once; bob's ordinary label
    completes the pair, so carol never gets it; against gold it is scored once."""
    from annotate_app.services import annotators, gate

    target = gold.add_gold(demo, SYSTEM, "demo", "q2", "D1", grade=0, explanation="off topic entirely")
    gold.set_gold_rate(demo, SYSTEM, "demo", 0.5)
    with monkeypatch.context() as patch:
        patch.setattr(_gold_draw.random, "random", lambda: 0.0)
        assert queue.next_pair(demo, actors["alice"], "demo").pair_id == target.pair_id  # a gold claim, held
    gold.set_gold_rate(demo, SYSTEM, "demo", 0.0)
    _imported(demo, 0)
    for who in (actors["bob"], carol):
        seen = set()
        while (view := queue.next_pair(demo, who, "demo")) is not None:
            seen.add(view.pair_id)
            labels.save_label(demo, who, "demo", view.pair_id, grade=1, reason="judged it")
        assert (target.pair_id in seen) == (who.username == "bob")
    assert gate.blockers(demo, SYSTEM, "demo").missing_labels == 0
    assert len(gate.disagreements(demo, SYSTEM, "demo")) == 1  # alice 0 against bob 1: counted
    rows = annotators.annotator_table(demo, SYSTEM, "demo").rows.set_index("annotator")
    assert (rows.loc["alice", "n_labels"], rows.loc["alice", "n_gold"]) == (1, 1)


def test_an_import_on_a_labelled_gold_claim(demo, actors, monkeypatch):
    """alice labelled (q2, D1) on a gold draw: an import of the same label writes nothing (it stays a gold
    draw's, holding no counted slot); a changed one is its next version, on a claim now ordinary (counted)."""
    from annotate_app.services import pooling

    def claimed() -> int:
        table = pooling.list_pairs(demo, SYSTEM, "demo", limit=1000).set_index("pair_id")
        return int(table.loc[pair_id, "claimed"])

    pair_id = _gold_first(demo, monkeypatch, [actors["alice"]])
    _imported(demo, 0, "off topic")
    assert claimed() == 0
    _imported(demo, 2)
    assert claimed() == 1
    mine = labels.my_labels(demo, actors["alice"], "demo")
    assert [(r.pair_id, r.version, r.grade) for r in mine] == [(pair_id, 2, 2)]
