"""Importing documents (JSONL, CSV or TSV): new IDs are added, a changed title or text gets a new version (the
old one is kept) and flags the labels made on the old version stale."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Generator
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
from annotate_app.store import corpus as q
from annotate_app.store.db import Database
from annotate_app.store.enums import ImportKind
from annotate_app.store.models import utcnow
from metrics.errors import FormatError

__all__ = ["import_documents"]


_RESERVED_DOC = ("doc_id", "title", "text", "version")


DOC_BATCH = 5000  # documents read, checked and written at a time


def _doc_batches(file: SourceFile) -> Generator[list[dict], None, None]:
    """The file's documents, `DOC_BATCH` at a time, as rows to store. Streamed: a batch and the IDs seen so
    far are in memory, never the file. Every problem (the reader's and ours: an ID too long, text the database
    cannot store, NaN metadata) raises `InvalidInput` once the whole file is read — after the batches before
    it, so a caller writing them in one transaction rolls back: a bad line anywhere imports nothing."""
    from metrics.formats import iter_corpus

    bad: list[tuple[int, str]] = []
    offset = 0
    try:
        for batch in iter_corpus(file.reader_input(), format=record_format(file.name), rows=DOC_BATCH):
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
    """Import documents (admin): new IDs are added, changed ones get a new version, the rest is unchanged."""
    file = read_source(source, filename)
    with contextlib.closing(_doc_batches(file)) as batches:
        first = next(batches, [])  # a bad first batch fails before the transaction
        with db.write() as s:
            _, proj = open_project(s, actor, project, Role.ADMIN, "import documents")
            lock_imports(s, proj)
            import_id = start_import(s, actor, proj, file, ImportKind.DOCUMENTS, Path(file.name).name)
            existing = q.doc_index(s, proj.id)
            counts = {"added": 0, "changed": 0, "rows": 0, "stale": 0}
            for records in itertools.chain([first], batches):
                new = [r for r in records if r["external_id"] not in existing]
                changed = [
                    r
                    for r in records
                    if r["external_id"] in existing and existing[r["external_id"]][2] != r["sha"]
                ]
                _add_documents(s, proj.id, new, file.name, import_id)
                counts["stale"] += _change_documents(s, changed, existing, file.name, import_id)
                counts["added"] += len(new)
                counts["changed"] += len(changed)
                counts["rows"] += len(records)
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
    ids = q.insert_new_documents(
        s,
        project_id,
        [
            {
                "project_id": project_id,
                "external_id": r["external_id"],
                "version": 1,
                "content_sha256": r["sha"],
                "updated_at": now,
            }
            for r in records
        ],
    )
    q.insert_versions(s, [_version_row(ids[r["external_id"]], 1, r, source, now, import_id) for r in records])


def _change_documents(s: Session, records: list[dict], existing: dict, source: str, import_id: int) -> int:
    if not records:
        return 0
    now = utcnow()
    updates, versions = [], []
    for r in records:
        doc_id, version, _ = existing[r["external_id"]]
        updates.append(
            {"b_id": doc_id, "version": version + 1, "content_sha256": r["sha"], "updated_at": now}
        )
        versions.append(_version_row(doc_id, version + 1, r, source, now, import_id))
    q.update_documents(s, updates)
    q.insert_versions(s, versions)
    q.mark_claims_changed(s, [u["b_id"] for u in updates])  # open claims show the new version, with a warning
    return q.mark_stale(s, [u["b_id"] for u in updates])
