"""Schema, migrations, engine settings and the append-only guarantees of the database itself."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import CheckConstraint, create_engine, inspect, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from annotate_app.config import load_settings
from annotate_app.judges import Backend
from annotate_app.store import enums
from annotate_app.store.db import Database, safe_url
from annotate_app.store.migrate import current_revision, downgrade_all, head_revision, upgrade
from annotate_app.store.models import IMMUTABLE_TABLES, PASSAGE_IMMUTABLE_TABLES, ROLES, Base


def test_migrations_create_exactly_the_models(db):
    with db.engine.connect() as conn:
        assert (
            compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
            == []
        )
    assert current_revision(db) == head_revision()


def test_downgrade_and_upgrade_again(db_url):
    downgrade_all(db_url)
    assert current_revision(db_url) is None
    assert upgrade(db_url) == head_revision()
    assert upgrade(db_url) == head_revision()  # idempotent


def test_the_apps_schema_check_reads_the_revision_without_importing_alembic(db_url):
    """The app checks every new connection's schema with `setup.schema_revision`: Alembic's revision, read
    with SQLAlchemy alone (Alembic is about 10 MB resident in every app server)."""
    child = (
        "import sys; from annotate_app.services import setup; "
        "print(setup.schema_revision(sys.argv[1]), 'alembic' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", child, db_url], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == [head_revision(), "False"]


ENUM_CHECKS = [  # (table, column, the one list its CHECK constraint is built from)
    ("users", "role", ROLES),
    ("projects", "statistic", enums.Statistic),
    ("projects", "agreement_mode", enums.AgreementMode),
    ("projects", "weights", enums.Weights),
    ("sessions", "method", enums.LoginMethod),
    ("judges", "backend", Backend),
    ("judge_settings", "queue_order", enums.QueueOrder),
    ("pairs", "origin", enums.PairOrigin),
    ("assignments", "status", enums.AssignmentStatus),
    ("release_qrels", "kind", enums.QrelKind),
    ("gold_pairs", "source", enums.GoldSource),
]


def _quoted(sql: str) -> set[str]:
    """The string literals of a CHECK's SQL (PostgreSQL writes ``'x'::character varying``)."""
    return set(re.findall(r"'([^']*)'", sql))


@pytest.mark.parametrize(
    ("table", "column", "values"), ENUM_CHECKS, ids=[f"{t}.{c}" for t, c, _ in ENUM_CHECKS]
)
def test_the_migrated_checks_hold_exactly_the_enums(db_url, table, column, values):
    """Adding a member to one of these lists needs a migration that changes the CHECK: this test says so."""
    name = f"ck_{table}_{column}"
    (model,) = [c for c in Base.metadata.tables[table].constraints if c.name == name]
    engine = create_engine(db_url)
    try:
        (migrated,) = [c for c in inspect(engine).get_check_constraints(table) if c["name"] == name]
    finally:
        engine.dispose()
    expected = {str(v) for v in values}
    assert (_quoted(str(model.sqltext)), _quoted(migrated["sqltext"])) == (expected, expected)


def test_every_enum_check_of_the_models_is_in_the_table_above():
    checked = {
        (table.name, str(c.sqltext).split(" IN ")[0])
        for table in Base.metadata.tables.values()
        for c in table.constraints
        if isinstance(c, CheckConstraint) and re.fullmatch(r"\w+ IN \(.*\)", str(c.sqltext))
    }
    assert checked == {(t, c) for t, c, _ in ENUM_CHECKS}


def _unindexed_foreign_keys(inspector, schema: str | None = None) -> list[str]:
    """``table.columns`` of each foreign key whose columns do not lead a real index: an index, the primary key
    or a unique constraint of the table (the foreign key constraint itself indexes nothing, on SQLite and on
    PostgreSQL alike)."""
    missing = []
    for table in inspector.get_table_names(schema=schema):
        leading = [tuple(ix["column_names"]) for ix in inspector.get_indexes(table, schema=schema)]
        leading.append(tuple(inspector.get_pk_constraint(table, schema=schema)["constrained_columns"]))
        leading += [tuple(u["column_names"]) for u in inspector.get_unique_constraints(table, schema=schema)]
        for fk in inspector.get_foreign_keys(table, schema=schema):
            columns = tuple(fk["constrained_columns"])
            if not any(index[: len(columns)] == columns for index in leading):
                missing.append(f"{table}.{','.join(columns)}")
    return sorted(missing)


@contextlib.contextmanager
def _models_schema(db_url: str, tmp_path):
    """An engine and schema holding the tables exactly as the models declare them (``create_all``): a new
    SQLite file, or a scratch schema in the PostgreSQL test database (dropped afterwards)."""
    if db_url.startswith("sqlite"):
        engine, schema = create_engine(f"sqlite:///{tmp_path}/models.db"), None
    else:
        engine, schema = create_engine(db_url), f"models_{os.getpid()}"
        with engine.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        with engine.begin() as conn:
            Base.metadata.create_all(conn.execution_options(schema_translate_map={None: schema}))
        yield engine, schema
    finally:
        if schema is not None:
            with engine.begin() as conn:
                conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()


def test_every_foreign_key_is_indexed(db_url, tmp_path):
    """In the schema the models declare and in the migrated one, on both databases."""
    with _models_schema(db_url, tmp_path) as (engine, schema):
        assert _unindexed_foreign_keys(inspect(engine), schema) == []
    migrated = create_engine(db_url)
    try:
        assert _unindexed_foreign_keys(inspect(migrated)) == []
    finally:
        migrated.dispose()


def test_the_alembic_environment_imports_without_running_migrations():
    """Importing env.py on its own (doctest collection, tools importing every module) runs nothing."""
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from annotate_app.store.migrations import env; print(len(env.target_metadata.tables))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(Base.metadata.tables)


@pytest.mark.parametrize("table", IMMUTABLE_TABLES)
@pytest.mark.parametrize("statement", ["UPDATE {t} SET id = id", "DELETE FROM {t}"])
def test_immutable_tables_refuse_update_and_delete(demo, table, statement):
    with demo.write() as s:
        s.execute(
            text(
                "INSERT INTO audit_log (at, actor_name, action, target, details) "
                "VALUES (CURRENT_TIMESTAMP, 'x', 'test', '', '{}')"
            )
        )
    if table != "audit_log":
        _label_and_release(demo)
    with pytest.raises((IntegrityError, DBAPIError), match="immutable"), demo.write() as s:
        s.execute(text(statement.format(t=table)))


@pytest.fixture
def passages(demo):
    """The demo with evidence on alice's and bob's labels of q1 · D1, their passages adjudicated, a release
    with passages, and D1 re-imported (rows carried to version 2)."""
    from app_helpers import PASSWORDS, judge_with_evidence

    from annotate_app.services import imports, passage_adjudication, releases
    from annotate_app.services.auth import SYSTEM, authenticate

    pair_id = judge_with_evidence(demo, {"alice": [(0, 5)], "bob": [(3, 9)]})
    rita = authenticate(demo, "rita", PASSWORDS["rita"])
    passage_adjudication.adjudicate_passages(demo, rita, "demo", pair_id, spans=[(0, 9)], reason="the answer")
    releases.create_release(demo, rita, "demo")
    with demo.read() as s:
        title, text_ = s.execute(
            text(
                "SELECT v.title, v.text FROM document_versions v JOIN documents d ON d.id = v.document_id "
                "WHERE d.external_id = 'D1'"
            )
        ).one()
    doc = {"doc_id": "D1", "title": title, "text": "Note: " + text_}
    imports.import_documents(demo, SYSTEM, "demo", (json.dumps(doc) + "\n").encode(), filename="d.jsonl")
    return demo


@pytest.mark.parametrize("table", PASSAGE_IMMUTABLE_TABLES)
@pytest.mark.parametrize("statement", ["UPDATE {t} SET id = id", "DELETE FROM {t}"])
def test_passage_tables_refuse_update_and_delete(passages, table, statement):
    with passages.read() as s:
        assert s.execute(text(f"SELECT count(*) FROM {table}")).scalar() > 0
    with pytest.raises((IntegrityError, DBAPIError), match="immutable"), passages.write() as s:
        s.execute(text(statement.format(t=table)))


OWN = "NOT carried AND NOT stale"


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE label_evidence SET start_char = start_char",
        "UPDATE label_evidence SET stale = stale WHERE carried",
        f"DELETE FROM label_evidence WHERE {OWN}",
    ],
)
def test_label_evidence_refuses_updates_and_deleting_a_labels_own_passages(passages, statement):
    with pytest.raises((IntegrityError, DBAPIError), match="immutable"), passages.write() as s:
        s.execute(text(statement))


def test_label_evidence_rows_a_reimport_derived_may_be_deleted(passages):
    """`store.annotation.replace_carried` deletes them when a re-import writes a version again."""
    with passages.write() as s:
        derived = s.execute(text(f"DELETE FROM label_evidence WHERE NOT ({OWN})")).rowcount
    with passages.read() as s:
        left = s.execute(text(f"SELECT count(*) FROM label_evidence WHERE {OWN}")).scalar()
    assert (derived, left) == (2, 2)


def _label_and_release(db):
    from annotate_app.services import labels, projects, queue, releases
    from annotate_app.services.auth import SYSTEM, authenticate

    projects.update_settings(db, SYSTEM, "demo", annotators_per_pair=1)
    alice = authenticate(db, "alice", "alice-demo")
    while (view := queue.next_pair(db, alice, "demo")) is not None:
        labels.save_label(db, alice, "demo", view.pair_id, grade=1, reason="it is related")
    releases.create_release(db, SYSTEM, "demo", justification="single annotator smoke test for triggers")


def test_sqlite_connection_settings(tmp_path):
    db = Database(f"sqlite:///{tmp_path}/sub/dir/x.db")
    with db.read() as s:
        pragma = {
            p: s.execute(text(f"PRAGMA {p}")).scalar()
            for p in ("journal_mode", "foreign_keys", "busy_timeout")
        }
    assert pragma == {"journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 5000}
    assert (tmp_path / "sub" / "dir" / "x.db").exists()
    db.dispose()


def test_sqlite_write_transactions_take_the_lock_up_front(tmp_path):
    import sqlite3

    db = Database(f"sqlite:///{tmp_path}/x.db")
    other = sqlite3.connect(tmp_path / "x.db", timeout=0.05, isolation_level=None)
    with db.write() as s:
        s.execute(text("SELECT 1"))
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
    with db.read() as s:
        s.execute(text("SELECT 1"))
        other.execute("BEGIN IMMEDIATE")  # readers never block writers
        other.execute("ROLLBACK")
    db.dispose()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://x@y/z", "database URL must be sqlite:// or postgresql+psycopg://; got 'mysql://x@y/z'"),
    ],
)
def test_bad_database_url(url, message):
    import re

    with pytest.raises(ValueError, match=re.escape(message)):
        Database(url)


def test_safe_url_hides_the_password():
    assert safe_url("postgresql+psycopg://u:secret@h/db") == "postgresql+psycopg://u:***@h/db"


@pytest.mark.parametrize(
    ("env", "url"),
    [
        ({}, "sqlite:///data/qrelforge.db"),
        ({"QRELFORGE_DATA_DIR": "/srv/qf"}, "sqlite:////srv/qf/qrelforge.db"),
        (
            {"QRELFORGE_DATABASE_URL": "postgresql+psycopg://u@h/q", "QRELFORGE_DATA_DIR": "/x"},
            "postgresql+psycopg://u@h/q",
        ),
        ({"QRELFORGE_DATABASE_URL": ""}, "sqlite:///data/qrelforge.db"),
    ],
)
def test_settings_from_environment(env, url):
    assert load_settings(env).database_url == url


@pytest.mark.parametrize("rows", [0, 3])
def test_bulk_integer_columns(db, rows):
    from annotate_app.store.annotation import int_columns

    with db.write() as s:
        for _ in range(rows):
            s.execute(
                text(
                    "INSERT INTO audit_log (at, actor_name, action, target, details) "
                    "VALUES (CURRENT_TIMESTAMP, 'x', 'a', '', '{}')"
                )
            )
    with db.read() as s:
        data = int_columns(
            s,
            "SELECT id, id * 2, CASE WHEN id > 1 THEN 1 ELSE 0 END FROM audit_log "
            "WHERE actor_name = %s ORDER BY id",
            "x",
            ncols=3,
        )
    assert data.dtype.name == "int64" and data.tolist() == [
        [i, 2 * i, int(i > 1)] for i in range(1, rows + 1)
    ]
