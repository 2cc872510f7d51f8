"""Importing the chunk→document map (``chunk_id`` and ``doc_id`` per row; JSONL, CSV or TSV), with each
chunk's place in its document when the file gives it (``start`` and ``end``, or ``text``)."""

from __future__ import annotations

import json
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
from annotate_app.store import annotation, corpus
from annotate_app.store.db import Database, unstorable
from annotate_app.store.enums import ImportKind
from metrics.errors import Problem

__all__ = ["import_chunk_map"]


def import_chunk_map(
    db: Database, actor: Actor, project: ProjectRef, source: Source, *, filename: str | None = None
) -> ImportReport:
    """Import a chunk→document map (admin): ``chunk_id`` and ``doc_id`` per row (JSONL, CSV or TSV). A chunk
    already mapped to another document is an error.

    A CHUNKS file (`metrics.formats.read_chunks`: ``start`` and ``end``, or ``text`` located in the document)
    also records where each new chunk lies in the current version of its document, so that the annotate card
    opens a chunk-level run's pair at the chunk retrieved; an offset beyond the document, or a text not found
    in it, is an error naming its line."""
    from metrics.formats import read_chunk_map

    file = read_source(source, filename)
    chunk_ids, doc_ids = (a.to_pylist() for a in parse(read_chunk_map, file))
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import chunk maps")
        lock_imports(s, proj)
        dindex, cindex = corpus.doc_index(s, proj.id), corpus.chunk_index(s, proj.id)
        problems = _chunk_problems(file, chunk_ids, doc_ids, dindex, cindex)
        fail(problems)
        places = _places(s, file, doc_ids, dindex) if _has_places(file) else {}
        import_id = start_import(s, actor, proj, file, ImportKind.CHUNKS, Path(file.name).name)
        new = [(c, d) for c, d in zip(chunk_ids, doc_ids, strict=True) if c not in cindex]
        corpus.insert_chunks(
            s,
            [
                {
                    "project_id": proj.id,
                    "chunk_id": c,
                    "document_id": dindex[d][0],
                    "import_id": import_id,
                    **dict(zip(_PLACE_COLUMNS, places.get(c, (None, None, None)), strict=True)),
                }
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


_PLACE_FIELDS = frozenset({"start", "end", "text"})
_PLACE_COLUMNS = ("start_char", "end_char", "doc_version")


def _has_places(file: SourceFile) -> bool:
    """Whether the file's first record (JSONL) or header (CSV, TSV) names ``start``, ``end`` or ``text``."""
    with file.open() as f:
        first = next((line for raw in f if (line := raw.decode("utf-8-sig", "replace").strip())), "")
    name = file.name.lower().removesuffix(".gz")
    if name.endswith((".csv", ".tsv")):
        fields = {x.strip().strip('"') for x in first.split("\t" if name.endswith(".tsv") else ",")}
    else:
        try:
            record = json.loads(first)
        except ValueError:
            return False
        fields = set(record) if isinstance(record, dict) else set()
    return bool(fields & _PLACE_FIELDS)


def _places(s, file: SourceFile, doc_ids: list, dindex: dict) -> dict[str, tuple[int, int, int]]:
    """chunk_id → (start, end, document version) in the current text of its document (`read_chunks`)."""
    from metrics.formats import read_chunks

    wanted = {d: dindex[d] for d in set(doc_ids) if d in dindex}
    texts = annotation.version_texts(s, [(i, version) for i, version, *_ in wanted.values()])
    documents = {d: texts.get((i, version), "") for d, (i, version, *_) in wanted.items()}
    frame = parse(read_chunks, file, corpus=documents)
    versions = {d: version for d, (_, version, *_) in wanted.items()}
    return {
        c: (int(a), int(b), versions[d])
        for c, d, a, b in zip(frame["chunk_id"], frame["doc_id"], frame["start"], frame["end"], strict=True)
    }


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
