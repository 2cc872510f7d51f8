"""Who is calling on which project: the session-level checks every service runs inside its transaction.

Private to `annotate_app.services`: the names here are public within the package (the service modules import
them) and take an open session, never ``(db, actor)``; pages and the CLI call the service functions instead.
"""

from __future__ import annotations

import numbers
from typing import Any

from sqlalchemy.orm import Session

from annotate_app.services.auth import SYSTEM, Actor, Role, authorize
from annotate_app.services.errors import InvalidInput, NotFound, PermissionDenied
from annotate_app.services.inputs import check_int
from annotate_app.services.types import ProjectSettings
from annotate_app.store import annotation, projects, releases
from annotate_app.store.enums import AgreementMode, EvidenceMode, Statistic, Weights
from annotate_app.store.models import Project, Release, User

__all__ = [
    "ProjectRef",
    "open_project",
    "annotator_context",
    "settings_of",
    "check_grade",
    "load_release",
    "pair_content",
]

ProjectRef = int | str


def open_project(
    s: Session, actor: Actor, ref: ProjectRef, minimum: Role, action: str
) -> tuple[User | None, Project]:
    """Authorise ``actor`` for ``action`` on project ``ref`` (id or name). Annotators must be members; a
    project an annotator may not see is reported as missing."""
    project, prefetched = _prefetch(s, actor, ref)
    user = authorize(s, actor, minimum, action)
    if not prefetched:
        project = projects.find(s, ref)
    hidden = (
        project is not None
        and user is not None
        and user.role == Role.ANNOTATOR
        and _held_member(s, project.id, user.id) is None
    )
    if project is None or hidden:
        raise NotFound(
            f"project {ref!r} does not exist" + (" or you are not a member" if user is not None else "")
        )
    return user, project


def _prefetch(s: Session, actor: Actor, ref: ProjectRef) -> tuple[Project | None, bool]:
    """Project ``ref``, loaded in one statement with the caller's user row and membership
    (`store.projects.caller_rows`), so that `authorize` and the membership checks then cost no statement;
    (None, False) when there is no logged-in caller to load."""
    if actor is SYSTEM or not isinstance(actor, Actor) or actor.user_id is None:
        return None, False
    user, project, _ = projects.caller_rows(s, actor.user_id, ref)
    return project, user is not None


def annotator_context(s: Session, actor: Actor, project: ProjectRef, action: str) -> tuple[User, Project]:
    """The caller as a judging member of the project (any role may judge, if a member)."""
    user, proj = open_project(s, actor, project, Role.ANNOTATOR, action)
    if user is None:
        raise PermissionDenied(f"{action}: the system actor cannot judge pairs; log in as an annotator")
    if _held_member(s, proj.id, user.id) is None:
        raise PermissionDenied(f"{user.username} is not an annotator of project {proj.name!r}")
    return user, proj


def _held_member(s: Session, project_id: int, user_id: int) -> object | None:
    """The membership row, kept referenced for the session's life (the identity map holds rows weakly), so
    that later look-ups of it in this transaction (`queue.next_pair`'s marker) cost no statement."""
    row = projects.member(s, project_id, user_id)
    if row is not None:
        s.info.setdefault("qrelforge.members", []).append(row)
    return row


def settings_of(project: Project) -> ProjectSettings:
    """The project row's judging and agreement rules."""
    return ProjectSettings(
        grade_scale=tuple((int(g), str(label)) for g, label in project.grade_scale),
        annotators_per_pair=project.annotators_per_pair,
        statistic=Statistic(project.statistic),
        threshold=project.threshold,
        relevance_cutoff=project.relevance_cutoff,
        agreement_mode=AgreementMode(project.agreement_mode),
        weights=Weights(project.weights),
        min_reason_length=project.min_reason_length,
        claim_timeout_minutes=project.claim_timeout_minutes,
        allow_self_adjudication=project.allow_self_adjudication,
        evidence=EvidenceMode(project.evidence),
        passage_threshold=project.passage_threshold,
        qualify_pairs=project.qualify_pairs,
        qualify_accuracy=project.qualify_accuracy,
        pause_pairs=project.pause_pairs,
        pause_accuracy=project.pause_accuracy,
        gold_feedback=bool(project.gold_feedback),
    )


def check_grade(project: Project, grade: object) -> int:
    """``grade`` as an int, if it is one of the project's grades."""
    grades = settings_of(project).grades
    if isinstance(grade, bool) or not isinstance(grade, numbers.Integral) or int(grade) not in grades:
        raise InvalidInput(f"grade must be one of {list(grades)}; got {grade!r}")
    return int(grade)


def load_release(s: Session, project: Project, version: int | None) -> Release:
    """Release ``version`` of the project (None: the latest); NotFound when there is none."""
    if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 1):
        raise InvalidInput(f"version must be an int >= 1 or None (latest); got {version!r:.60}")
    check_int(version, "version", optional=True)
    release = releases.find(s, project.id, version)
    if release is None:
        which = "no release yet" if version is None else f"release {version} does not exist"
        raise NotFound(f"project {project.name!r}: {which}")
    return release


def pair_content(s: Session, pair_id: int, *, guidelines: bool = False) -> dict[str, Any]:
    """The query and current document version of a pair that exists (NotFound otherwise); ``guidelines``: with
    the project's latest guidelines (`store.annotation.contents.pair_content`)."""
    content = annotation.pair_content(s, pair_id, guidelines=guidelines)
    if content is None:
        raise NotFound(f"pair {pair_id} does not exist")
    return content
