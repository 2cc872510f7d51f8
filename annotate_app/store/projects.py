"""Queries on projects, guidelines and members."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, bindparam, delete, func, insert, select, update
from sqlalchemy.orm import Session

from annotate_app.store.db import MAX_ID, MIN_ID, rowcount, unstorable
from annotate_app.store.exhausted import queue_changed
from annotate_app.store.models import Guidelines, Project, ProjectMember, User, utcnow

__all__ = [
    "find",
    "caller_rows",
    "all_projects",
    "member_projects",
    "insert_project",
    "update_project",
    "latest_guidelines",
    "guidelines_version",
    "add_guidelines",
    "members",
    "member",
    "upsert_member",
    "remove_member",
]


def find(s: Session, ref: int | str) -> Project | None:
    """The project with id ``ref`` (an int) or name ``ref``; None for a reference no project can have (an id
    outside the 32-bit range, a name holding a NUL)."""
    if isinstance(ref, int) and not isinstance(ref, bool):
        return s.get(Project, ref) if MIN_ID <= ref <= MAX_ID else None
    name = str(ref)
    return None if unstorable(name) else s.scalar(select(Project).where(Project.name == name))


def _caller_statement(by_name: bool) -> Any:
    """`caller_rows`' statement, built once: the user, outer-joined to the project and the membership."""
    match = Project.name == bindparam("ref") if by_name else Project.id == bindparam("ref")
    member = and_(ProjectMember.project_id == Project.id, ProjectMember.user_id == User.id)
    return (
        select(User, Project, ProjectMember)
        .select_from(User)
        .outerjoin(Project, match)
        .outerjoin(ProjectMember, member)
        .where(User.id == bindparam("user_id"))
    )


_CALLER_BY_ID, _CALLER_BY_NAME = _caller_statement(False), _caller_statement(True)
_HELD = "qrelforge.held_rows"  # Session.info key: rows kept referenced for the transaction's life


def caller_rows(
    s: Session, user_id: int, ref: int | str
) -> tuple[User | None, Project | None, ProjectMember | None]:
    """The user, the project ``ref`` (id or name, as `find`) and the user's membership of it, in one
    statement; each is None when missing. The rows stay referenced for the session's life (the identity map
    holds rows weakly), so `users.get`, `member` and `find` by id then cost no statement."""
    key: int | str = ref if isinstance(ref, int) and not isinstance(ref, bool) else str(ref)
    if (isinstance(key, int) and not MIN_ID <= key <= MAX_ID) or (isinstance(key, str) and unstorable(key)):
        return s.get(User, user_id), None, None  # no project can have this reference
    stmt = _CALLER_BY_NAME if isinstance(key, str) else _CALLER_BY_ID
    row = s.execute(stmt, {"user_id": user_id, "ref": key}).first()
    if row is None:
        return None, None, None
    s.info.setdefault(_HELD, []).append(tuple(row))
    return row[0], row[1], row[2]


def all_projects(s: Session) -> list[Project]:
    return list(s.scalars(select(Project).order_by(Project.name)))


def member_projects(s: Session, user_id: int) -> list[Project]:
    stmt = (
        select(Project)
        .join(ProjectMember, ProjectMember.project_id == Project.id)
        .where(ProjectMember.user_id == user_id)
        .order_by(Project.name)
    )
    return list(s.scalars(stmt))


def insert_project(s: Session, **fields: Any) -> Project:
    project = Project(created_at=utcnow(), **fields)
    s.add(project)
    s.flush()
    return project


def update_project(s: Session, project_id: int, **fields: Any) -> None:
    s.execute(update(Project).where(Project.id == project_id).values(**fields))
    queue_changed(s, project_id)  # N raised, timeout changed, ...: the "nothing left" markers clear


def latest_guidelines(s: Session, project_id: int, version: int | None = None) -> Guidelines | None:
    stmt = select(Guidelines).where(Guidelines.project_id == project_id)
    if version is not None:
        return s.scalar(stmt.where(Guidelines.version == version))
    return s.scalar(stmt.order_by(Guidelines.version.desc()).limit(1))


def guidelines_version(s: Session, project_id: int) -> int | None:
    return s.scalar(select(func.max(Guidelines.version)).where(Guidelines.project_id == project_id))


def add_guidelines(s: Session, project_id: int, markdown: str, created_by: int | None) -> int:
    version = (guidelines_version(s, project_id) or 0) + 1
    s.execute(
        insert(Guidelines).values(
            project_id=project_id,
            version=version,
            markdown=markdown,
            created_by=created_by,
            created_at=utcnow(),
        )
    )
    return version


def members(s: Session, project_id: int) -> list[tuple[User, int | None]]:
    stmt = (
        select(User, ProjectMember.quota)
        .join(ProjectMember, ProjectMember.user_id == User.id)
        .where(ProjectMember.project_id == project_id)
        .order_by(User.username)
    )
    return list(s.execute(stmt))


def member(s: Session, project_id: int, user_id: int) -> ProjectMember | None:
    return s.get(ProjectMember, (project_id, user_id))


def upsert_member(s: Session, project_id: int, user_id: int, quota: int | None) -> None:
    row = member(s, project_id, user_id)
    if row is None:
        s.add(ProjectMember(project_id=project_id, user_id=user_id, quota=quota, added_at=utcnow()))
    else:
        row.quota = quota
    s.flush()
    queue_changed(s, project_id)  # a new member or a raised quota: the "nothing left" markers clear


def remove_member(s: Session, project_id: int, user_id: int) -> int:
    stmt = delete(ProjectMember).where(
        ProjectMember.project_id == project_id, ProjectMember.user_id == user_id
    )
    queue_changed(s, project_id)
    return rowcount(s.execute(stmt))
