"""A document import staged in short transactions (SQLite): rows written piece by piece, invisible, then
published in one last statement (`publish`).

New documents wait at version ``STAGED`` (0), which readers skip. `unfinished_imports` and `drop_piece`
clean up after an import that died; callers hold `hold_imports` throughout.
"""

from __future__ import annotations

import contextlib
import fcntl
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from annotate_app.store.db import Database, rowcount
from annotate_app.store.models import Document, DocumentVersion, ImportRecord

__all__ = ["STAGED", "hold_imports", "unfinished_imports", "drop_piece", "changed_by", "publish"]

STAGED = 0  # documents.version of a new document not yet published
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@contextlib.contextmanager
def hold_imports(db: Database) -> Iterator[None]:
    """Serialise the staged document imports of one SQLite database across their transactions: a lock of this
    process (threads) and an exclusive ``flock`` on ``<database>-imports.lock`` (other processes; the system
    releases it when a holder dies, so a killed import never blocks the next one). An in-memory database is
    one process's: the thread lock alone."""
    database = db.url.database or ""
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault(database, threading.Lock())
    with lock:
        if database in ("", ":memory:"):
            yield
            return
        path = Path(database).expanduser()
        with open(path.with_name(path.name + "-imports.lock"), "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)


def unfinished_imports(s: Session, project_id: int, kind: str) -> list[int]:
    """The project's import records of this kind that were started and never finished (empty counts)."""
    stmt = select(ImportRecord.id, ImportRecord.counts).where(
        ImportRecord.project_id == project_id, ImportRecord.kind == kind, ImportRecord.undone_at.is_(None)
    )
    return [i for i, counts in s.execute(stmt) if not counts]


def drop_piece(s: Session, project_id: int, import_id: int, versions: int) -> int:
    """Delete at most ``versions`` of the versions an unfinished import staged; once none is left, its staged
    documents and its record. Returns how many rows went (0: nothing was left)."""
    some = list(
        s.scalars(select(DocumentVersion.id).where(DocumentVersion.import_id == import_id).limit(versions))
    )
    if some:
        return rowcount(s.execute(delete(DocumentVersion).where(DocumentVersion.id.in_(some))))
    has_version = select(DocumentVersion.id).where(DocumentVersion.document_id == Document.id).exists()
    docs = list(
        s.scalars(
            select(Document.id)
            .where(Document.project_id == project_id, Document.version == STAGED, ~has_version)
            .limit(versions)
        )
    )
    if docs:
        return rowcount(s.execute(delete(Document).where(Document.id.in_(docs))))
    return rowcount(s.execute(delete(ImportRecord).where(ImportRecord.id == import_id)))


def changed_by(s: Session, import_id: int) -> list[int]:
    """The documents that import ``import_id`` gave a new version (not their first)."""
    stmt = select(DocumentVersion.document_id).where(
        DocumentVersion.import_id == import_id, DocumentVersion.version > 1
    )
    return list(s.scalars(stmt))


def publish(s: Session, import_id: int, now: datetime) -> int:
    """Make every version import ``import_id`` staged its document's current one; returns how many."""
    staged = DocumentVersion
    stmt = (
        update(Document)
        .where(staged.document_id == Document.id, staged.import_id == import_id)
        .values(version=staged.version, content_sha256=staged.content_sha256, updated_at=now)
    )
    return rowcount(s.execute(stmt, execution_options={"synchronize_session": False}))
