"""Database fixtures for the store/services/CLI tests: every test using ``db_url`` runs on SQLite and on the
real PostgreSQL server.

PostgreSQL: one fresh database per test session and xdist worker (``qrelforge_test_<worker>_<pid>``), created
through ``$QRELFORGE_TEST_PG_URL`` (default ``postgresql+psycopg://postgres@127.0.0.1:5432/test``), migrated
once, emptied (`_truncate`) before each test and dropped at the end. An unreachable server FAILS the tests
(never skips them): CI must not pass without PostgreSQL. SQLite: a migrated template file copied per test (the
``demo`` fixture copies ``demo_template`` instead).
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

PG_ADMIN_URL = os.environ.get("QRELFORGE_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)]

__all__ = [
    "PG_ADMIN_URL",
    "BACKENDS",
    "pg_session_url",
    "sqlite_template",
    "db_url",
    "db",
    "fast_hashing",
    "demo",
    "actors",
    "cheap_hashes",
    "pg_demo_copy",
]


def _psycopg_dsn(url: str) -> str:
    from sqlalchemy import make_url

    u = make_url(url)
    return u.set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def pg_session_url(worker_id: str) -> str:
    """A fresh, migrated PostgreSQL database for this session and worker (dropped at the end)."""
    import psycopg
    from sqlalchemy import make_url

    from annotate_app.store.migrate import upgrade

    name = f"qrelforge_test_{worker_id}_{os.getpid()}"
    try:
        admin = psycopg.connect(_psycopg_dsn(PG_ADMIN_URL), autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is unreachable at {make_url(PG_ADMIN_URL).render_as_string()} ({exc}); start it "
            "(pg_ctlcluster --skip-systemctl-redirect 15 main start) or set QRELFORGE_TEST_PG_URL",
            pytrace=False,
        )
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    url = make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    upgrade(url)
    yield url
    with psycopg.connect(_psycopg_dsn(PG_ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> str:
    from annotate_app.store.migrate import upgrade

    path = tmp_path_factory.mktemp("sqlite-template") / "template.db"
    upgrade(f"sqlite:///{path}")
    return str(path)


def _truncate(url: str) -> None:
    """Empty every table of the PostgreSQL database ``url`` and restart its sequences.

    Only the tables that hold rows are emptied. As a superuser (the test server's ``postgres``), by DELETE
    with the triggers off (``session_replication_role = replica``: the append-only triggers refuse a DELETE,
    and foreign keys are not checked, every table holding rows being emptied in the one transaction): a
    TRUNCATE makes and syncs a new file per table, far slower than deleting a test's few rows. Otherwise by
    TRUNCATE ... CASCADE."""
    from sqlalchemy import create_engine, text

    from annotate_app.store.models import Base

    engine = create_engine(url)
    tables = [table.name for table in Base.metadata.sorted_tables]
    probe = " UNION ALL ".join(f"SELECT '{name}' WHERE EXISTS (SELECT 1 FROM {name})" for name in tables)
    with engine.begin() as conn:
        full = [row[0] for row in conn.execute(text(probe))]
        if full and conn.execute(text("SELECT current_setting('is_superuser')")).scalar() == "on":
            conn.execute(text("SET LOCAL session_replication_role = replica"))
            for name in full:
                conn.execute(text(f'DELETE FROM "{name}"'))
        elif full:
            conn.execute(text(f"TRUNCATE {', '.join(full)} CASCADE"))
        conn.execute(
            text(
                "SELECT setval(format('%I.%I', schemaname, sequencename), start_value, false) "
                "FROM pg_sequences WHERE schemaname = 'public'"
            )
        )
    engine.dispose()


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path) -> str:
    """An empty, migrated database: SQLite (a file) and PostgreSQL."""
    if request.param == "sqlite":
        path = tmp_path / "qrelforge.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    url = request.getfixturevalue("pg_session_url")
    _truncate(url)
    return url


@pytest.fixture
def fast_hashing(monkeypatch):
    """Cheap argon2 parameters: the real ones cost ~0.14 s per hash, which would dominate the suite."""
    from argon2 import PasswordHasher

    from annotate_app.services import auth

    fast = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    monkeypatch.setattr(auth, "_HASHER", fast)
    monkeypatch.setattr(auth, "_DUMMY_HASH", fast.hash("timing"))


@pytest.fixture
def db(db_url, fast_hashing):
    from annotate_app.store.db import Database

    database = Database(db_url, pool_size=25)
    yield database
    database.dispose()


@pytest.fixture
def demo(db, request):
    """The demo project loaded (users alice, bob, rita, admin; 12 pooled pairs), by one `load_demo` a
    session: on SQLite the database file becomes a copy of ``demo_template``; on PostgreSQL the emptied
    tables get the rows of `pg_demo_copy`."""
    from sqlalchemy import text

    from annotate_app.services.demo import load_demo

    with db.read() as session:  # a fixture before this one wrote: load the demo beside its rows
        written = session.execute(
            text("SELECT EXISTS (SELECT 1 FROM projects) OR EXISTS (SELECT 1 FROM users)")
        )
        if written.scalar():
            load_demo(db)
            return db
    if db.is_sqlite:
        db.dispose()
        shutil.copyfile(request.getfixturevalue("demo_template"), db.url.database)
        return db
    _restore_demo(db, request.getfixturevalue("pg_demo_copy"))
    return db


DEMO_COPY = "demo_copy"
"""The PostgreSQL schema that holds the worker's copy of the demo's rows (`pg_demo_copy`)."""


@contextmanager
def cheap_hashes():
    """Within the block, `auth` hashes with cheap argon2 parameters (as `fast_hashing` does for one test)."""
    from argon2 import PasswordHasher

    from annotate_app.services import auth

    saved = auth._HASHER, auth._DUMMY_HASH
    auth._HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    auth._DUMMY_HASH = auth._HASHER.hash("timing")
    try:
        yield
    finally:
        auth._HASHER, auth._DUMMY_HASH = saved


@dataclass(frozen=True)
class DemoCopy:
    """What `pg_demo_copy` kept: each table's columns (as its SQL list) and each sequence's (last_value,
    is_called) after `load_demo`."""

    columns: dict[str, str]
    sequences: dict[str, tuple[int, bool]]


@pytest.fixture(scope="session")
def pg_demo_copy(pg_session_url) -> DemoCopy:
    """`load_demo` run once in the worker's PostgreSQL database: its rows are kept in the schema `DEMO_COPY`
    and the tables emptied again."""
    from sqlalchemy import create_engine, text

    from annotate_app.services.demo import load_demo
    from annotate_app.store.db import Database
    from annotate_app.store.models import Base

    _truncate(pg_session_url)
    database = Database(pg_session_url)
    with cheap_hashes():
        load_demo(database)
    database.dispose()
    engine = create_engine(pg_session_url)
    columns = {}
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA IF EXISTS {DEMO_COPY} CASCADE"))
        conn.execute(text(f"CREATE SCHEMA {DEMO_COPY}"))
        for table in Base.metadata.sorted_tables:
            conn.execute(text(f'CREATE TABLE {DEMO_COPY}."{table.name}" AS TABLE public."{table.name}"'))
            names = conn.execute(
                text(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = :schema "
                    "AND table_name = :table ORDER BY ordinal_position"
                ),
                {"schema": DEMO_COPY, "table": table.name},
            ).scalars()
            columns[table.name] = ", ".join(f'"{name}"' for name in names)
        rows = conn.execute(
            text("SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = 'public'")
        ).all()
    engine.dispose()
    _truncate(pg_session_url)
    sequences = {name: (value, True) for name, value in rows if value is not None}
    return DemoCopy(columns=columns, sequences=sequences)


def _restore_demo(db, copy: DemoCopy) -> None:
    """Fill the emptied PostgreSQL database of ``db`` with the rows of `DEMO_COPY` and set its sequences as
    `load_demo` left them."""
    from sqlalchemy import text

    with db.engine.begin() as conn:
        for table, columns in copy.columns.items():
            conn.execute(
                text(f'INSERT INTO public."{table}" ({columns}) SELECT {columns} FROM {DEMO_COPY}."{table}"')
            )
        for name, (value, called) in copy.sequences.items():
            conn.execute(
                text("SELECT setval(:name, :value, :called)"),
                {"name": f"public.{name}", "value": value, "called": called},
            )


@pytest.fixture
def actors(demo) -> dict:
    """Logged-in actors of the demo users, by name."""
    from annotate_app.services.auth import authenticate
    from annotate_app.services.demo import DEMO_USERS

    return {name: authenticate(demo, name, password) for name, _, password in DEMO_USERS}


def synthetic_project(
    db, name: str, *, queries: int, docs: int, n: int = 2, annotators: int = 0, prefix: str = "a", **settings
) -> list:
    """A project whose pool is every (query, document) pair: ``queries`` × ``docs`` pairs, N = ``n``; creates
    ``annotators`` member users (``a00``, ``a01``, ...) and returns their actors."""
    import json

    from annotate_app.services import imports, pooling, projects, users
    from annotate_app.services.auth import SYSTEM, authenticate

    projects.create_project(db, SYSTEM, name, annotators_per_pair=n, **settings)
    doc_lines = "".join(
        json.dumps({"doc_id": f"D{i}", "title": f"t{i}", "text": f"text {i}"}) + "\n" for i in range(docs)
    )
    query_lines = "".join(
        json.dumps({"query_id": f"q{j}", "text": f"query {j}"}) + "\n" for j in range(queries)
    )
    run = "".join(f"q{j} Q0 D{i} {i + 1} {docs - i} sys\n" for j in range(queries) for i in range(docs))
    imports.import_documents(db, SYSTEM, name, doc_lines.encode(), filename="docs.jsonl")
    imports.import_queries(db, SYSTEM, name, query_lines.encode(), filename="queries.jsonl")
    imports.import_run(db, SYSTEM, name, run.encode(), filename="run.trec")
    pooling.pool(db, SYSTEM, name, depth=docs)
    people = []
    for k in range(annotators):
        user = f"{prefix}{k:02d}"
        users.create_user(db, SYSTEM, user, f"{user}-password")
        people.append(user)
    if people:
        projects.assign(db, SYSTEM, name, people)
    return [authenticate(db, u, f"{u}-password") for u in people]
