"""A large run import on SQLite commits in short transactions (issue 16 item 9): while another process imports
a 300 000-line run, this process's label saves (next_pair + save_label) keep completing in well under 2 s; the
run appears at once, complete, and a run whose last line is bad leaves nothing behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from import_load import saves_during
from sqlalchemy import text
from store_fixtures import synthetic_project

from annotate_app.services import imports, projects
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput
from annotate_app.store.db import Database

QUERIES, DOCS = 300, 1000


def _big_project(db: Database) -> None:
    projects.create_project(db, SYSTEM, "big")
    docs = "".join(json.dumps({"doc_id": f"D{i}", "text": f"text {i}"}) + "\n" for i in range(DOCS))
    queries = "".join(json.dumps({"query_id": f"q{j}", "text": f"query {j}"}) + "\n" for j in range(QUERIES))
    imports.import_documents(db, SYSTEM, "big", docs.encode(), filename="docs.jsonl")
    imports.import_queries(db, SYSTEM, "big", queries.encode(), filename="queries.jsonl")


def _run_file(path: Path, last: str | None = None) -> Path:
    with open(path, "w") as f:
        for j in range(QUERIES):
            f.writelines(f"q{j} Q0 D{i} {i + 1} {DOCS - i} big\n" for i in range(DOCS))
        if last is not None:
            f.write(last + "\n")
    return path


def _count(db: Database, table: str) -> int:
    with db.read() as s:
        return int(s.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())


@pytest.fixture
def sqlite_db(tmp_path, sqlite_template, fast_hashing):
    import shutil

    path = tmp_path / "qrelforge.db"
    shutil.copyfile(sqlite_template, path)
    db = Database(f"sqlite:///{path}")
    yield db
    db.dispose()


def test_label_saves_from_another_process_get_in_during_a_big_run_import(sqlite_db, tmp_path):
    db = sqlite_db
    (alice,) = synthetic_project(db, "team", queries=20, docs=30, annotators=1)
    _big_project(db)
    run = _run_file(tmp_path / "big.trec")
    saves = saves_during(db, alice, "team", ("import_run", "big", run), probe=lambda: _count(db, "runs"))
    assert saves.out.startswith(f"run big: {QUERIES * DOCS} added")
    print(f"\n{saves.summary()}")
    assert len(saves.seconds) >= 10
    assert saves.p99 < 2.0
    assert set(saves.visible) <= {1, 2}  # the team's run, then both: never a half-imported run in between
    assert [name for name, _ in imports.list_runs(db, SYSTEM, "big")] == ["big"]
    assert _count(db, "run_entries") == QUERIES * DOCS + 20 * 30


@pytest.mark.parametrize(
    ("last", "message"),
    [
        (
            "q1 Q0 D99999 1 0.5 big",
            f":{QUERIES * DOCS + 1}: unknown document 'D99999': 'q1 Q0 D99999 1 0.5 big'",
        ),
        (
            "qz Q0 Dz 1 nan big",
            f":{QUERIES * DOCS + 1}: score is not a number: 'nan': 'qz Q0 Dz 1 nan big'",
        ),
    ],
)
def test_a_bad_last_line_leaves_nothing(sqlite_db, tmp_path, last, message):
    _big_project(sqlite_db)
    path = _run_file(tmp_path / "big.trec", last)
    with pytest.raises(InvalidInput) as info:
        imports.import_run(sqlite_db, SYSTEM, "big", path)
    assert str(info.value) == f"{path}{message}"
    assert (_count(sqlite_db, "runs"), _count(sqlite_db, "run_entries"), _count(sqlite_db, "imports")) == (
        0,
        0,
        2,
    )
