"""The import records and what undoing one touches: the per-project import lock, the rows an import added
(``import_id``), the pairs on them and whether anything was judged on those pairs, and the deletes.

Every function runs inside the caller's transaction; lists of ids go 500 at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, or_, select, text, update
from sqlalchemy.orm import Session

from annotate_app.store.db import rowcount
from annotate_app.store.enums import AssignmentStatus, PairOrigin
from annotate_app.store.models import (
    Adjudication,
    Assignment,
    Chunk,
    Document,
    DocumentVersion,
    ImportRecord,
    JudgeLabel,
    Label,
    Pair,
    PairSource,
    PriorJudgment,
    Query,
    ReleaseQrel,
    Run,
    RunEntry,
    User,
    utcnow,
)

__all__ = [
    "IMPORT_LOCK",
    "lock_imports",
    "begin_import",
    "finish_import",
    "import_rows",
    "get_import",
    "same_file_import",
    "mark_undone",
    "added_versions",
    "versions_of",
    "added_queries",
    "pairs_on",
    "judged_pairs",
    "pairs_judged_on_versions",
    "pair_names",
    "pair_keys",
    "referring",
    "sole_source_pairs",
    "delete_pairs",
    "delete_versions",
    "delete_documents",
    "restore_documents",
    "unstale",
    "delete_queries",
    "restore_queries",
    "delete_run",
    "delete_prior",
    "delete_chunks",
    "exclude_pairs",
]

IMPORT_LOCK = 0x5146  # the first key of the per-project advisory lock of imports on PostgreSQL
_STEP = 500


def _pieces(ids: Iterable[int]) -> Iterator[list[int]]:
    items = list(ids)
    for start in range(0, len(items), _STEP):
        yield items[start : start + _STEP]


# ---------------------------------------------------------------------------------------- import records
def lock_imports(s: Session, project_id: int) -> None:
    """Serialise the imports (and undos) of one project until the transaction ends. PostgreSQL: a
    transaction-level advisory lock (it blocks no annotator's write); SQLite: nothing to do, a write
    transaction (``BEGIN IMMEDIATE``) already excludes every other writer."""
    if s.connection().dialect.name == "postgresql":
        s.execute(text("SELECT pg_advisory_xact_lock(:a, :b)"), {"a": IMPORT_LOCK, "b": project_id})


def begin_import(s: Session, **fields: Any) -> int:
    """Insert an import record (its counts are filled by `finish_import`); returns its id."""
    stmt = insert(ImportRecord).values(created_at=utcnow(), counts={}, **fields).returning(ImportRecord.id)
    return int(s.execute(stmt).scalar_one())


def finish_import(s: Session, import_id: int, counts: dict, replaced: dict | None) -> None:
    s.execute(
        update(ImportRecord).where(ImportRecord.id == import_id).values(counts=counts, replaced=replaced),
        execution_options={"synchronize_session": False},
    )


def import_rows(s: Session, project_id: int) -> list[tuple]:
    """(id, kind, source, counts, username or None, created_at, undone_at) of every import, newest first."""
    stmt = (
        select(
            ImportRecord.id,
            ImportRecord.kind,
            ImportRecord.source,
            ImportRecord.counts,
            User.username,
            ImportRecord.created_at,
            ImportRecord.undone_at,
        )
        .outerjoin(User, User.id == ImportRecord.created_by)
        .where(ImportRecord.project_id == project_id)
        .order_by(ImportRecord.id.desc())
    )
    return [tuple(row) for row in s.execute(stmt)]


def get_import(s: Session, project_id: int, import_id: int) -> ImportRecord | None:
    stmt = select(ImportRecord).where(ImportRecord.project_id == project_id, ImportRecord.id == import_id)
    return s.scalar(stmt)


def same_file_import(s: Session, project_id: int, kind: str, file_sha256: str, *, before: int) -> int | None:
    """The id of the latest import (before import ``before``) of this kind from a file with this sha256 that
    is not undone."""
    stmt = (
        select(ImportRecord.id)
        .where(
            ImportRecord.project_id == project_id,
            ImportRecord.kind == kind,
            ImportRecord.file_sha256 == file_sha256,
            ImportRecord.undone_at.is_(None),
            ImportRecord.id < before,
        )
        .order_by(ImportRecord.id.desc())
        .limit(1)
    )
    return s.scalar(stmt)


def mark_undone(s: Session, import_id: int, at: datetime) -> None:
    s.execute(
        update(ImportRecord).where(ImportRecord.id == import_id).values(undone_at=at),
        execution_options={"synchronize_session": False},
    )


# ------------------------------------------------------------------------------------------ documents
def added_versions(s: Session, import_id: int) -> dict[int, set[int]]:
    """document id → the version numbers this import added."""
    out: dict[int, set[int]] = {}
    stmt = select(DocumentVersion.document_id, DocumentVersion.version).where(
        DocumentVersion.import_id == import_id
    )
    for doc, version in s.execute(stmt):
        out.setdefault(doc, set()).add(version)
    return out


def versions_of(s: Session, document_ids: Sequence[int]) -> dict[int, dict[int, str]]:
    """document id → {version: content sha256} of every version of these documents."""
    out: dict[int, dict[int, str]] = {}
    for ids in _pieces(document_ids):
        stmt = select(
            DocumentVersion.document_id, DocumentVersion.version, DocumentVersion.content_sha256
        ).where(DocumentVersion.document_id.in_(ids))
        for doc, version, sha in s.execute(stmt):
            out.setdefault(doc, {})[version] = sha
    return out


def delete_versions(s: Session, import_id: int, keep_documents: Sequence[int]) -> int:
    """Delete the versions this import added, except those of ``keep_documents``."""
    keep = set(keep_documents)
    ids = [
        i
        for i, doc in s.execute(
            select(DocumentVersion.id, DocumentVersion.document_id).where(
                DocumentVersion.import_id == import_id
            )
        )
        if doc not in keep
    ]
    return sum(
        rowcount(s.execute(delete(DocumentVersion).where(DocumentVersion.id.in_(p)))) for p in _pieces(ids)
    )


def delete_documents(s: Session, document_ids: Sequence[int]) -> int:
    return sum(rowcount(s.execute(delete(Document).where(Document.id.in_(p)))) for p in _pieces(document_ids))


def restore_documents(s: Session, rows: Sequence[tuple[int, int, str]]) -> None:
    """(document id, version, content sha256): make that version the current one."""
    now = utcnow()
    for doc, version, sha in rows:
        s.execute(
            update(Document)
            .where(Document.id == doc)
            .values(version=version, content_sha256=sha, updated_at=now),
            execution_options={"synchronize_session": False},
        )


def unstale(s: Session, document_ids: Sequence[int]) -> int:
    """Clear the stale flag of the done assignments on these documents' pairs whose current label judged the
    document's current version (a version the undo made current again)."""
    total = 0
    for ids in _pieces(document_ids):
        judged_current = (
            select(Label.id)
            .join(Pair, Pair.id == Label.pair_id)
            .join(Document, Document.id == Pair.document_id)
            .where(Document.id.in_(ids), Label.doc_version == Document.version)
        )
        pairs = select(Pair.id).where(Pair.document_id.in_(ids))
        stmt = (
            update(Assignment)
            .where(
                Assignment.pair_id.in_(pairs),
                Assignment.status == AssignmentStatus.DONE,
                Assignment.stale.is_(True),
                Assignment.label_id.in_(judged_current),
            )
            .values(stale=False)
        )
        total += rowcount(s.execute(stmt, execution_options={"synchronize_session": False}))
    return total


# -------------------------------------------------------------------------------------------- queries
def added_queries(s: Session, import_id: int) -> list[int]:
    return list(s.scalars(select(Query.id).where(Query.import_id == import_id)))


def delete_queries(s: Session, query_ids: Sequence[int]) -> int:
    return sum(rowcount(s.execute(delete(Query).where(Query.id.in_(p)))) for p in _pieces(query_ids))


def restore_queries(s: Session, rows: Sequence[dict]) -> int:
    """rows: {"id", "text", "meta", "content_sha256", "new_sha256"}: put the previous text back where the
    query still holds what the import wrote (a later import may have changed it again)."""
    total = 0
    for r in rows:
        stmt = (
            update(Query)
            .where(Query.id == r["id"], Query.content_sha256 == r["new_sha256"])
            .values(text=r["text"], meta=r["meta"], content_sha256=r["content_sha256"])
        )
        total += rowcount(s.execute(stmt, execution_options={"synchronize_session": False}))
    return total


# ---------------------------------------------------------------------------------------------- pairs
def pairs_on(s: Session, *, document_ids: Sequence[int] = (), query_ids: Sequence[int] = ()) -> list[int]:
    """The pairs on any of these documents or queries."""
    found: set[int] = set()
    for ids in _pieces(document_ids):
        found.update(s.scalars(select(Pair.id).where(Pair.document_id.in_(ids))))
    for ids in _pieces(query_ids):
        found.update(s.scalars(select(Pair.id).where(Pair.query_id.in_(ids))))
    return sorted(found)


def judged_pairs(s: Session, pair_ids: Sequence[int]) -> set[int]:
    """The pairs something was judged on: a label, a machine label, an adjudication or a release qrel (rows
    that are never deleted)."""
    found: set[int] = set()
    for ids in _pieces(pair_ids):
        for model in (Label, JudgeLabel, Adjudication, ReleaseQrel):
            found.update(s.scalars(select(model.pair_id).where(model.pair_id.in_(ids)).distinct()))
    return found


def pairs_judged_on_versions(s: Session, versions: dict[int, set[int]]) -> set[int]:
    """The pairs with a label or machine label made on one of these versions (document id → versions)."""
    found: set[int] = set()
    for doc, numbers in versions.items():
        for model in (Label, JudgeLabel):
            stmt = (
                select(model.pair_id)
                .join(Pair, Pair.id == model.pair_id)
                .where(Pair.document_id == doc, model.doc_version.in_(sorted(numbers)))
                .distinct()
            )
            found.update(s.scalars(stmt))
    return found


def pair_names(s: Session, pair_ids: Sequence[int]) -> list[tuple[str, str]]:
    """(query ID, document ID) of these pairs, in order of pair id."""
    stmt = (
        select(Query.external_id, Document.external_id)
        .select_from(Pair)
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .where(Pair.id.in_(list(pair_ids)))
        .order_by(Pair.id)
    )
    return [(qq, d) for qq, d in s.execute(stmt)]


def referring(s: Session, *, document_ids: Sequence[int] = (), query_ids: Sequence[int] = ()) -> list[str]:
    """What else refers to these documents or queries (other than pairs): runs, prior qrels, the chunk map —
    described as the user knows them (``run 'bm25'``, ``prior qrels 'old.qrels'``, ``the chunk map``)."""
    runs: set[str] = set()
    priors: set[str] = set()
    chunks = False
    for ids in _pieces(document_ids):
        stmt = select(Run.name).join(RunEntry, RunEntry.run_id == Run.id).where(RunEntry.document_id.in_(ids))
        runs.update(s.scalars(stmt.distinct()))
        priors.update(
            s.scalars(select(PriorJudgment.source).where(PriorJudgment.document_id.in_(ids)).distinct())
        )
        chunks = chunks or s.scalar(select(Chunk.id).where(Chunk.document_id.in_(ids)).limit(1)) is not None
    for ids in _pieces(query_ids):
        stmt = select(Run.name).join(RunEntry, RunEntry.run_id == Run.id).where(RunEntry.query_id.in_(ids))
        runs.update(s.scalars(stmt.distinct()))
        priors.update(
            s.scalars(select(PriorJudgment.source).where(PriorJudgment.query_id.in_(ids)).distinct())
        )
    return (
        [f"run {name!r}" for name in sorted(runs)]
        + [f"prior qrels {name!r}" for name in sorted(priors)]
        + (["the chunk map"] if chunks else [])
    )


def sole_source_pairs(s: Session, run_id: int) -> tuple[list[int], list[int]]:
    """(pooled pairs this run is the only source of, every pair it is a source of)."""
    sourced = list(s.scalars(select(PairSource.pair_id).where(PairSource.run_id == run_id)))
    others: set[int] = set()
    for ids in _pieces(sourced):
        stmt = select(PairSource.pair_id).where(PairSource.pair_id.in_(ids), PairSource.run_id != run_id)
        others.update(s.scalars(stmt.distinct()))
    alone = [p for p in sourced if p not in others]
    pooled: set[int] = set()
    for ids in _pieces(alone):
        pooled.update(s.scalars(select(Pair.id).where(Pair.id.in_(ids), Pair.origin == PairOrigin.POOL)))
    return sorted(pooled), sorted(sourced)


def delete_pairs(s: Session, pair_ids: Sequence[int]) -> int:
    """Delete pairs nothing was judged on, with their claims (none labelled) and sources."""
    total = 0
    for ids in _pieces(pair_ids):
        s.execute(delete(Assignment).where(Assignment.pair_id.in_(ids), Assignment.label_id.is_(None)))
        s.execute(delete(PairSource).where(PairSource.pair_id.in_(ids)))
        total += rowcount(s.execute(delete(Pair).where(Pair.id.in_(ids))))
    return total


def exclude_pairs(s: Session, pair_ids: Sequence[int], reason: str, by: int | None) -> int:
    """Exclude these pairs (those not excluded yet); returns how many."""
    total = 0
    for ids in _pieces(pair_ids):
        stmt = (
            update(Pair)
            .where(Pair.id.in_(ids), or_(Pair.excluded.is_(False), Pair.excluded.is_(None)))
            .values(excluded=True, excluded_reason=reason, excluded_by=by)
        )
        total += rowcount(s.execute(stmt, execution_options={"synchronize_session": False}))
    return total


# ------------------------------------------------------------------------------ runs, priors, chunks
def delete_run(s: Session, run_id: int) -> int:
    """Delete a run, its entries and its pair sources; returns the number of entries."""
    n = rowcount(s.execute(delete(RunEntry).where(RunEntry.run_id == run_id)))
    s.execute(delete(PairSource).where(PairSource.run_id == run_id))
    s.execute(delete(Run).where(Run.id == run_id))
    return n


def delete_prior(s: Session, project_id: int, source: str) -> int:
    stmt = delete(PriorJudgment).where(PriorJudgment.project_id == project_id, PriorJudgment.source == source)
    return rowcount(s.execute(stmt))


def delete_chunks(s: Session, import_id: int) -> int:
    """Delete the chunks an import added; the run entries that kept one of them forget it first (SQLite may
    give a deleted row's id to a later chunk)."""
    mine = select(Chunk.id).where(Chunk.import_id == import_id)
    project = select(Chunk.project_id).where(Chunk.import_id == import_id).limit(1).scalar_subquery()
    runs = select(Run.id).where(Run.project_id == project)
    s.execute(
        update(RunEntry)
        .where(RunEntry.run_id.in_(runs), RunEntry.chunk_id.in_(mine))
        .values(chunk_id=None)
        .execution_options(synchronize_session=False)
    )
    return rowcount(s.execute(delete(Chunk).where(Chunk.import_id == import_id)))


def pair_keys(s: Session, pair_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """pair id → (query id, document id)."""
    out: dict[int, tuple[int, int]] = {}
    for ids in _pieces(pair_ids):
        stmt = select(Pair.id, Pair.query_id, Pair.document_id).where(Pair.id.in_(ids))
        out.update({p: (qq, d) for p, qq, d in s.execute(stmt)})
    return out
