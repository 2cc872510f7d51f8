"""Bulk inserts inside the caller's transaction: COPY on PostgreSQL, executemany on SQLite.

`bulk_insert` takes dicts with the same keys; `insert_tuples` takes driver-ready tuples (`driver_value`).
Driver errors are raised as SQLAlchemy's would be (`faults.raw_errors`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import JSON, Connection, Table
from sqlalchemy.orm import Session

from annotate_app.store.faults import raw_errors

__all__ = ["bulk_insert", "insert_tuples", "driver_value", "fetch_rows", "SQLITE_BATCH"]

SQLITE_BATCH = 20_000


def bulk_insert(s: Session, table: Table, rows: Sequence[dict]) -> None:
    if not rows:
        return
    conn = s.connection()
    if conn.dialect.name != "postgresql":
        _sqlite_executemany(conn, table, rows)
        return
    columns = list(rows[0])
    as_json = [isinstance(table.c[c].type, JSON) for c in columns]
    cursor = _cursor(conn)
    statement = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"
    try:
        with raw_errors(conn, statement), cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(
                    [
                        json.dumps(row[c], ensure_ascii=False) if j and row[c] is not None else row[c]
                        for c, j in zip(columns, as_json, strict=True)
                    ]
                )
    finally:
        cursor.close()


def insert_tuples(s: Session, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Insert ``rows`` (tuples in the order of ``columns``) in the caller's transaction: COPY on PostgreSQL,
    executemany on SQLite, each value passed to the driver as it is (no JSON column; see `driver_value`)."""
    if not rows:
        return
    conn = s.connection()
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    if conn.dialect.name == "postgresql":
        sql = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"
    cursor = _cursor(conn)
    try:
        with raw_errors(conn, sql):
            if conn.dialect.name != "postgresql":
                cursor.executemany(sql, rows)
                return
            with cursor.copy(sql) as copy:
                for row in rows:
                    copy.write_row(row)
    finally:
        cursor.close()


def driver_value(s: Session, table: Table, column: str, value: Any) -> Any:
    """``value`` as the driver takes it for ``table.column`` (the bind processor of its type on this database
    applied: on SQLite a datetime becomes the text SQLAlchemy writes)."""
    dialect = s.connection().dialect
    process = table.c[column].type.dialect_impl(dialect).bind_processor(dialect)
    return value if process is None or value is None else process(value)


def _sqlite_executemany(conn, table: Table, rows: Sequence[dict]) -> None:
    """executemany on the raw sqlite3 cursor, values converted by each column type's bind processor (what
    SQLAlchemy does, without its per-row parameter bookkeeping)."""
    columns = list(rows[0])
    processors = [table.c[c].type.bind_processor(conn.dialect) for c in columns]
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        with raw_errors(conn, sql):
            _batches(cursor, sql, columns, processors, rows)
    finally:
        cursor.close()


def _batches(cursor: Any, sql: str, columns: list[str], processors: list, rows: Sequence[dict]) -> None:
    for start in range(0, len(rows), SQLITE_BATCH):
        batch = rows[start : start + SQLITE_BATCH]
        cursor.executemany(
            sql,
            [
                tuple(
                    v if f is None or v is None else f(v)
                    for v, f in zip((r[c] for c in columns), processors, strict=True)
                )
                for r in batch
            ],
        )


def fetch_rows(s: Session, sql: str, *params: Any) -> list[tuple]:
    """Rows of a raw SQL query (``%s`` placeholders) through the DB-API cursor: no per-row SQLAlchemy cost."""
    conn = s.connection()
    if conn.dialect.name == "sqlite":
        sql = sql.replace("%s", "?")
    cursor = _cursor(conn)
    try:
        with raw_errors(conn, sql):
            cursor.execute(sql, params)
            return list(cursor.fetchall())
    finally:
        cursor.close()


def _cursor(conn: Connection) -> Any:
    """A DB-API cursor on the session's own connection (same transaction)."""
    raw = conn.connection.dbapi_connection
    if raw is None:
        raise RuntimeError("the session's connection is closed")
    return raw.cursor()
