"""Queries on assignments (claims), labels and adjudications: the hot path of annotation.

Claiming a slot never relies on SELECT ... FOR UPDATE. `take_slot` is a conditional
``UPDATE pairs SET claimed = claimed + 1 WHERE id = :pair AND claimed < :n AND NOT excluded``: on PostgreSQL
the row lock serialises two claimers of one pair and the second re-checks ``claimed < n`` after the first
commits; on SQLite writers are serialised by ``BEGIN IMMEDIATE``. The assignment row then takes the lowest
free slot under UNIQUE(pair_id, slot) and UNIQUE(pair_id, annotator_id); an IntegrityError means a concurrent
claim won and the caller retries. Saving a label first flips the claim with a conditional UPDATE (``slot IS
NOT NULL``), so a label can never land on a skipped or expired claim.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import (
    and_,
    bindparam,
    case,
    exists,
    false,
    func,
    insert,
    literal,
    select,
    text,
    true,
    union_all,
    update,
)
from sqlalchemy.orm import Session, aliased

from annotate_app.store.bulk import fetch_rows
from annotate_app.store.db import rowcount
from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.exhausted import queue_changed
from annotate_app.store.models import (
    Adjudication,
    Assignment,
    Document,
    DocumentVersion,
    Guidelines,
    Label,
    Pair,
    PriorJudgment,
    Project,
    Query,
    User,
    utcnow,
)

__all__ = [
    "label_count",
    "max_claimed",
    "expire_claims",
    "open_claim",
    "candidates",
    "take_slot",
    "seek_slot",
    "claim_lock",
    "settings_lock",
    "current_n",
    "free_slot",
    "insert_assignment",
    "insert_claim",
    "SaveTarget",
    "save_target",
    "add_label",
    "own_assignment",
    "pair_content",
    "current_doc_version",
    "mark_done",
    "insert_label",
    "label_by_id",
    "label_by_request",
    "set_label_id",
    "skip",
    "release_slot",
    "own_count",
    "label_rows",
    "own_label_count",
    "current_labels",
    "latest_adjudications",
    "adjudication_of",
    "insert_adjudication",
    "adjudication_by_request",
    "has_labelled",
    "annotator_counts",
    "available_count",
    "priors",
    "pair_rows",
    "pair_external_ids",
    "query_names",
    "int_columns",
    "labels_by_id",
    "adjudications_by_id",
    "pair_origins",
    "all_label_rows",
]


def label_count(s: Session, project_id: int) -> int:
    stmt = (
        select(func.count())
        .select_from(Assignment)
        .where(Assignment.project_id == project_id, Assignment.status == AssignmentStatus.DONE)
    )
    return int(s.execute(stmt).scalar_one())


def max_claimed(s: Session, project_id: int) -> int:
    stmt = select(func.coalesce(func.max(Pair.claimed), 0)).where(Pair.project_id == project_id)
    return int(s.execute(stmt).scalar_one())


# ------------------------------------------------------------------------------------------------ claims
def expire_claims(
    s: Session,
    project_id: int,
    *,
    annotator_id: int | None = None,
    older_than: datetime | None = None,
    pair_ids: Sequence[int] | None = None,
) -> int:
    """Free unlabelled claims (status ``active``): by annotator, by age and/or by pair. Returns how many."""
    stmt = select(Assignment.id, Assignment.pair_id).where(
        Assignment.project_id == project_id, Assignment.status == AssignmentStatus.ACTIVE
    )
    if annotator_id is not None:
        stmt = stmt.where(Assignment.annotator_id == annotator_id)
    if older_than is not None:
        stmt = stmt.where(Assignment.assigned_at < older_than)
    if pair_ids is not None:
        stmt = stmt.where(Assignment.pair_id.in_(list(pair_ids)))
    freed = 0
    for assignment_id, pair_id in s.execute(stmt.order_by(Assignment.id)).all():
        done = rowcount(
            s.execute(
                update(Assignment)
                .where(Assignment.id == assignment_id, Assignment.status == AssignmentStatus.ACTIVE)
                .values(status=AssignmentStatus.EXPIRED, slot=None, updated_at=utcnow())
            )
        )
        if done:
            release_slot(s, pair_id)
            freed += 1
    return freed


def _open_claim_statement() -> Any:
    """`open_claim`'s statement, built once (its annotator and project are bound parameters): building the
    aliases and the union cost more Python time than running it."""

    def first(status: AssignmentStatus, kind: int) -> Any:
        a = aliased(Assignment)
        live = select(Pair.id).where(Pair.id == a.pair_id, Pair.excluded == false()).exists()
        stale = [a.stale == true()] if status == AssignmentStatus.DONE else []
        return (
            select(a.id.label("id"), literal(kind).label("kind"))
            .where(
                a.annotator_id == bindparam("annotator_id"),
                a.project_id == bindparam("project_id"),
                a.status == status,
                live,
                *stale,
            )
            .order_by(a.id)
            .limit(1)
            .subquery()
        )

    active, stale = first(AssignmentStatus.ACTIVE, 0), first(AssignmentStatus.DONE, 1)
    both = union_all(select(active.c.id, active.c.kind), select(stale.c.id, stale.c.kind)).subquery()
    return select(Assignment).join(both, both.c.id == Assignment.id).order_by(both.c.kind).limit(1)


_OPEN_CLAIM = _open_claim_statement()


def open_claim(s: Session, project_id: int, annotator_id: int) -> Assignment | None:
    """The annotator's unfinished work: an unlabelled claim, else a label made on an outdated document. One
    statement: two index seeks (``ix_assignments_annotator_queue``) of one row each, the claim first."""
    return s.scalar(_OPEN_CLAIM, {"annotator_id": annotator_id, "project_id": project_id})


def candidates(
    s: Session, project_id: int, annotator_id: int, n: int, limit: int, *, order_by: Sequence[Any] = ()
) -> list[int]:
    """Pairs with a free slot that the annotator never had, least-covered first, then by query (one indexed
    range scan of ix_pairs_queue with an index probe of uq_assignments_pair_id_annotator_id per row).
    ``order_by``: ORDER BY terms put between the coverage and the query (`store.judges.candidate_order`)."""
    mine = exists().where(Assignment.pair_id == Pair.id, Assignment.annotator_id == annotator_id)
    stmt = (
        select(Pair.id)
        .where(Pair.project_id == project_id, Pair.excluded == false(), Pair.claimed < n, ~mine)
        .order_by(Pair.claimed, *order_by, Pair.query_id, Pair.id)
        .limit(limit)
    )
    return list(s.scalars(stmt))


_CLAIM_LOCK = 0x51F0_C1A1  # PostgreSQL advisory lock class of the claims of a project (key: the project id)
_SHARED_LOCK = text("SELECT pg_advisory_xact_lock_shared(:c, :p)")


def claim_lock(s: Session, project_id: int) -> None:
    """Hold the project's claim lock in shared mode until the transaction ends (PostgreSQL; SQLite
    serialises writers already). Claims share it; a settings change that lowers N takes it exclusively
    (`settings_lock`), so no claim is in flight while N changes and every claim reads the N in force."""
    if s.connection().dialect.name == "postgresql":
        s.connection().execute(_SHARED_LOCK, {"c": _CLAIM_LOCK, "p": project_id})


def settings_lock(s: Session, project_id: int) -> None:
    """Hold the project's claim lock exclusively until the transaction ends: waits for the claims in flight
    to commit and keeps new ones out (see `claim_lock`)."""
    if s.connection().dialect.name == "postgresql":
        s.execute(text("SELECT pg_advisory_xact_lock(:c, :p)"), {"c": _CLAIM_LOCK, "p": project_id})


def current_n(s: Session, project_id: int) -> int:
    """The project's annotators per pair as committed now (read after `claim_lock`)."""
    return int(s.execute(select(Project.annotators_per_pair).where(Project.id == project_id)).scalar_one())


def seek_slot(s: Session, project_id: int, annotator_id: int, *, order_by: Sequence[Any] = ()) -> int | None:
    """Take a slot of the first pair in queue order that has one free and that the annotator never had, in one
    statement: ``UPDATE pairs SET claimed = claimed + 1 WHERE id = (SELECT ... LIMIT 1) RETURNING id``.
    N (annotators per pair) is read in the statement, as committed when it starts (a subquery: after
    `claim_lock`, that is the N in force, with no statement of its own).

    On PostgreSQL the inner SELECT is ``FOR NO KEY UPDATE SKIP LOCKED``: a pair another claim is taking right
    now is passed over instead of waited for, and the lock does not block the foreign-key checks
    (``FOR KEY SHARE``) of labels and claims being written on the same pair. Skipped rows are why None is not
    proof that nothing is left: callers then look once more without skipping (`candidates`, `take_slot`).
    On SQLite writers are serialised, so the statement simply takes the first candidate."""
    postgresql = s.connection().dialect.name == "postgresql"
    stmt = _SEEK[postgresql] if not order_by else _seek_statement(postgresql, order_by)
    params = {"b_project": project_id, "b_annotator": annotator_id}
    return s.connection().execute(stmt, params).scalar()  # Core: the ORM's bulk-DML path costs more


def _seek_statement(postgresql: bool, order_by: Sequence[Any]) -> Any:
    """`seek_slot`'s UPDATE (project and annotator as bound parameters)."""
    project_id = bindparam("b_project", type_=Pair.__table__.c.project_id.type)
    limit = select(Project.annotators_per_pair).where(Project.id == project_id).scalar_subquery()
    annotator = bindparam("b_annotator", type_=Assignment.__table__.c.annotator_id.type)
    mine = exists().where(Assignment.pair_id == Pair.id, Assignment.annotator_id == annotator)
    pick = (
        select(Pair.id)
        .where(Pair.project_id == project_id, Pair.excluded == false(), Pair.claimed < limit, ~mine)
        .order_by(Pair.claimed, *order_by, Pair.query_id, Pair.id)
        .limit(1)
    )
    if postgresql:
        pick = pick.with_for_update(skip_locked=True, key_share=True)
    return (
        update(Pair)
        .where(Pair.id == pick.scalar_subquery().correlate(None), Pair.claimed < limit)
        .values(claimed=Pair.claimed + 1)
        .returning(Pair.id)
    )


_SEEK = {pg: _seek_statement(pg, ()) for pg in (False, True)}  # the default order, built once


def take_slot(s: Session, pair_id: int, n: int) -> bool:
    stmt = (
        update(Pair)
        .where(Pair.id == pair_id, Pair.claimed < n, Pair.excluded == false())
        .values(claimed=Pair.claimed + 1)
    )
    return rowcount(s.execute(stmt, execution_options={"synchronize_session": False})) == 1


def release_slot(s: Session, pair_id: int) -> None:
    """Give a slot back; the project's "nothing left" markers clear at commit (`store.exhausted`)."""
    project_id = s.execute(
        update(Pair)
        .where(Pair.id == pair_id, Pair.claimed > 0)
        .values(claimed=Pair.claimed - 1)
        .returning(Pair.project_id),
        execution_options={"synchronize_session": False},
    ).scalar_one_or_none()
    queue_changed(s, project_id)


def free_slot(s: Session, pair_id: int, n: int) -> int:
    """The lowest slot number in 1..n not held on the pair (n + 1 if all are, which the UNIQUE check rejects
    only if someone else holds it — callers take a slot with `take_slot` first)."""
    held = set(
        s.scalars(select(Assignment.slot).where(Assignment.pair_id == pair_id, Assignment.slot.is_not(None)))
    )
    return next(i for i in range(1, n + 2) if i not in held)


def insert_assignment(
    s: Session, project_id: int, pair_id: int, annotator_id: int, slot: int, *, draw: str | None = None
) -> int:
    """A new claim; ``draw``: how the queue drew the pair (`enums.ClaimDraw`; None: not a queue claim)."""
    now = utcnow()
    stmt = insert(Assignment).values(
        project_id=project_id,
        pair_id=pair_id,
        annotator_id=annotator_id,
        slot=slot,
        status=AssignmentStatus.ACTIVE,
        version=0,
        stale=False,
        draw=draw,
        assigned_at=now,
        updated_at=now,
    )
    return int(s.execute(stmt.returning(Assignment.id)).scalar_one())


def _lowest_free_slot(pair_id: Any) -> Any:
    """The lowest slot number >= 1 not held on the pair, as a scalar subquery (`free_slot` in SQL): 1 if it is
    free, else one past the lowest held slot whose successor is free (an index range of uq(pair_id, slot))."""
    held, after = aliased(Assignment), aliased(Assignment)
    one_held = exists().where(held.pair_id == pair_id, held.slot == 1)
    successor_held = exists().where(after.pair_id == pair_id, after.slot == held.slot + 1)
    gap = (
        select(func.min(held.slot + 1))
        .where(held.pair_id == pair_id, held.slot.is_not(None), ~successor_held)
        .scalar_subquery()
    )
    return select(case((one_held, gap), else_=1)).scalar_subquery()


def insert_claim(s: Session, project_id: int, pair_id: int, annotator_id: int, *, draw: str | None) -> int:
    """A new queue claim on the lowest free slot of the pair (chosen in the INSERT itself, so it costs one
    statement; UNIQUE(pair_id, slot) rejects a slot a concurrent claim took first: IntegrityError, retry).
    Call after taking a slot of the pair's count (`seek_slot`, `take_slot`). Returns the claim's id."""
    now = utcnow()
    params = {"b_project": project_id, "b_pair": pair_id, "b_annotator": annotator_id, "b_draw": draw}
    return int(s.connection().execute(_INSERT_CLAIM, params | {"b_now": now}).scalar_one())


def _insert_claim_statement() -> Any:
    columns = Assignment.__table__.c
    now = bindparam("b_now", type_=columns.assigned_at.type)
    return (
        insert(Assignment)
        .values(
            project_id=bindparam("b_project", type_=columns.project_id.type),
            pair_id=bindparam("b_pair", type_=columns.pair_id.type),
            annotator_id=bindparam("b_annotator", type_=columns.annotator_id.type),
            slot=_lowest_free_slot(bindparam("b_pair", type_=columns.pair_id.type)),
            status=AssignmentStatus.ACTIVE,
            version=0,
            stale=False,
            draw=bindparam("b_draw", type_=columns.draw.type),
            assigned_at=now,
            updated_at=now,
        )
        .returning(Assignment.id)
    )


_INSERT_CLAIM = _insert_claim_statement()


def own_assignment(s: Session, pair_id: int, annotator_id: int) -> Assignment | None:
    return s.scalar(
        select(Assignment).where(Assignment.pair_id == pair_id, Assignment.annotator_id == annotator_id)
    )


def own_count(s: Session, project_id: int, annotator_id: int) -> int:
    stmt = (
        select(func.count())
        .select_from(Assignment)
        .where(
            Assignment.annotator_id == annotator_id,
            Assignment.project_id == project_id,
            Assignment.status.in_(AssignmentStatus.live()),
        )
    )
    return int(s.execute(stmt).scalar_one())


# --------------------------------------------------------------------------------------------- contents
def pair_content(s: Session, pair_id: int, *, guidelines: bool = False) -> dict[str, Any] | None:
    """Query and current document version of a pair, in one query. ``guidelines``: also the project's latest
    guidelines (``guidelines_version`` and ``guidelines``, None when it has none), as two subqueries of
    the same statement."""
    row = s.execute(_PAIR_CONTENT[guidelines], {"pair_id": pair_id}).first()
    if row is None:
        return None
    keys = _CONTENT_KEYS + (("guidelines_version", "guidelines") if guidelines else ())
    return dict(zip(keys, row, strict=True))


_CONTENT_KEYS = (
    "pair_id",
    "project_id",
    "excluded",
    "query_id",
    "query_text",
    "query_meta",
    "doc_id",
    "doc_version",
    "doc_title",
    "doc_text",
    "doc_meta",
)


def _pair_content_statement(guidelines: bool) -> Any:
    def latest(column: Any) -> Any:
        newest = select(column).where(Guidelines.project_id == Pair.project_id)
        return newest.order_by(Guidelines.version.desc()).limit(1).scalar_subquery()

    extra = [latest(Guidelines.version), latest(Guidelines.markdown)] if guidelines else []
    return (
        select(
            Pair.id,
            Pair.project_id,
            Pair.excluded,
            Query.external_id,
            Query.text,
            Query.meta,
            Document.external_id,
            Document.version,
            DocumentVersion.title,
            DocumentVersion.text,
            DocumentVersion.meta,
            *extra,
        )
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .join(
            DocumentVersion,
            and_(DocumentVersion.document_id == Document.id, DocumentVersion.version == Document.version),
        )
        .where(Pair.id == bindparam("pair_id"))
    )


_PAIR_CONTENT = {guidelines: _pair_content_statement(guidelines) for guidelines in (False, True)}


def current_doc_version(s: Session, pair_id: int, *, lock: bool = True) -> int:
    """The pair's current document version, share-locked on PostgreSQL until the transaction ends: a
    concurrent re-import (which updates the document, then flags its claims) waits for a save that read the
    version, or the save waits for the re-import and reads the new version. ``lock=False``: a plain read
    (a read-only transaction, e.g. a preview, cannot lock)."""
    stmt = select(Document.version).join(Pair, Pair.document_id == Document.id).where(Pair.id == pair_id)
    if lock:
        stmt = stmt.with_for_update(read=True, of=Document)
    return int(s.execute(stmt).scalar_one())


# ----------------------------------------------------------------------------------------------- labels
@dataclass(frozen=True, kw_only=True)
class SaveTarget:
    """What a save needs to know of the annotator's claim of a pair, read in one statement (`save_target`)."""

    assignment: Assignment
    doc_version: int  # the pair's current document version, share-locked (as `current_doc_version`)
    query_id: str
    doc_id: str
    doc_title: str | None  # None only if a re-import changed the version while the lock was awaited


def _save_target_statement() -> Any:
    shown = and_(DocumentVersion.document_id == Document.id, DocumentVersion.version == Document.version)
    return (
        select(Assignment, Document.version, Query.external_id, Document.external_id, DocumentVersion.title)
        .join(Pair, Pair.id == Assignment.pair_id)
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .outerjoin(DocumentVersion, shown)
        .where(
            Assignment.pair_id == bindparam("pair_id"),
            Assignment.annotator_id == bindparam("annotator_id"),
        )
    )


_SAVE_TARGET = _save_target_statement().with_for_update(read=True, of=Document)  # SQLite: no lock clause


def save_target(s: Session, pair_id: int, annotator_id: int) -> SaveTarget | None:
    """The annotator's claim of the pair (None: they have none) with the pair's current document version,
    share-locked on PostgreSQL until the transaction ends (``FOR SHARE OF documents``, see
    `current_doc_version`), and the query's, document's and title's text a label shows. The title comes from
    an outer join: if the lock waited for a re-import, PostgreSQL re-checks the locked row only, and the
    title of the new version is then None (read it with `pair_content`)."""
    row = s.execute(_SAVE_TARGET, {"pair_id": pair_id, "annotator_id": annotator_id}).first()
    if row is None:
        return None
    a, version, query_id, doc_id, title = row
    return SaveTarget(assignment=a, doc_version=version, query_id=query_id, doc_id=doc_id, doc_title=title)


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


def current_labels(s: Session, project_id: int) -> dict[str, np.ndarray]:
    """Every current label of the project as int64 columns: pair_id, annotator_id, grade, stale (0/1),
    label_id.

    One read of the covering index ``ix_assignments_gate`` (``assignments`` caches the current grade and label
    id), in bulk (see `int_columns`); grade and stale travel packed in one integer (grade * 2 + stale)."""
    sql = (
        "SELECT pair_id, annotator_id, grade * 2 + CASE WHEN stale THEN 1 ELSE 0 END, label_id "
        f"FROM assignments WHERE project_id = %s AND status = '{AssignmentStatus.DONE}'"
    )
    data = int_columns(s, sql, project_id, ncols=4)
    return {
        "pair_id": data[:, 0].copy(),
        "annotator_id": data[:, 1].copy(),
        "grade": data[:, 2] >> 1,
        "stale": data[:, 2] & 1,
        "label_id": data[:, 3].copy(),
    }


def pair_rows(s: Session, project_id: int) -> dict[str, np.ndarray]:
    """Every pair of the project as int64 columns: pair_id, query_id (internal id), excluded (0/1)."""
    sql = (
        "SELECT id, query_id, CASE WHEN excluded THEN 1 ELSE 0 END FROM pairs WHERE project_id = %s "
        "ORDER BY id"
    )
    data = int_columns(s, sql, project_id, ncols=3)
    return {"pair_id": data[:, 0].copy(), "query_id": data[:, 1].copy(), "excluded": data[:, 2].astype(bool)}


def pair_external_ids(s: Session, project_id: int) -> dict[int, tuple[str, str]]:
    """pair id → (query external id, document external id) of every pair of the project."""
    sql = (
        "SELECT p.id, q.external_id, d.external_id FROM pairs p JOIN queries q ON q.id = p.query_id "
        "JOIN documents d ON d.id = p.document_id WHERE p.project_id = %s"
    )
    return {r[0]: (r[1], r[2]) for r in fetch_rows(s, sql, project_id)}


def query_names(s: Session, project_id: int) -> dict[int, str]:
    return dict(s.execute(select(Query.id, Query.external_id).where(Query.project_id == project_id)).all())


def int_columns(s: Session, sql: str, *params: Any, ncols: int) -> np.ndarray:
    """The rows of an all-integer, NULL-free ``SELECT ... FROM ...`` as an (n, ncols) int64 array.

    PostgreSQL: the server packs every row into 8-byte big-endian integers and concatenates them
    (``string_agg(int8send(..) || ..)``) into one bytea that numpy reads at once — no Python object per value
    (a row count guards against NULLs). SQLite: ``fetchall`` flattened with ``numpy.fromiter``."""
    conn = s.connection()
    if conn.dialect.name != "postgresql":
        rows = fetch_rows(s, sql, *params)
        flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=len(rows) * ncols)
        return flat.reshape(len(rows), ncols)
    packed = " || ".join(f"int8send(c{i}::int8)" for i in range(ncols))
    query = f"SELECT count(*), string_agg({packed}, ''::bytea) FROM ({_numbered(sql, ncols)}) AS t"
    count, data = fetch_rows(s, query, *params)[0]
    values = np.frombuffer(data or b"", dtype=">i8").astype(np.int64)
    if len(values) != count * ncols:
        raise ValueError(f"int_columns: NULL values in {sql!r}")
    return values.reshape(count, ncols)


def _numbered(sql: str, ncols: int) -> str:
    """Wrap ``SELECT a, b, ... FROM`` so its columns are named c0..c{n-1}."""
    head, rest = sql.split(" FROM ", 1)
    columns = _split_columns(head.removeprefix("SELECT "))
    if len(columns) != ncols:
        raise ValueError(f"expected {ncols} columns in {sql!r}")
    return "SELECT " + ", ".join(f"{c} AS c{i}" for i, c in enumerate(columns)) + " FROM " + rest


def _split_columns(text: str) -> list[str]:
    out, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
            continue
        depth += (ch == "(") - (ch == ")")
        current += ch
    return [*out, current.strip()]


def priors(s: Session, pair_ids: Sequence[int]) -> dict[int, list[tuple[str, int]]]:
    """pair id → [(prior qrels name, grade), ...]."""
    if not pair_ids:
        return {}
    stmt = (
        select(Pair.id, PriorJudgment.source, PriorJudgment.grade)
        .join(
            PriorJudgment,
            and_(PriorJudgment.query_id == Pair.query_id, PriorJudgment.document_id == Pair.document_id),
        )
        .where(Pair.id.in_(list(pair_ids)))
        .order_by(Pair.id, PriorJudgment.source)
    )
    out: dict[int, list[tuple[str, int]]] = {}
    for pid, source, grade in s.execute(stmt):
        out.setdefault(pid, []).append((source, grade))
    return out


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


def adjudications_by_id(s: Session, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    ids = sorted(set(ids))
    for start in range(0, len(ids), 5000):
        stmt = (
            select(
                Adjudication.id,
                User.username,
                Adjudication.grade,
                Adjudication.reason,
                Adjudication.created_at,
            )
            .outerjoin(User, User.id == Adjudication.reviewer_id)
            .where(Adjudication.id.in_(ids[start : start + 5000]))
        )
        for aid, reviewer, grade, reason, at in s.execute(stmt):
            out[aid] = {
                "reviewer": reviewer or "system",
                "grade": grade,
                "reason": reason,
                "created_at": at.isoformat(),
            }
    return out


def pair_origins(s: Session, pair_ids: Sequence[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    ids = sorted(set(pair_ids))
    for start in range(0, len(ids), 5000):
        stmt = select(Pair.id, Pair.origin).where(Pair.id.in_(ids[start : start + 5000]))
        out.update(dict(s.execute(stmt).all()))
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


def annotator_counts(s: Session, project_id: int) -> list[tuple[int, str, int, bool]]:
    """(annotator_id, status, count, stale) groups of the project's assignments."""
    stmt = (
        select(Assignment.annotator_id, Assignment.status, Assignment.stale, func.count())
        .where(Assignment.project_id == project_id)
        .group_by(Assignment.annotator_id, Assignment.status, Assignment.stale)
    )
    return [(a, st, int(c), bool(stale)) for a, st, stale, c in s.execute(stmt)]


def available_count(s: Session, project_id: int, annotator_id: int, n: int) -> int:
    """How many pairs the annotator could still claim now."""
    mine = exists().where(Assignment.pair_id == Pair.id, Assignment.annotator_id == annotator_id)
    stmt = (
        select(func.count())
        .select_from(Pair)
        .where(Pair.project_id == project_id, Pair.excluded == false(), Pair.claimed < n, ~mine)
    )
    return int(s.execute(stmt).scalar_one())


# ------------------------------------------------------------------------------------------ adjudication
def latest_adjudications(s: Session, project_id: int) -> dict[str, np.ndarray]:
    """The latest adjudication of each adjudicated pair as columns: pair_id, id, grade, label_state."""
    rows = fetch_rows(
        s,
        "SELECT pair_id, id, grade, label_state FROM adjudications WHERE project_id = %s ORDER BY id",
        project_id,
    )
    latest = {r[0]: r for r in rows}
    values = list(latest.values())
    return {
        "pair_id": np.array([r[0] for r in values], dtype=np.int64),
        "id": np.array([r[1] for r in values], dtype=np.int64),
        "grade": np.array([r[2] for r in values], dtype=np.int64),
        "label_state": np.array([r[3] for r in values], dtype=object),
    }


def adjudication_of(s: Session, project_id: int, pair_id: int) -> Adjudication | None:
    stmt = (
        select(Adjudication)
        .where(Adjudication.project_id == project_id, Adjudication.pair_id == pair_id)
        .order_by(Adjudication.id.desc())
        .limit(1)
    )
    return s.scalar(stmt)


def adjudication_by_request(s: Session, reviewer_id: int | None, request_id: str) -> Adjudication | None:
    """The adjudication the reviewer (None: the system actor) saved with this idempotency key, if any."""
    who = (
        Adjudication.reviewer_id.is_(None) if reviewer_id is None else Adjudication.reviewer_id == reviewer_id
    )
    stmt = select(Adjudication).where(who, Adjudication.request_id == request_id).order_by(Adjudication.id)
    return s.scalar(stmt.limit(1))


def insert_adjudication(s: Session, **fields: Any) -> Adjudication:
    row = Adjudication(created_at=utcnow(), **fields)
    s.add(row)
    s.flush()
    return row
