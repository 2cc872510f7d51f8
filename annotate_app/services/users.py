"""User administration (admins only, except `change_password` for oneself).

Users are never deleted. Deactivation, role and password changes revoke every session of the user, on every
replica.

>>> # create_user(db, SYSTEM, "alice", "alice-demo", role="annotator")
"""

from __future__ import annotations

from annotate_app.services.auth import (
    Actor,
    Role,
    actor_of,
    audit,
    authorize,
    check_password,
    check_username,
    hash_password,
    verify_password,
)
from annotate_app.services.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from annotate_app.services.inputs import check_text
from annotate_app.services.types import UserInfo
from annotate_app.store import sessions as sessions_q
from annotate_app.store import users as users_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction
from annotate_app.store.models import User, utcnow

__all__ = [
    "create_user",
    "list_users",
    "get_user",
    "set_role",
    "reset_password",
    "change_password",
    "deactivate",
    "reactivate",
    "unlock",
]


def _user_info(user: User) -> UserInfo:
    return UserInfo(
        id=user.id,
        username=user.username,
        display_name=user.display_name,
        role=user.role,
        active=user.active,
        locked_until=user.locked_until,
        last_login_at=user.last_login_at,
        created_at=user.created_at,
    )


def _load(s, username: str) -> User:
    user = users_store.by_name(s, str(username).strip().lower())
    if user is None:
        raise NotFound(f"user {username!r} does not exist")
    return user


def create_user(
    db: Database,
    actor: Actor,
    username: str,
    password: str,
    *,
    role: str = "annotator",
    display_name: str = "",
) -> UserInfo:
    """Add a user (admin). Username: 2–64 of a-z 0-9 . _ - (stored lower-case); password ≥ 8 characters."""
    name, role = check_username(username), Role.parse(role)
    check_password(password, name)
    if not isinstance(display_name, str) or len(display_name) > 200:
        raise InvalidInput(f"display_name must be a str of at most 200 characters; got {display_name!r}")
    check_text(display_name, "display_name")
    hashed = hash_password(password)
    with db.write() as s:
        authorize(s, actor, Role.ADMIN, "add users")
        if users_store.by_name(s, name) is not None:
            raise Conflict(f"user {name!r} already exists")
        user = users_store.insert_user(
            s, username=name, display_name=display_name or name, role=role.value, password_hash=hashed
        )
        audit(s, actor, AuditAction.USER_ADDED, target=name, details={"role": role.value})
        return _user_info(user)


def list_users(db: Database, actor: Actor) -> list[UserInfo]:
    """Every user, by name (admin)."""
    with db.read() as s:
        authorize(s, actor, Role.ADMIN, "list users")
        return [_user_info(u) for u in users_store.all_users(s)]


def get_user(db: Database, actor: Actor, username: str) -> UserInfo:
    """One user: oneself for anyone, any user for an admin."""
    with db.read() as s:
        me = authorize(s, actor, Role.ANNOTATOR, "see users")
        user = _load(s, username)
        if me is not None and me.id != user.id and me.role != Role.ADMIN:
            raise PermissionDenied(f"{me.username} ({me.role}) may not see other users: admin role required")
        return _user_info(user)


def set_role(db: Database, actor: Actor, username: str, role: str) -> UserInfo:
    """Change a user's role (admin). An admin cannot demote themselves (someone must stay admin)."""
    role = Role.parse(role)
    with db.write() as s:
        me = authorize(s, actor, Role.ADMIN, "change roles")
        user = _load(s, username)
        if me is not None and me.id == user.id and role != Role.ADMIN:
            raise Conflict("admins cannot demote themselves; ask another admin")
        old = user.role
        if old != role.value:
            users_store.set_fields(s, user.id, role=role.value, bump_session=True)
            sessions_q.revoke_user(s, user.id, utcnow())
            audit(
                s,
                actor,
                AuditAction.ROLE_CHANGED,
                target=user.username,
                details={"from": old, "to": role.value},
            )
        s.refresh(user)
        return _user_info(user)


def reset_password(db: Database, actor: Actor, username: str, new_password: str) -> UserInfo:
    """Set a new password (admin); ends the user's sessions and lifts a login lock."""
    with db.read() as s:
        authorize(s, actor, Role.ADMIN, "reset passwords")
        name = _load(s, username).username
    hashed = hash_password(check_password(new_password, name))
    with db.write() as s:
        authorize(s, actor, Role.ADMIN, "reset passwords")
        user = _load(s, name)
        users_store.set_fields(
            s,
            user.id,
            password_hash=hashed,
            password_changed_at=utcnow(),
            failed_logins=0,
            locked_until=None,
            bump_session=True,
        )
        sessions_q.revoke_user(s, user.id, utcnow())
        audit(s, actor, AuditAction.PASSWORD_RESET, target=user.username)
        s.refresh(user)
        return _user_info(user)


def change_password(db: Database, actor: Actor, old_password: str, new_password: str) -> Actor:
    """Change one's own password; returns the new Actor (older sessions stop working)."""
    with db.read() as s:
        me = authorize(s, actor, Role.ANNOTATOR, "change their password")
        if me is None:
            raise PermissionDenied("the system actor has no password")
        stored, name = me.password_hash, me.username
    if not verify_password(stored, old_password):
        raise PermissionDenied("current password is wrong")
    hashed = hash_password(check_password(new_password, name))
    with db.write() as s:
        me = authorize(s, actor, Role.ANNOTATOR, "change their password")
        if me is None:
            raise PermissionDenied("the system actor has no password")
        users_store.set_fields(
            s, me.id, password_hash=hashed, password_changed_at=utcnow(), bump_session=True
        )
        sessions_q.revoke_user(s, me.id, utcnow())
        audit(s, actor, AuditAction.PASSWORD_CHANGED, target=name)
        s.refresh(me)
        return actor_of(me)


def _set_active(db: Database, actor: Actor, username: str, active: bool) -> UserInfo:
    with db.write() as s:
        me = authorize(s, actor, Role.ADMIN, "activate or deactivate users")
        user = _load(s, username)
        if me is not None and me.id == user.id:
            raise Conflict("admins cannot deactivate themselves")
        if user.active != active:
            users_store.set_fields(s, user.id, active=active, bump_session=True)
            sessions_q.revoke_user(s, user.id, utcnow())
            audit(
                s,
                actor,
                AuditAction.USER_ACTIVATED if active else AuditAction.USER_DEACTIVATED,
                target=user.username,
            )
        s.refresh(user)
        return _user_info(user)


def deactivate(db: Database, actor: Actor, username: str) -> UserInfo:
    """Disable a user (admin): no more logins, current sessions end. Their labels stay."""
    return _set_active(db, actor, username, False)


def reactivate(db: Database, actor: Actor, username: str) -> UserInfo:
    return _set_active(db, actor, username, True)


def unlock(db: Database, actor: Actor, username: str) -> UserInfo:
    """Lift a login lock (admin)."""
    with db.write() as s:
        authorize(s, actor, Role.ADMIN, "unlock users")
        user = _load(s, username)
        users_store.set_fields(s, user.id, failed_logins=0, locked_until=None)
        audit(s, actor, AuditAction.USER_UNLOCKED, target=user.username)
        s.refresh(user)
        return _user_info(user)
