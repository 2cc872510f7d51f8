"""A busy, unreachable or full database in the command line (issue 16 item 5): one line
``qrelforge: error: ...``, exit status 2, no traceback — on SQLite and PostgreSQL."""

from __future__ import annotations

import io

import pytest
from fault_helpers import full_disk, locked, unreachable_url, with_lock_timeout

from annotate_app.cli import main
from annotate_app.store import db as db_module

BUSY = "qrelforge: error: the database is busy, try again\n"
UNREACHABLE = "qrelforge: error: the database is unreachable, try again later\n"
FULL = "qrelforge: error: the disk is full\n"
DOCS = b"".join(
    b'{"doc_id": "X%d", "title": "t", "text": "%s"}\n' % (i, (b"%08d " % i) * 110) for i in range(2000)
)
COMMANDS = {
    "import docs": ["import", "docs", "{docs}", "-p", "demo"],
    "user add": ["user", "add", "carol", "--password-stdin"],
    "user list": ["user", "list"],
    "status": ["status", "-p", "demo"],
}


@pytest.fixture
def run(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("QRELFORGE_PROJECT", raising=False)
    docs = tmp_path / "more.jsonl"
    docs.write_bytes(DOCS)

    def run(url: str, command: str) -> tuple[int, str, str]:
        monkeypatch.setattr("sys.stdin", io.StringIO("carol-password\n"))
        argv = [a.format(docs=docs) for a in COMMANDS[command]] + ["--db", url]
        code = main(argv)
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unreachable_database(demo, db_url, tmp_path, run, command):
    assert run(unreachable_url(db_url, tmp_path), command) == (2, "", UNREACHABLE)


@pytest.mark.parametrize(
    ("command", "sqlite", "postgresql"),
    [
        ("import docs", BUSY, BUSY),
        ("user add", BUSY, BUSY),
        ("user list", None, BUSY),  # SQLite's readers never wait (WAL)
    ],
)
def test_a_locked_database(demo, db_url, run, monkeypatch, command, sqlite, postgresql):
    monkeypatch.setattr(db_module, "SQLITE_BUSY_TIMEOUT_MS", 300)
    expected = sqlite if demo.is_sqlite else postgresql
    with locked(db_url):
        code, _, err = run(with_lock_timeout(db_url), command)
    assert (code, err) == ((0, "") if expected is None else (2, expected))
    assert run(db_url, command)[0] == 0  # the lock gone, the same command works


@pytest.mark.parametrize(
    ("command", "sqlite", "postgresql"),
    [
        ("import docs", FULL, FULL),
        ("user add", FULL, None),  # PostgreSQL: one row fits in a page the users table already has
    ],
)
def test_a_full_disk(demo, db_url, tmp_path, run, command, sqlite, postgresql):
    expected = sqlite if demo.is_sqlite else postgresql
    demo.dispose()
    with full_disk(db_url, tmp_path / "full") as url:
        code, _, err = run(url, command)
    assert (code, err) == ((0, "") if expected is None else (2, expected))
