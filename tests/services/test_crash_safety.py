"""Crash safety: a process killed with SIGKILL in the middle of a write transaction leaves nothing partial,
and everything it had acknowledged stays — on SQLite (then ``PRAGMA integrity_check`` is ok) and PostgreSQL.

The kill is made deterministic without any hook in the product: the test watches the database from outside
and kills the writer once its transaction has written a lot but not committed — on SQLite, the WAL file has
grown past a threshold (uncommitted pages spill into it) while another connection still sees no new row; on
PostgreSQL, the table's relation size has grown past a threshold (the new tuples are on disk, invisible to
others) while no new row is visible.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from service_table import fingerprint
from sqlalchemy import make_url, text
from store_fixtures import synthetic_project

from annotate_app.services import imports

ROOT = Path(__file__).resolve().parents[2]
SPILL = 1 << 20  # bytes written by the transaction before the kill
ACK = re.compile(r"ACK (\d+) (\S+) (\d+) (\d+)\n")


def _big_docs(path: Path, n: int = 20_000, prefix: str = "X") -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(
                json.dumps({"doc_id": f"{prefix}{i}", "title": f"t{i}", "text": "lorem ipsum " * 40}) + "\n"
            )
    return path


def _count(db, sql: str) -> int:
    with db.read() as s:
        return int(s.execute(text(sql)).scalar())


class Watch:
    """Bytes the database has written since `start` (SQLite: WAL file size; PostgreSQL: size of the tables an
    import fills), read from outside the writer."""

    def __init__(self, db, url: str):
        self.db, self.url = db, url
        self.wal = Path(make_url(url).database + "-wal") if db.is_sqlite else None

    def start(self) -> None:
        if self.wal is not None:
            with sqlite3.connect(make_url(self.url).database) as con:  # an empty WAL to begin with
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        else:  # compact tables (emptied by DELETE between tests): new rows must grow them, not fill holes
            import psycopg
            from store_fixtures import _psycopg_dsn

            with psycopg.connect(_psycopg_dsn(self.url), autocommit=True) as con:
                con.execute("VACUUM FULL documents, document_versions")
        self.base = self.written()

    def written(self) -> int:
        if self.wal is not None:
            return self.wal.stat().st_size if self.wal.exists() else 0
        return _count(
            self.db,
            "SELECT pg_total_relation_size('documents') + pg_total_relation_size('document_versions')",
        )

    def grew(self) -> bool:
        return self.written() - self.base > SPILL


def _kill_when(proc: subprocess.Popen, ready, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None:
            raise AssertionError(f"the writer ended before it could be killed: {proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("the writer never reached its transaction")
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def _settle(db) -> None:
    """PostgreSQL: wait until the killed client's backend is gone (its transaction rolled back)."""
    if db.is_sqlite:
        return
    for _ in range(400):
        if _count(db, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'qf-crash-test'") == 0:
            return
        time.sleep(0.025)
    raise AssertionError("the killed client's backend did not end")


def _child_url(url: str) -> str:
    return (
        url
        if url.startswith("sqlite")
        else make_url(url)
        .update_query_dict({"application_name": "qf-crash-test"})
        .render_as_string(hide_password=False)
    )


def _sqlite_intact(db) -> None:
    if db.is_sqlite:
        with db.read() as s:
            assert s.execute(text("PRAGMA integrity_check")).scalar() == "ok"
            assert s.execute(text("PRAGMA foreign_key_check")).all() == []


# --------------------------------------------------------------------------------------- (a) imports
def test_an_import_killed_mid_file_leaves_nothing(db, db_url, tmp_path):
    """``qrelforge import docs`` (20 000 documents, 10 MB) killed mid-file: not one of its documents,
    versions, import records or audit entries is visible (PostgreSQL: nothing at all is left; SQLite, which
    commits the import in short transactions: only unpublished staged rows, which the next document import
    drops); the same import then succeeds completely."""
    synthetic_project(db, "crash", queries=2, docs=3)
    docs = _big_docs(tmp_path / "docs.jsonl")
    before, seen_before = fingerprint(db), _visible(db)
    watch = Watch(db, db_url)
    watch.start()
    argv = [
        sys.executable,
        "-m",
        "annotate_app.cli",
        "import",
        "docs",
        str(docs),
        "--db",
        _child_url(db_url),
        "-p",
        "crash",
    ]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen_nothing = []

    def inside() -> bool:  # written a lot, published nothing
        if watch.grew():
            seen_nothing.append(_visible(db) == seen_before)
            return True
        return False

    _kill_when(proc, inside)
    assert seen_nothing == [True] and proc.returncode == -signal.SIGKILL
    _settle(db)
    assert _visible(db) == seen_before
    if db.is_sqlite:  # staged rows were committed, unpublished
        assert _count(db, "SELECT count(*) FROM documents WHERE version = 0") > 0
    else:
        assert fingerprint(db) == before
    _sqlite_intact(db)
    report = imports.import_documents(db, _system(), "crash", docs)
    assert report.added == 20_000 and _count(db, "SELECT count(*) FROM document_versions") == 20_003
    assert _count(db, "SELECT count(*) FROM documents WHERE version = 0") == 0
    assert len(imports.list_imports(db, _system(), "crash")) == len(seen_before[1]) + 1
    assert _count(db, "SELECT count(*) FROM imports") == len(seen_before[1]) + 1  # the dead one's record went


def _visible(db) -> tuple:
    """What users see of project 'crash': its documents (as every import and the corpus hash see them), its
    import history and its audit entries."""
    from annotate_app.store import corpus

    system = _system()
    with db.read() as s:
        project_id = s.execute(text("SELECT id FROM projects WHERE name = 'crash'")).scalar()
        docs, rows = corpus.doc_index(s, project_id), corpus.corpus_rows(s, project_id)
    return docs, imports.list_imports(db, system, "crash"), _count(db, "SELECT count(*) FROM audit_log"), rows


def _system():
    from annotate_app.services.auth import SYSTEM

    return SYSTEM


# -------------------------------------------------------------------------------- (b) writers + labels
CHILD = r"""
import sys, threading, time
from annotate_app.services import imports, labels, queue
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.store.db import Database

url, docs, start_import_after = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = Database(url, pool_size=8)
out, acked, go = threading.Lock(), [0], threading.Event()

def annotate(name):
    me = authenticate(db, name, name + "-password")
    while True:
        view = queue.next_pair(db, me, "crash")
        if view is None:
            return
        info = labels.save_label(db, me, "crash", view.pair_id, grade=view.pair_id % 4, reason="acknowledged",
                                 expected_version=0)
        with out:
            sys.stdout.write(f"ACK {info.pair_id} {name} {info.version} {info.grade}\n")
            sys.stdout.flush()
            acked[0] += 1
            if acked[0] >= start_import_after:
                go.set()

def import_docs():
    go.wait()
    imports.import_documents(db, SYSTEM, "crash", docs)

threads = [threading.Thread(target=annotate, args=(f"a{k:02d}",)) for k in range(4)]
threads.append(threading.Thread(target=import_docs))
for t in threads:
    t.start()
for t in threads:
    t.join()
"""


def test_writers_killed_mid_transaction_keep_every_acknowledged_label(db, db_url, tmp_path):
    """A process with four annotators labelling (each label printed once the service returned) and a large
    import is killed while the import's transaction is open (the annotators' transactions are in flight or
    queued): every acknowledged label is in the database with its grade, nothing of the import is, every
    pair's claim count matches its live claims, and SQLite passes ``PRAGMA integrity_check``."""
    synthetic_project(db, "crash", queries=20, docs=30, annotators=4)
    docs = _big_docs(tmp_path / "docs.jsonl")
    watch = Watch(db, db_url)
    watch.start()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, _child_url(db_url), str(docs), "100"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")))
    reader.start()
    _kill_when(proc, lambda: len(lines) >= 100 and watch.grew())
    reader.join(timeout=30)
    _settle(db)
    acked = [tuple(int(x) if x.isdigit() else x for x in m.groups()) for m in map(ACK.fullmatch, lines) if m]
    assert len(acked) >= 100
    with db.read() as s:
        stored = set(
            s.execute(
                text(
                    "SELECT l.pair_id, u.username, l.version, l.grade FROM labels l "
                    "JOIN users u ON u.id = l.annotator_id"
                )
            ).all()
        )
        mismatched = s.execute(
            text(
                "SELECT count(*) FROM pairs p WHERE p.claimed <> (SELECT count(*) FROM "
                "assignments a WHERE a.pair_id = p.id AND a.slot IS NOT NULL)"
            )
        ).scalar()
        orphans = s.execute(
            text("SELECT count(*) FROM assignments WHERE status = 'done' AND label_id IS NULL")
        )
        orphans = orphans.scalar()
    assert set(acked) <= stored, set(acked) - stored
    assert len(stored) - len(acked) <= 4  # at most one committed-but-unprinted label per annotator
    assert (mismatched, orphans) == (0, 0)
    assert _count(db, "SELECT count(*) FROM documents WHERE external_id LIKE 'X%'") == 0
    _sqlite_intact(db)
