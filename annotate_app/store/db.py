"""Engines and transactions: SQLite (WAL, busy timeout, foreign keys) by default, PostgreSQL (psycopg 3) for teams.

`Database` is the handle every service receives. It hands out short transactions:

- ``db.write()``: a read-write transaction. On SQLite it starts with ``BEGIN IMMEDIATE``, so writers queue on
  the database lock (waiting up to the busy timeout) instead of failing half-way when they upgrade from reading
  to writing; readers are never blocked (WAL). On PostgreSQL it is READ COMMITTED; ``write(snapshot=True)``
  asks for REPEATABLE READ, one consistent snapshot for multi-statement reads that then write (releases).
- ``db.read()``: a read-only transaction (deferred ``BEGIN`` on SQLite, READ ONLY on PostgreSQL).

Both commit on success and roll back on any exception. Sessions never escape: services turn rows into frozen
dataclasses before the transaction ends.

>>> db = Database("sqlite://")          # in-memory, for doctests only
>>> with db.read() as s:
...     s.connection().exec_driver_sql("select 1").scalar()
1
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import URL
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

__all__ = ["Database", "safe_url", "SQLITE_BUSY_TIMEOUT_MS"]

SQLITE_BUSY_TIMEOUT_MS = 30_000


def safe_url(url: str | URL) -> str:
    """The URL with its password hidden, for messages."""
    return make_url(url).render_as_string(hide_password=True)


class Database:
    """A database handle: one engine (connection pool) and transaction helpers.

    ``url``: ``sqlite:///path/to/file.db`` or ``postgresql+psycopg://user@host/db``. ``pool_size``: connections
    kept open (raise it for many threads). The SQLite file's folder is created if missing.
    """

    def __init__(self, url: str | URL, *, pool_size: int = 10, echo: bool = False):
        self.url = make_url(url)
        if self.url.get_backend_name() not in ("sqlite", "postgresql"):
            raise ValueError(f"database URL must be sqlite:// or postgresql+psycopg://; got {safe_url(url)!r}")
        self.dialect = self.url.get_backend_name()
        self.engine = _sqlite_engine(self.url, pool_size, echo) if self.is_sqlite else _pg_engine(
            self.url, pool_size, echo)
        self._writer = self.engine.execution_options(qf_write=True)
        self._snapshot = self._writer.execution_options(qf_snapshot=True)
        self._reader = self.engine.execution_options(qf_write=False)
        if not self.is_sqlite:
            self._snapshot = self._snapshot.execution_options(isolation_level="REPEATABLE READ")
            self._reader = self._reader.execution_options(postgresql_readonly=True)

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @contextmanager
    def write(self, *, snapshot: bool = False) -> Iterator[Session]:
        """A read-write transaction; commits on success, rolls back on error."""
        with Session(self._snapshot if snapshot else self._writer, expire_on_commit=False) as session, \
                session.begin():
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only transaction."""
        with Session(self._reader, expire_on_commit=False) as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"Database({safe_url(self.url)!r})"


def _sqlite_engine(url: URL, pool_size: int, echo: bool) -> Engine:
    memory = url.database in (None, "", ":memory:")
    if not memory:
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    options: dict[str, Any] = {"poolclass": StaticPool} if memory else {
        "pool_size": pool_size, "max_overflow": pool_size, "pool_timeout": 60}
    engine = create_engine(url, echo=echo, connect_args={"check_same_thread": False,
                                                         "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}, **options)
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see _sqlite_begin)
    cursor = dbapi_conn.cursor()
    for pragma in ("journal_mode=WAL", f"busy_timeout={SQLITE_BUSY_TIMEOUT_MS}", "foreign_keys=ON",
                   "synchronous=NORMAL"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _sqlite_begin(conn: Any) -> None:
    write = conn.get_execution_options().get("qf_write", True)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _pg_engine(url: URL, pool_size: int, echo: bool) -> Engine:
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    return create_engine(url, echo=echo, pool_size=pool_size, max_overflow=pool_size, pool_timeout=60,
                         pool_pre_ping=True)
