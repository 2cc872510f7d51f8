"""Queries for importing human labels made in other tools (`annotate_app.services.imports.labels`): the
project's pairs by external IDs, its queries by text, and a slot taken past the per-pair quota."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from annotate_app.store.bulk import fetch_rows
from annotate_app.store.models import Pair, Query

__all__ = ["pair_keys", "query_ids_by_text", "add_claim", "pair_tasks"]


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


def add_claim(s: Session, pair_id: int) -> None:
    """Count one more live slot on the pair, past the project's annotators per pair if need be (an imported
    label holds a slot like any other)."""
    s.execute(
        update(Pair).where(Pair.id == pair_id).values(claimed=Pair.claimed + 1),
        execution_options={"synchronize_session": False},
    )


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
