"""Queries for importing other tools' labels (`annotate_app.services.imports.labels`): pairs by external IDs,
queries by text, and the bulk writes of an import, planned by `claim_states` and `pair_slots`.

`move_claims` moves a claim only if still at the planned version; `claims_on` re-reads a piece's claims.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import bindparam, func, select, update
from sqlalchemy.orm import Session

from annotate_app.store.bulk import driver_value, fetch_rows, insert_tuples
from annotate_app.store.db import rowcount
from annotate_app.store.enums import AssignmentStatus, ClaimDraw
from annotate_app.store.models import Assignment, Base, Label, Pair, Query, table_of

__all__ = [
    "pair_keys",
    "query_ids_by_text",
    "pair_tasks",
    "ClaimState",
    "claim_states",
    "pair_slots",
    "reserve_ids",
    "largest_ids",
    "claims_on",
    "defer_label_links",
    "CLAIM_COLUMNS",
    "LABEL_COLUMNS",
    "insert_claims",
    "insert_labels",
    "move_claims",
    "add_claims",
]

_STEP = 500  # ids per statement


def pair_keys(s: Session, project_id: int) -> dict[tuple[str, str], tuple[int, bool]]:
    """(query external id, document external id) → (pair id, excluded) of every pair of the project."""
    sql = (
        "SELECT q.external_id, d.external_id, p.id, CASE WHEN p.excluded THEN 1 ELSE 0 END FROM pairs p "
        "JOIN queries q ON q.id = p.query_id JOIN documents d ON d.id = p.document_id WHERE p.project_id = %s"
    )
    return {(r[0], r[1]): (int(r[2]), bool(r[3])) for r in fetch_rows(s, sql, project_id)}


def query_ids_by_text(s: Session, project_id: int) -> dict[str, list[str]]:
    """query text → the external ids of the project's queries with that text."""
    out: dict[str, list[str]] = {}
    rows = s.execute(select(Query.text, Query.external_id).where(Query.project_id == project_id))
    for text, external_id in rows:
        out.setdefault(text, []).append(external_id)
    return out


def pair_tasks(s: Session, project_id: int) -> list[tuple[str, str, str, str, str]]:
    """(query external id, query text, document external id, title, text of its current version) of every
    pair of the project not excluded, in pair order."""
    sql = (
        "SELECT q.external_id, q.text, d.external_id, v.title, v.text FROM pairs p "
        "JOIN queries q ON q.id = p.query_id JOIN documents d ON d.id = p.document_id "
        "JOIN document_versions v ON v.document_id = d.id AND v.version = d.version "
        "WHERE p.project_id = %s AND NOT p.excluded ORDER BY p.id"
    )
    return [tuple(r) for r in fetch_rows(s, sql, project_id)]


# ------------------------------------------------------------------------------------ staged label imports
@dataclass(frozen=True)
class ClaimState:
    """An annotator's claim of a pair as a label import plans against it: the assignment, how the queue drew
    it (`ClaimDraw`; None: not a queue claim), and its current label's grade, reason and document version
    (None without a label)."""

    assignment_id: int
    status: str
    version: int
    draw: str | None
    label_id: int | None
    grade: int | None
    reason: str | None
    doc_version: int | None


def claim_states(
    s: Session, project_id: int, annotator_ids: Sequence[int]
) -> dict[tuple[int, int], ClaimState]:
    """(pair id, annotator id) → `ClaimState` of every claim these annotators hold in the project (any
    status), with the current label read in the same statement."""
    out: dict[tuple[int, int], ClaimState] = {}
    ids = sorted(set(annotator_ids))
    for start in range(0, len(ids), _STEP):
        some = ids[start : start + _STEP]
        sql = (
            "SELECT a.pair_id, a.annotator_id, a.id, a.status, a.version, a.draw, a.label_id, l.grade, "
            "l.reason, l.doc_version FROM assignments a LEFT JOIN labels l ON l.id = a.label_id "
            f"WHERE a.project_id = %s AND a.annotator_id IN ({', '.join(['%s'] * len(some))})"
        )
        for pair_id, annotator_id, *state in fetch_rows(s, sql, project_id, *some):
            out[(pair_id, annotator_id)] = ClaimState(*state)
    return out


def pair_slots(s: Session, project_id: int) -> dict[int, tuple[int, int]]:
    """pair id → (current document version, highest slot held on it, 0 if none) of every pair of the
    project."""
    sql = (
        "SELECT p.id, d.version, COALESCE(h.top, 0) FROM pairs p JOIN documents d ON d.id = p.document_id "
        "LEFT JOIN (SELECT pair_id, max(slot) AS top FROM assignments WHERE project_id = %s "
        "AND slot IS NOT NULL GROUP BY pair_id) h ON h.pair_id = p.id WHERE p.project_id = %s"
    )
    return {r[0]: (int(r[1]), int(r[2])) for r in fetch_rows(s, sql, project_id, project_id)}


def reserve_ids(s: Session, model: type[Base], n: int) -> list[int] | None:
    """``n`` ids of ``model``'s table drawn from its sequence (PostgreSQL), for rows inserted later with them;
    None on SQLite (see `largest_ids`)."""
    if s.connection().dialect.name != "postgresql":
        return None
    if not n:
        return []
    sql = "SELECT array_agg(nextval(pg_get_serial_sequence(%s, 'id'))) FROM generate_series(1, %s)"
    return [int(i) for i in fetch_rows(s, sql, model.__tablename__, n)[0][0]]


def largest_ids(s: Session) -> tuple[int, int]:
    """(largest label id, largest assignment id), 0 for an empty table: on SQLite, rows inserted after them
    in the same transaction take the ids that follow (writers are serialised)."""
    label = s.scalar(select(func.coalesce(func.max(Label.id), 0)))
    claim = s.scalar(select(func.coalesce(func.max(Assignment.id), 0)))
    return int(label or 0), int(claim or 0)


def claims_on(s: Session, pair_ids: Sequence[int]) -> list[tuple]:
    """(pair id, annotator id, assignment id, version, label id, slot) of every claim of these pairs (any
    status)."""
    out = []
    ids = sorted(set(pair_ids))
    for start in range(0, len(ids), _STEP):
        some = ids[start : start + _STEP]
        stmt = select(
            Assignment.pair_id,
            Assignment.annotator_id,
            Assignment.id,
            Assignment.version,
            Assignment.label_id,
            Assignment.slot,
        ).where(Assignment.pair_id.in_(some))
        out += [tuple(r) for r in s.execute(stmt)]
    return out


def defer_label_links(s: Session) -> None:
    """Check ``assignments.label_id`` at commit, not per row, in the caller's transaction: a new claim is
    inserted before the label it points to (which points back to it)."""
    if s.connection().dialect.name == "postgresql":
        s.execute(sa.text("SET CONSTRAINTS ALL DEFERRED"))
    else:
        s.execute(sa.text("PRAGMA defer_foreign_keys = ON"))  # reset when the transaction ends


CLAIM_COLUMNS = ("id", "project_id", "pair_id", "annotator_id", "slot", "version", "label_id", "grade")
LABEL_COLUMNS = (
    "id",
    "assignment_id",
    "pair_id",
    "annotator_id",
    "version",
    "grade",
    "reason",
    "doc_version",
    "guidelines_version",
)


def insert_claims(s: Session, rows: Sequence[tuple], now: datetime) -> None:
    """Insert done claims, not stale, made ``now``: tuples of `CLAIM_COLUMNS` (after `defer_label_links`)."""
    table = table_of(Assignment)
    at = driver_value(s, table, "assigned_at", now)
    columns = (*CLAIM_COLUMNS, "status", "stale", "assigned_at", "updated_at")
    done = AssignmentStatus.DONE.value
    insert_tuples(s, table, columns, [(*row, done, False, at, at) for row in rows])


def insert_labels(s: Session, rows: Sequence[tuple], now: datetime) -> None:
    """Insert label versions made ``now`` (not unsure, no time spent, no request id): tuples of
    `LABEL_COLUMNS`."""
    table = table_of(Label)
    at = driver_value(s, table, "created_at", now)
    insert_tuples(s, table, (*LABEL_COLUMNS, "unsure", "created_at"), [(*row, False, at) for row in rows])


def move_claims(s: Session, moves: Sequence[tuple[int, int, int, int, int]], now: datetime) -> int:
    """Move claims to a new label version: (assignment id, version now, new version, grade, label id) each,
    done and not stale; a gold draw's claim becomes an ordinary one (``draw`` NULL: an imported label counts,
    `store.qualification.counted_sql`). A claim moves only if it is live and still at the version given.
    Returns how many moved."""
    if not moves:
        return 0
    if s.connection().dialect.name == "postgresql":
        sql = (
            "UPDATE assignments a SET status = %s, version = v.version, grade = v.grade, stale = false, "
            "label_id = v.label_id, draw = NULLIF(a.draw, %s), updated_at = %s "
            "FROM unnest(%s::int[], %s::int[], %s::int[], %s::int[], %s::int[]) "
            "AS v(id, was, version, grade, label_id) WHERE a.id = v.id AND a.version = v.was "
            "AND a.slot IS NOT NULL"
        )
        columns = [list(c) for c in zip(*moves, strict=True)]
        return _run(s, sql, [AssignmentStatus.DONE.value, ClaimDraw.GOLD.value, now, *columns])
    stmt = (
        update(Assignment)
        .where(
            Assignment.id == bindparam("b_id"),
            Assignment.version == bindparam("b_was"),
            Assignment.slot.is_not(None),
        )
        .values(
            status=AssignmentStatus.DONE.value,
            version=bindparam("b_version"),
            grade=bindparam("b_grade"),
            stale=False,
            label_id=bindparam("b_label"),
            draw=func.nullif(Assignment.draw, ClaimDraw.GOLD.value),
            updated_at=now,
        )
    )
    params = [
        {"b_id": a, "b_was": was, "b_version": v, "b_grade": g, "b_label": lab} for a, was, v, g, lab in moves
    ]
    return rowcount(s.connection().execute(stmt, params))


def add_claims(s: Session, counts: dict[int, int]) -> None:
    """Count ``n`` more live claims on each pair (pair id → n)."""
    if not counts:
        return
    if s.connection().dialect.name == "postgresql":
        sql = (
            "UPDATE pairs p SET claimed = p.claimed + v.n FROM unnest(%s::int[], %s::int[]) AS v(id, n) "
            "WHERE p.id = v.id"
        )
        _run(s, sql, [list(counts), list(counts.values())])
        return
    stmt = update(Pair).where(Pair.id == bindparam("b_id")).values(claimed=Pair.claimed + bindparam("b_n"))
    s.connection().execute(stmt, [{"b_id": p, "b_n": n} for p, n in counts.items()])


def _run(s: Session, sql: str, params: list) -> int:
    """Run a raw statement (``%s`` placeholders) on the session's connection; the rows it changed."""
    return rowcount(s.connection().exec_driver_sql(sql, tuple(params)))
