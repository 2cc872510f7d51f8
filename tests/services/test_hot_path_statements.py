"""The annotator's clicks are a fixed, small number of SQL statements (issue 14 item 1), on both databases,
whatever the project's size: the statements each one sends, counted on the engine (BEGIN, COMMIT and
ROLLBACK left out), with what each is for. A statement added to the hot path must be added here, on
purpose: every round trip to PostgreSQL costs the app's CPU and the database's."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import event

from annotate_app.services import _gold_draw, gold, labels, projects, queue, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.store import qualification
from annotate_app.store.models import utcnow

CONTROL = ("BEGIN", "COMMIT", "ROLLBACK")


@contextlib.contextmanager
def _statements(db) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        if not statement.lstrip().upper().startswith(CONTROL):
            seen.append(" ".join(statement.split())[:60])

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", record)


def _take(db, alice) -> None:
    queue.next_pair(db, alice, "demo")


def _reload(db, alice) -> None:
    queue.next_pair(db, alice, "demo")  # the claim held: shown again


def _save(db, alice) -> None:
    labels.save_label(db, alice, "demo", _held(db, alice), grade=1, reason="on topic")


def _save_with_key(db, alice) -> None:
    labels.save_label(db, alice, "demo", _held(db, alice), grade=1, reason="on topic", request_id="k1")


def _skip(db, alice) -> None:
    queue.skip(db, alice, "demo", _held(db, alice), reason="cannot judge")


def _gold_on(db, alice, *, pairs: int) -> None:
    """A gold rate whose every draw comes up gold (the coin forced), with ``pairs`` gold pairs."""
    rita = authenticate(db, "rita", "rita-demo")
    for doc in ("D1", "D2")[:pairs]:
        gold.add_gold(db, rita, "demo", "q1", doc, grade=1, explanation="the expected grade")
    gold.set_gold_rate(db, rita, "demo", 0.5)


def _paused(db, alice) -> None:
    """alice paused by the gold rules (her membership row marked as a pause would)."""
    project_id = projects.get_project(db, SYSTEM, "demo").id
    with db.write() as s:
        qualification.mark_member(s, project_id, alice.user_id, paused_at=utcnow())


def _gold_rules_on(db, alice) -> None:
    """Qualification and pause both on, alice qualifying and holding a gold pair."""
    _gold_on(db, alice, pairs=2)
    projects.update_settings(db, SYSTEM, "demo", qualify_pairs=3, pause_pairs=3, gold_feedback=True)
    _HELD[id(db)] = queue.next_pair(db, alice, "demo").pair_id


def _nothing_left(db, alice) -> None:
    assert queue.next_pair(db, alice, "demo") is None  # answered from the "nothing left" marker


_HELD: dict[int, int] = {}


def _held(db, alice) -> int:
    return _HELD[id(db)]


def _drain(db, who) -> None:
    while (view := queue.next_pair(db, who, "demo")) is not None:
        labels.save_label(db, who, "demo", view.pair_id, grade=1, reason="judged it")


def _prepare(step: str, db, actors: dict) -> None:
    """Bring alice to the state the step starts from (not counted)."""
    alice = actors["alice"]
    if step == "nothing left":
        _drain(db, alice)  # the first "nothing left" sets her marker (bob may still take every pair)
    elif step == "nothing left for anyone":
        users.create_user(db, SYSTEM, "carol", "carol-password")
        projects.assign(db, SYSTEM, "demo", ["carol"])
        _drain(db, authenticate(db, "carol", "carol-password"))
        _drain(db, actors["bob"])  # every pair at N = 2: the project's marker
    elif step.startswith("take a gold"):
        _gold_on(db, alice, pairs=1 if step.endswith("pair") else 0)
    elif step == "paused":
        _paused(db, alice)
    elif step == "save a gold label, rules on":
        _gold_rules_on(db, alice)
    elif step != "take":
        _HELD[id(db)] = queue.next_pair(db, alice, "demo").pair_id


# step, the call, statements on SQLite, on PostgreSQL, and what they are
STEPS: list[tuple[str, Callable, int, int, str]] = [
    (
        "take",
        _take,
        7,
        7,
        "caller+project+membership, own open claim, judge settings, [PG: claim lock], seek UPDATE, "
        "INSERT claim (slot chosen inside), contents+guidelines [SQLite: after COMMIT, with the project row]",
    ),
    ("take a gold pair", _take, 7, 7, "the same: the gold seek (one indexed UPDATE) replaces the seek"),
    ("take a gold draw, none left", _take, 8, 8, "the same, and the gold seek that found nothing"),
    ("reload", _reload, 4, 3, "caller+project+membership, own open claim, [SQLite: project row], contents"),
    (
        "save",
        _save,
        5,
        5,
        "caller+project+membership, claim+locked doc version, UPDATE, INSERT label, label id",
    ),
    ("save with request_id", _save_with_key, 6, 6, "the same, and the key's earlier label"),
    (
        "save a gold label, rules on",
        _save,
        6,
        6,
        "the same (the claim's read carries the gold grade), and the caller's latest gold labels",
    ),
    ("paused", _nothing_left, 1, 1, "caller+project+membership (it carries the pause): nothing else"),
    ("skip", _skip, 5, 5, "caller+project+membership, own claim, UPDATE claim, UPDATE pair, queue epoch"),
    (
        "nothing left",
        _nothing_left,
        2,
        2,
        "caller+project+membership (it carries the marker), own open claim",
    ),
    (
        "nothing left for anyone",
        _nothing_left,
        2,
        2,
        "caller+project+membership (the project carries the marker: alice never asked), own open claim",
    ),
]


@pytest.mark.parametrize(("step", "call", "sqlite", "postgresql", "why"), STEPS, ids=[s[0] for s in STEPS])
def test_statements_per_click(demo, actors, step, call, sqlite, postgresql, why, monkeypatch):
    monkeypatch.setattr(_gold_draw.random, "random", lambda: 0.0)  # a gold rate > 0 always draws gold
    alice = actors["alice"]
    _prepare(step, demo, actors)
    with _statements(demo) as seen:
        call(demo, alice)
    assert len(seen) == (sqlite if demo.is_sqlite else postgresql), seen
