"""Importing documents (JSONL, CSV or TSV): new IDs are added, a changed title or text gets a new version (the
old one is kept) and flags the labels made on the old version stale."""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Generator, Iterator
from pathlib import Path

from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role
from annotate_app.services.imports._common import (
    Source,
    SourceFile,
    already_imported,
    fail,
    invalid,
    lock_imports,
    problems,
    read_source,
    record_format,
    record_import,
    record_problems,
    sha,
    start_import,
)
from annotate_app.services.types import ImportReport
from annotate_app.store import corpus, doc_staging
from annotate_app.store.db import Database
from annotate_app.store.enums import ImportKind
from annotate_app.store.models import utcnow
from metrics.errors import FormatError

__all__ = ["import_documents"]


_RESERVED_DOC = ("doc_id", "title", "text", "version")


DOC_BATCH = 5000  # documents read, checked and written at a time


def _doc_batches(file: SourceFile, rows: int = DOC_BATCH) -> Generator[list[dict], None, None]:
    """The file's documents, ``rows`` at a time, as rows to store. Streamed: a batch and the IDs seen so
    far are in memory, never the file. Every problem (the reader's and ours: an ID too long, text the database
    cannot store, NaN metadata) raises `InvalidInput` once the whole file is read — after the batches before
    it, so a caller writing them in one transaction rolls back: a bad line anywhere imports nothing."""
    from metrics.formats import iter_corpus

    bad: list[tuple[int, str]] = []
    offset = 0
    try:
        for batch in iter_corpus(file.reader_input(), format=record_format(file.name), rows=rows):
            bad += [(offset + i, reason) for i, reason in record_problems(batch, "doc_id")][: 1000 - len(bad)]
            offset += len(batch)
            if not bad:
                yield [_doc_record(rec) for rec in batch]
    except FormatError as exc:
        raise invalid(file, exc) from None
    fail(problems(file, bad))


def _doc_record(rec: dict) -> dict:
    meta = {k: v for k, v in rec.items() if k not in _RESERVED_DOC and v is not None}
    version = rec.get("version")
    title, text = rec.get("title") or "", rec["text"]
    return {
        "external_id": rec["doc_id"],
        "title": title,
        "text": text,
        "meta": meta,
        "source_version": None if version is None else str(version)[:255],
        "sha": sha(title, text),
    }


def import_documents(
    db: Database, actor: Actor, project: ProjectRef, source: Source, *, filename: str | None = None
) -> ImportReport:
    """Import documents (admin): new IDs are added, changed ones get a new version, the rest is unchanged.
    PostgreSQL: one transaction (MVCC: it blocks neither readers nor annotators' writes). SQLite: short
    transactions that annotators' writes get in between, published at once in the last one (`_import_staged`).
    Either way a bad line anywhere imports nothing."""
    file = read_source(source, filename)
    with contextlib.closing(_doc_batches(file, SQLITE_DOC_BATCH if db.is_sqlite else DOC_BATCH)) as batches:
        first = next(batches, [])  # a bad first batch fails before the transaction
        if db.is_sqlite:
            return _import_staged(db, actor, project, file, itertools.chain([first], batches))
        with db.write() as s:
            _, proj = open_project(s, actor, project, Role.ADMIN, "import documents")
            lock_imports(s, proj)
            import_id = start_import(s, actor, proj, file, ImportKind.DOCUMENTS, Path(file.name).name)
            writer = _DocWriter(
                corpus.doc_index(s, proj.id), file.name, import_id
            )  # published at the end too
            for records in itertools.chain([first], batches):
                writer.add(s, proj.id, records)
            counts = writer.counts
            counts["stale"] = writer.publish(s)
            return _finish(s, actor, proj, file, counts, import_id)


def _finish(s: Session, actor: Actor, proj, file: SourceFile, counts: dict, import_id: int) -> ImportReport:
    report = ImportReport(
        kind=ImportKind.DOCUMENTS,
        source=file.name,
        name=Path(file.name).name,
        added=counts["added"],
        changed=counts["changed"],
        unchanged=counts["rows"] - counts["added"] - counts["changed"],
        stale_labels=counts["stale"],
    )
    record_import(s, actor, proj, file, report, import_id)
    return already_imported(s, proj, file, report, import_id)


class _DocWriter:
    """Writes a document import batch by batch (in the caller's transaction: one, or one per batch), staged:
    a new document waits unpublished (`doc_staging.STAGED`) with its version 1, a changed one gets its next
    version while its current one stays current, until `publish`. On PostgreSQL too, so that the rows of
    the documents a re-import changes are locked (and a save on one of them waits) only from the last
    step to the commit, not for the whole import."""

    def __init__(self, existing: dict, source: str, import_id: int):
        self.existing, self.source, self.import_id = existing, source, import_id
        self.counts = {"added": 0, "changed": 0, "rows": 0, "stale": 0}
        self.changed_ids: list[int] = []

    def add(self, s: Session, project_id: int, records: list[dict]) -> None:
        existing = self.existing
        new = [r for r in records if r["external_id"] not in existing]
        changed = [
            r for r in records if r["external_id"] in existing and existing[r["external_id"]][2] != r["sha"]
        ]
        _add_documents(s, project_id, new, self.source, self.import_id)
        self.changed_ids += _change_documents(s, changed, existing, self.source, self.import_id)
        self.counts["added"] += len(new)
        self.counts["changed"] += len(changed)
        self.counts["rows"] += len(records)

    def publish(self, s: Session) -> int:
        """Make what was written current (every pointer moves now); flag the claims and labels on the changed
        documents. Returns the number of labels now stale."""
        doc_staging.publish(s, self.import_id, utcnow())
        if not self.changed_ids:
            return 0
        corpus.mark_claims_changed(s, self.changed_ids)  # open claims show the new version, with a warning
        return corpus.mark_stale(s, self.changed_ids)


# ------------------------------------------------------------------------------------ SQLite: staged
SQLITE_DOC_BATCH = 1000  # on SQLite: documents per transaction (short, so other writers get in)
SQLITE_PAUSE_S = 0.05  # on SQLite: the pause between two of them (other processes' busy handlers poll)
_DROP_ROWS = 2000  # staged rows deleted per transaction when an import is undone or a dead one cleared


def _import_staged(
    db: Database, actor: Actor, project: ProjectRef, file: SourceFile, batches: Iterator[list[dict]]
) -> ImportReport:
    """A document import on SQLite in short transactions, so that other processes' writes (an annotator's
    label) get in between. Holding `doc_staging.hold_imports` (one document import at a time): the rows of a
    dead import are dropped; each batch is written in its own transaction, unpublished (see
    `store.doc_staging`); once the whole file is read and valid, one last transaction publishes it and records
    the import (all visible at once). On any error the staged rows are deleted, again in short transactions;
    a killed import's rows stay invisible until the next document import drops them."""
    with doc_staging.hold_imports(db):
        with db.write() as s:
            _, proj = open_project(s, actor, project, Role.ADMIN, "import documents")
            project_id, dead = proj.id, doc_staging.unfinished_imports(s, proj.id, ImportKind.DOCUMENTS)
        for import_id in dead:
            _drop_staged(db, project_id, import_id)
        with db.write() as s:
            _, proj = open_project(s, actor, project, Role.ADMIN, "import documents")
            import_id = start_import(s, actor, proj, file, ImportKind.DOCUMENTS, Path(file.name).name)
            writer = _DocWriter(corpus.doc_index(s, proj.id), file.name, import_id)
        try:
            for records in batches:
                with db.write() as s:
                    writer.add(s, project_id, records)
                time.sleep(SQLITE_PAUSE_S)  # SQLite's busy handler polls: leave a waiting writer a gap
            with db.write() as s:
                _, proj = open_project(s, actor, project, Role.ADMIN, "import documents")
                counts = writer.counts
                counts["stale"] = writer.publish(s)
                return _finish(s, actor, proj, file, counts, import_id)
        except BaseException:
            _drop_staged(db, project_id, import_id)
            raise


def _drop_staged(db: Database, project_id: int, import_id: int) -> None:
    """Delete an unfinished import's staged rows and record, `_DROP_ROWS` rows per transaction."""
    while True:
        with db.write() as s:
            if not doc_staging.drop_piece(s, project_id, import_id, _DROP_ROWS):
                return


def _version_row(doc_id: int, version: int, rec: dict, source: str, now, import_id: int) -> dict:
    return {
        "document_id": doc_id,
        "version": version,
        "title": rec["title"],
        "text": rec["text"],
        "meta": rec["meta"],
        "source_version": rec["source_version"],
        "content_sha256": rec["sha"],
        "source": source[:1000],
        "import_id": import_id,
        "created_at": now,
    }


def _add_documents(s: Session, project_id: int, records: list[dict], source: str, import_id: int) -> None:
    if not records:
        return
    now = utcnow()
    ids = corpus.insert_new_documents(
        s,
        project_id,
        [
            {
                "project_id": project_id,
                "external_id": r["external_id"],
                "version": doc_staging.STAGED,  # published by `_DocWriter.publish`
                "content_sha256": r["sha"],
                "updated_at": now,
            }
            for r in records
        ],
    )
    corpus.insert_versions(
        s, [_version_row(ids[r["external_id"]], 1, r, source, now, import_id) for r in records]
    )


def _change_documents(
    s: Session, records: list[dict], existing: dict, source: str, import_id: int
) -> list[int]:
    """Add each changed document's next version (`_DocWriter.publish` makes it current); returns their
    ids."""
    if not records:
        return []
    now = utcnow()
    versions, ids = [], []
    for r in records:
        doc_id, version, _ = existing[r["external_id"]]
        versions.append(_version_row(doc_id, version + 1, r, source, now, import_id))
        ids.append(doc_id)
    corpus.insert_versions(s, versions)
    return ids
