"""The "nothing left" markers (issue 14, `store.exhausted`): a marked annotator is answered without a scan;
when no pair has a free slot, so is every member (the project's marker); and every event that can make a pair
claimable clears both."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from sqlalchemy import event, select, text

from annotate_app.services import imports, judges, labels, pooling, projects, queue, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.store import exhausted
from annotate_app.store.models import Assignment, ProjectMember, utcnow


def _drain(db, actor) -> list[int]:
    seen = []
    while (view := queue.next_pair(db, actor, "demo")) is not None:
        seen.append(view.pair_id)
        labels.save_label(db, actor, "demo", view.pair_id, grade=1, reason="judged it")
    return seen


@contextlib.contextmanager
def _statements(db) -> Iterator[list[str]]:
    """Every SQL statement sent on the database's engines inside the block."""
    seen: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", count)


def _marker(db, username: str) -> tuple:
    with db.read() as s:
        return tuple(
            s.execute(
                text(
                    "SELECT m.exhausted_epoch, p.queue_epoch FROM project_members m "
                    "JOIN users u ON u.id = m.user_id JOIN projects p ON p.id = m.project_id "
                    "WHERE u.username = :u AND p.name = 'demo'"
                ),
                {"u": username},
            ).one()
        )


def _full(db) -> tuple:
    """The project's marker: (full_epoch, queue_epoch)."""
    with db.read() as s:
        return tuple(
            s.execute(text("SELECT full_epoch, queue_epoch FROM projects WHERE name = 'demo'")).one()
        )


def _work(statements: list[str]) -> list[str]:
    return [q for q in statements if not q.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK"))]


@pytest.fixture
def carol(actors, demo):
    """A third annotator of the demo project, who has not asked for a pair yet."""
    users.create_user(demo, SYSTEM, "carol", "carol-password")
    projects.assign(demo, SYSTEM, "demo", ["carol"])
    return authenticate(demo, "carol", "carol-password")


@pytest.fixture
def held(actors, demo, carol) -> int:
    """N = 1; alice holds one pair (unlabelled), bob labelled the 11 others and was told "nothing left":
    every pair is at N, so the project's marker stands too (carol never asked)."""
    projects.update_settings(demo, SYSTEM, "demo", annotators_per_pair=1)
    pair = queue.next_pair(demo, actors["alice"], "demo").pair_id
    assert len(_drain(demo, actors["bob"])) == 11
    epoch, current = _marker(demo, "bob")
    assert epoch == current  # the marker stands
    assert _full(demo) == (current, current)  # and the project's
    return pair


def test_nothing_left_is_answered_from_the_marker(actors, demo, held):
    bob = actors["bob"]
    with _statements(demo) as seen:
        assert queue.next_pair(demo, bob, "demo") is None
    # the caller's user, project and membership (one statement; the membership carries the marker) and the
    # caller's own open claim (one statement, two one-row index seeks): nothing scans the project's pairs
    # (tests/services/test_hot_path_statements.py pins the exact count)
    assert not [q for q in seen if "FROM pairs" in q and "assignments.pair_id = pairs.id" in q], seen
    assert len(_work(seen)) <= 4
    # a slot freed behind the services' back (no event) stays hidden while the marker stands
    with demo.write() as s:
        s.execute(text("UPDATE pairs SET claimed = 0 WHERE id = :p"), {"p": held})
        s.execute(
            text("UPDATE assignments SET status = 'expired', slot = NULL WHERE pair_id = :p"), {"p": held}
        )
    assert queue.next_pair(demo, bob, "demo") is None
    with demo.write() as s:  # the safety net: a marker that ran out is ignored...
        s.execute(text("UPDATE project_members SET exhausted_until = :t"), {"t": _db_time(demo, -1)})
    assert queue.next_pair(demo, bob, "demo") is None  # ...but the project's still stands
    with demo.write() as s:
        s.execute(text("UPDATE projects SET full_until = :t"), {"t": _db_time(demo, -1)})
    assert queue.next_pair(demo, bob, "demo").pair_id == held


def test_with_no_free_slot_every_member_is_answered_from_the_project_marker(actors, demo, carol, held):
    with _statements(demo) as seen:
        assert queue.next_pair(demo, carol, "demo") is None  # carol never asked
    assert len(_work(seen)) == 2, seen  # her user, project and membership; her own open claim
    assert _marker(demo, "carol")[0] is None  # answered by the project's marker, not hers


def test_a_free_slot_the_caller_had_sets_only_the_callers_marker(actors, demo, carol):
    assert len(_drain(demo, actors["bob"])) == 12  # N = 2: every pair still has a slot free, for others
    assert _marker(demo, "bob")[0] == _marker(demo, "bob")[1]
    assert _full(demo)[0] is None
    assert queue.next_pair(demo, carol, "demo") is not None


def _db_time(db, seconds: float):
    at = utcnow() + timedelta(seconds=seconds)
    return at.replace(tzinfo=None) if db.is_sqlite else at


def test_a_marker_never_outlives_the_oldest_claim_timeout(actors, demo, held):
    projects.update_settings(demo, SYSTEM, "demo", claim_timeout_minutes=1)  # a settings change clears it
    assert queue.next_pair(demo, actors["bob"], "demo") is None
    bob = actors["bob"].user_id
    with demo.read() as s:
        until = s.get(ProjectMember, (s.get(Assignment, 1).project_id, bob)).exhausted_until
        assigned = s.scalars(select(Assignment.assigned_at).where(Assignment.pair_id == held)).one()
    assert exhausted._aware(until) == exhausted._aware(assigned) + timedelta(minutes=1)


def _skip(demo, actors, held):
    queue.skip(demo, actors["alice"], "demo", held, reason="not my field")


def _release(demo, actors, held):
    assert queue.release_stale_claims(demo, actors["rita"], "demo", older_than_minutes=0) == 1


def _raise_n(demo, actors, held):
    projects.update_settings(demo, SYSTEM, "demo", annotators_per_pair=2)


def _unassign_alice(demo, actors, held):
    projects.unassign(demo, SYSTEM, "demo", "alice")


def _add_a_pair(demo, actors, held):
    with demo.read() as s:
        query_id, doc_id = s.execute(
            text(
                "SELECT q.external_id, d.external_id FROM queries q, documents d WHERE NOT EXISTS "
                "(SELECT 1 FROM pairs p WHERE p.query_id = q.id AND p.document_id = d.id) "
                "ORDER BY q.id, d.id LIMIT 1"
            )
        ).one()
    pooling.add_pair(demo, SYSTEM, "demo", query_id, doc_id)


def _reimport_a_document(demo, actors, held):
    with demo.read() as s:
        doc = s.execute(
            text(
                "SELECT d.external_id FROM assignments a JOIN pairs p ON p.id = a.pair_id "
                "JOIN documents d ON d.id = p.document_id WHERE a.status = 'done' LIMIT 1"
            )
        ).scalar_one()
    line = json.dumps({"doc_id": doc, "title": "changed", "text": "a new version of the text"}) + "\n"
    imports.import_documents(demo, SYSTEM, "demo", line.encode(), filename="docs-v2.jsonl")


def _exclude_and_include(demo, actors, held):
    listing = pooling.list_pairs(demo, SYSTEM, "demo")
    row = listing[listing["pair_id"] == held].iloc[0]
    query_id, doc_id = str(row["query_id"]), str(row["doc_id"])
    pooling.exclude_pair(demo, SYSTEM, "demo", query_id, doc_id, reason="off topic really")
    assert queue.next_pair(demo, actors["bob"], "demo") is None  # marked again, at the new epoch
    pooling.include_pair(demo, SYSTEM, "demo", query_id, doc_id)


EVENTS: list[tuple[str, Callable]] = [
    ("a skip by someone else", _skip),
    ("claims released by a reviewer", _release),
    ("N raised", _raise_n),
    ("a member removed (their claims freed)", _unassign_alice),
    ("a pair added", _add_a_pair),
    ("a document re-imported (a label to re-judge)", _reimport_a_document),
    ("a pair un-excluded", _exclude_and_include),
]


@pytest.mark.parametrize(("name", "happen"), EVENTS, ids=[e[0] for e in EVENTS])
def test_an_event_clears_the_marker(actors, demo, held, name, happen):
    happen(demo, actors, held)
    assert queue.next_pair(demo, actors["bob"], "demo") is not None, name


@pytest.mark.parametrize(("name", "happen"), EVENTS, ids=[e[0] for e in EVENTS])
def test_an_event_clears_the_project_marker(actors, demo, carol, held, name, happen):
    happen(demo, actors, held)
    view = queue.next_pair(demo, carol, "demo")
    if happen is _reimport_a_document:  # the label to re-judge is bob's: no slot is free for carol
        assert view is None and _full(demo)[0] == _full(demo)[1], name  # marked again, at the new epoch
    else:
        assert view is not None, name


def test_a_raised_quota_and_a_raised_budget_give_work_again(actors, demo):
    projects.update_settings(demo, SYSTEM, "demo", annotators_per_pair=1)
    projects.assign(demo, SYSTEM, "demo", ["bob"], quota=3)
    assert len(_drain(demo, actors["bob"])) == 3
    projects.assign(demo, SYSTEM, "demo", ["bob"], quota=None)
    assert queue.next_pair(demo, actors["bob"], "demo") is not None
    judges.update_judge_settings(demo, SYSTEM, "demo", human_budget=4)
    assert len(_drain(demo, actors["bob"])) == 1  # bob's open claim, then the budget is spent
    judges.update_judge_settings(demo, SYSTEM, "demo", human_budget=None)
    assert queue.next_pair(demo, actors["bob"], "demo") is not None


def test_a_claim_and_a_label_do_not_clear_the_markers(actors, demo, held):
    projects.assign(demo, SYSTEM, "demo", ["rita"])  # a new member: the markers clear
    assert _marker(demo, "bob")[0] != _marker(demo, "bob")[1]
    assert queue.next_pair(demo, actors["bob"], "demo") is None  # bob is marked again
    before = _marker(demo, "bob")
    assert queue.next_pair(demo, actors["rita"], "demo") is None  # N = 1, every pair taken
    labels.save_label(demo, actors["alice"], "demo", held, grade=2, reason="judged it")
    assert _marker(demo, "bob") == before and before[0] == before[1]
    assert _full(demo) == (before[1], before[1])
