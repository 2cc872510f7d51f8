"""Read queries for the Score page: a stored run's entries, the corpus and queries as text, current labels.

Every function reads in the caller's transaction and returns plain rows (tuples), never ORM objects.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from annotate_app.store.bulk import fetch_rows
from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.models import Query

__all__ = ["run_entries", "corpus_texts", "query_texts", "query_metas", "label_table"]


def run_entries(s: Session, run_id: int) -> list[tuple[str, str, float, int]]:
    """(query external id, document external id, score, rank) of every entry of a run, by query and rank."""
    sql = (
        "SELECT q.external_id, d.external_id, e.score, e.rank FROM run_entries e "
        "JOIN queries q ON q.id = e.query_id JOIN documents d ON d.id = e.document_id "
        "WHERE e.run_id = %s ORDER BY q.external_id, e.rank"
    )
    return fetch_rows(s, sql, run_id)


def corpus_texts(s: Session, project_id: int) -> list[tuple[str, str, str]]:
    """(document external id, title, text) of the current version of every document, by document ID."""
    sql = (
        "SELECT d.external_id, v.title, v.text FROM documents d JOIN document_versions v "
        "ON v.document_id = d.id AND v.version = d.version WHERE d.project_id = %s ORDER BY d.external_id"
    )
    return fetch_rows(s, sql, project_id)


def query_texts(s: Session, project_id: int) -> list[tuple[str, str]]:
    """(query external id, text) of every query of the project, by query ID."""
    return fetch_rows(
        s, "SELECT external_id, text FROM queries WHERE project_id = %s ORDER BY external_id", project_id
    )


def query_metas(s: Session, project_id: int) -> dict[str, dict]:
    """query external id → its meta (the extra fields of the queries file, ``tags`` among them)."""
    stmt = select(Query.external_id, Query.meta).where(Query.project_id == project_id)
    return {e: dict(m or {}) for e, m in s.execute(stmt)}


def label_table(s: Session, project_id: int) -> list[tuple[str, str, str, int]]:
    """(query external id, document external id, annotator username, grade) of every current label on a pair
    that is not excluded (``assignments`` caches each annotator's current grade)."""
    sql = (
        "SELECT q.external_id, d.external_id, u.username, a.grade FROM assignments a "
        "JOIN pairs p ON p.id = a.pair_id JOIN queries q ON q.id = p.query_id "
        "JOIN documents d ON d.id = p.document_id JOIN users u ON u.id = a.annotator_id "
        f"WHERE a.project_id = %s AND a.status = '{AssignmentStatus.DONE}' AND NOT p.excluded "
        "ORDER BY q.external_id, d.external_id, u.username"
    )
    return fetch_rows(s, sql, project_id)
