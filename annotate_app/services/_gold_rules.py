"""The gold rules inside a transaction: an annotator's standing (qualifying, qualified, paused) read from
their loaded membership row, the decisions a saved gold label may bring (qualify, pause), and every member's
re-evaluation when the rules change.

Private to `annotate_app.services`: `queue`, `labels`, `projects` and `qualification` share it. Its functions
take an open session and loaded rows, never ``(db, actor)``; the role checks are the callers'.

The rules: with ``qualify_pairs`` N set, a member's labels count once their latest N gold labels (since the
last resume) reach ``qualify_accuracy`` X; with ``pause_pairs`` M set, a member whose latest M gold labels
(since the last resume) fall below ``pause_accuracy`` Y is paused: the queue gives them nothing until a
reviewer resumes them, which restarts the window. Accuracy is exact agreement with the expected grade.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy.orm import Session

from annotate_app.services.auth import Actor, audit
from annotate_app.store import gold as gold_store
from annotate_app.store import qualification as qualification_store
from annotate_app.store.enums import AuditAction
from annotate_app.store.models import Project, ProjectMember, utcnow

__all__ = [
    "Standing",
    "Window",
    "RULES_CHANGED",
    "standing",
    "qualifying",
    "window",
    "after_gold_label",
    "graded_members",
    "reevaluate",
    "qualify_labelled",
]


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
    _decide(s, actor, project, member, username, graded)


def graded_members(s: Session, project: Project) -> list[tuple[ProjectMember, str, list[tuple[int, int]]]]:
    """Every membership of the project (by username) with the member's (grade, expected) gold labels since
    their last resume, latest first. Three reads: the gold pairs, their labels, and the members."""
    expected = gold_store.gold_grades(s, project.id)
    graded: dict[int, list[tuple[datetime, int, int]]] = defaultdict(list)
    for annotator_id, pair_id, grade, at in gold_store.gold_labels(s, project.id):
        graded[annotator_id].append((at, grade, expected[pair_id]))
    out = []
    for member, name in qualification_store.member_rows(s, project.id):
        since = member.gold_since
        mine = [
            (g, e) for at, g, e in reversed(graded.get(member.user_id, [])) if since is None or at > since
        ]
        out.append((member, name, mine))
    return out


def reevaluate(s: Session, actor: Actor, project: Project) -> None:
    """Apply the project's gold rules, as they are now, to every member (after a change of the rules): qualify
    those whose window passes, pause those whose full window falls below the bar, and lift a pause the rules
    no longer make (the pause rule off, or the window no longer full and below the bar; the window is not
    restarted). Each change is audited, with ``why``: the rules changed."""
    for member, name, graded in graded_members(s, project):
        if member.paused_at is not None:
            figures = _pause_window(project, graded)
            if figures is None or not (figures.full and not figures.passes):
                qualification_store.mark_member(s, project.id, member.user_id, paused_at=None)
                _audit(s, actor, AuditAction.ANNOTATOR_RESUMED, project, name, figures, why=RULES_CHANGED)
        _decide(s, actor, project, member, name, graded, why=RULES_CHANGED)


RULES_CHANGED = "the gold rules changed"
"""The ``why`` of the audit rows `reevaluate` writes."""


def _pause_window(project: Project, graded: list[tuple[int, int]]) -> Window | None:
    if project.pause_pairs is None:
        return None
    return window(graded, project.pause_pairs, project.pause_accuracy)


def _decide(
    s: Session,
    actor: Actor,
    project: Project,
    member: ProjectMember,
    username: str,
    graded: list[tuple[int, int]],
    why: str | None = None,
) -> None:
    """Qualify and/or pause the member by ``graded`` (their gold labels since the last resume, latest
    first)."""
    now = utcnow()
    if qualifying(project, member) and project.qualify_pairs is not None:
        figures = window(graded, project.qualify_pairs, project.qualify_accuracy)
        if figures.full and figures.passes:
            qualification_store.mark_member(s, project.id, member.user_id, qualified_at=now)
            _audit(s, actor, AuditAction.ANNOTATOR_QUALIFIED, project, username, figures, why=why)
    pause = _pause_window(project, graded)
    if member.paused_at is None and pause is not None and pause.full and not pause.passes:
        qualification_store.mark_member(s, project.id, member.user_id, paused_at=now)
        _audit(s, actor, AuditAction.ANNOTATOR_PAUSED, project, username, pause, why=why)


def _audit(
    s: Session,
    actor: Actor,
    action: str,
    project: Project,
    username: str,
    figures: Window | None,
    why: str | None = None,
) -> None:
    details: dict[str, object] = {} if why is None else {"why": why}
    if figures is not None:
        details |= {"gold_pairs": figures.pairs, "correct": figures.correct, "bar": figures.bar}
    audit(s, actor, action, project_id=project.id, target=username, details=details)


def qualify_labelled(s: Session, actor: Actor, project: Project, at: datetime) -> list[str]:
    """When a project starts asking for qualification: members who already labelled in it keep counting
    (marked qualified at ``at``, each audited). Returns their usernames."""
    names = qualification_store.qualify_labelled(s, project.id, at)
    for name in names:
        details = {"why": "labelled before the project asked for qualification"}
        audit(s, actor, AuditAction.ANNOTATOR_QUALIFIED, project_id=project.id, target=name, details=details)
    return names
