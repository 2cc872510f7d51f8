"""Connection faults under load (issue 14 item 7), on PostgreSQL: annotator threads take, label, edit and read
while another connection kills the app's backends (``pg_terminate_backend``) every 0.3 s.

Every request ends as a success or as the clear message (`DatabaseUnavailable`: "the database is
unreachable, try again later", or, when the connection broke during COMMIT, "... reload to see whether it was
saved"); none as a raw driver error. Requests are sent the way the app sends them: reads and claims are
retried once when nothing was written (`retry_once`), saves carry a ``request_id`` and are retried once even
when in doubt. Afterwards (the killer stopped) each annotator's next call works at once, a failed save sent
again with its request_id finds the label its first attempt may have stored, and the database holds exactly
the acknowledged label versions: no phantom second version, no half-written claim.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

import pytest
from sqlalchemy import make_url, text
from store_fixtures import synthetic_project

from annotate_app.services import labels, queue
from annotate_app.services.errors import Conflict, DatabaseUnavailable, retry_once
from annotate_app.store.db import Database

pytestmark = pytest.mark.pg
APP_NAME = "qf-fault-app"
STORM_S = (15.0, 90.0)  # at least, at most: the storm ends after the least once SAVES labels are acknowledged
SAVES = 30
KILL_EVERY_S = 0.3
ANNOTATORS = 6
MESSAGES = {
    "the database is unreachable, try again later",
    "the connection to the database was lost while saving: reload to see whether it was saved, then try "
    "again",
}


@dataclass
class Client:
    """One annotator's requests and what came back."""

    actor: object
    outcomes: Counter = field(default_factory=Counter)
    acked: dict = field(default_factory=dict)  # label_id -> (pair_id, version, grade)
    failed_saves: list = field(default_factory=list)  # (pair_id, grade, request_id, expected_version)
    odd: list = field(default_factory=list)  # anything that is neither a success nor the clear message
    after_failure: Counter = field(default_factory=Counter)  # the call right after a failure: ok / failed
    _last_failed: bool = False

    def call(self, kind: str, fn, *args, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except DatabaseUnavailable as exc:
            self.outcomes[f"{kind}: message"] += 1
            if str(exc) not in MESSAGES:
                self.odd.append(f"{kind}: {exc}")
            self._note(failed=True)
            return exc
        except Exception as exc:  # noqa: BLE001 (counted, then asserted to be none)
            self.outcomes[f"{kind}: other"] += 1
            self.odd.append(f"{kind}: {type(exc).__name__}: {str(exc)[:200]}")
            self._note(failed=True)
            return exc
        self.outcomes[f"{kind}: ok"] += 1
        self._note(failed=False)
        return result

    def _note(self, *, failed: bool) -> None:
        if self._last_failed:
            self.after_failure["failed" if failed else "ok"] += 1
        self._last_failed = failed


def _save(client: Client, db: Database, pair_id: int, grade: int, expected: int) -> None:
    request_id = uuid.uuid4().hex
    result = client.call(
        "save",
        retry_once,
        labels.save_label,
        db,
        client.actor,
        "p",
        pair_id,
        grade=grade,
        reason=f"grade {grade} for pair {pair_id}",
        expected_version=expected,
        request_id=request_id,
        idempotent=True,
    )
    if isinstance(result, Exception):
        client.failed_saves.append((pair_id, grade, request_id, expected))
    else:
        client.acked[result.label_id] = (pair_id, result.version, result.grade)


def _work(client: Client, db: Database, stop: threading.Event) -> None:
    last = None  # (pair_id, version) of the last saved label, for an edit now and then
    step = 0
    while not stop.is_set():
        step += 1
        if last is not None and step % 4 == 0:
            _save(client, db, last[0], 1 + step % 3, last[1])
            last = None
        else:
            view = client.call("take", retry_once, queue.next_pair, db, client.actor, "p")
            if view is None:
                break
            if not isinstance(view, Exception):
                expected = view.current.version if view.current is not None else 0
                _save(client, db, view.pair_id, 2, expected)
                saved = [v for v in client.acked.values() if v[0] == view.pair_id]
                last = max(saved, key=lambda v: v[1])[:2] if saved else None
        client.call("read", retry_once, queue.my_progress, db, client.actor, "p")
        client.call("read", retry_once, labels.my_labels, db, client.actor, "p", limit=20)


def _killer(url: str, stop: threading.Event, kills: list[int]) -> None:
    """Every `KILL_EVERY_S`, terminate every backend of the app (one connection of its own, opened once:
    the server's connection slots are shared with the rest of the machine)."""
    import psycopg
    from fault_helpers import psycopg_dsn

    with psycopg.connect(psycopg_dsn(url), autocommit=True) as conn:
        while not stop.wait(KILL_EVERY_S):
            killed = conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
                "datname = current_database() AND pid <> pg_backend_pid() AND application_name = %s",
                (APP_NAME,),
            ).fetchone()
            kills.append(int(killed[0] if killed else 0))


def test_killed_backends_give_clear_messages_and_lose_nothing(pg_session_url, fast_hashing):
    from store_fixtures import _truncate

    _truncate(pg_session_url)
    setup = Database(pg_session_url)
    actors = synthetic_project(setup, "p", queries=10, docs=40, n=2, annotators=ANNOTATORS)
    setup.dispose()
    app_url = make_url(pg_session_url).update_query_dict({"application_name": APP_NAME})
    db = Database(app_url, pool_size=ANNOTATORS)
    clients = [Client(actor=a) for a in actors]
    stop, kills = threading.Event(), []
    killer = threading.Thread(target=_killer, args=(pg_session_url, stop, kills))
    workers = [threading.Thread(target=_work, args=(c, db, stop)) for c in clients]
    for t in [killer, *workers]:
        t.start()
    started = time.monotonic()
    while time.monotonic() - started < STORM_S[1]:
        time.sleep(0.5)
        if time.monotonic() - started >= STORM_S[0] and sum(len(c.acked) for c in clients) >= SAVES:
            break
    storm, saved_in_storm = time.monotonic() - started, sum(len(c.acked) for c in clients)
    stop.set()
    for t in [killer, *workers]:
        t.join(timeout=120)

    # the storm is over: the next call of every annotator works at once
    for c in clients:
        assert not isinstance(c.call("read", queue.my_progress, db, c.actor, "p"), Exception)
    # a failed save sent again with its request_id: the label its first attempt stored, or a new one
    resent = Counter()
    with db.read() as s:
        committed = {r[0] for r in s.execute(text("SELECT request_id FROM labels")).all()}
    for c in clients:
        for pair_id, grade, request_id, expected in c.failed_saves:
            try:
                result = labels.save_label(
                    db,
                    c.actor,
                    "p",
                    pair_id,
                    grade=grade,
                    reason=f"grade {grade} for pair {pair_id}",
                    expected_version=expected,
                    request_id=request_id,
                )
            except Conflict:  # the client saved that pair again meanwhile (a new click): this one is stale
                resent["refused as stale"] += 1
                continue
            if result.label_id in c.acked:
                resent["the same label was saved by a later click"] += 1
            elif request_id in committed:
                resent["committed, reply lost: found by its request_id"] += 1
            else:
                resent["not stored: saved now"] += 1
            c.acked[result.label_id] = (pair_id, result.version, result.grade)

    outcomes = sum((c.outcomes for c in clients), Counter())
    after = sum((c.after_failure for c in clients), Counter())
    odd = [o for c in clients for o in c.odd]
    with db.read() as s:
        stored = {
            int(r[0]): (int(r[1]), int(r[2]), int(r[3]))
            for r in s.execute(text("SELECT id, pair_id, version, grade FROM labels")).all()
        }
        duplicates = s.execute(
            text(
                "SELECT count(*) FROM (SELECT assignment_id, version FROM labels GROUP BY 1, 2 "
                "HAVING count(*) > 1) d"
            )
        ).scalar()
        mismatched = s.execute(
            text(
                "SELECT count(*) FROM pairs p WHERE p.claimed <> (SELECT count(*) FROM "
                "assignments a WHERE a.pair_id = p.id AND a.slot IS NOT NULL)"
            )
        ).scalar()
        orphans = s.execute(
            text("SELECT count(*) FROM assignments WHERE status = 'done' AND label_id IS NULL")
        ).scalar()
    db.dispose()
    acked = {k: v for c in clients for k, v in c.acked.items()}
    print(
        f"\nstorm {storm:.0f} s, kills: {sum(kills)} backends in {len(kills)} rounds; "
        f"outcomes: {dict(sorted(outcomes.items()))}; "
        f"call after a failure: {dict(after)}; failed saves re-sent: {dict(resent)}; "
        f"labels stored {len(stored)}, acknowledged {len(acked)}"
    )
    assert odd == []  # every request: a success or the clear message
    assert sum(kills) >= 10 and sum(v for k, v in outcomes.items() if k.endswith("message")) >= 1
    assert saved_in_storm >= 1  # work still gets done between the kills
    assert stored == acked  # every stored version acknowledged, every acknowledged one stored: no phantom
    assert (duplicates, mismatched, orphans) == (0, 0, 0)  # nothing half-written
