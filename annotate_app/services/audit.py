"""The audit log: who did what, when (append-only; admins read it)."""

from __future__ import annotations

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role, authorize
from annotate_app.services.errors import InvalidInput
from annotate_app.services.inputs import check_int, check_text
from annotate_app.services.types import AuditInfo
from annotate_app.store import users as q
from annotate_app.store.db import Database

__all__ = ["audit_log"]


def audit_log(
    db: Database,
    actor: Actor,
    *,
    project: ProjectRef | None = None,
    action: str | None = None,
    limit: int = 100,
    before_id: int | None = None,
) -> list[AuditInfo]:
    """Audit entries, newest first (admin); page with ``before_id`` = the last ``id`` seen."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise InvalidInput(f"limit must be an int in [1, 10000]; got {limit!r}")
    check_int(before_id, "before_id", optional=True)
    if action is not None:
        check_text(action, "action")
    with db.read() as s:
        project_id = None
        if project is not None:
            project_id = open_project(s, actor, project, Role.ADMIN, "read the audit log")[1].id
        else:
            authorize(s, actor, Role.ADMIN, "read the audit log")
        rows = q.audit_entries(s, project_id=project_id, action=action, limit=limit, before_id=before_id)
        return [
            AuditInfo(
                id=r.id,
                at=r.at,
                actor=r.actor_name,
                action=r.action,
                project_id=r.project_id,
                target=r.target,
                details=dict(r.details),
            )
            for r in rows
        ]
