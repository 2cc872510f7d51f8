"""Who is calling: roles, the `Actor` every service receives, passwords and login throttling.

Roles rank ``annotator < reviewer < admin``: a service that needs a reviewer also accepts an admin. Only
admins manage users and projects; reviewers see agreement, adjudicate, release and export; annotators judge
pairs of the projects they are members of.

`SYSTEM` is the local administrator the CLI acts as: the CLI runs on the server with direct database access,
so whoever can run it already owns the data. It is recognised by identity (``actor is SYSTEM``); an
equal-looking copy is refused. It cannot judge pairs (labels belong to real users).

An `Actor` from `authenticate` carries the user's ``session_version``; every service call re-reads the user
and refuses a stale actor (password reset, role change or deactivation bumps the version), so the app can keep
the actor in a signed cookie and still lose access at once when the user is changed.

Login throttling lives in the database (works across app replicas): after `MAX_FAILED_LOGINS` failures in a
row an account is locked for 30 s, doubling with each further failure up to 15 minutes; a success resets it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy.orm import Session

from annotate_app.services.errors import InvalidInput, PermissionDenied
from annotate_app.store import users as q
from annotate_app.store.db import Database, unstorable
from annotate_app.store.enums import AuditAction
from annotate_app.store.models import User, utcnow

__all__ = [
    "Role",
    "Actor",
    "SYSTEM",
    "authenticate",
    "resolve_actor",
    "actor_of",
    "authorize",
    "hash_password",
    "verify_password",
    "check_password",
    "check_username",
    "audit",
    "MAX_FAILED_LOGINS",
    "LOCK_BASE",
    "LOCK_MAX",
    "MIN_PASSWORD_LENGTH",
]

MAX_FAILED_LOGINS = 5
LOCK_BASE = timedelta(seconds=30)
LOCK_MAX = timedelta(minutes=15)
MIN_PASSWORD_LENGTH = 8
_USERNAME = re.compile(r"[a-z0-9][a-z0-9._-]{1,63}")
_HASHER = PasswordHasher()
_DUMMY_HASH = _HASHER.hash("qrelforge-timing-equaliser")


class Role(StrEnum):
    ANNOTATOR = "annotator"
    REVIEWER = "reviewer"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return ("annotator", "reviewer", "admin").index(self.value)

    @classmethod
    def parse(cls, value: str | Role) -> Role:
        try:
            return cls(value)
        except ValueError:
            raise InvalidInput(f"role must be 'annotator', 'reviewer' or 'admin'; got {value!r}") from None


@dataclass(frozen=True)
class Actor:
    """The caller of a service. Build it with `authenticate` or `resolve_actor`, never by hand."""

    user_id: int | None
    username: str
    role: Role
    session_version: int = 0

    def at_least(self, role: Role) -> bool:
        return self.role.rank >= Role(role).rank


def actor_of(user: User) -> Actor:
    """The Actor of a user row (for the functions that make the caller: logins, single sign-on, a new
    password)."""
    return Actor(
        user_id=user.id, username=user.username, role=Role(user.role), session_version=user.session_version
    )


SYSTEM = Actor(user_id=None, username="system", role=Role.ADMIN, session_version=0)


# -------------------------------------------------------------------------------------------- passwords
def hash_password(password: str) -> str:
    """An argon2id hash (argon2-cffi defaults, RFC 9106 low-memory profile)."""
    return _HASHER.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _HASHER.verify(password_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError, UnicodeEncodeError):
        return False


def check_password(password: str, username: str = "") -> str:
    """The password if acceptable: a str of 8–1024 characters, not the username."""
    if not isinstance(password, str) or not MIN_PASSWORD_LENGTH <= len(password) <= 1024:
        shown = f"{len(password)} characters" if isinstance(password, str) else type(password).__name__
        raise InvalidInput(f"password must be {MIN_PASSWORD_LENGTH} to 1024 characters; got {shown}")
    if unstorable(password.replace("\x00", "")):
        raise InvalidInput("password must be Unicode text (it holds a lone surrogate)")
    if username and password.lower() == username.lower():
        raise InvalidInput("password must not be the username")
    return password


def check_username(username: str) -> str:
    """The normalised (lower-case) username: 2–64 of a-z, 0-9, '.', '_', '-', starting with a letter or
    digit."""
    name = username.strip().lower() if isinstance(username, str) else username
    if not isinstance(name, str) or not _USERNAME.fullmatch(name) or name == SYSTEM.username:
        raise InvalidInput(
            f"username must be 2-64 characters of a-z, 0-9, '.', '_', '-' (not 'system'); got {username!r}"
        )
    return name


# ------------------------------------------------------------------------------------------------ login
def authenticate(db: Database, username: str, password: str, *, now: datetime | None = None) -> Actor:
    """Check a login; returns the Actor, or raises PermissionDenied.

    Unknown user, wrong password and deactivated account give the same message. A locked account is refused
    without checking the password. The slow hash check runs outside any transaction.
    """
    now = now or utcnow()
    name = username.strip().lower() if isinstance(username, str) else ""
    with db.read() as s:
        user = q.by_name(s, name)
        snapshot = None if user is None else (user.id, user.password_hash, user.active, user.locked_until)
    if snapshot is None or not snapshot[2]:
        verify_password(_DUMMY_HASH, str(password))
        _log_failure(db, None, name, "unknown or inactive user")
        raise PermissionDenied("invalid username or password")
    user_id, stored_hash, _, locked_until = snapshot
    if locked_until is not None and locked_until > now:
        wait = math.ceil((locked_until - now).total_seconds())
        raise PermissionDenied(f"too many failed logins for {name!r}; try again in {wait} s")
    if not verify_password(stored_hash, str(password)):
        _register_failure(db, user_id, name, now)
        raise PermissionDenied("invalid username or password")
    return _register_success(db, user_id, password, stored_hash, now)


def _register_failure(db: Database, user_id: int, name: str, now: datetime) -> None:
    with db.write() as s:
        failures = q.bump_failures(s, user_id)
        if failures >= MAX_FAILED_LOGINS:
            delay = min(LOCK_BASE * 2 ** (failures - MAX_FAILED_LOGINS), LOCK_MAX)
            q.set_fields(s, user_id, locked_until=now + delay)
        q.add_audit(
            s,
            actor_id=user_id,
            actor_name=name,
            action=AuditAction.LOGIN_FAILED,
            project_id=None,
            details={"failed_logins": failures},
        )


def _log_failure(db: Database, user_id: int | None, name: str, why: str) -> None:
    shown = "".join("?" if unstorable(c) else c for c in name[:64]) or "?"  # whatever was typed, storable
    with db.write() as s:
        q.add_audit(
            s,
            actor_id=user_id,
            actor_name=shown,
            action=AuditAction.LOGIN_FAILED,
            project_id=None,
            details={"why": why},
        )


def _register_success(db: Database, user_id: int, password: str, stored_hash: str, now: datetime) -> Actor:
    fields: dict = {"failed_logins": 0, "locked_until": None, "last_login_at": now}
    if _HASHER.check_needs_rehash(stored_hash):
        fields["password_hash"] = hash_password(password)
    with db.write() as s:
        q.set_fields(s, user_id, **fields)
        user = q.get(s, user_id)
        if user is None:  # deleted between the two transactions
            raise PermissionDenied("invalid username or password")
        return actor_of(user)


def resolve_actor(db: Database, user_id: int, session_version: int) -> Actor:
    """The Actor for a remembered login (e.g. a cookie holding user id and session version)."""
    with db.read() as s:
        user = q.get(s, user_id)
        if user is None or not user.active or user.session_version != session_version:
            raise PermissionDenied("session expired; log in again")
        return actor_of(user)


# ------------------------------------------------------------------------------------------ authorising
def authorize(s: Session, actor: Actor, minimum: Role | str, action: str) -> User | None:
    """Check that ``actor`` may do ``action`` (needs role ``minimum``); returns the fresh user row (None for
    SYSTEM). Raises PermissionDenied for a stale, deactivated or insufficient actor."""
    minimum = Role(minimum)
    if actor is SYSTEM:
        return None
    if not isinstance(actor, Actor) or actor.user_id is None:
        raise PermissionDenied(f"{action}: not logged in")
    user = q.get(s, actor.user_id)
    if user is None or not user.active or user.session_version != actor.session_version:
        raise PermissionDenied(f"{action}: session of {actor.username!r} expired; log in again")
    if Role(user.role).rank < minimum.rank:
        raise PermissionDenied(
            f"{user.username} ({user.role}) may not {action}: {minimum.value} role required"
        )
    return user


def audit(
    s: Session,
    actor: Actor,
    action: str,
    *,
    project_id: int | None = None,
    target: str = "",
    details: dict | None = None,
) -> None:
    """Append an audit entry in the caller's transaction."""
    q.add_audit(
        s,
        actor_id=actor.user_id,
        actor_name=actor.username,
        action=action,
        project_id=project_id,
        target=target,
        details=details,
    )
