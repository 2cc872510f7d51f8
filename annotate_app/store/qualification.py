"""The gold rules' reads and writes: an annotator's latest gold labels, their membership's qualification and
pause marks, and which members' labels do not count yet."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import exists, select, update
from sqlalchemy.orm import Session

from annotate_app.store.enums import AssignmentStatus, ClaimDraw
from annotate_app.store.models import Assignment, GoldPair, ProjectMember, User

__all__ = ["UNCOUNTED_SQL", "counted_sql", "latest_gold", "mark_member", "qualify_labelled", "member_rows"]

UNCOUNTED_SQL = (
    "SELECT m.user_id FROM project_members m JOIN projects p ON p.id = m.project_id "
    "WHERE m.project_id = %s AND p.qualify_pairs IS NOT NULL AND m.qualified_at IS NULL"
)
"""The members of project ``%s`` whose labels do not count yet: the project asks for qualification and they
have not passed it (`counted_sql` leaves their labels out)."""


def counted_sql(alias: str = "", param: str = "%s") -> str:
    """The condition on ``assignments`` (as ``alias``; "" for the bare table) that a label counts: not a gold
    draw's, and not by a member who waits for qualification (`UNCOUNTED_SQL`). Its one parameter, the
    project id, is written ``param`` (``%s`` for `bulk.fetch_rows`, ``:name`` for ``sqlalchemy.text``). The
    gate's labels (hence releases), the passages' agreement and the judges' calibration read it."""
    col = f"{alias}." if alias else ""
    uncounted = UNCOUNTED_SQL.replace("%s", param)
    gold = f"({col}draw IS NULL OR {col}draw <> '{ClaimDraw.GOLD}')"
    return f"{gold} AND {col}annotator_id NOT IN ({uncounted})"


def latest_gold(
    s: Session, project_id: int, annotator_id: int, since: datetime | None, limit: int
) -> list[tuple[int, int]]:
    """(grade, expected grade) of the annotator's ``limit`` latest current labels on the project's gold pairs
    (any draw) made after ``since`` (None: all), latest first: an index range of
    ``ix_assignments_annotator_queue`` probing ``gold_pairs`` by primary key."""
    stmt = (
        select(Assignment.grade, GoldPair.grade)
        .join(GoldPair, GoldPair.pair_id == Assignment.pair_id)
        .where(
            Assignment.annotator_id == annotator_id,
            Assignment.project_id == project_id,
            Assignment.status == AssignmentStatus.DONE,
            Assignment.grade.is_not(None),
        )
        .order_by(Assignment.updated_at.desc(), Assignment.id.desc())
        .limit(limit)
    )
    if since is not None:
        stmt = stmt.where(Assignment.updated_at > since)
    return [(int(g), int(e)) for g, e in s.execute(stmt) if g is not None]


def mark_member(s: Session, project_id: int, user_id: int, **values: Any) -> bool:
    """Set ``qualified_at``, ``paused_at`` and/or ``gold_since`` of a membership (and of its loaded row).
    Returns whether the member exists."""
    row = s.get(ProjectMember, (project_id, user_id))
    if row is None:
        return False
    for name, value in values.items():
        setattr(row, name, value)
    s.flush()
    return True


def qualify_labelled(s: Session, project_id: int, at: datetime) -> list[str]:
    """Mark qualified, at ``at``, every member not yet qualified who already has a label in the project.
    Returns their usernames, sorted."""
    labelled = exists().where(
        Assignment.project_id == project_id,
        Assignment.annotator_id == ProjectMember.user_id,
        Assignment.status == AssignmentStatus.DONE,
    )
    found = dict(
        s.execute(
            select(ProjectMember.user_id, User.username)
            .join(User, User.id == ProjectMember.user_id)
            .where(ProjectMember.project_id == project_id, ProjectMember.qualified_at.is_(None), labelled)
        ).all()
    )
    ids = list(found)
    if ids:
        s.execute(
            update(ProjectMember)
            .where(ProjectMember.project_id == project_id, ProjectMember.user_id.in_(ids))
            .values(qualified_at=at),
            execution_options={"synchronize_session": "fetch"},
        )
    return sorted(found.values())


def member_rows(s: Session, project_id: int) -> list[tuple[ProjectMember, str]]:
    """Every membership of the project with the member's username, by username (one statement)."""
    stmt = (
        select(ProjectMember, User.username)
        .join(User, User.id == ProjectMember.user_id)
        .where(ProjectMember.project_id == project_id)
        .order_by(User.username)
    )
    return [(member, name) for member, name in s.execute(stmt)]
