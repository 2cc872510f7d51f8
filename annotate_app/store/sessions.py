"""Queries on login sessions (``sessions``) and on the failed logins of names that are no active user
(``login_throttle``).

A session row is found by the sha256 of the browser's token, never by the token itself. Every function runs in
the caller's transaction; the counters are changed by single UPDATE statements (atomic on both databases).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from annotate_app.store.db import rowcount
from annotate_app.store.models import LoginSession, LoginThrottle

__all__ = [
    "insert_session",
    "by_token",
    "touch",
    "revoke",
    "revoke_user",
    "live_sessions",
    "prune",
    "claim_name",
    "lock_name",
]


def insert_session(
    s: Session,
    *,
    token_sha256: str,
    user_id: int,
    session_version: int,
    method: str,
    user_agent: str,
    now: datetime,
    expires_at: datetime,
) -> LoginSession:
    row = LoginSession(
        token_sha256=token_sha256,
        user_id=user_id,
        session_version=session_version,
        method=method,
        user_agent=user_agent[:300],
        created_at=now,
        last_seen_at=now,
        expires_at=expires_at,
        revoked_at=None,
    )
    s.add(row)
    s.flush()
    return row


def by_token(s: Session, token_sha256: str) -> LoginSession | None:
    return s.scalar(select(LoginSession).where(LoginSession.token_sha256 == token_sha256))


def touch(s: Session, session_id: int, now: datetime) -> None:
    """Record that the session was used at ``now``."""
    s.execute(update(LoginSession).where(LoginSession.id == session_id).values(last_seen_at=now))


def revoke(s: Session, token_sha256: str, now: datetime) -> int:
    """End one session (log out); returns 1 if it was live, else 0."""
    stmt = (
        update(LoginSession)
        .where(LoginSession.token_sha256 == token_sha256, LoginSession.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return rowcount(s.execute(stmt))


def revoke_user(s: Session, user_id: int, now: datetime) -> int:
    """End every session of a user that is not ended yet; returns how many."""
    stmt = (
        update(LoginSession)
        .where(
            LoginSession.user_id == user_id,
            LoginSession.revoked_at.is_(None),
            LoginSession.expires_at > now,
        )
        .values(revoked_at=now)
    )
    return rowcount(s.execute(stmt))


def live_sessions(s: Session, user_id: int, now: datetime) -> list[LoginSession]:
    """A user's sessions that are neither revoked nor expired, oldest first."""
    stmt = (
        select(LoginSession)
        .where(
            LoginSession.user_id == user_id,
            LoginSession.revoked_at.is_(None),
            LoginSession.expires_at > now,
        )
        .order_by(LoginSession.id)
    )
    return list(s.scalars(stmt))


def prune(s: Session, before: datetime) -> int:
    """Delete the sessions that expired before ``before`` and the throttle rows of names that last failed
    before it; returns how many rows went."""
    gone = rowcount(s.execute(delete(LoginSession).where(LoginSession.expires_at < before)))
    stale = delete(LoginThrottle).where(
        LoginThrottle.last_failed_at < before,
        or_(LoginThrottle.locked_until.is_(None), LoginThrottle.locked_until < before),
    )
    return gone + rowcount(s.execute(stale))


def claim_name(s: Session, name_sha256: str, now: datetime) -> int | None:
    """Count one login attempt of a name that is no active user, unless it is locked at ``now``; returns the
    new count, or None when locked."""
    values = {"name_sha256": name_sha256, "failed_logins": 0, "locked_until": None, "last_failed_at": now}
    dialect = s.connection().dialect.name
    upsert = (pg_insert if dialect == "postgresql" else sqlite_insert)(LoginThrottle).values(**values)
    s.execute(upsert.on_conflict_do_nothing(index_elements=["name_sha256"]))
    stmt = (
        update(LoginThrottle)
        .where(
            LoginThrottle.name_sha256 == name_sha256,
            or_(LoginThrottle.locked_until.is_(None), LoginThrottle.locked_until <= now),
        )
        .values(failed_logins=LoginThrottle.failed_logins + 1, last_failed_at=now)
        .returning(LoginThrottle.failed_logins)
    )
    found = s.execute(stmt).scalar_one_or_none()
    return None if found is None else int(found)


def lock_name(s: Session, name_sha256: str, until: datetime) -> None:
    stmt = update(LoginThrottle).where(LoginThrottle.name_sha256 == name_sha256).values(locked_until=until)
    s.execute(stmt)
