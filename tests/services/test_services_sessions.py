"""Server-side login sessions, lockout audits and single sign-on's ``email_verified`` (SQLite, PostgreSQL).

A session is opened for a logged-in user and found again by its token (only the token's sha256 is stored);
it ends when it expires, at log out (`close_session`, so a copy of the cookie stops working), and for every
session of the user at a password change or reset, a role change, a deactivation or `revoke_sessions`.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from sqlalchemy import select

from annotate_app.services import sso, users
from annotate_app.services.auth import (
    MAX_FAILED_LOGINS,
    SYSTEM,
    SessionState,
    authenticate,
    check_session,
    close_session,
    open_session,
    password_checks,
    resolve_session,
    revoke_sessions,
)
from annotate_app.services.errors import InvalidInput, NotFound, PermissionDenied
from annotate_app.store.models import AuditEntry, LoginSession, LoginThrottle, utcnow


def _states(db, tokens: dict[str, str]) -> dict[str, SessionState]:
    return {name: check_session(db, token).state for name, token in tokens.items()}


# ------------------------------------------------------------------------------------------- open/resolve
def test_a_session_resolves_to_its_user_and_only_its_hash_is_stored(actors, demo):
    token = open_session(demo, actors["alice"], hours=1, user_agent="Chromium")
    found = check_session(demo, token)
    assert (found.state, found.actor) == (SessionState.LIVE, actors["alice"])
    assert resolve_session(demo, token) == actors["alice"]
    with demo.read() as s:
        row = s.scalars(select(LoginSession)).one()
        assert row.token_sha256 == hashlib.sha256(token.encode()).hexdigest()
        assert token not in repr([getattr(row, c.key) for c in LoginSession.__table__.columns])
        assert (row.user_agent, row.method, row.revoked_at) == ("Chromium", "password", None)
    assert len(token) >= 43 and open_session(demo, actors["alice"], hours=1) != token


@pytest.mark.parametrize(
    ("token", "state"),
    [
        ("x" * 43, SessionState.UNKNOWN),
        ("not a token", SessionState.UNKNOWN),
        ("<script>alert(1)</script>", SessionState.UNKNOWN),
        ("", SessionState.UNKNOWN),
        (None, SessionState.UNKNOWN),
    ],
)
def test_an_unknown_or_malformed_token_resolves_to_nobody(demo, token, state):
    assert check_session(demo, token).state == state
    assert resolve_session(demo, token) is None
    close_session(demo, token)  # nothing to end, no error


@pytest.mark.parametrize(
    ("caller", "hours", "error", "message"),
    [
        ("system", 1, PermissionDenied, r"^the system actor cannot open a login session$"),
        ("alice", 0, InvalidInput, r"^hours must be a number above 0 and at most 8784; got 0$"),
        ("alice", -1.5, InvalidInput, r"^hours must be a number above 0 and at most 8784; got -1\.5$"),
        ("alice", 10**6, InvalidInput, r"^hours must be a number above 0 and at most 8784; got 1000000$"),
        ("alice", True, InvalidInput, r"^hours must be a number above 0 and at most 8784; got True$"),
        ("alice", "12", InvalidInput, r"^hours must be a number above 0 and at most 8784; got '12'$"),
        ("stale", 1, PermissionDenied, r"^open a login session: session of 'alice' expired; log in again$"),
    ],
)
def test_open_session_refuses(actors, demo, caller, hours, error, message):
    actor = {"system": SYSTEM, "alice": actors["alice"], "stale": actors["alice"]}[caller]
    if caller == "stale":
        users.reset_password(demo, SYSTEM, "alice", "a reset password")
    with pytest.raises(error, match=message):
        open_session(demo, actor, hours=hours)


# --------------------------------------------------------------------------------------------- expiry
def test_a_session_expires_after_its_hours(actors, demo):
    start = utcnow() - timedelta(hours=2)
    token = open_session(demo, actors["rita"], hours=1.5, now=start)
    assert check_session(demo, token, now=start + timedelta(minutes=89)).state == SessionState.LIVE
    assert check_session(demo, token, now=start + timedelta(minutes=90)).state == SessionState.EXPIRED
    assert check_session(demo, token).state == SessionState.EXPIRED
    assert resolve_session(demo, token) is None


def test_a_used_session_records_when_it_was_last_seen(actors, demo):
    start = utcnow() - timedelta(hours=1)
    token = open_session(demo, actors["bob"], hours=2, now=start)
    check_session(demo, token, now=start + timedelta(seconds=30))  # too soon to write
    check_session(demo, token, now=start + timedelta(minutes=5))
    with demo.read() as s:
        assert s.scalars(select(LoginSession.last_seen_at)).one() == start + timedelta(minutes=5)


# ------------------------------------------------------------------------------------------- revocation
def test_log_out_ends_the_session_and_every_copy_of_its_cookie(actors, demo):
    token = open_session(demo, actors["alice"], hours=1)
    other = open_session(demo, actors["alice"], hours=1)  # another browser
    copy = str(token)
    close_session(demo, token)
    assert check_session(demo, copy).state == SessionState.ENDED
    assert resolve_session(demo, copy) is None
    assert check_session(demo, other).state == SessionState.LIVE  # log out ends this session only


@pytest.mark.parametrize(
    "change",
    [
        lambda db, a: users.reset_password(db, SYSTEM, "alice", "a reset password"),
        lambda db, a: users.set_role(db, a["admin"], "alice", "reviewer"),
        lambda db, a: users.deactivate(db, a["admin"], "alice"),
        lambda db, a: users.change_password(db, a["alice"], "alice-demo", "a brand new password"),
        lambda db, a: revoke_sessions(db, a["admin"], "alice"),
        lambda db, a: revoke_sessions(db, a["alice"], "alice"),
        lambda db, a: revoke_sessions(db, SYSTEM, "Alice"),
    ],
    ids=[
        "password reset",
        "role change",
        "deactivation",
        "own password",
        "admin revokes",
        "own revoke",
        "system revokes",
    ],
)
def test_a_changed_user_loses_every_stored_session(actors, demo, change):
    tokens = {
        "alice 1": open_session(demo, actors["alice"], hours=1),
        "alice 2": open_session(demo, actors["alice"], hours=1),
        "bob": open_session(demo, actors["bob"], hours=1),
    }
    change(demo, actors)
    assert _states(demo, tokens) == {
        "alice 1": SessionState.ENDED,
        "alice 2": SessionState.ENDED,
        "bob": SessionState.LIVE,
    }
    with demo.read() as s:
        ended = s.scalars(select(LoginSession).where(LoginSession.revoked_at.is_not(None))).all()
    assert len(ended) == 2  # revoked in the database, not only outdated by the session version


def test_revoke_sessions_counts_and_checks_the_caller(actors, demo):
    open_session(demo, actors["bob"], hours=1)
    open_session(demo, actors["bob"], hours=1)
    with pytest.raises(
        PermissionDenied,
        match=r"^alice \(annotator\) may not end the sessions of other users: admin role required$",
    ):
        revoke_sessions(demo, actors["alice"], "bob")
    with pytest.raises(NotFound, match=r"^user 'nobody' does not exist$"):
        revoke_sessions(demo, actors["admin"], "nobody")
    assert revoke_sessions(demo, actors["admin"], "bob") == 2
    assert revoke_sessions(demo, actors["admin"], "bob") == 0


# ------------------------------------------------------------------------------------------- lockouts
def test_a_lockout_is_audited(demo):
    now = utcnow()
    for _ in range(MAX_FAILED_LOGINS + 1):
        with pytest.raises(PermissionDenied):
            authenticate(demo, "alice", "wrong password", now=now)
    with demo.read() as s:
        entries = s.scalars(select(AuditEntry).where(AuditEntry.action == "login_locked")).all()
        assert [(e.actor_name, e.target, e.details["failed_logins"]) for e in entries] == [
            ("alice", "alice", MAX_FAILED_LOGINS)
        ]
        assert entries[0].details["locked_seconds"] == 30
    later = now + timedelta(minutes=1)  # the lock has passed: one more failure locks for 60 s, audited too
    with pytest.raises(PermissionDenied, match=r"^invalid username or password$"):
        authenticate(demo, "alice", "wrong password", now=later)
    with demo.read() as s:
        locks = s.scalars(select(AuditEntry).where(AuditEntry.action == "login_locked")).all()
        assert [e.details["locked_seconds"] for e in locks] == [30, 60]


def test_unknown_names_are_throttled_too_without_saying_so(demo):
    now, before = utcnow(), password_checks()
    for _ in range(MAX_FAILED_LOGINS + 3):
        with pytest.raises(PermissionDenied, match=r"^invalid username or password$"):
            authenticate(demo, "nobody", "whatever pass", now=now)
    assert password_checks() - before == MAX_FAILED_LOGINS  # no more dummy hashes while "nobody" is locked
    with demo.read() as s:
        rows = s.scalars(select(LoginThrottle)).all()
    assert [(r.name_sha256, r.failed_logins) for r in rows] == [
        (hashlib.sha256(b"nobody").hexdigest(), MAX_FAILED_LOGINS)
    ]  # the typed name itself is not kept


# --------------------------------------------------------------------------------------- single sign-on
@pytest.mark.parametrize(
    ("verified", "message"),
    [
        (
            None,
            r"^alice@example\.org: the identity provider did not confirm this e-mail address "
            r"\(email_verified is missing\); single sign-on refused$",
        ),
        (
            False,
            r"^alice@example\.org: the identity provider did not confirm this e-mail address "
            r"\(email_verified is False\); single sign-on refused$",
        ),
    ],
    ids=["missing", "false"],
)
def test_single_sign_on_needs_a_verified_address(demo, verified, message):
    kwargs = {} if verified is None else {"verified": verified}
    with pytest.raises(PermissionDenied, match=message):
        sso.sso_actor(demo, "alice", identity="alice@example.org", **kwargs)
    actor = sso.sso_actor(demo, "alice", identity="alice@example.org", verified=True)
    assert actor.username == "alice"
