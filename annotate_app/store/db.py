"""Engines and transactions: SQLite (WAL, busy timeout, foreign keys) by default, PostgreSQL for teams.

`Database` hands out short transactions: ``write()`` and ``read()`` (``snapshot=True`` for one consistent
snapshot); both commit on success and roll back on any exception, and no session escapes. A busy,
unreachable or full database raises a `faults` error from every engine.

>>> db = Database("sqlite://")          # in-memory, for doctests only
>>> with db.read() as s:
...     s.connection().exec_driver_sql("select 1").scalar()
1
"""

from __future__ import annotations

import collections
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import URL, CursorResult, Result
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from annotate_app.store import faults

__all__ = [
    "Database",
    "safe_url",
    "unstorable",
    "rowcount",
    "SQLITE_BUSY_TIMEOUT_MS",
    "POOL_TIMEOUT_S",
    "MIN_ID",
    "MAX_ID",
]

SQLITE_BUSY_TIMEOUT_MS = 5_000  # what a user waits for a busy database before "try again"
POOL_TIMEOUT_S = 30  # for a free connection of the pool
MIN_ID, MAX_ID = -(2**31), 2**31 - 1  # integer columns are 4-byte integers on PostgreSQL
_SURROGATE = re.compile("[\ud800-\udfff]")


def unstorable(text: str) -> str | None:
    """Why ``text`` cannot be stored in (or looked up from) a text column of both databases, else None.

    PostgreSQL refuses U+0000 in text values (SQLite keeps it, so a backup would not move across), and a lone
    surrogate — a JSON ``"\\ud800"`` escape decodes to one — cannot be encoded as UTF-8 at all. Services
    refuse such input (`InvalidInput`); lookups by such a name find nothing.

    >>> unstorable("D';--%_"), unstorable("a\\x00b")
    (None, 'contains a NUL character (U+0000)')
    """
    if "\x00" in text:
        return "contains a NUL character (U+0000)"
    if _SURROGATE.search(text):
        return "contains a lone surrogate (not a Unicode character)"
    return None


class _WriterQueue:
    """The writers of this process to one SQLite file, first come, first served.

    SQLite lets one writer in at a time and makes the others poll (its busy handler); a newcomer polling at a
    shorter interval can get in ahead of a writer that has waited long. Under 50 busy annotator threads one
    was starved past the (then 30 s) busy timeout ("database is locked" on ``BEGIN IMMEDIATE``;
    benchmarks/soak.py).
    Queueing the process's writers fairly before ``BEGIN IMMEDIATE`` leaves the busy handler only other
    processes to wait for; it costs nothing, as SQLite runs one write transaction at a time anyway.
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._busy = False
        self._waiting: collections.deque[threading.Event] = collections.deque()

    def acquire(self, timeout: float) -> bool:
        with self._mutex:
            if not self._busy:
                self._busy = True
                return True
            turn = threading.Event()
            self._waiting.append(turn)
        if turn.wait(timeout):
            return True
        with self._mutex:
            if turn.is_set():  # handed over just as the wait timed out
                return True
            self._waiting.remove(turn)
            return False

    def release(self) -> None:
        with self._mutex:
            if self._waiting:
                self._waiting.popleft().set()  # the turn passes straight to the oldest waiter
            else:
                self._busy = False


_QUEUES: dict[str, _WriterQueue] = {}
_QUEUES_MUTEX = threading.Lock()


def _writer_queue(url: URL) -> _WriterQueue:
    """The queue of a SQLite file, shared by every Database of this process on that file."""
    if url.database in (None, "", ":memory:"):
        return _WriterQueue()
    key = str(Path(url.database).expanduser().resolve())
    with _QUEUES_MUTEX:
        return _QUEUES.setdefault(key, _WriterQueue())


def rowcount(result: Result[Any]) -> int:
    """The rows an UPDATE or DELETE matched. `Session.execute` is typed as returning a `Result`; for those
    statements it is a `CursorResult`, which counts them."""
    return int(cast("CursorResult[Any]", result).rowcount)


def safe_url(url: str | URL) -> str:
    """The URL with its password hidden, for messages."""
    return make_url(url).render_as_string(hide_password=True)


class Database:
    """A database handle: one engine (connection pool) and transaction helpers.

    ``url``: ``sqlite:///path/to/file.db`` or ``postgresql+psycopg://user@host/db``. ``pool_size``:
    connections kept open (raise it for many threads). The SQLite file's folder is created if missing.
    """

    def __init__(self, url: str | URL, *, pool_size: int = 10, echo: bool = False):
        self.url = make_url(url)
        if self.url.get_backend_name() not in ("sqlite", "postgresql"):
            raise ValueError(
                f"database URL must be sqlite:// or postgresql+psycopg://; got {safe_url(url)!r}"
            )
        self.dialect = self.url.get_backend_name()
        self.engine = (
            _sqlite_engine(self.url, pool_size, echo)
            if self.is_sqlite
            else _pg_engine(self.url, pool_size, echo)
        )
        self._writer = self.engine.execution_options(qf_write=True)
        self._snapshot = self._writer.execution_options(qf_snapshot=True)
        self._reader = self.engine.execution_options(qf_write=False)
        self._snapshot_reader = self._reader
        self._writers = _writer_queue(self.url) if self.is_sqlite else None
        if not self.is_sqlite:
            self._snapshot = self._snapshot.execution_options(isolation_level="REPEATABLE READ")
            self._reader = self._reader.execution_options(postgresql_readonly=True)
            self._snapshot_reader = self._reader.execution_options(isolation_level="REPEATABLE READ")

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @contextmanager
    def write(self, *, snapshot: bool = False) -> Iterator[Session]:
        """A read-write transaction; commits on success, rolls back on error."""
        if self._writers is not None and not self._writers.acquire(SQLITE_BUSY_TIMEOUT_MS / 1000):
            raise faults.DatabaseBusy()  # other writers of this process held it past the busy timeout
        committing = False
        try:
            with (
                _pool_faults(),
                Session(self._snapshot if snapshot else self._writer, expire_on_commit=False) as session,
                session.begin(),  # commits on leaving the block (and rolls back if COMMIT fails)
            ):
                yield session
                committing = True
        except faults.DatabaseUnavailable:
            if committing:  # lost during COMMIT: the write may have been stored
                raise faults.DatabaseUnavailable(faults.IN_DOUBT, in_doubt=True) from None
            raise
        finally:
            if self._writers is not None:
                self._writers.release()

    @contextmanager
    def read(self, *, snapshot: bool = False) -> Iterator[Session]:
        """A read-only transaction (``snapshot=True``: one snapshot for all its statements)."""
        with (
            _pool_faults(),
            Session(self._snapshot_reader if snapshot else self._reader, expire_on_commit=False) as session,
            session.begin(),
        ):
            yield session

    def dispose(self) -> None:
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"Database({safe_url(self.url)!r})"


@contextmanager
def _pool_faults() -> Iterator[None]:
    """No free connection in the pool in time: the database is busy."""
    try:
        yield
    except PoolTimeout:
        raise faults.DatabaseBusy() from None


def _sqlite_engine(url: URL, pool_size: int, echo: bool) -> Engine:
    memory = url.database in (None, "", ":memory:")
    if url.database and not memory:
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    options: dict[str, Any] = (
        {"poolclass": StaticPool}
        if memory
        else {"pool_size": pool_size, "max_overflow": pool_size, "pool_timeout": POOL_TIMEOUT_S}
    )
    engine = create_engine(
        url,
        echo=echo,
        connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        **options,
    )
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    faults.install(engine)
    return engine


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see _sqlite_begin)
    cursor = dbapi_conn.cursor()
    for pragma in (
        "journal_mode=WAL",
        f"busy_timeout={SQLITE_BUSY_TIMEOUT_MS}",
        "foreign_keys=ON",
        "synchronous=NORMAL",
    ):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _sqlite_begin(conn: Any) -> None:
    write = conn.get_execution_options().get("qf_write", True)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _pg_engine(url: URL, pool_size: int, echo: bool) -> Engine:
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    engine = create_engine(
        url,
        echo=echo,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_timeout=POOL_TIMEOUT_S,
        pool_pre_ping=True,
        connect_args={"connect_timeout": 10},
    )
    faults.install(engine)
    return engine
