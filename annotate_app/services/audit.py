"""The audit log: who did what, when (append-only; admins read it), filtered by project, action and user,
paged with ``offset`` and counted by `count_audit`."""

from __future__ import annotations

from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role, authorize
from annotate_app.services.errors import InvalidInput
from annotate_app.services.inputs import check_count, check_int, check_text
from annotate_app.services.types import AuditInfo
from annotate_app.store import users
from annotate_app.store.db import Database

__all__ = ["audit_log", "count_audit"]

MAX_LIMIT = 10_000


def audit_log(
    db: Database,
    actor: Actor,
    *,
    project: ProjectRef | None = None,
    action: str | None = None,
    limit: int = 100,
    before_id: int | None = None,
    offset: int = 0,
    username: str | None = None,
) -> list[AuditInfo]:
    """Audit entries, newest first (admin), of one ``project``, ``action`` and acting ``username`` if given;
    page with ``before_id`` = the last ``id`` seen, or with ``offset`` (entries to skip)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be an int in [1, {MAX_LIMIT}]; got {limit!r}")
    check_int(before_id, "before_id", optional=True)
    check_count(offset, "offset", 0)
    with db.read() as s:
        project_id = _scope(s, actor, project, action, username)
        rows = users.audit_entries(
            s,
            project_id=project_id,
            action=action,
            limit=limit,
            before_id=before_id,
            actor_name=username,
            offset=offset,
        )
        return [
            AuditInfo(
                id=r.id,
                at=r.at,
                actor=r.actor_name,
                action=r.action,
                project_id=r.project_id,
                target=r.target,
                details=dict(r.details),
                project=name,
            )
            for r, name in rows
        ]


def count_audit(
    db: Database,
    actor: Actor,
    *,
    project: ProjectRef | None = None,
    action: str | None = None,
    username: str | None = None,
) -> int:
    """How many audit entries `audit_log` pages through with the same filters (admin)."""
    with db.read() as s:
        project_id = _scope(s, actor, project, action, username)
        return users.audit_count(s, project_id=project_id, action=action, actor_name=username)


def _scope(
    s: Session, actor: Actor, project: ProjectRef | None, action: str | None, username: str | None
) -> int | None:
    """Check the filters and the admin role; the project's id (None: every project)."""
    if action is not None:
        check_text(action, "action")
    if username is not None:
        check_text(username, "username")
    if project is None:
        authorize(s, actor, Role.ADMIN, "read the audit log")
        return None
    return open_project(s, actor, project, Role.ADMIN, "read the audit log")[1].id
