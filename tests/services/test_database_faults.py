"""Every database fault becomes one clear message (issue 16 item 5), on SQLite and PostgreSQL: a database
locked by another connection is busy, a server that does not answer is unreachable, a full disk is full —
for a login, a label, an import and a read — and nothing is written meanwhile. A writer waits about 5 s,
not 30, before "busy".
"""

from __future__ import annotations

import re
import time

import pytest
from fault_helpers import full_disk, locked, unreachable_url, with_lock_timeout
from sqlalchemy import text

from annotate_app.services import auth, imports, labels, projects, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import DatabaseBusy, DatabaseUnavailable, DiskFull, retry_once
from annotate_app.store import db as db_module
from annotate_app.store.db import Database

BUSY = "the database is busy, try again"
UNREACHABLE = "the database is unreachable, try again later"
FULL = "the disk is full"
REASON = "answers the question"
# 2 000 documents of 1 kB of text: more than the full disk's room
DOCS = b"".join(
    b'{"doc_id": "X%d", "title": "t", "text": "%s"}\n' % (i, (b"%08d " % i) * 110) for i in range(2000)
)


def _login(db, actors, claim):
    actor = auth.authenticate(db, "alice", "alice-demo")
    return auth.open_session(db, actor, hours=1)


def _label(db, actors, claim):
    return labels.save_label(db, actors["alice"], "demo", claim, grade=2, reason=REASON, request_id="r-1")


def _import(db, actors, claim):
    return imports.import_documents(db, SYSTEM, "demo", DOCS, filename="more.jsonl")


def _read(db, actors, claim):
    return projects.list_projects(db, actors["alice"])


CALLS = {"login": _login, "label": _label, "import": _import, "read": _read}


def _fingerprint(db) -> tuple:
    with db.read() as s:
        return tuple(
            s.execute(text(f"SELECT count(*) FROM {t}")).scalar_one()
            for t in ("sessions", "labels", "documents", "audit_log")
        )


@pytest.fixture
def claimed(demo, actors) -> int:
    return queue.next_pair(demo, actors["alice"], "demo").pair_id


@pytest.fixture
def quick_busy(monkeypatch):
    """SQLite gives up after 0.3 s instead of 5 s (the 5 s bound has its own test)."""
    monkeypatch.setattr(db_module, "SQLITE_BUSY_TIMEOUT_MS", 300)


@pytest.mark.parametrize(
    ("call", "sqlite", "postgresql"),
    [
        ("login", BUSY, BUSY),
        ("label", BUSY, BUSY),
        ("import", BUSY, BUSY),
        ("read", None, BUSY),  # SQLite's readers never wait (WAL); PostgreSQL's wait on ACCESS EXCLUSIVE
    ],
)
def test_a_locked_database_is_busy(demo, actors, claimed, db_url, quick_busy, call, sqlite, postgresql):
    expected = sqlite if demo.is_sqlite else postgresql
    before = _fingerprint(demo)
    db = Database(with_lock_timeout(db_url))
    try:
        with locked(db_url):
            if expected is None:
                CALLS[call](db, actors, claimed)
            else:
                with pytest.raises(DatabaseBusy, match=f"^{re.escape(expected)}$"):
                    CALLS[call](db, actors, claimed)
        assert _fingerprint(demo) == before or expected is None
        CALLS[call](db, actors, claimed)  # the lock gone, the same call works
    finally:
        db.dispose()


@pytest.mark.parametrize("call", CALLS)
def test_an_unreachable_database_is_unavailable(demo, actors, claimed, db_url, tmp_path, call):
    db = Database(unreachable_url(db_url, tmp_path))
    try:
        started = time.monotonic()
        with pytest.raises(DatabaseUnavailable, match=f"^{re.escape(UNREACHABLE)}$") as caught:
            CALLS[call](db, actors, claimed)
        assert time.monotonic() - started < 10 and caught.value.in_doubt is False
        with pytest.raises(DatabaseUnavailable, match=f"^{re.escape(UNREACHABLE)}$"):
            retry_once(CALLS[call], db, actors, claimed)  # tried twice, still down: the same message
    finally:
        db.dispose()


@pytest.mark.parametrize(
    ("call", "expected"), [("login", FULL), ("label", FULL), ("import", FULL), ("read", None)]
)
def test_a_full_disk_is_full(demo, actors, claimed, db_url, tmp_path, call, expected):
    demo.dispose()
    with full_disk(db_url, tmp_path / "full") as url:
        db = Database(url)
        try:
            before = _fingerprint(db)
            if expected is None:
                CALLS[call](db, actors, claimed)
            else:
                with pytest.raises(DiskFull, match=f"^{re.escape(expected)}$"):
                    CALLS[call](db, actors, claimed)
            assert _fingerprint(db) == before
        finally:
            db.dispose()


def test_a_writer_waits_about_5_s_for_a_locked_sqlite_database(tmp_path, sqlite_template):
    import shutil

    path = tmp_path / "qrelforge.db"
    shutil.copyfile(sqlite_template, path)
    db = Database(f"sqlite:///{path}")
    try:
        with locked(f"sqlite:///{path}"):
            started = time.monotonic()
            with pytest.raises(DatabaseBusy, match=f"^{re.escape(BUSY)}$"):
                projects.create_project(db, SYSTEM, "p")
            waited = time.monotonic() - started
        assert 4.5 <= waited < 20, waited  # SQLite's busy timeout: 5 s (it was 30 s)
    finally:
        db.dispose()


def test_the_in_process_writer_queue_gives_up_as_busy_too(tmp_path, sqlite_template, quick_busy):
    """A writer of this process queued behind another that holds SQLite's lock: busy after the timeout."""
    import shutil

    path = tmp_path / "qrelforge.db"
    shutil.copyfile(sqlite_template, path)
    db = Database(f"sqlite:///{path}")
    try:
        with db.write(), pytest.raises(DatabaseBusy, match=f"^{re.escape(BUSY)}$"):
            import threading

            failure: list[BaseException] = []

            def other() -> None:
                try:
                    projects.create_project(db, SYSTEM, "p")
                except BaseException as exc:  # noqa: BLE001 (handed to the test thread)
                    failure.append(exc)

            thread = threading.Thread(target=other)
            thread.start()
            thread.join(timeout=30)
            raise failure[0]
    finally:
        db.dispose()


@pytest.mark.pg
def test_a_connection_lost_during_commit_is_in_doubt_and_an_idempotent_retry_saves_once(
    pg_session_url, request
):
    """PostgreSQL: the save's backend is terminated just before its COMMIT: "reload to see whether it was
    saved" (``in_doubt``); `retry_once(..., idempotent=True)` sends it again with its request_id: one
    label."""
    from sqlalchemy import create_engine, event
    from sqlalchemy.orm import Session
    from store_fixtures import _truncate

    from annotate_app.services.demo import load_demo

    request.getfixturevalue("fast_hashing")
    _truncate(pg_session_url)
    db = Database(pg_session_url)
    load_demo(db)
    alice = auth.authenticate(db, "alice", "alice-demo")
    pair = queue.next_pair(db, alice, "demo").pair_id
    admin, armed = create_engine(pg_session_url), [2]  # the first attempt and its retry lose the COMMIT

    def kill_before_commit(session) -> None:
        if armed[0]:
            armed[0] -= 1
            pid = session.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar()
            with admin.begin() as conn:
                conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})

    event.listen(Session, "before_commit", kill_before_commit)
    try:
        save = {"grade": 2, "reason": REASON, "request_id": "doubt-1"}
        with pytest.raises(
            DatabaseUnavailable, match="^the connection to the database was lost while saving"
        ):
            retry_once(labels.save_label, db, alice, "demo", pair, **save)  # not idempotent: not sent again
        assert armed == [1]
        with pytest.raises(DatabaseUnavailable) as caught:
            labels.save_label(db, alice, "demo", pair, **save)
        assert caught.value.in_doubt is True and armed == [0]
        saved = retry_once(labels.save_label, db, alice, "demo", pair, **save, idempotent=True)
        again = retry_once(labels.save_label, db, alice, "demo", pair, **save, idempotent=True)
        assert again == saved and _fingerprint(db)[1] == 1  # one label
    finally:
        event.remove(Session, "before_commit", kill_before_commit)
        admin.dispose()
        db.dispose()
