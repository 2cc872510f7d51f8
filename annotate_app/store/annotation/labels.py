"""Labels: saving a grade on a claim and reading label versions back.

Saving first flips the claim with a conditional UPDATE (``slot IS NOT NULL``), so a label can never land on a
skipped or expired claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    and_,
    bindparam,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.orm import Session

from annotate_app.store.db import rowcount
from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.models import (
    Assignment,
    Document,
    DocumentVersion,
    GoldPair,
    Guidelines,
    Label,
    Pair,
    Query,
    User,
    utcnow,
)

__all__ = [
    "SaveTarget",
    "save_target",
    "add_label",
    "mark_done",
    "insert_label",
    "label_by_id",
    "label_by_request",
    "has_labelled",
    "set_label_id",
    "skip",
    "label_rows",
    "own_label_count",
    "labels_by_id",
    "all_label_rows",
]


@dataclass(frozen=True, kw_only=True)
class SaveTarget:
    """What a save needs to know of the annotator's claim of a pair, read in one statement (`save_target`)."""

    assignment: Assignment
    doc_version: int  # the pair's current document version, share-locked (as `current_doc_version`)
    query_id: str
    doc_id: str
    doc_title: str | None  # None only if a re-import changed the version while the lock was awaited
    gold: tuple[int, str] | None = None  # a gold pair's expected grade and explanation (None: not gold)


def _save_target_statement() -> Any:
    shown = and_(DocumentVersion.document_id == Document.id, DocumentVersion.version == Document.version)
    return (
        select(
            Assignment,
            Document.version,
            Query.external_id,
            Document.external_id,
            DocumentVersion.title,
            GoldPair.grade,
            GoldPair.explanation,
        )
        .join(Pair, Pair.id == Assignment.pair_id)
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .outerjoin(DocumentVersion, shown)
        .outerjoin(GoldPair, GoldPair.pair_id == Pair.id)
        .where(
            Assignment.pair_id == bindparam("pair_id"),
            Assignment.annotator_id == bindparam("annotator_id"),
        )
    )


_SAVE_TARGET = _save_target_statement().with_for_update(read=True, of=Document)  # SQLite: no lock clause


def save_target(s: Session, pair_id: int, annotator_id: int) -> SaveTarget | None:
    """The annotator's claim of the pair (None: they have none) with the pair's current document version,
    share-locked on PostgreSQL until the transaction ends (``FOR SHARE OF documents``, see
    `current_doc_version`), the query's, document's and title's text a label shows, and, for a gold pair, its
    expected grade and explanation (an outer join: no statement of its own). The title comes from
    an outer join: if the lock waited for a re-import, PostgreSQL re-checks the locked row only, and the
    title of the new version is then None (read it with `pair_content`)."""
    row = s.execute(_SAVE_TARGET, {"pair_id": pair_id, "annotator_id": annotator_id}).first()
    if row is None:
        return None
    a, version, query_id, doc_id, title, gold_grade, explanation = row
    gold = None if gold_grade is None else (int(gold_grade), str(explanation))
    return SaveTarget(
        assignment=a, doc_version=version, query_id=query_id, doc_id=doc_id, doc_title=title, gold=gold
    )


_LABEL_FIELDS = tuple(c.name for c in Label.__table__.c if c.name not in ("id", "guidelines_version"))


def _add_label_statement() -> Any:
    columns = Label.__table__.c
    project = bindparam("b_project", type_=Guidelines.__table__.c.project_id.type)
    latest = select(func.max(Guidelines.version)).where(Guidelines.project_id == project).scalar_subquery()
    values = {name: bindparam(f"b_{name}", type_=columns[name].type) for name in _LABEL_FIELDS}
    return insert(Label).values(guidelines_version=latest, **values).returning(Label.id)


_ADD_LABEL = _add_label_statement()


def add_label(s: Session, *, project_id: int, **fields: Any) -> tuple[int, datetime]:
    """Insert a label (one statement: its ``guidelines_version`` is the project's latest, read in the INSERT);
    ``fields``: every column but ``id``, ``guidelines_version`` and ``created_at``. Returns its id and
    creation time."""
    now = utcnow()
    params = {f"b_{name}": value for name, value in (fields | {"created_at": now}).items()}
    if len(params) != len(_LABEL_FIELDS):
        raise TypeError(f"add_label needs the fields {_LABEL_FIELDS[:-1]}; got {sorted(fields)}")
    return int(s.connection().execute(_ADD_LABEL, params | {"b_project": project_id}).scalar_one()), now


def mark_done(s: Session, assignment_id: int, grade: int, expected_version: int | None) -> int | None:
    """Flip a live claim to done with the next label version; None if it is no longer live (or the version is
    not the expected one)."""
    params = {"b_id": assignment_id, "b_grade": grade, "b_now": utcnow(), "b_expected": expected_version}
    return s.connection().execute(_MARK_DONE[expected_version is not None], params).scalar()


def _mark_done_statement(expected: bool) -> Any:
    columns = Assignment.__table__.c
    cond = [Assignment.id == bindparam("b_id", type_=columns.id.type), Assignment.slot.is_not(None)]
    if expected:
        cond.append(Assignment.version == bindparam("b_expected", type_=columns.version.type))
    return (
        update(Assignment)
        .where(*cond)
        .values(
            status=AssignmentStatus.DONE,
            version=Assignment.version + 1,
            grade=bindparam("b_grade", type_=columns.grade.type),
            stale=False,
            updated_at=bindparam("b_now", type_=columns.updated_at.type),
        )
        .returning(Assignment.version)
    )


_MARK_DONE = {expected: _mark_done_statement(expected) for expected in (False, True)}


def insert_label(s: Session, **fields: Any) -> Label:
    label = Label(created_at=utcnow(), **fields)
    s.add(label)
    s.flush()
    return label


def label_by_id(s: Session, label_id: int) -> Label | None:
    return s.get(Label, label_id)


def label_by_request(s: Session, annotator_id: int, request_id: str) -> Label | None:
    """The label the annotator saved with this idempotency key, if any."""
    return s.scalar(select(Label).where(Label.annotator_id == annotator_id, Label.request_id == request_id))


def has_labelled(s: Session, pair_id: int, user_id: int) -> bool:
    """Whether the user ever saved a label of the pair (any version)."""
    stmt = select(Label.id).where(Label.pair_id == pair_id, Label.annotator_id == user_id).limit(1)
    return s.scalar(stmt) is not None


def set_label_id(s: Session, assignment_id: int, label_id: int) -> None:
    s.connection().execute(_SET_LABEL_ID, {"b_id": assignment_id, "b_label": label_id})


_SET_LABEL_ID = (
    update(Assignment)
    .where(Assignment.id == bindparam("b_id", type_=Assignment.__table__.c.id.type))
    .values(label_id=bindparam("b_label", type_=Assignment.__table__.c.label_id.type))
)


def skip(s: Session, assignment_id: int, reason: str) -> bool:
    stmt = (
        update(Assignment)
        .where(Assignment.id == assignment_id, Assignment.status == AssignmentStatus.ACTIVE)
        .values(status=AssignmentStatus.SKIPPED, slot=None, skip_reason=reason, updated_at=utcnow())
    )
    return rowcount(s.execute(stmt, execution_options={"synchronize_session": False})) == 1


def label_rows(
    s: Session,
    *,
    project_id: int,
    annotator_id: int | None = None,
    pair_id: int | None = None,
    current_only: bool = False,
    limit: int | None = None,
    offset: int = 0,
    reason_chars: int | None = None,
) -> list[dict[str, Any]]:
    """Labels with their pair's external IDs, newest first, for listings (own recent labels, pair history);
    ``offset`` rows skipped, at most ``limit`` returned. ``reason_chars``: only that many characters of each
    reason are read (cut in SQL), its whole length in ``reason_length``."""
    reason = Label.reason if reason_chars is None else func.substr(Label.reason, 1, reason_chars)
    stmt = (
        select(
            Label.pair_id,
            Query.external_id,
            Document.external_id,
            User.username,
            Label.version,
            Label.grade,
            reason,
            Label.unsure,
            Label.seconds,
            Label.doc_version,
            Document.version,
            Label.created_at,
            Label.id,
            func.length(Label.reason),
        )
        .join(Pair, Pair.id == Label.pair_id)
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .join(User, User.id == Label.annotator_id)
        .where(Pair.project_id == project_id)
        .order_by(Label.id.desc())
    )
    if annotator_id is not None:
        stmt = stmt.where(Label.annotator_id == annotator_id)
    if pair_id is not None:
        stmt = stmt.where(Label.pair_id == pair_id)
    if current_only:
        stmt = stmt.join(Assignment, Assignment.label_id == Label.id)
    if limit is not None:
        stmt = stmt.limit(limit)
    if offset:
        stmt = stmt.offset(offset)
    keys = (
        "pair_id",
        "query_id",
        "doc_id",
        "annotator",
        "version",
        "grade",
        "reason",
        "unsure",
        "seconds",
        "doc_version",
        "current_doc_version",
        "created_at",
        "label_id",
        "reason_length",
    )
    return [dict(zip(keys, row, strict=True)) for row in s.execute(stmt)]


def own_label_count(s: Session, *, project_id: int, annotator_id: int, current_only: bool = False) -> int:
    """How many labels (current ones only, if asked) ``annotator_id`` has in the project."""
    stmt = (
        select(func.count())
        .select_from(Label)
        .join(Pair, Pair.id == Label.pair_id)
        .where(Pair.project_id == project_id, Label.annotator_id == annotator_id)
    )
    if current_only:
        stmt = stmt.join(Assignment, Assignment.label_id == Label.id)
    return int(s.scalar(stmt) or 0)


def labels_by_id(s: Session, label_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """label id → its fields and annotator name (chunks of 5000 IDs)."""
    out: dict[int, dict[str, Any]] = {}
    ids = sorted(set(label_ids))
    for start in range(0, len(ids), 5000):
        stmt = (
            select(
                Label.id,
                User.username,
                Label.version,
                Label.grade,
                Label.reason,
                Label.unsure,
                Label.seconds,
                Label.doc_version,
                Label.guidelines_version,
                Label.created_at,
            )
            .join(User, User.id == Label.annotator_id)
            .where(Label.id.in_(ids[start : start + 5000]))
        )
        for row in s.execute(stmt):
            out[row[0]] = {
                "annotator": row[1],
                "version": row[2],
                "grade": row[3],
                "reason": row[4],
                "unsure": bool(row[5]),
                "seconds": row[6],
                "doc_version": row[7],
                "guidelines_version": row[8],
                "created_at": row[9].isoformat(),
            }
    return out


def all_label_rows(s: Session, project_id: int) -> list[tuple]:
    """Every label version of the project with its pair's IDs, oldest first (for the labels CSV)."""
    stmt = (
        select(
            Query.external_id,
            Document.external_id,
            User.username,
            Label.version,
            Label.grade,
            Label.reason,
            Label.unsure,
            Label.seconds,
            Label.doc_version,
            Document.version,
            Label.guidelines_version,
            Label.created_at,
        )
        .join(Pair, Pair.id == Label.pair_id)
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .join(User, User.id == Label.annotator_id)
        .where(Pair.project_id == project_id)
        .order_by(Label.id)
    )
    return list(s.execute(stmt))
