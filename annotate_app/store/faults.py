"""Database faults as one clear message each: the store's only translation of driver errors.

`install(engine)` raises `DatabaseBusy`, `DatabaseUnavailable` or `DiskFull` instead of the driver's error
(kept as ``__cause__``); other errors stay SQLAlchemy's. ``in_doubt`` is True when a COMMIT broke, so the
write may be stored; `retry_once` resends a call once, when in doubt only if it is idempotent.

>>> str(DatabaseBusy()), str(DiskFull())
('the database is busy, try again', 'the disk is full')
>>> calls = []
>>> def flaky():
...     calls.append(1)
...     if len(calls) == 1:
...         raise DatabaseUnavailable()
...     return "ok"
>>> retry_once(flaky), len(calls)
('ok', 2)
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, event
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import DBAPIError

from metrics.errors import QrelForgeError

__all__ = [
    "DatabaseFault",
    "DatabaseBusy",
    "DatabaseUnavailable",
    "DiskFull",
    "classify",
    "install",
    "raw_errors",
    "retry_once",
]

_LOG = logging.getLogger("qrelforge.database")
T = TypeVar("T")

BUSY = "the database is busy, try again"
UNAVAILABLE = "the database is unreachable, try again later"
IN_DOUBT = (
    "the connection to the database was lost while saving: reload to see whether it was saved, then try again"
)
DISK_FULL = "the disk is full"


class DatabaseFault(QrelForgeError):
    """The database could not do what was asked, for a reason outside the request (busy, down, full)."""

    MESSAGE = "database fault"

    def __init__(self, message: str | None = None, *, in_doubt: bool = False):
        self.in_doubt = in_doubt
        super().__init__(message or self.MESSAGE)


class DatabaseBusy(DatabaseFault):
    """Another writer held the database longer than a user should wait."""

    MESSAGE = BUSY


class DatabaseUnavailable(DatabaseFault):
    """The database server cannot be reached, or dropped the connection."""

    MESSAGE = UNAVAILABLE


class DiskFull(DatabaseFault):
    """The database has no room left to write."""

    MESSAGE = DISK_FULL


_SQLITE = {
    "SQLITE_BUSY": DatabaseBusy,
    "SQLITE_LOCKED": DatabaseBusy,
    "SQLITE_FULL": DiskFull,
    "SQLITE_CANTOPEN": DatabaseUnavailable,
}
_SQLITE_TEXT = {
    "database is locked": DatabaseBusy,
    "database table is locked": DatabaseBusy,
    "database or disk is full": DiskFull,
    "unable to open database file": DatabaseUnavailable,
}
_PG_STATE = {
    "53100": DiskFull,  # disk_full
    "53300": DatabaseBusy,  # too_many_connections
    "55P03": DatabaseBusy,  # lock_not_available (lock_timeout)
    "57P01": DatabaseUnavailable,  # admin_shutdown (pg_terminate_backend)
    "57P02": DatabaseUnavailable,  # crash_shutdown
    "57P03": DatabaseUnavailable,  # cannot_connect_now
}


def classify(error: BaseException, *, disconnect: bool = False) -> type[DatabaseFault] | None:
    """The fault a driver error stands for, or None (``disconnect``: SQLAlchemy saw a dropped connection)."""
    name = getattr(error, "sqlite_errorname", None)
    if isinstance(name, str):
        for prefix, fault in _SQLITE.items():
            if name == prefix or name.startswith(prefix + "_"):
                return fault
    text = str(error).lower()
    if type(error).__module__.startswith("sqlite3"):
        return next((fault for words, fault in _SQLITE_TEXT.items() if words in text), None)
    state = getattr(error, "sqlstate", None)
    if isinstance(state, str) and state in _PG_STATE:
        return _PG_STATE[state]
    if isinstance(state, str) and state.startswith("08"):  # connection_exception
        return DatabaseUnavailable
    if getattr(error, "errno", None) == errno.ENOSPC or "no space left on device" in text:
        return DiskFull
    if disconnect:
        return DatabaseUnavailable
    if state is None and type(error).__name__ == "OperationalError" and "psycopg" in type(error).__module__:
        return DatabaseUnavailable  # no SQLSTATE: the connection itself failed (refused, timed out, lost)
    return None


def _on_error(context: ExceptionContext) -> None:
    if context.is_pre_ping:  # the pool's liveness check: SQLAlchemy reconnects by itself
        return
    fault = classify(context.original_exception, disconnect=context.is_disconnect)
    if fault is None:
        return
    if fault is DatabaseUnavailable:
        context.is_disconnect = True  # drop it (and the pool's older connections): the next call reconnects
    detail = (str(context.original_exception).strip().splitlines() or [""])[0]
    _LOG.info("%s (%s: %s)", fault.MESSAGE, type(context.original_exception).__name__, detail)
    raise fault()


def install(engine: Engine) -> None:
    """Turn the engine's driver errors into `DatabaseFault` (see the module doc)."""
    event.listen(engine, "handle_error", _on_error)


@contextmanager
def raw_errors(conn: Connection, statement: str) -> Iterator[None]:
    """Driver errors of raw DB-API calls on ``conn`` (bulk COPY and executemany bypass SQLAlchemy) raised as
    SQLAlchemy would: a `DatabaseFault`, else SQLAlchemy's error class (IntegrityError, ...)."""
    dbapi = conn.dialect.loaded_dbapi
    try:
        yield
    except dbapi.Error as exc:
        disconnect = conn.dialect.is_disconnect(exc, conn.connection.dbapi_connection, None)
        fault = classify(exc, disconnect=disconnect)
        if disconnect or fault is DatabaseUnavailable:
            conn.invalidate(exc)
        if fault is not None:
            raise fault() from exc
        raise DBAPIError.instance(statement, None, exc, dbapi.Error) from exc


def retry_once(call: Callable[..., T], *args: Any, idempotent: bool = False, **kwargs: Any) -> T:
    """``call(*args, **kwargs)``, sent a second time (on a new connection) if the first lost its connection
    before writing anything — or at any point when ``idempotent`` (the call may safely run twice). A second
    fault is raised; a busy or full database is not retried (waiting again would not help)."""
    try:
        return call(*args, **kwargs)
    except DatabaseUnavailable as fault:
        if fault.in_doubt and not idempotent:
            raise
    return call(*args, **kwargs)
