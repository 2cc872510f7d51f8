"""Contents: what the annotation page shows of a pair (query, document, guidelines, prior grades, the chunk a
chunk-level run retrieved)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    and_,
    bindparam,
    exists,
    select,
)
from sqlalchemy.orm import Session

from annotate_app.store.corpus import STAGING
from annotate_app.store.models import (
    Chunk,
    Document,
    DocumentVersion,
    Guidelines,
    Pair,
    PriorJudgment,
    Query,
    Run,
    RunEntry,
)

__all__ = [
    "pair_content",
    "current_doc_version",
    "priors",
    "retrieved_chunk",
]


def pair_content(s: Session, pair_id: int, *, guidelines: bool = False) -> dict[str, Any] | None:
    """Query and current document version of a pair, in one query. ``guidelines`` (the card's read): also the
    project's latest guidelines (``guidelines_version`` and ``guidelines``, None when it has none) and
    ``chunk_retrieved`` (whether a run entry of the pair names a chunk, so `retrieved_chunk` is only asked
    then), as subqueries of the same statement."""
    row = s.execute(_PAIR_CONTENT[guidelines], {"pair_id": pair_id}).first()
    if row is None:
        return None
    keys = _CONTENT_KEYS + (("guidelines_version", "guidelines", "chunk_retrieved") if guidelines else ())
    return dict(zip(keys, row, strict=True))


_CONTENT_KEYS = (
    "pair_id",
    "project_id",
    "excluded",
    "query_id",
    "query_text",
    "query_meta",
    "doc_id",
    "doc_version",
    "doc_title",
    "doc_text",
    "doc_meta",
)


def _pair_content_statement(guidelines: bool) -> Any:
    def latest(column: Any) -> Any:
        newest = select(column).where(Guidelines.project_id == Pair.project_id)
        return newest.order_by(Guidelines.version.desc()).limit(1).scalar_subquery()

    chunked = exists().where(
        RunEntry.document_id == Pair.document_id,
        RunEntry.query_id == Pair.query_id,
        RunEntry.chunk_id.is_not(None),
    )
    extra = [latest(Guidelines.version), latest(Guidelines.markdown), chunked] if guidelines else []
    return (
        select(
            Pair.id,
            Pair.project_id,
            Pair.excluded,
            Query.external_id,
            Query.text,
            Query.meta,
            Document.external_id,
            Document.version,
            DocumentVersion.title,
            DocumentVersion.text,
            DocumentVersion.meta,
            *extra,
        )
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .join(
            DocumentVersion,
            and_(DocumentVersion.document_id == Document.id, DocumentVersion.version == Document.version),
        )
        .where(Pair.id == bindparam("pair_id"))
    )


_PAIR_CONTENT = {guidelines: _pair_content_statement(guidelines) for guidelines in (False, True)}


def current_doc_version(s: Session, pair_id: int, *, lock: bool = True) -> int:
    """The pair's current document version, share-locked on PostgreSQL until the transaction ends: a
    concurrent re-import (which updates the document, then flags its claims) waits for a save that read the
    version, or the save waits for the re-import and reads the new version. ``lock=False``: a plain read
    (a read-only transaction, e.g. a preview, cannot lock)."""
    stmt = select(Document.version).join(Pair, Pair.document_id == Document.id).where(Pair.id == pair_id)
    if lock:
        stmt = stmt.with_for_update(read=True, of=Document)
    return int(s.execute(stmt).scalar_one())


def priors(s: Session, pair_ids: Sequence[int]) -> dict[int, list[tuple[str, int]]]:
    """pair id → [(prior qrels name, grade), ...]."""
    if not pair_ids:
        return {}
    stmt = (
        select(Pair.id, PriorJudgment.source, PriorJudgment.grade)
        .join(
            PriorJudgment,
            and_(PriorJudgment.query_id == Pair.query_id, PriorJudgment.document_id == Pair.document_id),
        )
        .where(Pair.id.in_(list(pair_ids)))
        .order_by(Pair.id, PriorJudgment.source)
    )
    out: dict[int, list[tuple[str, int]]] = {}
    for pid, source, grade in s.execute(stmt):
        out.setdefault(pid, []).append((source, grade))
    return out


def retrieved_chunk(s: Session, pair_id: int, doc_version: int) -> tuple[str, int, int, str, int] | None:
    """The chunk a chunk-level run retrieved for the pair, whose place in version ``doc_version`` of the
    document is known: (chunk ID, start, end, run name, rank); the best-ranked one over the runs (then the
    first run imported), None if there is none."""
    stmt = (
        select(Chunk.chunk_id, Chunk.start_char, Chunk.end_char, Run.name, RunEntry.rank)
        .select_from(Pair)
        .join(RunEntry, and_(RunEntry.query_id == Pair.query_id, RunEntry.document_id == Pair.document_id))
        .join(Run, Run.id == RunEntry.run_id)
        .join(Chunk, Chunk.id == RunEntry.chunk_id)
        .where(
            Pair.id == pair_id,
            Chunk.doc_version == doc_version,
            Chunk.start_char.is_not(None),
            Chunk.end_char.is_not(None),
            ~Run.name.startswith(STAGING),
        )
        .order_by(RunEntry.rank, Run.id)
        .limit(1)
    )
    row = s.execute(stmt).first()
    if row is None:
        return None
    chunk_id, start, end, run, rank = row
    return str(chunk_id), int(start or 0), int(end or 0), str(run), int(rank)  # start, end: never NULL here
