"""Importing queries (JSONL, CSV or TSV): a query's text may change only while it has no labels."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role
from annotate_app.services.imports._common import (
    Source,
    SourceFile,
    already_imported,
    cleaned,
    fail,
    lock_imports,
    parse,
    problems,
    read_source,
    record_format,
    record_import,
    record_problems,
    sha,
    start_import,
)
from annotate_app.services.types import ImportReport
from annotate_app.store import corpus
from annotate_app.store.db import Database
from annotate_app.store.enums import ImportKind
from annotate_app.store.models import utcnow

__all__ = ["import_queries"]


def _query_records(file: SourceFile) -> list[dict]:
    from metrics.formats import read_queries

    records = [
        cleaned(r)
        for r in parse(read_queries, file, format=record_format(file.name)).to_dict(orient="records")
    ]
    fail(problems(file, record_problems(records, "query_id")))
    out = []
    for rec in records:
        meta = {k: v for k, v in rec.items() if k not in ("query_id", "text") and v is not None}
        out.append(
            {"external_id": rec["query_id"], "text": rec["text"], "meta": meta, "sha": sha(rec["text"])}
        )
    return out


def import_queries(
    db: Database, actor: Actor, project: ProjectRef, source: Source, *, filename: str | None = None
) -> ImportReport:
    """Import queries (admin). A changed text is accepted only for a query without labels."""
    file = read_source(source, filename)
    records = _query_records(file)
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import queries")
        lock_imports(s, proj)
        existing = corpus.query_index(s, proj.id)
        new = [r for r in records if r["external_id"] not in existing]
        changed = [
            r for r in records if r["external_id"] in existing and existing[r["external_id"]][1] != r["sha"]
        ]
        _refuse_labelled_changes(s, file, records, changed, existing)
        import_id = start_import(s, actor, proj, file, ImportKind.QUERIES, Path(file.name).name)
        replaced = _previous(s, [existing[r["external_id"]][0] for r in changed], changed)
        retagged = _retagged(s, proj.id, records, new, changed, existing)
        now = utcnow()
        corpus.insert_queries(
            s,
            [
                {
                    "project_id": proj.id,
                    "external_id": r["external_id"],
                    "text": r["text"],
                    "meta": r["meta"],
                    "content_sha256": r["sha"],
                    "import_id": import_id,
                    "created_at": now,
                }
                for r in new
            ],
        )
        corpus.update_queries(
            s,
            [
                {
                    "b_id": existing[r["external_id"]][0],
                    "text": r["text"],
                    "meta": r["meta"],
                    "content_sha256": r["sha"],
                }
                for r in changed
            ],
        )
        corpus.update_queries(s, retagged)
        report = ImportReport(
            kind=ImportKind.QUERIES,
            source=file.name,
            name=Path(file.name).name,
            added=len(new),
            changed=len(changed) + len(retagged),
            unchanged=len(records) - len(new) - len(changed) - len(retagged),
        )
        record_import(s, actor, proj, file, report, import_id, replaced)
        return already_imported(s, proj, file, report, import_id)


def _previous(s: Session, query_ids: list[int], changed: list[dict]) -> dict | None:
    """What the changed queries held before (and the content hash the import gives them), for an undo."""
    if not query_ids:
        return None
    before = corpus.query_contents(s, query_ids)
    return {
        "queries": [
            {**before[i], "id": i, "new_sha256": r["sha"]} for i, r in zip(query_ids, changed, strict=True)
        ]
    }


def _retagged(
    s: Session, project_id: int, records: list[dict], new: list[dict], changed: list[dict], existing: dict
) -> list[dict]:
    """``{"b_id", "meta"}`` of the queries whose text is unchanged but whose tags (or other metadata) are
    not: tags are not content, so they may change on a labelled query too."""
    from annotate_app.store.scoring import query_metas

    skip = {r["external_id"] for r in (*new, *changed)}
    stored = query_metas(s, project_id)
    return [
        {"b_id": existing[r["external_id"]][0], "meta": r["meta"]}
        for r in records
        if r["external_id"] not in skip and stored.get(r["external_id"], {}) != r["meta"]
    ]


def _refuse_labelled_changes(
    s: Session, file: SourceFile, records: list[dict], changed: list[dict], existing: dict
) -> None:
    labelled = corpus.queries_with_labels(s, [existing[r["external_id"]][0] for r in changed])
    if not labelled:
        return
    row_of = {r["external_id"]: i for i, r in enumerate(records)}
    fail(
        problems(
            file,
            [
                (
                    row_of[r["external_id"]],
                    f"query {r['external_id']!r} already has labels; its text "
                    "cannot change (import it under a new query_id)",
                )
                for r in changed
                if existing[r["external_id"]][0] in labelled
            ],
        )
    )
