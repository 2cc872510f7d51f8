"""Bulk queries on documents, queries, the chunk map, runs and prior judgments (imports and lookups).

Inserts go through Core ``insert(table)`` with lists of dicts (executemany / multi-row VALUES), never one ORM
object per row, so 100k documents take seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.orm import Session

from annotate_app.store.bulk import bulk_insert
from annotate_app.store.db import rowcount
from annotate_app.store.doc_staging import STAGED
from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.exhausted import queue_changed_for_documents
from annotate_app.store.models import (
    Assignment,
    Chunk,
    Document,
    DocumentVersion,
    ImportRecord,
    Pair,
    PriorJudgment,
    Query,
    Run,
    RunEntry,
    table_of,
    utcnow,
)

__all__ = [
    "doc_index",
    "set_run_model",
    "query_index",
    "insert_documents",
    "insert_new_documents",
    "update_documents",
    "insert_versions",
    "mark_stale",
    "mark_claims_changed",
    "insert_queries",
    "update_queries",
    "queries_with_labels",
    "query_contents",
    "chunk_index",
    "chunk_row_ids",
    "insert_chunks",
    "find_run",
    "insert_run",
    "insert_run_entries",
    "insert_run_columns",
    "set_run_size",
    "delete_run_entries",
    "runs",
    "STAGING",
    "staged_runs",
    "publish_run",
    "delete_run_piece",
    "prior_sources",
    "insert_prior",
    "corpus_rows",
    "find_import",
    "BATCH",
]

BATCH = 5000


def _batches(rows: Sequence[dict], size: int = BATCH) -> Iterable[Sequence[dict]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def doc_index(s: Session, project_id: int) -> dict[str, tuple[int, int, str]]:
    """external_id → (id, current version, content sha256) of every document of the project (not those of a
    document import still being staged: see `store.doc_staging`)."""
    stmt = select(Document.external_id, Document.id, Document.version, Document.content_sha256).where(
        Document.project_id == project_id, Document.version > STAGED
    )
    return {e: (i, v, h) for e, i, v, h in s.execute(stmt)}


def query_index(s: Session, project_id: int) -> dict[str, tuple[int, str]]:
    """external_id → (id, content sha256) of every query of the project."""
    stmt = select(Query.external_id, Query.id, Query.content_sha256).where(Query.project_id == project_id)
    return {e: (i, h) for e, i, h in s.execute(stmt)}


def insert_documents(s: Session, project_id: int, rows: Sequence[dict]) -> dict[str, int]:
    """Insert documents; returns external_id → id of every document of the project."""
    bulk_insert(s, table_of(Document), rows)
    return {e: i for e, (i, _, _) in doc_index(s, project_id).items()}


def insert_new_documents(s: Session, project_id: int, rows: Sequence[dict]) -> dict[str, int]:
    """Insert documents; returns external_id → id of these documents only (a batch of a streamed import)."""
    bulk_insert(s, table_of(Document), rows)
    out: dict[str, int] = {}
    names = [r["external_id"] for r in rows]
    for start in range(0, len(names), 500):
        stmt = select(Document.external_id, Document.id).where(
            Document.project_id == project_id, Document.external_id.in_(names[start : start + 500])
        )
        out.update(dict(s.execute(stmt).all()))
    return out


def update_documents(s: Session, rows: Sequence[dict]) -> None:
    """rows: {"b_id", "version", "content_sha256", "updated_at"}."""
    table = table_of(Document)
    stmt = update(table).where(table.c.id == bindparam("b_id"))
    for batch in _batches(rows):
        s.connection().execute(stmt, list(batch))


def insert_versions(s: Session, rows: Sequence[dict]) -> None:
    bulk_insert(s, table_of(DocumentVersion), rows)


def mark_stale(s: Session, document_ids: Sequence[int]) -> int:
    """Flag the done assignments on these documents' pairs (their labels judged an older version)."""
    queue_changed_for_documents(s, document_ids)  # a label to re-judge: the "nothing left" markers clear
    return _flag_assignments(s, document_ids, AssignmentStatus.DONE)


def mark_claims_changed(s: Session, document_ids: Sequence[int]) -> int:
    """Flag the open (unlabelled) claims on these documents' pairs: their annotators were shown an older
    version (the next view of the claim says so; the first save clears the flag). Returns how many."""
    return _flag_assignments(s, document_ids, AssignmentStatus.ACTIVE)


def _flag_assignments(s: Session, document_ids: Sequence[int], status: AssignmentStatus) -> int:
    """Set ``stale`` on the assignments in ``status`` on these documents' pairs, 500 documents a statement."""
    total = 0
    for start in range(0, len(document_ids), 500):
        ids = list(document_ids[start : start + 500])
        pairs = select(Pair.id).where(Pair.document_id.in_(ids)).scalar_subquery()
        stmt = (
            update(Assignment)
            .where(Assignment.pair_id.in_(pairs), Assignment.status == status)
            .values(stale=True)
        )
        total += rowcount(s.execute(stmt, execution_options={"synchronize_session": False}))
    return total


def insert_queries(s: Session, rows: Sequence[dict]) -> None:
    bulk_insert(s, table_of(Query), rows)


def update_queries(s: Session, rows: Sequence[dict]) -> None:
    """rows: {"b_id", "text", "meta", "content_sha256"}."""
    table = table_of(Query)
    stmt = update(table).where(table.c.id == bindparam("b_id"))
    for batch in _batches(rows):
        s.connection().execute(stmt, list(batch))


def query_contents(s: Session, query_ids: Sequence[int]) -> dict[int, dict]:
    """id → {"text", "meta", "content_sha256"} of these queries."""
    out: dict[int, dict] = {}
    for start in range(0, len(query_ids), 500):
        ids = list(query_ids[start : start + 500])
        stmt = select(Query.id, Query.text, Query.meta, Query.content_sha256).where(Query.id.in_(ids))
        for i, text_, meta, sha in s.execute(stmt):
            out[i] = {"text": text_, "meta": meta, "content_sha256": sha}
    return out


def queries_with_labels(s: Session, query_ids: Sequence[int]) -> set[int]:
    if not query_ids:
        return set()
    stmt = (
        select(Pair.query_id)
        .join(Assignment, Assignment.pair_id == Pair.id)
        .where(Pair.query_id.in_(list(query_ids)), Assignment.status == AssignmentStatus.DONE)
        .distinct()
    )
    return set(s.scalars(stmt))


def chunk_index(s: Session, project_id: int) -> dict[str, int]:
    """chunk_id → document id."""
    stmt = select(Chunk.chunk_id, Chunk.document_id).where(Chunk.project_id == project_id)
    return dict(s.execute(stmt).all())


def chunk_row_ids(s: Session, project_id: int) -> dict[str, int]:
    """chunk_id → its row's id (``chunks.id``)."""
    stmt = select(Chunk.chunk_id, Chunk.id).where(Chunk.project_id == project_id)
    return dict(s.execute(stmt).all())


def insert_chunks(s: Session, rows: Sequence[dict]) -> None:
    bulk_insert(s, table_of(Chunk), rows)


def find_run(s: Session, project_id: int, name: str) -> Run | None:
    return s.scalar(select(Run).where(Run.project_id == project_id, Run.name == name))


STAGING = " staging "  # the name prefix of a run still being imported (no run name holds a space)


def runs(s: Session, project_id: int) -> list[Run]:
    """The project's runs (not those still being imported: see `STAGING`)."""
    stmt = select(Run).where(Run.project_id == project_id, ~Run.name.startswith(STAGING)).order_by(Run.name)
    return list(s.scalars(stmt))


def set_run_model(s: Session, run_id: int, model: str) -> None:
    """Record the model that made a run."""
    s.execute(update(Run).where(Run.id == run_id).values(model=model))


def staged_runs(s: Session, project_id: int, before: datetime) -> list[int]:
    """Runs left staged (being imported) since before ``before``: an import that died."""
    stmt = select(Run.id).where(
        Run.project_id == project_id, Run.name.startswith(STAGING), Run.created_at < before
    )
    return list(s.scalars(stmt))


def publish_run(s: Session, run_id: int, name: str, n_entries: int) -> None:
    """A staged run becomes the run ``name``: visible, in one statement."""
    s.execute(
        update(Run).where(Run.id == run_id).values(name=name, n_entries=n_entries),
        execution_options={"synchronize_session": False},
    )


def delete_run_piece(s: Session, run_id: int, queries: int) -> int:
    """Delete the entries of at most ``queries`` of a run's queries (then the run itself once it has none);
    returns how many entries went. For dropping a staged run in short transactions."""
    table = table_of(RunEntry)
    some = list(s.scalars(select(table.c.query_id).where(table.c.run_id == run_id).distinct().limit(queries)))
    if not some:
        s.execute(delete(Run).where(Run.id == run_id))
        return 0
    return rowcount(s.execute(delete(table).where(table.c.run_id == run_id, table.c.query_id.in_(some))))


def insert_run(s: Session, **fields: Any) -> int:
    stmt = insert(Run).values(created_at=utcnow(), **fields).returning(Run.id)
    return int(s.execute(stmt).scalar_one())


def insert_run_entries(s: Session, rows: Sequence[dict]) -> None:
    bulk_insert(s, table_of(RunEntry), rows)


def insert_run_columns(
    s: Session,
    run_id: int,
    *,
    query_id: np.ndarray,
    document_id: np.ndarray,
    rank: np.ndarray,
    score: np.ndarray,
    chunk_id: np.ndarray | None = None,
    batch: int = 20_000,
) -> None:
    """Insert a run's entries from equal-length columns, ``batch`` rows at a time (only one batch of row dicts
    exists at once, so a run of millions of entries needs no Python object per entry). ``chunk_id``: a
    chunk-level run's chunk of each entry (``chunks.id``)."""
    for start in range(0, len(rank), batch):
        part = slice(start, start + batch)
        columns = zip(
            query_id[part].tolist(),
            document_id[part].tolist(),
            rank[part].tolist(),
            score[part].tolist(),
            strict=True,
        )
        rows = [
            {"run_id": run_id, "query_id": qq, "document_id": d, "rank": r, "score": sc}
            for qq, d, r, sc in columns
        ]
        if chunk_id is not None:
            for row, chunk in zip(rows, chunk_id[part].tolist(), strict=True):
                row["chunk_id"] = chunk
        bulk_insert(s, table_of(RunEntry), rows)


def set_run_size(s: Session, run_id: int, n_entries: int) -> None:
    s.execute(
        update(Run).where(Run.id == run_id).values(n_entries=n_entries),
        execution_options={"synchronize_session": False},
    )


def delete_run_entries(s: Session, run_id: int, query_ids: Sequence[int]) -> int:
    """Delete the run's entries of these (internal) query ids, 500 ids at a time; returns how many."""
    table, total = table_of(RunEntry), 0
    for start in range(0, len(query_ids), 500):
        ids = list(query_ids[start : start + 500])
        total += rowcount(s.execute(delete(table).where(table.c.run_id == run_id, table.c.query_id.in_(ids))))
    return total


def prior_sources(s: Session, project_id: int) -> dict[str, int]:
    """Prior-judgment source name → number of judgments."""
    stmt = (
        select(PriorJudgment.source, func.count())
        .where(PriorJudgment.project_id == project_id)
        .group_by(PriorJudgment.source)
    )
    return dict(s.execute(stmt).all())


def insert_prior(s: Session, rows: Sequence[dict]) -> None:
    bulk_insert(s, table_of(PriorJudgment), rows)


def find_import(s: Session, project_id: int, kind: str, name: str) -> ImportRecord | None:
    stmt = (
        select(ImportRecord)
        .where(ImportRecord.project_id == project_id, ImportRecord.kind == kind, ImportRecord.source == name)
        .order_by(ImportRecord.id.desc())
        .limit(1)
    )
    return s.scalar(stmt)


def corpus_rows(s: Session, project_id: int) -> list[tuple[str, int, str]]:
    """(external_id, version, content sha256) of every document (not a staged one): what the corpus version
    hash covers."""
    stmt = select(Document.external_id, Document.version, Document.content_sha256).where(
        Document.project_id == project_id, Document.version > STAGED
    )
    return list(s.execute(stmt))
