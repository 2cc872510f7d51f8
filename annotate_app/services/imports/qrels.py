"""Importing prior qrels (TREC or BEIR TSV): judgments shown to reviewers, never released."""

from __future__ import annotations

from pathlib import Path

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role
from annotate_app.services.imports._common import (
    Source,
    check_name,
    fail,
    internal,
    lock_imports,
    parse,
    read_source,
    record_import,
    same_again,
    start_import,
    unknown,
)
from annotate_app.services.types import ImportReport
from annotate_app.store import corpus
from annotate_app.store.db import Database
from annotate_app.store.enums import ImportKind

__all__ = ["import_qrels"]


def import_qrels(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    source: Source,
    *,
    name: str | None = None,
    filename: str | None = None,
) -> ImportReport:
    """Import existing qrels as prior judgments (admin) under ``name`` (default: the file name). They are
    shown to reviewers next to disagreements and can keep pooling from re-judging pairs; they are never
    released."""
    from metrics.formats import read_qrels

    file = read_source(source, filename)
    qrels = parse(read_qrels, file)
    prior_name = check_name(name or Path(file.name).name, "qrels name")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import qrels")
        lock_imports(s, proj)
        known = corpus.prior_sources(s, proj.id)
        if prior_name in known:
            old = corpus.find_import(s, proj.id, ImportKind.QRELS, prior_name)
            old_sha = old.file_sha256 if old else ""
            return same_again(old_sha, file, ImportKind.QRELS, prior_name, known[prior_name])
        qindex, dindex = corpus.query_index(s, proj.id), corpus.doc_index(s, proj.id)
        fail(unknown(file, qrels.query_id, qrels.doc_id, qindex, dindex))
        import_id = start_import(s, actor, proj, file, ImportKind.QRELS, prior_name)
        columns = zip(
            internal(qrels.query_id, qindex).tolist(),
            internal(qrels.doc_id, dindex).tolist(),
            qrels.relevance.tolist(),
            strict=True,
        )
        corpus.insert_prior(
            s,
            [
                {
                    "project_id": proj.id,
                    "source": prior_name,
                    "query_id": a,
                    "document_id": b,
                    "grade": int(g),
                }
                for a, b, g in columns
            ],
        )
        report = ImportReport(kind=ImportKind.QRELS, source=file.name, name=prior_name, added=len(qrels))
        record_import(s, actor, proj, file, report, import_id)
        return report
