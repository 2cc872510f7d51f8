"""Claims: an annotator takes, keeps, skips or releases a slot of a pair.

`take_slot` is a conditional UPDATE (``claimed < n``), never SELECT ... FOR UPDATE; the assignment takes the
lowest free slot under two UNIQUE constraints. An IntegrityError means a concurrent claim won: retry.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
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

from annotate_app.store.db import rowcount
from annotate_app.store.enums import AssignmentStatus, ClaimDraw
from annotate_app.store.exhausted import queue_changed
from annotate_app.store.models import (
    Assignment,
    Pair,
    Project,
    utcnow,
)

__all__ = [
    "label_count",
    "max_claimed",
    "expire_claims",
    "open_claim",
    "candidates",
    "claim_lock",
    "settings_lock",
    "current_n",
    "seek_slot",
    "take_slot",
    "release_slot",
    "free_slot",
    "insert_assignment",
    "insert_claim",
    "own_assignment",
    "own_count",
    "annotator_counts",
    "available_count",
]


def label_count(s: Session, project_id: int) -> int:
    stmt = (
        select(func.count())
        .select_from(Assignment)
        .where(Assignment.project_id == project_id, Assignment.status == AssignmentStatus.DONE)
    )
    return int(s.execute(stmt).scalar_one())


def max_claimed(s: Session, project_id: int) -> int:
    """The most ordinary live claims any pair of the project holds (gold draws are not counted)."""
    stmt = select(func.coalesce(func.max(Pair.claimed), 0)).where(Pair.project_id == project_id)
    return int(s.execute(stmt).scalar_one())


def expire_claims(
    s: Session,
    project_id: int,
    *,
    annotator_id: int | None = None,
    older_than: datetime | None = None,
    pair_ids: Sequence[int] | None = None,
) -> int:
    """Free unlabelled claims (status ``active``): by annotator, by age and/or by pair. Returns how many. A
    gold draw's claim holds no counted slot (`store.gold`): expiring it gives none back."""
    stmt = select(Assignment.id, Assignment.pair_id, Assignment.draw).where(
        Assignment.project_id == project_id, Assignment.status == AssignmentStatus.ACTIVE
    )
    if annotator_id is not None:
        stmt = stmt.where(Assignment.annotator_id == annotator_id)
    if older_than is not None:
        stmt = stmt.where(Assignment.assigned_at < older_than)
    if pair_ids is not None:
        stmt = stmt.where(Assignment.pair_id.in_(list(pair_ids)))
    freed = 0
    for assignment_id, pair_id, draw in s.execute(stmt.order_by(Assignment.id)).all():
        done = rowcount(
            s.execute(
                update(Assignment)
                .where(Assignment.id == assignment_id, Assignment.status == AssignmentStatus.ACTIVE)
                .values(status=AssignmentStatus.EXPIRED, slot=None, updated_at=utcnow())
            )
        )
        if done:
            if draw != ClaimDraw.GOLD:
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
