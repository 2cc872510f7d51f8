"""Users, roles, passwords, login throttling and session invalidation."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from annotate_app.services import audit, users
from annotate_app.services.auth import (
    MAX_FAILED_LOGINS,
    SYSTEM,
    Actor,
    Role,
    authenticate,
    hash_password,
    resolve_actor,
)
from annotate_app.services.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from annotate_app.store.models import utcnow


def test_create_and_log_in(db):
    info = users.create_user(
        db, SYSTEM, "  Alice ", "correct horse", role="reviewer", display_name="Alice A."
    )
    assert (info.username, info.role, info.display_name, info.active) == (
        "alice",
        "reviewer",
        "Alice A.",
        True,
    )
    me = authenticate(db, "ALICE", "correct horse")
    assert (me.username, me.role, me.session_version) == ("alice", Role.REVIEWER, 1)
    assert users.get_user(db, me, "alice").last_login_at is not None


def test_real_hashes_are_argon2id():
    assert hash_password("correct horse").startswith("$argon2id$")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"username": "x"},
            "username must be 2-64 characters of a-z, 0-9, '.', '_', '-' (not 'system'); got 'x'",
        ),
        ({"username": "system"}, "(not 'system'); got 'system'"),
        ({"username": "a b"}, "got 'a b'"),
        ({"password": "short"}, "password must be 8 to 1024 characters; got 5 characters"),
        ({"password": "Carol123", "username": "carol123"}, "password must not be the username"),
        ({"role": "owner"}, "role must be 'annotator', 'reviewer' or 'admin'; got 'owner'"),
    ],
)
def test_create_user_validates(db, kwargs, message):
    args = {"username": "carol", "password": "long enough", "role": "annotator", **kwargs}
    with pytest.raises(InvalidInput, match=re.escape(message)):
        users.create_user(db, SYSTEM, args.pop("username"), args.pop("password"), **args)


def test_duplicate_user(db):
    users.create_user(db, SYSTEM, "carol", "long enough")
    with pytest.raises(Conflict, match="user 'carol' already exists"):
        users.create_user(db, SYSTEM, "Carol", "long enough")


@pytest.mark.parametrize("who", ["alice", "rita"])
@pytest.mark.parametrize(
    "call",
    [
        lambda db, a: users.create_user(db, a, "eve", "long enough"),
        lambda db, a: users.list_users(db, a),
        lambda db, a: users.set_role(db, a, "bob", "admin"),
        lambda db, a: users.reset_password(db, a, "bob", "new password"),
        lambda db, a: users.deactivate(db, a, "bob"),
        lambda db, a: audit.audit_log(db, a),
    ],
)
def test_only_admins_administer_users(demo, actors, who, call):
    role = "annotator" if who == "alice" else "reviewer"
    with pytest.raises(PermissionDenied, match=re.escape(f"{who} ({role}) may not")):
        call(demo, actors[who])


def test_forged_system_actor_is_refused(demo):
    forged = Actor(None, "system", Role.ADMIN, 0)
    with pytest.raises(PermissionDenied, match="list users: not logged in"):
        users.list_users(demo, forged)


@pytest.mark.parametrize(
    "change",
    [
        lambda db: users.reset_password(db, SYSTEM, "alice", "another password"),
        lambda db: users.set_role(db, SYSTEM, "alice", "reviewer"),
        lambda db: users.deactivate(db, SYSTEM, "alice"),
    ],
)
def test_changes_end_existing_sessions(demo, actors, change):
    db, alice = demo, actors["alice"]
    change(db)
    with pytest.raises(PermissionDenied, match="session of 'alice' expired; log in again"):
        users.get_user(db, alice, "alice")
    with pytest.raises(PermissionDenied, match="session expired"):
        resolve_actor(db, alice.user_id, alice.session_version)


def test_resolve_actor_restores_a_login(demo, actors):
    db, alice = demo, actors["alice"]
    assert resolve_actor(db, alice.user_id, alice.session_version) == alice


def test_wrong_password_and_unknown_user_look_the_same(demo):
    for name, password in (("alice", "wrong password"), ("nobody", "whatever")):
        with pytest.raises(PermissionDenied, match="^invalid username or password$"):
            authenticate(demo, name, password)


def test_deactivated_user_cannot_log_in(demo):
    users.deactivate(demo, SYSTEM, "bob")
    with pytest.raises(PermissionDenied, match="^invalid username or password$"):
        authenticate(demo, "bob", "bob-demo")
    users.reactivate(demo, SYSTEM, "bob")
    assert authenticate(demo, "bob", "bob-demo").username == "bob"


def test_login_throttling(demo):
    now = utcnow()
    for _ in range(MAX_FAILED_LOGINS):
        with pytest.raises(PermissionDenied, match="invalid username or password"):
            authenticate(demo, "alice", "nope nope", now=now)
    with pytest.raises(PermissionDenied, match=r"too many failed logins for 'alice'; try again in 30 s"):
        authenticate(demo, "alice", "alice-demo", now=now)  # even the right password is refused while locked
    later = now + timedelta(seconds=31)
    with pytest.raises(PermissionDenied, match="invalid username or password"):
        authenticate(demo, "alice", "nope nope", now=later)
    with pytest.raises(PermissionDenied, match=r"try again in 60 s"):  # the lock doubles
        authenticate(demo, "alice", "alice-demo", now=later)
    assert authenticate(demo, "alice", "alice-demo", now=later + timedelta(seconds=61)).username == "alice"
    assert authenticate(demo, "alice", "alice-demo", now=later + timedelta(seconds=62)).username == "alice"
    failures = audit.audit_log(demo, SYSTEM, action="login_failed")
    assert len(failures) == MAX_FAILED_LOGINS + 1


def test_reset_password_unlocks(demo):
    now = utcnow()
    for _ in range(MAX_FAILED_LOGINS):
        with pytest.raises(PermissionDenied):
            authenticate(demo, "bob", "nope nope", now=now)
    users.reset_password(demo, SYSTEM, "bob", "fresh password")
    assert authenticate(demo, "bob", "fresh password", now=now).username == "bob"


def test_change_own_password(demo, actors):
    db, bob = demo, actors["bob"]
    with pytest.raises(PermissionDenied, match="current password is wrong"):
        users.change_password(db, bob, "guess guess", "new password")
    new = users.change_password(db, bob, "bob-demo", "new password")
    assert new.session_version == bob.session_version + 1
    assert authenticate(db, "bob", "new password") == new


def test_admin_cannot_lock_themselves_out(demo, actors):
    db, admin = demo, actors["admin"]
    with pytest.raises(Conflict, match="admins cannot demote themselves"):
        users.set_role(db, admin, "admin", "reviewer")
    with pytest.raises(Conflict, match="admins cannot deactivate themselves"):
        users.deactivate(db, admin, "admin")


def test_user_listing_and_visibility(demo, actors):
    db = demo
    assert [u.username for u in users.list_users(db, actors["admin"])] == ["admin", "alice", "bob", "rita"]
    assert users.get_user(db, actors["alice"], "alice").role == "annotator"
    with pytest.raises(PermissionDenied, match="alice \\(annotator\\) may not see other users"):
        users.get_user(db, actors["alice"], "bob")
    with pytest.raises(NotFound, match="user 'zed' does not exist"):
        users.set_role(db, SYSTEM, "zed", "admin")


def test_audit_records_user_changes(demo):
    users.set_role(demo, SYSTEM, "bob", "reviewer")
    entry = audit.audit_log(demo, SYSTEM, action="role_changed")[0]
    assert (entry.actor, entry.target, entry.details) == (
        "system",
        "bob",
        {"from": "annotator", "to": "reviewer"},
    )
