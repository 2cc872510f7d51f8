"""Projects: settings, guidelines (versioned Markdown) and members.

Admins create projects, change settings and choose members; annotators see only their projects. The grade
scale is fixed once a label exists, and N cannot drop below a pair's live claims.

>>> check_settings(ProjectSettings(), annotators_per_pair=3).annotators_per_pair
3
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project, settings_of
from annotate_app.services._gold_rules import qualify_labelled, reevaluate
from annotate_app.services.auth import Actor, Role, audit, authorize
from annotate_app.services.errors import Conflict, InvalidInput, NotFound
from annotate_app.services.inputs import check_int, check_text
from annotate_app.services.types import GuidelinesInfo, MemberInfo, ProjectInfo, ProjectSettings
from annotate_app.store import annotation
from annotate_app.store import projects as projects_store
from annotate_app.store import users as users_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AgreementMode, AuditAction, EvidenceMode, Statistic, Weights
from annotate_app.store.models import Project, utcnow

__all__ = [
    "create_project",
    "list_projects",
    "get_project",
    "update_settings",
    "set_guidelines",
    "get_guidelines",
    "assign",
    "unassign",
    "list_members",
    "check_settings",
    "ProjectRef",
    "MAX_GUIDELINES",
]

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_CHOICES: dict[str, type[StrEnum]] = {
    "statistic": Statistic,
    "agreement_mode": AgreementMode,
    "weights": Weights,
    "evidence": EvidenceMode,
}
_INTS = {
    "annotators_per_pair": (1, 50),
    "relevance_cutoff": (-1000, 1000),
    "min_reason_length": (0, 1000),
    "claim_timeout_minutes": (1, 7 * 24 * 60),
}
MAX_GUIDELINES = 200_000
_GOLD_WINDOWS = ("qualify_pairs", "pause_pairs")  # None (the rule is off) or an int in [1, MAX_GOLD_WINDOW]
_GOLD_BARS = ("qualify_accuracy", "pause_accuracy")  # accuracies in (0, 1]
MAX_GOLD_WINDOW = 10_000


# -------------------------------------------------------------------------------------------- settings
def check_settings(base: ProjectSettings, **changes: Any) -> ProjectSettings:
    """``base`` with ``changes`` applied, validated; unknown names and bad values raise InvalidInput."""
    known = {f.name for f in dataclasses.fields(ProjectSettings)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise InvalidInput(f"unknown setting {unknown[0]!r}; known: {', '.join(sorted(known))}")
    for name, value in changes.items():
        _check_value(name, value)
    scale = _check_scale(changes.get("grade_scale", base.grade_scale))
    choices = {k: _CHOICES[k](v) for k, v in changes.items() if k in _CHOICES}
    merged = dataclasses.replace(base, **{**changes, **choices, "grade_scale": scale})
    if isinstance(merged.threshold, numbers.Real):
        merged = dataclasses.replace(merged, threshold=float(merged.threshold))
    qualify, pause = merged.qualify_pairs, merged.pause_pairs
    merged = dataclasses.replace(
        merged,
        qualify_pairs=None if qualify is None else int(qualify),
        qualify_accuracy=float(merged.qualify_accuracy),
        pause_pairs=None if pause is None else int(pause),
        pause_accuracy=float(merged.pause_accuracy),
    )
    grades = merged.grades
    if not grades[0] < merged.relevance_cutoff <= grades[-1]:
        raise InvalidInput(
            f"relevance_cutoff must be above the lowest grade {grades[0]} and at most the highest "
            f"{grades[-1]}; got {merged.relevance_cutoff}"
        )
    return merged


def _check_value(name: str, value: Any) -> None:
    if name in _CHOICES and value not in tuple(_CHOICES[name]):
        choices = ", ".join(repr(c.value) for c in _CHOICES[name])
        raise InvalidInput(f"{name} must be one of {choices}; got {value!r}")
    if name in _INTS:
        low, high = _INTS[name]
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Integral)
            or not low <= int(value) <= high
        ):
            raise InvalidInput(f"{name} must be an int in [{low}, {high}]; got {value!r}")
    if name in ("allow_self_adjudication", "gold_feedback") and not isinstance(value, bool):
        raise InvalidInput(f"{name} must be a bool; got {value!r}")
    if (
        name in _GOLD_WINDOWS
        and value is not None
        and (
            isinstance(value, bool)
            or not isinstance(value, numbers.Integral)
            or not 1 <= int(value) <= MAX_GOLD_WINDOW
        )
    ):
        raise InvalidInput(f"{name} must be an int in [1, {MAX_GOLD_WINDOW}] or None (off); got {value!r}")
    if name in _GOLD_BARS and (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or math.isnan(value)
        or not 0 < float(value) <= 1
    ):
        raise InvalidInput(f"{name} must be a number in (0, 1]; got {value!r}")
    if (
        name == "passage_threshold"
        and value is not None
        and (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or math.isnan(value)
            or not -1 <= float(value) <= 1
        )
    ):
        raise InvalidInput(f"passage_threshold must be a number in [-1, 1] or None; got {value!r}")
    if name == "threshold" and (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or math.isnan(value)
        or not -1 <= float(value) <= 1
    ):
        raise InvalidInput(f"threshold must be a number in [-1, 1]; got {value!r}")


def _check_scale(scale: Any) -> tuple[tuple[int, str], ...]:
    """(grade, label) pairs, grades distinct ints in increasing order, 2 to 20 of them, labels non-empty."""
    if isinstance(scale, str) or not isinstance(scale, Sequence) or not 2 <= len(scale) <= 20:
        raise InvalidInput(f"grade_scale must be 2 to 20 (grade, label) pairs; got {scale!r}")
    out = []
    for item in scale:
        ok = isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2
        if (
            not ok
            or isinstance(item[0], bool)
            or not isinstance(item[0], numbers.Integral)
            or not isinstance(item[1], str)
            or not item[1].strip()
        ):
            raise InvalidInput(f"grade_scale entries must be (int grade, non-empty label); got {item!r}")
        out.append((int(item[0]), item[1].strip()))
    if any(a[0] >= b[0] for a, b in zip(out, out[1:], strict=False)):
        raise InvalidInput(f"grade_scale grades must increase strictly; got {[g for g, _ in out]}")
    return tuple(out)


def _info(s: Session, project: Project) -> ProjectInfo:
    return ProjectInfo(
        id=project.id,
        name=project.name,
        title=project.title,
        settings=settings_of(project),
        guidelines_version=projects_store.guidelines_version(s, project.id),
        created_at=project.created_at,
    )


# -------------------------------------------------------------------------------------------- projects
def create_project(
    db: Database,
    actor: Actor,
    name: str,
    *,
    title: str = "",
    guidelines: str = "",
    settings: ProjectSettings | None = None,
    **changes: Any,
) -> ProjectInfo:
    """A new project (admin). ``name``: 1–64 of a-z 0-9 _ -; settings default to `ProjectSettings()`."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidInput(f"project name must be 1-64 characters of a-z, 0-9, '_', '-'; got {name!r}")
    checked = check_settings(settings or ProjectSettings(), **changes)
    with db.write() as s:
        authorize(s, actor, Role.ADMIN, "create projects")
        if projects_store.find(s, name) is not None:
            raise Conflict(f"project {name!r} already exists")
        fields = dataclasses.asdict(checked)
        fields["grade_scale"] = [list(x) for x in checked.grade_scale]
        project = projects_store.insert_project(
            s, name=name, title=check_text(title or name, "title")[:200], created_by=actor.user_id, **fields
        )
        if guidelines:
            projects_store.add_guidelines(s, project.id, _check_markdown(guidelines), actor.user_id)
        audit(
            s,
            actor,
            AuditAction.PROJECT_CREATED,
            project_id=project.id,
            target=name,
            details={"settings": fields},
        )
        return _info(s, project)


def list_projects(db: Database, actor: Actor) -> list[ProjectInfo]:
    """The projects the caller may see (annotators: their own)."""
    with db.read() as s:
        user = authorize(s, actor, Role.ANNOTATOR, "list projects")
        rows = (
            projects_store.member_projects(s, user.id)
            if user is not None and user.role == Role.ANNOTATOR
            else projects_store.all_projects(s)
        )
        return [_info(s, p) for p in rows]


def get_project(db: Database, actor: Actor, project: ProjectRef) -> ProjectInfo:
    with db.read() as s:
        _, row = open_project(s, actor, project, Role.ANNOTATOR, "see projects")
        return _info(s, row)


def update_settings(db: Database, actor: Actor, project: ProjectRef, **changes: Any) -> ProjectInfo:
    """Change settings (admin), e.g. ``update_settings(db, me, "demo", threshold=0.6)``. When qualification
    starts being asked for (``qualify_pairs`` set), members who already labelled are marked qualified
    (audited): the rule is for new annotators. A change of the gold rules (their windows or bars)
    re-evaluates every member's standing in the same transaction (`_gold_rules.reevaluate`, audited)."""
    with db.write() as s:
        _, row = open_project(s, actor, project, Role.ADMIN, "change project settings")
        old = settings_of(row)
        new = check_settings(old, **changes)
        _guard_settings(s, row, old, new)
        fields = {k: v for k, v in dataclasses.asdict(new).items() if getattr(old, k) != v}
        if "grade_scale" in fields:
            fields["grade_scale"] = [list(x) for x in new.grade_scale]
        if fields:
            projects_store.update_project(s, row.id, **fields)
            audit(s, actor, AuditAction.SETTINGS_CHANGED, project_id=row.id, target=row.name, details=fields)
            if old.qualify_pairs is None and new.qualify_pairs is not None:
                qualify_labelled(s, actor, row, utcnow())  # members who labelled before keep counting
            if {*_GOLD_WINDOWS, *_GOLD_BARS} & fields.keys():
                s.refresh(row)
                reevaluate(s, actor, row)  # the new rules take effect now, not at the next gold label
        s.refresh(row)
        return _info(s, row)


def _guard_settings(s: Session, project: Project, old: ProjectSettings, new: ProjectSettings) -> None:
    if new.grades != old.grades and annotation.label_count(s, project.id) > 0:
        raise Conflict("the grade scale's grades cannot change once labels exist (labels may be renamed)")
    if new.annotators_per_pair < old.annotators_per_pair:
        annotation.settings_lock(s, project.id)  # waits for the claims in flight; later claims read the new N
        most = annotation.max_claimed(s, project.id)
        if most > new.annotators_per_pair:
            raise Conflict(
                f"annotators_per_pair cannot drop to {new.annotators_per_pair}: a pair already has "
                f"{most} annotators"
            )


# -------------------------------------------------------------------------------------------- guidelines
def _check_markdown(markdown: Any) -> str:
    if not isinstance(markdown, str) or not markdown.strip() or len(markdown) > MAX_GUIDELINES:
        raise InvalidInput(
            f"guidelines must be non-empty Markdown text of at most {MAX_GUIDELINES} characters"
        )
    return check_text(markdown, "guidelines")


def set_guidelines(db: Database, actor: Actor, project: ProjectRef, markdown: str) -> int:
    """Store a new guidelines version (admin or reviewer); returns its number. Old versions are kept."""
    text = _check_markdown(markdown)
    with db.write() as s:
        _, row = open_project(s, actor, project, Role.REVIEWER, "edit guidelines")
        version = projects_store.add_guidelines(s, row.id, text, actor.user_id)
        audit(
            s,
            actor,
            AuditAction.GUIDELINES_CHANGED,
            project_id=row.id,
            target=row.name,
            details={"version": version},
        )
        return version


def get_guidelines(
    db: Database, actor: Actor, project: ProjectRef, version: int | None = None
) -> GuidelinesInfo | None:
    """The latest guidelines (or ``version``); None when the project has none."""
    check_int(version, "version", optional=True)
    with db.read() as s:
        _, row = open_project(s, actor, project, Role.ANNOTATOR, "read guidelines")
        g = projects_store.latest_guidelines(s, row.id, version)
        if g is None:
            if version is not None:
                raise NotFound(f"guidelines version {version} of project {row.name!r} does not exist")
            return None
        author = (
            users_store.names_of(s, [g.created_by]).get(g.created_by, "system") if g.created_by else "system"
        )
        return GuidelinesInfo(version=g.version, markdown=g.markdown, author=author, created_at=g.created_at)


# -------------------------------------------------------------------------------------------- members
def assign(
    db: Database, actor: Actor, project: ProjectRef, usernames: Sequence[str], *, quota: int | None = None
) -> list[MemberInfo]:
    """Make users annotators of a project (admin), optionally capping how many pairs each takes.

    Pairs are then handed out on demand by `queue.next_pair`, least-covered first, so the load stays balanced;
    ``quota`` (None: no cap) bounds a fast annotator's share. Re-assigning updates the quota.
    """
    if quota is not None and (isinstance(quota, bool) or not isinstance(quota, int) or quota < 1):
        raise InvalidInput(f"quota must be None or an int >= 1; got {quota!r}")
    check_int(quota, "quota", optional=True)
    if isinstance(usernames, str) or not all(isinstance(u, str) for u in usernames):
        raise InvalidInput(f"usernames must be a list of names; got {usernames!r}")
    names = [str(u).strip().lower() for u in usernames]
    if not names:
        raise InvalidInput("usernames must name at least one user")
    with db.write() as s:
        _, row = open_project(s, actor, project, Role.ADMIN, "assign annotators")
        users = users_store.by_names(s, names)
        missing = [n for n in names if n not in users]
        if missing:
            raise NotFound(f"user {missing[0]!r} does not exist")
        inactive = [n for n in names if not users[n].active]
        if inactive:
            raise Conflict(f"user {inactive[0]!r} is deactivated")
        for name in names:
            projects_store.upsert_member(s, row.id, users[name].id, quota)
        audit(
            s,
            actor,
            AuditAction.MEMBERS_ASSIGNED,
            project_id=row.id,
            target=row.name,
            details={"users": names, "quota": quota},
        )
        return _members(s, row.id)


def unassign(db: Database, actor: Actor, project: ProjectRef, username: str) -> list[MemberInfo]:
    """Remove a member (admin). Their labels stay; their unlabelled claims expire and go to others."""
    with db.write() as s:
        _, row = open_project(s, actor, project, Role.ADMIN, "remove annotators")
        user = users_store.by_name(s, str(username).strip().lower())
        if user is None or not projects_store.remove_member(s, row.id, user.id):
            raise NotFound(f"{username!r} is not a member of project {row.name!r}")
        freed = annotation.expire_claims(s, row.id, annotator_id=user.id)
        audit(
            s,
            actor,
            AuditAction.MEMBER_REMOVED,
            project_id=row.id,
            target=user.username,
            details={"claims_freed": freed},
        )
        return _members(s, row.id)


def list_members(db: Database, actor: Actor, project: ProjectRef) -> list[MemberInfo]:
    with db.read() as s:
        _, row = open_project(s, actor, project, Role.REVIEWER, "list members")
        return _members(s, row.id)


def _members(s: Session, project_id: int) -> list[MemberInfo]:
    return [
        MemberInfo(username=u.username, role=u.role, quota=quota)
        for u, quota in projects_store.members(s, project_id)
    ]
