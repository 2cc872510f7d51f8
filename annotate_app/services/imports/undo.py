"""Listing a project's imports and undoing one (admin), in one transaction that waits for the other imports.

An undo removes exactly what the import added and restores what it changed. It refuses while judged pairs
depend on it (named), unless ``exclude_dependent=True`` excludes them. Undoing twice changes nothing.
Audited (``import_undone``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, InvalidInput, NotFound
from annotate_app.services.imports._common import lock_imports
from annotate_app.services.inputs import check_count
from annotate_app.services.types import ImportInfo, UndoReport
from annotate_app.store import annotation, corpus, doc_staging
from annotate_app.store import undo as undo_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction, ImportKind
from annotate_app.store.models import ImportRecord, Project, utcnow

__all__ = ["list_imports", "undo_import"]

_SHOWN_PAIRS = 5


def list_imports(db: Database, actor: Actor, project: ProjectRef) -> list[ImportInfo]:
    """Every finished import of the project, newest first (admin)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "list imports")
        return [
            ImportInfo(
                import_id=i,
                kind=ImportKind(kind),
                name=name,
                counts=dict(counts or {}),
                by=by or "system",
                at=at,
                undone_at=undone,
            )
            for i, kind, name, counts, by, at, undone in undo_store.import_rows(s, proj.id)
            if counts  # not one still being staged (SQLite documents)
        ]


def undo_import(
    db: Database, actor: Actor, project: ProjectRef, import_id: int, *, exclude_dependent: bool = False
) -> UndoReport:
    """Undo import ``import_id`` of the project (admin): remove what it added, in one transaction (see the
    module doc). Raises `Conflict` naming the judged pairs that depend on it, unless ``exclude_dependent``."""
    check_count(import_id, "import_id")
    if not isinstance(exclude_dependent, bool):
        raise InvalidInput(f"exclude_dependent must be True or False; got {exclude_dependent!r}")
    with (
        doc_staging.hold_imports(db) if db.is_sqlite else contextlib.nullcontext()
    ):  # not amid a staged import
        return _undo(db, actor, project, import_id, exclude_dependent)


def _undo(
    db: Database, actor: Actor, project: ProjectRef, import_id: int, exclude_dependent: bool
) -> UndoReport:
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "undo imports")
        lock_imports(s, proj)
        record = undo_store.get_import(s, proj.id, import_id)
        if record is None:
            raise NotFound(f"import {import_id} does not exist in project {proj.name!r}")
        kind = ImportKind(record.kind)
        if record.undone_at is not None:
            return UndoReport(import_id=record.id, kind=kind, name=record.source, already_undone=True)
        if not record.counts:  # SQLite: a document import staged in short transactions (its rows unseen)
            raise Conflict(
                f"import {record.id} ({kind} {record.source!r}) has not finished: it is still running, or "
                "it died and the next document import clears what it staged"
            )
        if kind not in _UNDO:
            raise Conflict(
                f"import {record.id} ({kind} {record.source!r}) cannot be undone: imported labels are part "
                "of the label history, which is append-only; exclude their pairs instead"
            )
        undo = _Undo(s, actor, proj, record, exclude_dependent)
        report = _UNDO[kind](undo)
        undo_store.mark_undone(s, record.id, utcnow())
        audit(
            s,
            actor,
            AuditAction.IMPORT_UNDONE,
            project_id=proj.id,
            target=f"import {record.id} ({kind} {record.source})"[:1000],
            details={
                "import_id": record.id,
                "kind": str(kind),
                "name": record.source,
                "removed": report.removed,
                "restored": report.restored,
                "pairs_removed": report.pairs_removed,
                "pairs_excluded": report.pairs_excluded,
                "excluded": [f"{a} {b}" for a, b in undo.excluded_names[:100]],
            },
        )
        return report


@dataclass
class _Undo:
    """One undo in progress: the transaction, who, the project, the import record, the option."""

    s: Session
    actor: Actor
    project: Project
    record: ImportRecord
    exclude_dependent: bool
    excluded_names: Sequence[tuple[str, str]] = ()

    def report(
        self, *, removed: int = 0, restored: int = 0, pairs_removed: int = 0, pairs_excluded: int = 0
    ) -> UndoReport:
        return UndoReport(
            import_id=self.record.id,
            kind=ImportKind(self.record.kind),
            name=self.record.source,
            removed=removed,
            restored=restored,
            pairs_removed=pairs_removed,
            pairs_excluded=pairs_excluded,
        )

    def refuse_legacy(self, found: bool) -> None:
        """An import made before imports recorded what they added (none of it is tagged) cannot be undone."""
        counts = self.record.counts or {}
        if not found and (counts.get("added") or counts.get("changed")):
            raise Conflict(
                f"import {self.record.id} cannot be undone: it was made before imports recorded what they "
                "added"
            )

    def dependent(self, pairs: set[int]) -> int:
        """Refuse when judged pairs depend on the import; with ``exclude_dependent``, exclude them (and free
        their unlabelled claims). Returns how many were excluded."""
        if not pairs:
            return 0
        ordered = sorted(pairs)
        names = undo_store.pair_names(self.s, ordered)
        if not self.exclude_dependent:
            shown = ", ".join(f"{a} {b}" for a, b in names[:_SHOWN_PAIRS]) + (
                ", …" if len(names) > _SHOWN_PAIRS else ""
            )
            n = len(ordered)
            raise Conflict(
                f"import {self.record.id} cannot be undone: {n} labelled pair{'s' * (n != 1)} "
                f"depend{'s' * (n == 1)} on it ({shown}); use --exclude-dependent to exclude "
                f"{'that pair' if n == 1 else 'those pairs'} instead"
            )
        self.excluded_names = names
        reason = f"import {self.record.id} ({self.record.kind} {self.record.source}) was undone"
        excluded = undo_store.exclude_pairs(self.s, ordered, reason, self.actor.user_id)
        annotation.expire_claims(self.s, self.project.id, pair_ids=ordered)
        return excluded

    def refuse_referred(self, what: str, *, document_ids: Sequence[int] = (), query_ids: Sequence[int] = ()):
        others = undo_store.referring(self.s, document_ids=document_ids, query_ids=query_ids)
        if others:
            one = len(others) == 1
            raise Conflict(
                f"import {self.record.id} cannot be undone: {_and(others)} "
                f"{'refers' if one else 'refer'} to its {what}; undo {'that' if one else 'those'} "
                f"import{'' if one else 's'} first"
            )


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _undo_documents(u: _Undo) -> UndoReport:
    s = u.s
    added = undo_store.added_versions(s, u.record.id)
    u.refuse_legacy(bool(added))
    versions = undo_store.versions_of(s, list(added))
    gone = [d for d in added if set(versions[d]) <= added[d]]  # no version left once the import's go
    staying = {d: added[d] for d in added if d not in set(gone)}
    dependent = undo_store.judged_pairs(
        s, undo_store.pairs_on(s, document_ids=gone)
    ) | undo_store.pairs_judged_on_versions(s, staying)
    excluded = u.dependent(dependent)
    kept = {d for _, d in undo_store.pair_keys(s, sorted(dependent)).values()}
    delete = [d for d in gone if d not in kept]
    u.refuse_referred("documents", document_ids=delete)
    pairs_removed = undo_store.delete_pairs(s, undo_store.pairs_on(s, document_ids=delete))
    removed = undo_store.delete_versions(s, u.record.id, keep_documents=sorted(kept))
    undo_store.delete_documents(s, delete)
    restore = []
    for d, numbers in staying.items():
        if d in kept or max(versions[d]) not in numbers:
            continue  # kept whole, or its current version came from a later import
        previous = max(set(versions[d]) - numbers)
        restore.append((d, previous, versions[d][previous]))
    undo_store.restore_documents(s, restore)
    undo_store.unstale(s, [d for d, _, _ in restore])
    return u.report(
        removed=removed, restored=len(restore), pairs_removed=pairs_removed, pairs_excluded=excluded
    )


def _undo_queries(u: _Undo) -> UndoReport:
    s = u.s
    new = undo_store.added_queries(s, u.record.id)
    changed = list((u.record.replaced or {}).get("queries", []))
    u.refuse_legacy(bool(new or changed))
    touched = new + [r["id"] for r in changed]
    dependent = undo_store.judged_pairs(s, undo_store.pairs_on(s, query_ids=touched))
    excluded = u.dependent(dependent)
    kept = {qq for qq, _ in undo_store.pair_keys(s, sorted(dependent)).values()}
    delete = [i for i in new if i not in kept]
    u.refuse_referred("queries", query_ids=delete)
    pairs_removed = undo_store.delete_pairs(s, undo_store.pairs_on(s, query_ids=delete))
    removed = undo_store.delete_queries(s, delete)
    restored = undo_store.restore_queries(s, [r for r in changed if r["id"] not in kept])
    return u.report(removed=removed, restored=restored, pairs_removed=pairs_removed, pairs_excluded=excluded)


def _undo_run(u: _Undo) -> UndoReport:
    s = u.s
    run = corpus.find_run(s, u.project.id, u.record.source)
    if run is None or run.file_sha256 != u.record.file_sha256:
        return u.report()
    alone, _ = undo_store.sole_source_pairs(s, run.id)
    dependent = undo_store.judged_pairs(s, alone)
    excluded = u.dependent(dependent)
    pairs_removed = undo_store.delete_pairs(s, [p for p in alone if p not in dependent])
    removed = undo_store.delete_run(s, run.id)
    return u.report(removed=removed, pairs_removed=pairs_removed, pairs_excluded=excluded)


def _undo_qrels(u: _Undo) -> UndoReport:
    return u.report(removed=undo_store.delete_prior(u.s, u.project.id, u.record.source))


def _undo_chunks(u: _Undo) -> UndoReport:
    removed = undo_store.delete_chunks(u.s, u.record.id)
    u.refuse_legacy(bool(removed))
    return u.report(removed=removed)


_UNDO: dict[ImportKind, Callable[[_Undo], UndoReport]] = {
    ImportKind.DOCUMENTS: _undo_documents,
    ImportKind.QUERIES: _undo_queries,
    ImportKind.RUN: _undo_run,
    ImportKind.QRELS: _undo_qrels,
    ImportKind.CHUNKS: _undo_chunks,
}
