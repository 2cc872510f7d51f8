"""Who is calling: roles, the `Actor` every service receives, login sessions, passwords and login throttling.

Roles rank ``annotator < reviewer < admin``. `SYSTEM` (the CLI's local admin) is recognised by identity and
cannot judge. A stale actor (after a password reset, role change or deactivation) is refused. Sessions
live in the database (the browser holds a random id only); failed logins lock the account, and at most
`MAX_CONCURRENT_CHECKS` password checks run at once.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import NoReturn

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy.orm import Session

from annotate_app.services.errors import InvalidInput, NotFound, PermissionDenied
from annotate_app.store import sessions, users
from annotate_app.store.db import Database, unstorable
from annotate_app.store.enums import AuditAction, LoginMethod
from annotate_app.store.models import User, utcnow

__all__ = [
    "Role",
    "Actor",
    "SYSTEM",
    "authenticate",
    "resolve_actor",
    "open_session",
    "check_session",
    "resolve_session",
    "close_session",
    "revoke_sessions",
    "SessionState",
    "SessionCheck",
    "LoginMethod",
    "password_checks",
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
    "MAX_CONCURRENT_CHECKS",
    "CHECK_WAIT_SECONDS",
    "MAX_SESSION_HOURS",
    "BUSY",
]

MAX_FAILED_LOGINS = 5
LOCK_BASE = timedelta(seconds=30)
LOCK_MAX = timedelta(minutes=15)
MIN_PASSWORD_LENGTH = 8
MAX_CONCURRENT_CHECKS = 2  # argon2 checks at once per process (64 MiB each)
CHECK_WAIT_SECONDS = 5.0
MAX_SESSION_HOURS = 24 * 366
BUSY = "too many login attempts at once; try again in a few seconds"
_INVALID = "invalid username or password"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,128}")
_TOUCH_EVERY = timedelta(minutes=1)  # last_seen_at is written at most this often
_KEEP_ENDED = timedelta(days=1)  # expired sessions and idle throttle rows are deleted after this
_SLOTS = threading.BoundedSemaphore(MAX_CONCURRENT_CHECKS)
_COUNTER = threading.Lock()
_checks = 0
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
    global _checks
    with _COUNTER:
        _checks += 1
    try:
        return _HASHER.verify(password_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError, UnicodeEncodeError):
        return False


def password_checks() -> int:
    """How many argon2 password checks (`verify_password`) this process has run: for tests and monitoring."""
    with _COUNTER:
        return _checks


@contextmanager
def _check_slot() -> Iterator[None]:
    """One of the process's `MAX_CONCURRENT_CHECKS` argon2 slots; PermissionDenied(`BUSY`) after waiting
    `CHECK_WAIT_SECONDS` for it."""
    if not _SLOTS.acquire(timeout=CHECK_WAIT_SECONDS):
        raise PermissionDenied(BUSY)
    try:
        yield
    finally:
        _SLOTS.release()


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

    Unknown user, wrong password and deactivated account give the same message. The attempt is counted
    before the password is checked; a locked account is refused without checking it. The slow hash check runs
    outside any transaction, in one of the process's argon2 slots (`BUSY` when none frees up in time).
    """
    now = now or utcnow()
    name = username.strip().lower() if isinstance(username, str) else ""
    with db.read() as s:
        user = users.by_name(s, name)
        found = None if user is None or not user.active else (user.id, user.password_hash)
    if found is None:
        _refuse_unknown(db, name, str(password), now)
    user_id, stored_hash = found
    claimed = _claim(db, user_id, name, now)
    try:
        with _check_slot():
            right = verify_password(stored_hash, str(password))
            rehashed = (
                hash_password(str(password)) if right and _HASHER.check_needs_rehash(stored_hash) else None
            )
    except PermissionDenied:
        with db.write() as s:
            users.refund_attempt(s, user_id, MAX_FAILED_LOGINS)
        raise
    if not right:
        _register_failure(db, user_id, name, claimed, now)
        raise PermissionDenied(_INVALID)
    return _register_success(db, user_id, claimed, rehashed, now)


def _lock_delay(failures: int) -> timedelta:
    """How long the ``failures``-th failure in a row locks an account (at least `MAX_FAILED_LOGINS`)."""
    return min(LOCK_BASE * 2 ** min(failures - MAX_FAILED_LOGINS, 10), LOCK_MAX)


def _claim(db: Database, user_id: int, name: str, now: datetime) -> int:
    """Count the attempt (locking the account if it is the `MAX_FAILED_LOGINS`-th, until a success lifts it);
    returns the count. PermissionDenied when the account is locked."""
    with db.write() as s:
        claimed = users.claim_attempt(s, user_id, now)
        if claimed is not None and claimed >= MAX_FAILED_LOGINS:
            users.set_fields(s, user_id, locked_until=now + _lock_delay(claimed))
        user = users.get(s, user_id) if claimed is None else None
    if claimed is not None:
        return claimed
    if user is None or not user.active or user.locked_until is None:
        raise PermissionDenied(_INVALID)
    wait = max(1, math.ceil((user.locked_until - now).total_seconds()))
    raise PermissionDenied(f"too many failed logins for {name!r}; try again in {wait} s")


def _refuse_unknown(db: Database, name: str, password: str, now: datetime) -> NoReturn:
    """A name that is no active user: counted and locked like an account (by the sha256 of the name), the
    same time spent on a dummy hash while not locked; always the message of a wrong password."""
    key = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    with db.write() as s:
        claimed = sessions.claim_name(s, key, now)
        if claimed is not None and claimed >= MAX_FAILED_LOGINS:
            sessions.lock_name(s, key, now + _lock_delay(claimed))
    if claimed is not None:
        with _check_slot():
            verify_password(_DUMMY_HASH, password)
        _log_failure(db, None, name, "unknown or inactive user")
    raise PermissionDenied(_INVALID)


def _register_failure(db: Database, user_id: int, name: str, failures: int, now: datetime) -> None:
    with db.write() as s:
        users.add_audit(
            s,
            actor_id=user_id,
            actor_name=name,
            action=AuditAction.LOGIN_FAILED,
            project_id=None,
            details={"failed_logins": failures},
        )
        if failures >= MAX_FAILED_LOGINS:
            delay = _lock_delay(failures)
            users.add_audit(
                s,
                actor_id=user_id,
                actor_name=name,
                action=AuditAction.LOGIN_LOCKED,
                project_id=None,
                target=name,
                details={
                    "failed_logins": failures,
                    "locked_seconds": int(delay.total_seconds()),
                    "locked_until": (now + delay).isoformat(),
                },
            )


def _log_failure(db: Database, user_id: int | None, name: str, why: str) -> None:
    shown = "".join("?" if unstorable(c) else c for c in name[:64]) or "?"  # whatever was typed, storable
    with db.write() as s:
        users.add_audit(
            s,
            actor_id=user_id,
            actor_name=shown,
            action=AuditAction.LOGIN_FAILED,
            project_id=None,
            details={"why": why},
        )


def _register_success(db: Database, user_id: int, claimed: int, rehashed: str | None, now: datetime) -> Actor:
    fields: dict = {"last_login_at": now}
    if rehashed is not None:
        fields["password_hash"] = rehashed
    with db.write() as s:
        users.settle_success(s, user_id, claimed, MAX_FAILED_LOGINS, **fields)
        user = users.get(s, user_id)
        if user is None or not user.active:  # deactivated between the two transactions
            raise PermissionDenied(_INVALID)
        return actor_of(user)


def resolve_actor(db: Database, user_id: int, session_version: int) -> Actor:
    """The Actor for a remembered login (e.g. a cookie holding user id and session version)."""
    with db.read() as s:
        user = users.get(s, user_id)
        if user is None or not user.active or user.session_version != session_version:
            raise PermissionDenied("session expired; log in again")
        return actor_of(user)


# --------------------------------------------------------------------------------------------- sessions
class SessionState(StrEnum):
    """Where a login session stands: ``live``, ``unknown`` (no such id: never issued, or malformed),
    ``expired`` (its lifetime passed) or ``ended`` (logged out, or the user's password, role or account
    changed)."""

    LIVE = "live"
    UNKNOWN = "unknown"
    EXPIRED = "expired"
    ENDED = "ended"


@dataclass(frozen=True)
class SessionCheck:
    """What `check_session` found: the Actor (None unless ``state`` is live) and when the session expires."""

    state: SessionState
    actor: Actor | None = None
    expires_at: datetime | None = None


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _well_formed(token: object) -> bool:
    return isinstance(token, str) and _TOKEN.fullmatch(token) is not None


def open_session(
    db: Database,
    actor: Actor,
    *,
    hours: float,
    method: LoginMethod | str = LoginMethod.PASSWORD,
    user_agent: str = "",
    now: datetime | None = None,
) -> str:
    """Start a login session of ``actor`` (a logged-in user, not SYSTEM) that lasts ``hours``; returns its
    token (``secrets.token_urlsafe(32)``), of which only the sha256 is stored."""
    if isinstance(hours, bool) or not isinstance(hours, int | float) or not 0 < hours <= MAX_SESSION_HOURS:
        raise InvalidInput(f"hours must be a number above 0 and at most {MAX_SESSION_HOURS}; got {hours!r}")
    method = LoginMethod(method)
    agent = "".join(c for c in str(user_agent)[:300] if not unstorable(c))
    now = now or utcnow()
    token = secrets.token_urlsafe(32)
    with db.write() as s:
        user = authorize(s, actor, Role.ANNOTATOR, "open a login session")
        if user is None:
            raise PermissionDenied("the system actor cannot open a login session")
        sessions.prune(s, now - _KEEP_ENDED)
        sessions.insert_session(
            s,
            token_sha256=_token_hash(token),
            user_id=user.id,
            session_version=user.session_version,
            method=method.value,
            user_agent=agent,
            now=now,
            expires_at=now + timedelta(hours=hours),
        )
    return token


def check_session(db: Database, token: str, *, now: datetime | None = None) -> SessionCheck:
    """Where the session of ``token`` stands, with the fresh Actor when it is live (records it as seen)."""
    if not _well_formed(token):
        return SessionCheck(state=SessionState.UNKNOWN)
    now = now or utcnow()
    with db.read() as s:
        row = sessions.by_token(s, _token_hash(token))
        if row is None:
            return SessionCheck(state=SessionState.UNKNOWN)
        user = users.get(s, row.user_id)
        session_id, seen, expires = row.id, row.last_seen_at, row.expires_at
        if row.revoked_at is not None:
            return SessionCheck(state=SessionState.ENDED, expires_at=expires)
        if expires <= now:
            return SessionCheck(state=SessionState.EXPIRED, expires_at=expires)
        if user is None or not user.active or user.session_version != row.session_version:
            return SessionCheck(state=SessionState.ENDED, expires_at=expires)
        actor = actor_of(user)
    if now - seen >= _TOUCH_EVERY:
        with db.write() as s:
            sessions.touch(s, session_id, now)
    return SessionCheck(state=SessionState.LIVE, actor=actor, expires_at=expires)


def resolve_session(db: Database, token: str, *, now: datetime | None = None) -> Actor | None:
    """The Actor of a live session, else None (unknown, expired or ended; `check_session` says which)."""
    return check_session(db, token, now=now).actor


def close_session(db: Database, token: str, *, now: datetime | None = None) -> None:
    """Log out: end the session of ``token`` (nothing happens for an unknown or already ended one)."""
    if not _well_formed(token):
        return
    with db.write() as s:
        sessions.revoke(s, _token_hash(token), now or utcnow())


def revoke_sessions(db: Database, actor: Actor, username: str, *, now: datetime | None = None) -> int:
    """End every session of user ``username`` (oneself, or anyone for an admin); returns how many ended."""
    name = str(username).strip().lower()
    with db.write() as s:
        me = authorize(s, actor, Role.ANNOTATOR, "end login sessions")
        user = users.by_name(s, name)
        if me is not None and (user is None or me.id != user.id) and Role(me.role) != Role.ADMIN:
            raise PermissionDenied(
                f"{me.username} ({me.role}) may not end the sessions of other users: admin role required"
            )
        if user is None:
            raise NotFound(f"user {username!r} does not exist")
        return sessions.revoke_user(s, user.id, now or utcnow())


# ------------------------------------------------------------------------------------------ authorising
def authorize(s: Session, actor: Actor, minimum: Role | str, action: str) -> User | None:
    """Check that ``actor`` may do ``action`` (needs role ``minimum``); returns the fresh user row (None for
    SYSTEM). Raises PermissionDenied for a stale, deactivated or insufficient actor."""
    minimum = Role(minimum)
    if actor is SYSTEM:
        return None
    if not isinstance(actor, Actor) or actor.user_id is None:
        raise PermissionDenied(f"{action}: not logged in")
    user = users.get(s, actor.user_id)
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
    users.add_audit(
        s,
        actor_id=actor.user_id,
        actor_name=actor.username,
        action=action,
        project_id=project_id,
        target=target,
        details=details,
    )
