"""The "nothing left" markers never hide a freed slot, under concurrency (issue 14, `store.exhausted`).

`test_a_freed_slot_is_never_hidden_by_a_marker` (both databases), each round: N = 1, every pair labelled
except one that a00 holds; the five other annotators have been told "nothing left", so their markers and the
project's stand. Then a00 skips its pair while the five ask again and again (threads, each call its own
session); the skip's slot is free for all five. However the calls and the skip interleave, once they are over
the pair must be claimed: by one of the calls during the race, or by the first of one more call each. A
marker that outlived the skip (a bump that did not happen, a marker not cleared by it) would leave the pair
free with every annotator told "nothing left"; breaking the skip's bump turns it red.

`test_a_skip_inside_an_empty_claim_does_not_mark_the_project` (PostgreSQL) holds the narrowest window open:
an empty claim has read the project's state (no free slot) and waits, on a lock the test holds, before
writing its markers; the skip commits in that moment. The project's marker must not be written with the epoch
the skip moved on to (it is written only while the epoch is the one read before the seek; writing the
current epoch instead turns it red).
"""

from __future__ import annotations

import random
import threading
import time

import pytest
from sqlalchemy import text
from store_fixtures import synthetic_project

from annotate_app.services import labels, projects, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.store.db import Database

ROUNDS = 6
OTHERS = 5


def _drain(db, actor, name: str) -> None:
    while (view := queue.next_pair(db, actor, name)) is not None:
        labels.save_label(db, actor, name, view.pair_id, grade=1, reason="judged it")


def _ask(db, actor, name: str, until: float, taken: list, errors: list) -> None:
    try:
        while time.perf_counter() < until:
            view = queue.next_pair(db, actor, name)
            if view is not None:
                taken.append((actor.username, view.pair_id))
                return  # holds it now: the next call would show the same pair
            time.sleep(random.uniform(0, 0.004))
    except Exception as exc:  # noqa: BLE001 - reported by the test
        errors.append(f"{actor.username}: {type(exc).__name__}: {exc}")


def _round(db, r: int) -> tuple[int, list, list]:
    name = f"race{r}"
    holder, *others = synthetic_project(
        db, name, queries=2, docs=4, n=1, annotators=1 + OTHERS, prefix=f"r{r}"
    )
    held = queue.next_pair(db, holder, name).pair_id
    for actor in others:
        _drain(db, actor, name)  # the last call of each is "nothing left": the markers stand
    taken: list = []
    errors: list = []
    until = time.perf_counter() + 0.25
    threads = [threading.Thread(target=_ask, args=(db, a, name, until, taken, errors)) for a in others]
    for t in threads:
        t.start()
    time.sleep(random.Random(r).uniform(0.0, 0.15))
    queue.skip(db, holder, name, held, reason="not my field")
    for t in threads:
        t.join()
    for actor in others:  # one more call each, after the skip committed
        if not taken and (view := queue.next_pair(db, actor, name)) is not None:
            taken.append((actor.username, view.pair_id))
    return held, taken, errors


def test_a_freed_slot_is_never_hidden_by_a_marker(db):
    for r in range(ROUNDS):
        held, taken, errors = _round(db, r)
        assert errors == []
        assert [pair for _, pair in taken] == [held], f"round {r}: {taken}"
        with db.read() as s:
            claimed = s.execute(text("SELECT claimed FROM pairs WHERE id = :p"), {"p": held}).scalar_one()
        assert claimed == 1, f"round {r}"


def _waiting_on_a_lock(db, application: str) -> bool:
    with db.read() as s:
        return bool(
            s.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = :a "
                    "AND wait_event_type = 'Lock'"
                ),
                {"a": application},
            ).scalar_one()
        )


@pytest.mark.pg
def test_a_skip_inside_an_empty_claim_does_not_mark_the_project(pg_session_url, fast_hashing):
    """PostgreSQL only: SQLite serialises write transactions, so a skip cannot commit inside a claim."""
    from store_fixtures import _truncate

    _truncate(pg_session_url)
    db = Database(pg_session_url, pool_size=4)
    try:
        _window(db)
    finally:
        db.dispose()


def _window(db) -> None:
    holder, asker, other = synthetic_project(db, "window", queries=1, docs=4, n=1, annotators=3, prefix="w")
    held = queue.next_pair(db, holder, "window").pair_id
    _drain(db, asker, "window")
    _drain(db, other, "window")  # every pair at N = 1: the markers stand
    projects.update_settings(db, SYSTEM, "window", min_reason_length=4)  # the epoch moves on, no slot frees
    app = Database(db.url.set(query={"application_name": "qf-window"}), pool_size=2)
    lock = db.engine.connect()
    try:
        tx = lock.begin()  # hold the asker's membership row: the empty claim waits before its markers
        lock.execute(
            text(
                "SELECT 1 FROM project_members m JOIN users u ON u.id = m.user_id "
                "WHERE u.username = 'w01' FOR UPDATE OF m"
            )
        )
        answer: list = []
        asking = threading.Thread(target=lambda: answer.append(queue.next_pair(app, asker, "window")))
        asking.start()
        deadline = time.monotonic() + 20
        while not _waiting_on_a_lock(db, "qf-window"):
            assert time.monotonic() < deadline, "the empty claim never reached its markers"
            time.sleep(0.01)
        queue.skip(db, holder, "window", held, reason="not my field")  # commits: the epoch moves on
        tx.rollback()
        asking.join(timeout=20)
    finally:
        lock.close()
        app.dispose()
    assert answer == [None]  # its seek ran before the skip
    with db.read() as s:
        full, epoch = s.execute(
            text("SELECT full_epoch, queue_epoch FROM projects WHERE name = 'window'")
        ).one()
    assert full != epoch  # the project's marker is not at the epoch the skip moved on to
    assert queue.next_pair(db, other, "window").pair_id == held
