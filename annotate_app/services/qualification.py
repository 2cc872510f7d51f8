"""Qualification and pause on gold pairs: each member's standing with its figures (reviewer, or the annotator
for themselves), and a reviewer's resume of a paused annotator.

The rules (project settings ``qualify_pairs``/``qualify_accuracy``, ``pause_pairs``/``pause_accuracy``,
applied when a gold label is saved and to every member when they change) are in `services._gold_rules`. A
resume restarts the gold window: only gold labels saved after it count toward the next decision. Every
decision and resume is in the audit log.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, annotator_context, open_project
from annotate_app.services._gold_rules import Standing, Window, graded_members, standing, window
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, NotFound
from annotate_app.services.inputs import check_text
from annotate_app.store import projects as projects_store
from annotate_app.store import qualification as qualification_store
from annotate_app.store import users as users_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction
from annotate_app.store.models import Project, ProjectMember, utcnow

__all__ = ["Standing", "AnnotatorStatus", "STATUS_COLUMNS", "annotator_statuses", "my_status", "resume"]

STATUS_COLUMNS = ("annotator", "status", "window", "gold_pairs", "correct", "accuracy", "bar")
"""The status table's columns, in order (`AnnotatorStatus.row`)."""


@dataclass(frozen=True, kw_only=True)
class AnnotatorStatus:
    """A member's standing and the figures behind it: the latest ``gold_pairs`` gold labels since
    ``since`` (the last resume; None: ever) of the rule that applies, ``correct`` of them exact, against
    ``bar``. The rule: qualification's N and X while qualifying, else the pause rule's M and Y; ``window``
    and ``bar`` are None when no rule applies (then the figures cover every gold label since ``since``)."""

    annotator: str
    status: Standing
    window: int | None
    gold_pairs: int
    correct: int
    bar: float | None
    qualified_at: datetime | None
    paused_at: datetime | None
    since: datetime | None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.gold_pairs if self.gold_pairs else None

    def row(self) -> dict[str, object]:
        """The status table's row (`STATUS_COLUMNS`)."""
        return {
            "annotator": self.annotator,
            "status": str(self.status),
            "window": self.window,
            "gold_pairs": self.gold_pairs,
            "correct": self.correct,
            "accuracy": self.accuracy,
            "bar": self.bar,
        }

    def explain(self) -> str:
        """One plain-text sentence saying why the annotator has this standing."""
        figures = f"{self.correct} of your last {self.gold_pairs} gold pairs were right"
        if self.accuracy is not None:
            figures += f" ({self.accuracy:.0%})"
        if self.status == Standing.PAUSED:
            return (
                f"You are paused: {figures}, below the bar of {self.bar:.0%}. You get no new pairs until a "
                "reviewer resumes you."
            )
        if self.status == Standing.QUALIFYING:
            return (
                f"You are qualifying: your labels count once your last {self.window} gold pairs reach "
                f"{self.bar:.0%} exact accuracy."
            )
        return "You are qualified: your labels count."


def _status(
    project: Project, member: ProjectMember, name: str, graded: list[tuple[int, int]]
) -> AnnotatorStatus:
    """``graded``: the member's (grade, expected) gold labels since their last resume, latest first."""
    state = standing(project, member)
    if state == Standing.QUALIFYING and project.qualify_pairs is not None:
        figures: Window | None = window(graded, project.qualify_pairs, project.qualify_accuracy)
    elif project.pause_pairs is not None:
        figures = window(graded, project.pause_pairs, project.pause_accuracy)
    else:
        figures = None
    pairs = graded if figures is None else graded[: figures.size]
    return AnnotatorStatus(
        annotator=name,
        status=state,
        window=None if figures is None else figures.size,
        gold_pairs=len(pairs),
        correct=sum(g == e for g, e in pairs),
        bar=None if figures is None else figures.bar,
        qualified_at=member.qualified_at,
        paused_at=member.paused_at,
        since=member.gold_since,
    )


def annotator_statuses(db: Database, actor: Actor, project: ProjectRef) -> list[AnnotatorStatus]:
    """Every member's standing with its figures, by username (reviewer). Three reads: the gold pairs, their
    labels, and the members."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see annotators' standing")
        return [_status(proj, member, name, graded) for member, name, graded in graded_members(s, proj)]


def _own(s: Session, proj: Project, member: ProjectMember, name: str) -> AnnotatorStatus:
    sizes = [n for n in (proj.qualify_pairs, proj.pause_pairs) if n is not None]
    limit = max(sizes) if sizes else 1_000_000
    graded = qualification_store.latest_gold(s, proj.id, member.user_id, member.gold_since, limit)
    return _status(proj, member, name, graded)


def my_status(db: Database, actor: Actor, project: ProjectRef) -> AnnotatorStatus:
    """The caller's own standing in a project they judge in, with its figures (any member)."""
    with db.read() as s:
        user, proj = annotator_context(s, actor, project, "see your standing")
        member = projects_store.member(s, proj.id, user.id)
        assert member is not None  # annotator_context checked it
        return _own(s, proj, member, user.username)


def resume(db: Database, actor: Actor, project: ProjectRef, username: str) -> AnnotatorStatus:
    """Resume a paused annotator (reviewer): they get pairs again, and their gold window restarts now (only
    gold labels saved from now on count toward the next decision). Audited.

    Raises:
        NotFound: ``username`` is not a member of the project.
        Conflict: they are not paused.
    """
    name = check_text(username, "username").strip().lower()
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "resume annotators")
        user = users_store.by_name(s, name)
        member = None if user is None else projects_store.member(s, proj.id, user.id)
        if user is None or member is None:
            raise NotFound(f"{username!r} is not a member of project {proj.name!r}")
        if member.paused_at is None:
            raise Conflict(f"{user.username} is not paused in project {proj.name!r}")
        was = _own(s, proj, member, user.username)
        qualification_store.mark_member(s, proj.id, user.id, paused_at=None, gold_since=utcnow())
        details = {"paused_at": _iso(was.paused_at), "gold_pairs": was.gold_pairs, "correct": was.correct}
        audit(
            s, actor, AuditAction.ANNOTATOR_RESUMED, project_id=proj.id, target=user.username, details=details
        )
        return _own(s, proj, member, user.username)


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()
