"""Whole-database dump and load for `services.backup`: every table, parents first, primary keys kept.

`tables`, `rows` (streamed, primary-key order, `encode`d), `decoder` (checks each value before anything is
written), `load` (inserts only: the immutable tables' triggers never fire) and `wipe` (in the caller's
transaction, so a failed restore keeps the old contents).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, Integer, String, Table, func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from annotate_app.store.bulk import bulk_insert
from annotate_app.store.db import unstorable
from annotate_app.store.models import Base, UTCDateTime

__all__ = [
    "tables",
    "columns",
    "rows",
    "encode",
    "decoder",
    "counts",
    "load",
    "defer_constraints",
    "reset_sequences",
    "wipe",
    "BadValue",
]

_INT_RANGE = (-(2**31), 2**31 - 1)  # Integer is a 4-byte integer on PostgreSQL


class BadValue(ValueError):
    """A value that does not fit its column (the message names the column and the problem)."""


def tables() -> list[Table]:
    return list(Base.metadata.sorted_tables)


def columns(table: Table) -> list[str]:
    return [c.name for c in table.columns]


def encode(value: Any) -> Any:
    """A column value as a JSON value (aware datetimes as ISO 8601 text)."""
    return value.isoformat() if isinstance(value, datetime) else value


def rows(s: Session, table: Table, *, batch: int = 5000) -> Iterator[list]:
    """Every row of ``table`` in primary-key order as a list of encoded values (server-side cursor on
    PostgreSQL: memory stays at one batch)."""
    stmt = select(*table.columns).order_by(*table.primary_key.columns)
    for row in s.execute(stmt, execution_options={"yield_per": batch}):
        yield [encode(v) for v in row]


def counts(s: Session) -> dict[str, int]:
    """Rows per table."""
    return {t.name: int(s.execute(select(func.count()).select_from(t)).scalar_one()) for t in tables()}


# ------------------------------------------------------------------------------------------- decoding
def decoder(table: Table, names: Sequence[str]) -> Callable[[list], dict]:
    """A function turning an encoded row (values in ``names`` order) into a row dict; raises BadValue."""
    checks = [(name, _check(table.c[name])) for name in names]

    def decode(values: list) -> dict:
        if not isinstance(values, list) or len(values) != len(checks):
            raise BadValue(f"expected a list of {len(checks)} values; got {str(values)[:80]}")
        out = {}
        for (name, check), value in zip(checks, values, strict=True):
            try:
                out[name] = check(value)
            except BadValue as exc:
                raise BadValue(f"column {name}: {exc}") from None
        return out

    return decode


def _check(column) -> Callable[[Any], Any]:
    kind = column.type
    convert: Callable[[Any], Any]
    if isinstance(kind, UTCDateTime):
        convert = _datetime
    elif isinstance(kind, Boolean):
        convert = _typed(bool, "a boolean")
    elif isinstance(kind, Integer):
        convert = _integer
    elif isinstance(kind, Float):
        convert = _float
    elif isinstance(kind, JSON):
        convert = _any
    elif isinstance(kind, String):  # Text too
        convert = _text(kind.length)
    else:  # pragma: no cover - a new column type needs a rule here
        raise TypeError(f"no backup rule for column {column} of type {kind!r}")
    nullable = column.nullable

    def check(value: Any) -> Any:
        if value is None:
            if not nullable:
                raise BadValue("NULL in a NOT NULL column")
            return None
        return convert(value)

    return check


def _typed(kind: type, what: str) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        if type(value) is not kind:
            raise BadValue(f"expected {what}; got {value!r}")
        return value

    return convert


def _integer(value: Any) -> int:
    if type(value) is not int or not _INT_RANGE[0] <= value <= _INT_RANGE[1]:
        raise BadValue(f"expected a 32-bit integer; got {str(value)[:40]}")
    return value


def _float(value: Any) -> float:
    if type(value) not in (int, float):
        raise BadValue(f"expected a number; got {value!r}")
    return float(value)


def _any(value: Any) -> Any:
    return value


def _datetime(value: Any) -> datetime:
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise BadValue(f"expected an ISO 8601 time with its UTC offset; got {str(value)[:40]!r}")
    return parsed


def _text(length: int | None) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if not isinstance(value, str):
            raise BadValue(f"expected text; got {str(value)[:40]!r}")
        if length is not None and len(value) > length:
            raise BadValue(f"text longer than {length} characters")
        reason = unstorable(value)
        if reason:
            raise BadValue(f"text {reason}")
        return value

    return convert


# --------------------------------------------------------------------------------------------- loading
def defer_constraints(s: Session) -> None:
    """Check foreign keys at commit: rows go in parents first, but ``assignments.label_id`` points forward."""
    if s.connection().dialect.name == "sqlite":
        s.execute(text("PRAGMA defer_foreign_keys = ON"))
    else:
        s.execute(text("SET CONSTRAINTS ALL DEFERRED"))


def load(s: Session, table: Table, batch: list[dict]) -> None:
    """Insert rows; a database error (duplicate key, bad value) is raised as SQLAlchemy's IntegrityError or
    DataError, as for any other statement."""
    dbapi = s.connection().dialect.dbapi
    if dbapi is None:  # pragma: no cover - every engine here has a DB-API driver
        raise RuntimeError("the database has no DB-API driver")
    try:
        bulk_insert(s, table, batch)
    except dbapi.Error as exc:  # the raw cursor (COPY / executemany) raises the driver's own errors
        raise DBAPIError.instance(f"INSERT INTO {table.name}", None, exc, dbapi.Error) from None


def reset_sequences(s: Session) -> None:
    """PostgreSQL: move every id sequence past the largest id loaded (SQLite needs nothing)."""
    if s.connection().dialect.name == "sqlite":
        return
    for table in tables():
        if list(table.primary_key.columns.keys()) == ["id"]:
            s.execute(
                text(
                    f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                    f"COALESCE(MAX(id), 0) + 1, false) FROM {table.name}"
                )
            )


def wipe(s: Session) -> None:
    """Delete every row of every table in the caller's transaction (see the module doc)."""
    names = [t.name for t in reversed(tables())]
    if s.connection().dialect.name != "sqlite":
        s.execute(text(f"TRUNCATE {', '.join(names)} RESTART IDENTITY"))
        return
    triggers = s.execute(
        text("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
    ).all()
    for name, _ in triggers:
        s.execute(text(f'DROP TRIGGER "{name}"'))
    defer_constraints(s)
    for name in names:
        s.execute(text(f"DELETE FROM {name}"))
    for _, sql in triggers:
        s.execute(text(sql))
