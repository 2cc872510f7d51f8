"""The "nothing left" markers: a claim that finds nothing records the project's queue epoch, so the next claim
answers "nothing left" without a scan while the epoch holds (at most ``MARKER_TTL``).

A project-wide marker answers every member when no pair has a free slot. Whatever can make a pair claimable
bumps the epoch (`queue_changed`); markers hold the epoch read before the seek, so none hides a freed pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, event, false, func, select, update
from sqlalchemy.orm import Session

from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.models import Assignment, Document, Pair, Project, ProjectMember, utcnow

__all__ = [
    "MARKER_TTL",
    "queue_changed",
    "queue_changed_for_documents",
    "bump_now",
    "mark_exhausted",
    "is_exhausted",
    "is_full",
]

MARKER_TTL = timedelta(seconds=60)  # safety net: a marker older than this is ignored
_NO_SYNC = {"synchronize_session": False}


_PENDING = "qrelforge.queue_changed"  # Session.info key: projects whose epoch moves on at commit


def queue_changed(s: Session, project_id: int | None) -> None:
    """Clear every "nothing left" marker of the project when the transaction commits: one statement, the
    last of the transaction (`_bump_at_commit`), so the project row is never held while waiting on a pair."""
    if project_id is not None:
        s.info.setdefault(_PENDING, set()).add(int(project_id))


def queue_changed_for_documents(s: Session, document_ids: Sequence[int]) -> None:
    """`queue_changed` for the project of these documents (one import's: they share a project)."""
    if document_ids:
        queue_changed(s, s.scalar(select(Document.project_id).where(Document.id == document_ids[0])))


def bump_now(s: Session) -> None:
    """Move the epoch of the projects marked changed in this transaction on (one UPDATE each)."""
    for project_id in sorted(s.info.pop(_PENDING, ())):
        s.execute(
            update(Project).where(Project.id == project_id).values(queue_epoch=Project.queue_epoch + 1),
            execution_options=_NO_SYNC,
        )


@event.listens_for(Session, "before_commit")
def _bump_at_commit(s: Session) -> None:
    if s.info.get(_PENDING):
        bump_now(s)


@event.listens_for(Session, "after_rollback")
def _forget_on_rollback(s: Session) -> None:
    s.info.pop(_PENDING, None)


def _state_statement() -> Any:
    """The oldest open claim of the project, its pairs' lowest live claim count and N (as committed now): one
    SELECT of three one-row index reads. The lowest count is a ``min()`` over ``ix_pairs_queue`` (project,
    excluded, claimed), which PostgreSQL answers from the first index entry; an ``EXISTS (... claimed < N)``
    was planned as a sequential scan of the pairs (N is a parameter there, so the planner guessed a third
    of the rows would match and expected to stop early; with none matching it read them all)."""
    project_id = bindparam("project_id", type_=Project.__table__.c.id.type)
    n = select(Project.annotators_per_pair).where(Project.id == project_id).scalar_subquery()
    oldest = (
        select(func.min(Assignment.assigned_at))
        .where(Assignment.project_id == project_id, Assignment.status == AssignmentStatus.ACTIVE)
        .scalar_subquery()
    )
    lowest = (
        select(func.min(Pair.claimed))
        .where(Pair.project_id == project_id, Pair.excluded == false())
        .scalar_subquery()
    )
    return select(oldest, lowest, n)


_STATE = _state_statement()


def mark_exhausted(s: Session, project_id: int, annotator_id: int, epoch: int, timeout_minutes: int) -> None:
    """Record that a claim at queue epoch ``epoch`` found nothing for the annotator, and, when no pair of the
    project has a free slot, for every member (the project's marker). The markers last MARKER_TTL at most,
    and never beyond the moment the oldest open claim of the project becomes old enough to be freed
    (``timeout_minutes``): time passing makes pairs claimable too."""
    oldest, lowest, n = s.execute(_STATE, {"project_id": project_id}).one()
    until = utcnow() + MARKER_TTL
    if oldest is not None:
        until = min(until, _aware(oldest) + timedelta(minutes=timeout_minutes))
    s.execute(
        update(ProjectMember)
        .where(ProjectMember.project_id == project_id, ProjectMember.user_id == annotator_id)
        .values(exhausted_epoch=epoch, exhausted_until=until),
        execution_options=_NO_SYNC,
    )
    if lowest is None or lowest >= n:  # no free slot: the project's marker, at the epoch read before the seek
        s.execute(
            update(Project)
            .where(Project.id == project_id, Project.queue_epoch == epoch)
            .values(full_epoch=epoch, full_until=until),
            execution_options=_NO_SYNC,
        )


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def is_exhausted(member: ProjectMember | None, project: Project, now: datetime | None = None) -> bool:
    """Whether the member's marker stands: set at the project's current epoch and not yet run out. Reads the
    loaded rows only (no statement)."""
    if member is None or member.exhausted_epoch is None or member.exhausted_until is None:
        return False
    if member.exhausted_epoch != project.queue_epoch:
        return False
    return (now or utcnow()) < _aware(member.exhausted_until)


def is_full(project: Project, now: datetime | None = None) -> bool:
    """Whether the project's marker stands: no pair had a free slot at the current epoch, and it has not run
    out. Reads the loaded row only (no statement)."""
    if project.full_epoch is None or project.full_until is None or project.full_epoch != project.queue_epoch:
        return False
    return (now or utcnow()) < _aware(project.full_until)
