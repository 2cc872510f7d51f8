"""Queries on releases and their qrels (both immutable: insert and read only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from annotate_app.store.bulk import bulk_insert, fetch_rows
from annotate_app.store.models import Release, ReleaseQrel, table_of, utcnow

__all__ = [
    "next_version",
    "insert_release",
    "insert_qrels",
    "releases",
    "find",
    "find_by_content",
    "qrel_rows",
    "qrel_confidences",
    "count",
]


def next_version(s: Session, project_id: int) -> int:
    latest = s.scalar(select(func.max(Release.version)).where(Release.project_id == project_id))
    return (latest or 0) + 1


def insert_release(s: Session, **fields: Any) -> Release:
    """Insert a release; its ``content_key`` is its content hash, so a second release of the same content
    in the project raises IntegrityError (UNIQUE(project_id, content_key))."""
    row = Release(created_at=utcnow(), content_key=fields["content_hash"], **fields)
    s.add(row)
    s.flush()
    return row


def insert_qrels(s: Session, rows: Sequence[dict]) -> None:
    bulk_insert(s, table_of(ReleaseQrel), rows)


def releases(s: Session, project_id: int) -> list[Release]:
    return list(s.scalars(select(Release).where(Release.project_id == project_id).order_by(Release.version)))


def find(s: Session, project_id: int, version: int | None) -> Release | None:
    stmt = select(Release).where(Release.project_id == project_id)
    if version is None:
        return s.scalar(stmt.order_by(Release.version.desc()).limit(1))
    return s.scalar(stmt.where(Release.version == version))


def find_by_content(s: Session, project_id: int, content_hash: str) -> Release | None:
    """The oldest release of the project with this content hash (releases made before the unique rule may
    share one), or None."""
    stmt = (
        select(Release)
        .where(Release.project_id == project_id, Release.content_hash == content_hash)
        .order_by(Release.version)
        .limit(1)
    )
    return s.scalar(stmt)


def count(s: Session, project_id: int) -> int:
    return int(
        s.execute(
            select(func.count()).select_from(Release).where(Release.project_id == project_id)
        ).scalar_one()
    )


def qrel_rows(s: Session, release_id: int) -> list[tuple]:
    """(query_external, doc_external, grade, kind, label_ids, adjudication_id, pair_id) of a release, in the
    order they were stored (canonical: by query, then document)."""
    return fetch_rows(
        s,
        "SELECT query_external, doc_external, grade, kind, label_ids, adjudication_id, pair_id "
        "FROM release_qrels WHERE release_id = %s ORDER BY id",
        release_id,
    )


def qrel_confidences(s: Session, release_id: int) -> list[tuple]:
    """(query_external, doc_external, confidence) of a release's qrels that have a confidence (a model
    aggregation's posterior)."""
    return fetch_rows(
        s,
        "SELECT query_external, doc_external, confidence FROM release_qrels "
        "WHERE release_id = %s AND confidence IS NOT NULL ORDER BY id",
        release_id,
    )
