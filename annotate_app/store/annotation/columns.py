"""Columns: a project's labels and pairs read in bulk as int64 numpy columns."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import (
    select,
)
from sqlalchemy.orm import Session

from annotate_app.store.bulk import fetch_rows
from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.models import (
    Pair,
    Query,
)
from annotate_app.store.qualification import counted_sql

__all__ = [
    "current_labels",
    "pair_rows",
    "pair_external_ids",
    "query_names",
    "int_columns",
    "pair_origins",
]


def current_labels(s: Session, project_id: int) -> dict[str, np.ndarray]:
    """Every current label of the project that counts as int64 columns: pair_id, annotator_id, grade, stale
    (0/1), label_id. Gold draws' labels never count; nor, until they qualify, do the labels of members who
    have not passed the project's qualification (`store.qualification.counted_sql`).

    One read of the covering index ``ix_assignments_gate`` (``assignments`` caches the current grade and label
    id), in bulk (see `int_columns`); grade and stale travel packed in one integer (grade * 2 + stale)."""
    sql = (
        "SELECT pair_id, annotator_id, grade * 2 + CASE WHEN stale THEN 1 ELSE 0 END, label_id "
        f"FROM assignments WHERE project_id = %s AND status = '{AssignmentStatus.DONE}' "
        f"AND {counted_sql()}"
    )
    data = int_columns(s, sql, project_id, project_id, ncols=4)
    return {
        "pair_id": data[:, 0].copy(),
        "annotator_id": data[:, 1].copy(),
        "grade": data[:, 2] >> 1,
        "stale": data[:, 2] & 1,
        "label_id": data[:, 3].copy(),
    }


def pair_rows(s: Session, project_id: int) -> dict[str, np.ndarray]:
    """Every pair of the project as int64 columns: pair_id, query_id (internal id), excluded (0/1)."""
    sql = (
        "SELECT id, query_id, CASE WHEN excluded THEN 1 ELSE 0 END FROM pairs WHERE project_id = %s "
        "ORDER BY id"
    )
    data = int_columns(s, sql, project_id, ncols=3)
    return {"pair_id": data[:, 0].copy(), "query_id": data[:, 1].copy(), "excluded": data[:, 2].astype(bool)}


def pair_external_ids(s: Session, project_id: int) -> dict[int, tuple[str, str]]:
    """pair id → (query external id, document external id) of every pair of the project."""
    sql = (
        "SELECT p.id, q.external_id, d.external_id FROM pairs p JOIN queries q ON q.id = p.query_id "
        "JOIN documents d ON d.id = p.document_id WHERE p.project_id = %s"
    )
    return {r[0]: (r[1], r[2]) for r in fetch_rows(s, sql, project_id)}


def query_names(s: Session, project_id: int) -> dict[int, str]:
    return dict(s.execute(select(Query.id, Query.external_id).where(Query.project_id == project_id)).all())


def int_columns(s: Session, sql: str, *params: Any, ncols: int) -> np.ndarray:
    """The rows of an all-integer, NULL-free ``SELECT ... FROM ...`` as an (n, ncols) int64 array.

    PostgreSQL: the server packs every row into 8-byte big-endian integers and concatenates them
    (``string_agg(int8send(..) || ..)``) into one bytea that numpy reads at once — no Python object per value
    (a row count guards against NULLs). SQLite: ``fetchall`` flattened with ``numpy.fromiter``."""
    conn = s.connection()
    if conn.dialect.name != "postgresql":
        rows = fetch_rows(s, sql, *params)
        flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=len(rows) * ncols)
        return flat.reshape(len(rows), ncols)
    packed = " || ".join(f"int8send(c{i}::int8)" for i in range(ncols))
    query = f"SELECT count(*), string_agg({packed}, ''::bytea) FROM ({_numbered(sql, ncols)}) AS t"
    count, data = fetch_rows(s, query, *params)[0]
    values = np.frombuffer(data or b"", dtype=">i8").astype(np.int64)
    if len(values) != count * ncols:
        raise ValueError(f"int_columns: NULL values in {sql!r}")
    return values.reshape(count, ncols)


def _numbered(sql: str, ncols: int) -> str:
    """Wrap ``SELECT a, b, ... FROM`` so its columns are named c0..c{n-1}."""
    head, rest = sql.split(" FROM ", 1)
    columns = _split_columns(head.removeprefix("SELECT "))
    if len(columns) != ncols:
        raise ValueError(f"expected {ncols} columns in {sql!r}")
    return "SELECT " + ", ".join(f"{c} AS c{i}" for i, c in enumerate(columns)) + " FROM " + rest


def _split_columns(text: str) -> list[str]:
    out, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
            continue
        depth += (ch == "(") - (ch == ")")
        current += ch
    return [*out, current.strip()]


def pair_origins(s: Session, pair_ids: Sequence[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    ids = sorted(set(pair_ids))
    for start in range(0, len(ids), 5000):
        stmt = select(Pair.id, Pair.origin).where(Pair.id.in_(ids[start : start + 5000]))
        out.update(dict(s.execute(stmt).all()))
    return out
