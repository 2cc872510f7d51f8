"""Users, their login sessions and the login throttle."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, CheckConstraint, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from annotate_app.store.enums import LoginMethod
from annotate_app.store.models._base import ROLES, Base, UTCDateTime, fk, one_of

__all__ = ["User", "LoginSession", "LoginThrottle"]


class User(Base):
    __tablename__ = "users"
    __table_args__ = (CheckConstraint(one_of("role", ROLES), name="role"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str] = mapped_column(String(255))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    session_version: Mapped[int] = mapped_column(Integer, default=1)
    password_changed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class LoginSession(Base):
    """A login: the browser's cookie holds a random id whose sha256 is ``token_sha256`` (the id itself is
    never stored). It ends at ``expires_at`` or when revoked (log out; for every session of the user: a
    password change or reset, a role change, a deactivation). ``session_version`` is the user's at login: a
    session outlives no bump of it either."""

    __tablename__ = "sessions"
    __table_args__ = (CheckConstraint(one_of("method", LoginMethod), name="method"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(fk("users.id"), index=True)
    session_version: Mapped[int] = mapped_column(Integer)
    method: Mapped[str] = mapped_column(String(16), default=LoginMethod.PASSWORD.value)
    user_agent: Mapped[str] = mapped_column(String(300), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class LoginThrottle(Base):
    """Failed logins of a name that is no active user (``name_sha256``: the sha256 of the typed name), so
    that unknown names are throttled like accounts without storing what was typed."""

    __tablename__ = "login_throttle"

    name_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_failed_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
