"""The evidence passages of releases (insert and read only), with the document text an export excerpts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from annotate_app.store.bulk import bulk_insert
from annotate_app.store.models import Document, DocumentVersion, Release, ReleasePassage, table_of

__all__ = ["insert_passages", "passage_rows"]

Passage = tuple[str, str, int, int, int, int]  # query_id, doc_id, doc_version, start, end, grade


def insert_passages(s: Session, release_id: int, passages: Sequence[Passage]) -> None:
    """Store a release's passages."""
    rows = [
        {
            "release_id": release_id,
            "query_external": q,
            "doc_external": d,
            "doc_version": v,
            "start_char": a,
            "end_char": b,
            "grade": g,
        }
        for q, d, v, a, b, g in passages
    ]
    bulk_insert(s, table_of(ReleasePassage), rows)


def passage_rows(s: Session, release_id: int, *, texts: bool = False) -> list[tuple]:
    """A release's passages as (query_id, doc_id, doc_version, start, end, grade), sorted; ``texts``: each
    with the text of its document version appended (None if that version is gone)."""
    columns = (
        ReleasePassage.query_external,
        ReleasePassage.doc_external,
        ReleasePassage.doc_version,
        ReleasePassage.start_char,
        ReleasePassage.end_char,
        ReleasePassage.grade,
    )
    stmt: Any = select(*columns).where(ReleasePassage.release_id == release_id)
    if texts:
        stmt = (
            select(*columns, DocumentVersion.text)
            .join(Release, Release.id == ReleasePassage.release_id)
            .outerjoin(
                Document,
                and_(
                    Document.project_id == Release.project_id,
                    Document.external_id == ReleasePassage.doc_external,
                ),
            )
            .outerjoin(
                DocumentVersion,
                and_(
                    DocumentVersion.document_id == Document.id,
                    DocumentVersion.version == ReleasePassage.doc_version,
                ),
            )
            .where(ReleasePassage.release_id == release_id)
        )
    return sorted(tuple(r) for r in s.execute(stmt))
