"""Many annotators at once: 20 threads, each with its own sessions, take and label pairs on SQLite and
PostgreSQL. No pair gets more than N labels, no label is lost, none is duplicated."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest
from sqlalchemy import text
from store_fixtures import synthetic_project

from annotate_app.services import labels, queue
from annotate_app.services.errors import Conflict

THREADS = 20


def _annotate(db, actor, seed: int, barrier: threading.Barrier, saved: list, errors: list) -> None:
    rng = random.Random(seed)
    mine: list[int] = []
    try:
        barrier.wait(timeout=60)
        while (view := queue.next_pair(db, actor, "conc")) is not None:
            if view.current is None and rng.random() < 0.1:
                queue.skip(db, actor, "conc", view.pair_id, reason="cannot judge this one")
                continue
            info = labels.save_label(
                db, actor, "conc", view.pair_id, grade=rng.randrange(4), reason="seen it all", seconds=1.5
            )
            saved.append((info.pair_id, actor.username, info.version))
            mine.append(view.pair_id)
            if rng.random() < 0.15:  # edit one of my labels: a new version, never a new slot
                pair = rng.choice(mine)
                edit = labels.save_label(
                    db, actor, "conc", pair, grade=rng.randrange(4), reason=f"changed my mind ({len(saved)})"
                )
                saved.append((edit.pair_id, actor.username, edit.version))
    except Conflict as exc:  # pragma: no cover - reported below
        errors.append(f"{actor.username}: {exc}")
    except Exception as exc:  # pragma: no cover - reported below
        errors.append(f"{actor.username}: {type(exc).__name__}: {exc}")


def _sweep(db, actors, saved: list) -> None:
    """A skip late in the race frees a slot after the other threads have found the queue empty and stopped;
    one more pass by everyone fills such slots, so the checks below can demand full coverage."""
    for actor in actors:
        while (view := queue.next_pair(db, actor, "conc")) is not None:
            info = labels.save_label(db, actor, "conc", view.pair_id, grade=1, reason="late sweep")
            saved.append((info.pair_id, actor.username, info.version))


def _rows(db, sql: str) -> list[tuple]:
    with db.read() as s:
        return [tuple(r) for r in s.execute(text(sql))]


@pytest.mark.parametrize("n", [2, 3])
def test_twenty_annotators_at_once(db, n):
    actors = synthetic_project(db, "conc", queries=6, docs=15, n=n, annotators=THREADS)
    barrier, saved, errors = threading.Barrier(THREADS), [], []
    threads = [
        threading.Thread(target=_annotate, args=(db, a, i, barrier, saved, errors))
        for i, a in enumerate(actors)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors[:5]
    assert not any(t.is_alive() for t in threads)
    _sweep(db, actors, saved)

    stored = _rows(
        db, "SELECT l.pair_id, u.username, l.version FROM labels l JOIN users u ON u.id = l.annotator_id"
    )
    assert Counter(stored) == Counter(
        saved
    )  # every saved label is there exactly once: none lost, none duplicated
    assert len(set(stored)) == len(stored)
    per_pair = _rows(
        db,
        "SELECT p.id, p.claimed, "
        "(SELECT count(*) FROM assignments a WHERE a.pair_id = p.id AND a.status = 'done'), "
        "(SELECT count(*) FROM assignments a WHERE a.pair_id = p.id AND a.slot IS NOT NULL), "
        "(SELECT count(DISTINCT l.annotator_id) FROM labels l WHERE l.pair_id = p.id) FROM pairs p",
    )
    assert len(per_pair) == 90
    for pair_id, claimed, done, live, annotators in per_pair:
        assert done == live == claimed == annotators == n, (pair_id, claimed, done, live, annotators)
    current = _rows(
        db,
        "SELECT a.pair_id, a.version, l.version, a.grade, l.grade FROM assignments a "
        "JOIN labels l ON l.id = a.label_id WHERE a.status = 'done'",
    )
    assert all(
        av == lv and ag == lg for _, av, lv, ag, lg in current
    )  # the cached current label is the newest
    latest = dict(((p, u), v) for p, u, v in sorted(saved, key=lambda r: r[2]))
    assert len(current) == len(latest) == 90 * n
