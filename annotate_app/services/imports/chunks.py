"""Importing the chunk→document map (``chunk_id`` and ``doc_id`` per row; JSONL, CSV or TSV)."""

from __future__ import annotations

from pathlib import Path

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role
from annotate_app.services.imports._common import (
    MAX_ID,
    Source,
    SourceFile,
    already_imported,
    fail,
    lock_imports,
    parse,
    problems,
    read_source,
    record_import,
    start_import,
)
from annotate_app.services.types import ImportReport
from annotate_app.store import corpus
from annotate_app.store.db import Database, unstorable
from annotate_app.store.enums import ImportKind
from metrics.errors import Problem

__all__ = ["import_chunk_map"]


def import_chunk_map(
    db: Database, actor: Actor, project: ProjectRef, source: Source, *, filename: str | None = None
) -> ImportReport:
    """Import a chunk→document map (admin): ``chunk_id`` and ``doc_id`` per row (JSONL, CSV or TSV). A chunk
    already mapped to another document is an error."""
    from metrics.formats import read_chunk_map

    file = read_source(source, filename)
    chunk_ids, doc_ids = (a.to_pylist() for a in parse(read_chunk_map, file))
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import chunk maps")
        lock_imports(s, proj)
        dindex, cindex = corpus.doc_index(s, proj.id), corpus.chunk_index(s, proj.id)
        problems = _chunk_problems(file, chunk_ids, doc_ids, dindex, cindex)
        fail(problems)
        import_id = start_import(s, actor, proj, file, ImportKind.CHUNKS, Path(file.name).name)
        new = [(c, d) for c, d in zip(chunk_ids, doc_ids, strict=True) if c not in cindex]
        corpus.insert_chunks(
            s,
            [
                {"project_id": proj.id, "chunk_id": c, "document_id": dindex[d][0], "import_id": import_id}
                for c, d in new
            ],
        )
        report = ImportReport(
            kind=ImportKind.CHUNKS,
            source=file.name,
            name=Path(file.name).name,
            added=len(new),
            unchanged=len(chunk_ids) - len(new),
        )
        record_import(s, actor, proj, file, report, import_id)
        return already_imported(s, proj, file, report, import_id)


def _chunk_problems(
    file: SourceFile, chunk_ids: list, doc_ids: list, dindex: dict, cindex: dict
) -> list[Problem]:
    bad = []
    for i, (c, d) in enumerate(zip(chunk_ids, doc_ids, strict=True)):
        if len(c) > MAX_ID or unstorable(c):
            bad.append((i, f"chunk_id {unstorable(c) or f'longer than {MAX_ID} characters'}"))
        elif d not in dindex:
            bad.append((i, f"unknown document {d!r}"))
        elif c in cindex and cindex[c] != dindex[d][0]:
            bad.append((i, f"chunk {c!r} is already mapped to another document"))
    return problems(file, bad)
