"""The gold rules inside a transaction: an annotator's standing (qualifying, qualified, paused) read from
their loaded membership row, and the decisions a saved gold label may bring (qualify, pause).

Private to `annotate_app.services`: `queue`, `labels`, `projects` and `qualification` share it. Its functions
take an open session and loaded rows, never ``(db, actor)``; the role checks are the callers'.

The rules: with ``qualify_pairs`` N set, a member's labels count once their latest N gold labels (since the
last resume) reach ``qualify_accuracy`` X; with ``pause_pairs`` M set, a member whose latest M gold labels
(since the last resume) fall below ``pause_accuracy`` Y is paused: the queue gives them nothing until a
reviewer resumes them, which restarts the window. Accuracy is exact agreement with the expected grade.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy.orm import Session

from annotate_app.services.auth import Actor, audit
from annotate_app.store import qualification as qualification_store
from annotate_app.store.enums import AuditAction
from annotate_app.store.models import Project, ProjectMember, utcnow

__all__ = ["Standing", "Window", "standing", "qualifying", "window", "after_gold_label", "qualify_labelled"]


class Standing(StrEnum):
    """An annotator's standing under the project's gold rules."""

    QUALIFYING = "qualifying"  # the project asks for qualification; their labels do not count yet
    QUALIFIED = "qualified"  # their labels count (also: the project asks for no qualification)
    PAUSED = "paused"  # they get no new pairs until a reviewer resumes them


@dataclass(frozen=True, kw_only=True)
class Window:
    """A rule's figures: the latest ``pairs`` gold labels (at most ``size``), ``correct`` of them exact, and
    the ``bar`` the rule compares the accuracy with."""

    size: int
    pairs: int
    correct: int
    bar: float

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.pairs if self.pairs else None

    @property
    def passes(self) -> bool:
        """Whether the accuracy reaches the bar (no label: it does not)."""
        return self.pairs > 0 and self.correct / self.pairs >= self.bar

    @property
    def full(self) -> bool:
        return self.pairs >= self.size


def qualifying(project: Project, member: ProjectMember | None) -> bool:
    """Whether the member's labels wait for qualification (reads the loaded rows only)."""
    return project.qualify_pairs is not None and member is not None and member.qualified_at is None


def standing(project: Project, member: ProjectMember | None) -> Standing:
    """The member's standing, from the loaded rows (no statement)."""
    if member is not None and member.paused_at is not None:
        return Standing.PAUSED
    return Standing.QUALIFYING if qualifying(project, member) else Standing.QUALIFIED


def window(graded: list[tuple[int, int]], size: int, bar: float) -> Window:
    """The rule's figures over the first ``size`` of ``graded`` ((grade, expected) pairs, latest first)."""
    latest = graded[:size]
    return Window(size=size, pairs=len(latest), correct=sum(g == e for g, e in latest), bar=bar)


def after_gold_label(
    s: Session, actor: Actor, project: Project, member: ProjectMember, username: str
) -> None:
    """Apply the rules after the member saved a label on a gold pair: qualify them, pause them, or neither
    (one read of their latest gold labels when a rule applies; each decision is audited)."""
    wants_qualify = qualifying(project, member)
    wants_pause = project.pause_pairs is not None and member.paused_at is None
    if not (wants_qualify or wants_pause):
        return
    sizes = [project.qualify_pairs if wants_qualify else None, project.pause_pairs if wants_pause else None]
    limit = max(n for n in sizes if n is not None)
    graded = qualification_store.latest_gold(s, project.id, member.user_id, member.gold_since, limit)
    now = utcnow()
    if wants_qualify and project.qualify_pairs is not None:
        figures = window(graded, project.qualify_pairs, project.qualify_accuracy)
        if figures.full and figures.passes:
            qualification_store.mark_member(s, project.id, member.user_id, qualified_at=now)
            _audit(s, actor, AuditAction.ANNOTATOR_QUALIFIED, project, username, figures)
    if wants_pause and project.pause_pairs is not None:
        figures = window(graded, project.pause_pairs, project.pause_accuracy)
        if figures.full and not figures.passes:
            qualification_store.mark_member(s, project.id, member.user_id, paused_at=now)
            _audit(s, actor, AuditAction.ANNOTATOR_PAUSED, project, username, figures)


def _audit(s: Session, actor: Actor, action: str, project: Project, username: str, figures: Window) -> None:
    details = {"gold_pairs": figures.pairs, "correct": figures.correct, "bar": figures.bar}
    audit(s, actor, action, project_id=project.id, target=username, details=details)


def qualify_labelled(s: Session, actor: Actor, project: Project, at: datetime) -> list[str]:
    """When a project starts asking for qualification: members who already labelled in it keep counting
    (marked qualified at ``at``, each audited). Returns their usernames."""
    names = qualification_store.qualify_labelled(s, project.id, at)
    for name in names:
        details = {"why": "labelled before the project asked for qualification"}
        audit(s, actor, AuditAction.ANNOTATOR_QUALIFIED, project_id=project.id, target=name, details=details)
    return names
