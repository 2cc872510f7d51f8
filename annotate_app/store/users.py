"""Queries on users and the audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Select, case, func, insert, or_, select, update
from sqlalchemy.orm import Session

from annotate_app.store.db import unstorable
from annotate_app.store.models import AuditEntry, Project, User, utcnow

__all__ = [
    "get",
    "by_name",
    "by_names",
    "all_users",
    "insert_user",
    "set_fields",
    "bump_failures",
    "claim_attempt",
    "settle_success",
    "refund_attempt",
    "add_audit",
    "audit_entries",
    "audit_count",
    "names_of",
]


def get(s: Session, user_id: int) -> User | None:
    return s.get(User, user_id)


def by_name(s: Session, username: str) -> User | None:
    """The user named ``username`` (None for a name no user can have, e.g. one holding a NUL)."""
    if unstorable(username):
        return None
    return s.scalar(select(User).where(User.username == username))


def by_names(s: Session, usernames: list[str]) -> dict[str, User]:
    names = [n for n in usernames if not unstorable(n)]
    return {u.username: u for u in s.scalars(select(User).where(User.username.in_(names)))}


def names_of(s: Session, user_ids: list[int]) -> dict[int, str]:
    if not user_ids:
        return {}
    rows = s.execute(select(User.id, User.username).where(User.id.in_(sorted(set(user_ids)))))
    return dict(rows.all())


def all_users(s: Session) -> list[User]:
    return list(s.scalars(select(User).order_by(User.username)))


def insert_user(s: Session, **fields: Any) -> User:
    now = utcnow()
    user = User(
        created_at=now, password_changed_at=now, active=True, session_version=1, failed_logins=0, **fields
    )
    s.add(user)
    s.flush()
    return user


def set_fields(s: Session, user_id: int, *, bump_session: bool = False, **fields: Any) -> None:
    values: dict[str, Any] = dict(fields)
    if bump_session:
        values["session_version"] = User.session_version + 1
    s.execute(update(User).where(User.id == user_id).values(**values))


def bump_failures(s: Session, user_id: int) -> int:
    """Atomically add one failed login; returns the new count."""
    stmt = (
        update(User)
        .where(User.id == user_id)
        .values(failed_logins=User.failed_logins + 1)
        .returning(User.failed_logins)
    )
    return int(s.execute(stmt).scalar_one())


def claim_attempt(s: Session, user_id: int, now: datetime) -> int | None:
    """Count a login attempt of an active user before its password is checked, unless the account is locked
    at ``now``: one UPDATE (the row lock makes concurrent claims queue, and each re-reads the lock). Returns
    the new count, or None when the account is locked (or gone, or inactive)."""
    stmt = (
        update(User)
        .where(
            User.id == user_id,
            User.active.is_(True),
            or_(User.locked_until.is_(None), User.locked_until <= now),
        )
        .values(failed_logins=User.failed_logins + 1)
        .returning(User.failed_logins)
    )
    found = s.execute(stmt).scalar_one_or_none()
    return None if found is None else int(found)


def settle_success(s: Session, user_id: int, claimed: int, limit: int, **fields: Any) -> None:
    """A claimed attempt (count ``claimed``) had the right password: forget it and the failures before it;
    the attempts claimed after it stay counted, and keep the lock they set if they are ``limit`` or more."""
    left = User.failed_logins - claimed
    stmt = (
        update(User)
        .where(User.id == user_id)
        .values(
            failed_logins=case((left > 0, left), else_=0),
            locked_until=case((left >= limit, User.locked_until), else_=None),
            **fields,
        )
    )
    s.execute(stmt)


def refund_attempt(s: Session, user_id: int, limit: int) -> None:
    """Give back a claimed attempt whose password was never checked (and the lock it set, unless the count
    left is still ``limit`` or more)."""
    left = User.failed_logins - 1
    stmt = (
        update(User)
        .where(User.id == user_id)
        .values(
            failed_logins=case((left > 0, left), else_=0),
            locked_until=case((left >= limit, User.locked_until), else_=None),
        )
    )
    s.execute(stmt)


def add_audit(
    s: Session,
    *,
    actor_id: int | None,
    actor_name: str,
    action: str,
    project_id: int | None,
    target: str = "",
    details: dict | None = None,
    at: datetime | None = None,
) -> None:
    s.execute(
        insert(AuditEntry).values(
            at=at or utcnow(),
            actor_id=actor_id,
            actor_name=actor_name,
            action=action,
            project_id=project_id,
            target=target[:1000],
            details=details or {},
        )
    )


def _audit_filters(
    stmt: Select, *, project_id: int | None, action: str | None, actor_name: str | None
) -> Select:
    if project_id is not None:
        stmt = stmt.where(AuditEntry.project_id == project_id)
    if action is not None:
        stmt = stmt.where(AuditEntry.action == action)
    if actor_name is not None:
        stmt = stmt.where(AuditEntry.actor_name == actor_name)
    return stmt


def audit_entries(
    s: Session,
    *,
    project_id: int | None,
    action: str | None,
    limit: int,
    before_id: int | None,
    actor_name: str | None = None,
    offset: int = 0,
) -> list[tuple[AuditEntry, str | None]]:
    """Audit entries newest first, each with its project's name (None: no project), filtered; ``offset``
    entries skipped (after ``before_id``), at most ``limit`` returned."""
    stmt = (
        select(AuditEntry, Project.name)
        .outerjoin(Project, Project.id == AuditEntry.project_id)
        .order_by(AuditEntry.id.desc())
        .limit(limit)
    )
    stmt = _audit_filters(stmt, project_id=project_id, action=action, actor_name=actor_name)
    if before_id is not None:
        stmt = stmt.where(AuditEntry.id < before_id)
    if offset:
        stmt = stmt.offset(offset)
    return [(entry, name) for entry, name in s.execute(stmt)]


def audit_count(s: Session, *, project_id: int | None, action: str | None, actor_name: str | None) -> int:
    """How many audit entries the filters of `audit_entries` keep."""
    stmt = select(func.count()).select_from(AuditEntry)
    stmt = _audit_filters(stmt, project_id=project_id, action=action, actor_name=actor_name)
    return int(s.scalar(stmt) or 0)
