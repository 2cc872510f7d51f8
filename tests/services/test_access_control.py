"""Access control at the service level: every public service call × every kind of caller.

Annotators judge only projects they are members of and never see other annotators' labels; they cannot
adjudicate, release, export or administer. Reviewers cannot administer users or import. Deactivated users,
stale sessions (password reset, role change) and a forged copy of `SYSTEM` are refused everywhere; a caller's
claimed role is ignored (re-read from the database). A refused call raises PermissionDenied (NotFound for a
project the caller may not see) and writes nothing. Login throttling is proven with the ``now=`` parameter.

The table runs on SQLite (the checks are in the services, the same code on both databases); the login
throttling tests run on both databases.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import shutil
import threading
from collections.abc import Callable
from datetime import timedelta
from types import ModuleType

import pytest
from service_table import (
    CALLERS,
    CALLS,
    LEVELS,
    NOT_CALLS,
    PASSWORDS,
    World,
    build_world,
    fast_hashes,
    fingerprint,
    log_in_callers,
)

from annotate_app.services import errors, labels, queue, users
from annotate_app.services.auth import LOCK_MAX, MAX_FAILED_LOGINS, SYSTEM, authenticate, resolve_actor
from annotate_app.services.errors import NotFound, PermissionDenied
from annotate_app.store.models import utcnow

# Public modules of annotate_app.services that hold no service call (docs/modules.md, services/__init__.py).
NOT_SERVICE_MODULES = {
    "errors": "the error classes",
    "types": "the result values and the stored vocabulary",
    "inputs": "argument checks shared by the services",
    "setup": "opening and creating the database, before anyone logs in",
    "auth": "makes the caller (NOT_CALLS)",
    "sso": "makes the caller from a single sign-on (NOT_CALLS)",
    "import_kinds": "what each kind of import is (the one list of import kinds)",
    "release_formats": "the release formats (the one list of them)",
    "aggregations": "how a release turns labels into grades (the one list of aggregations)",
}
# Public functions of service modules that are not service calls: helpers over plain values or files, which
# touch no database and need no caller.
PURE_HELPERS = {
    "backup.read_manifest": "checks an archive file before anything touches the database",
    "imports.annotator_map_from_text": "parses the Data page's typed annotator map (one A=B per line)",
    "imports.grade_map_from_text": "parses the Data page's typed grade map (one A=B per line)",
    "projects.check_settings": "validates ProjectSettings values",
    "releases.canonical_trec": "the canonical TREC text a release hashes",
    "releases.corpus_hash": "the corpus version hash a release records",
    "releases.sha256_text": "the hash of a text",
    "releases.canonical_passages": "the passage lines a release's content hash adds",
    "passage_adjudication.combine": "the union, intersection or one annotator's passages",
}


def public_modules() -> dict[str, ModuleType]:
    """Every public module of annotate_app.services, subpackages included (``imports``, ``imports.runs``,
    ...), by its name below ``annotate_app.services``; a module or package named ``_...`` is private."""
    import annotate_app.services as package

    found = {}
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        name = info.name.removeprefix(f"{package.__name__}.")
        if not any(part.startswith("_") for part in name.split(".")):
            found[name] = importlib.import_module(info.name)
    return found


def public_functions() -> dict[str, Callable]:
    """``module.name`` → function, for every function in the ``__all__`` of a service module. A function that
    a package re-exports from its submodules (``imports.preview``) is named by the shortest path."""
    named: dict[Callable, str] = {}
    modules = public_modules()
    for module in sorted(modules, key=lambda m: (m.count("."), m)):
        if module.split(".")[0] in NOT_SERVICE_MODULES:
            continue
        for name in modules[module].__all__:
            fn = getattr(modules[module], name)
            if inspect.isfunction(fn):
                named.setdefault(fn, f"{module}.{name}")
    return {key: fn for fn, key in named.items()}


# ------------------------------------------------------------------------------------------------ world
@pytest.fixture(scope="session")
def world_template(tmp_path_factory):
    """The world of `service_table` on a SQLite file, its logged-in callers and a backup of it (built
    once)."""
    from annotate_app.services import backup
    from annotate_app.store.db import Database
    from annotate_app.store.migrate import upgrade

    folder = tmp_path_factory.mktemp("world")
    patch = fast_hashes()
    try:
        upgrade(f"sqlite:///{folder / 'world.db'}")
        db = Database(f"sqlite:///{folder / 'world.db'}")
        ids = build_world(db, folder)
        actors = log_in_callers(db)
        backup.backup(db, SYSTEM, folder / "world.zip")
        db.dispose()
    finally:
        patch.undo()
    return folder, {**ids, "archive": folder / "world.zip"}, actors


@pytest.fixture
def new_world(world_template, tmp_path, fast_hashing):
    """A factory of fresh copies of the world (each call: a new database file)."""
    from annotate_app.store.db import Database

    folder, ids, actors = world_template
    opened = []

    def make() -> World:
        path = tmp_path / f"world{len(opened)}.db"
        shutil.copyfile(folder / "world.db", path)
        db = Database(f"sqlite:///{path}")
        opened.append(db)
        return World(db, actors, dict(ids), tmp_path)

    yield make
    for db in opened:
        db.dispose()


# ------------------------------------------------------------------------------------ expected outcomes
def expected_refusal(call, caller: str) -> tuple[type, str]:
    """The error class and message pattern a refused caller gets."""
    outcome = LEVELS[call.level][caller]
    if outcome == "hidden":
        return NotFound, rf"^project '{call.args[0]}' does not exist or you are not a member$"
    if caller in ("gone", "stale"):
        return PermissionDenied, rf": session of '{caller}' expired; log in again$"
    if caller == "forged_system":
        return PermissionDenied, r": not logged in$"
    if call.level == "judge":
        if caller == "system":
            return PermissionDenied, r": the system actor cannot judge pairs; log in as an annotator$"
        return PermissionDenied, rf"^{caller} is not an annotator of project 'work'$"
    if call.level == "self":
        return PermissionDenied, r"^the system actor has no password$"
    role = {"alice": "annotator", "alice_as_admin": "annotator", "carol": "annotator", "rita": "reviewer"}[
        caller
    ]
    name = "alice" if caller == "alice_as_admin" else caller
    return PermissionDenied, rf"^{name} \({role}\) may not .+: {call.level} role required$"


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.key)
def test_who_may_call_what(call, new_world):
    world = new_world()
    before = fingerprint(world.db)
    for caller in CALLERS:
        if LEVELS[call.level][caller] == "ok":
            continue
        error, message = expected_refusal(call, caller)
        with pytest.raises(error, match=message):
            world.call(call, caller)
        assert fingerprint(world.db) == before, f"{caller}'s refused {call.key} changed the database"
    for caller in (c for c in CALLERS if LEVELS[call.level][c] == "ok"):
        fresh = new_world()
        if call.allowed_error is None:
            fresh.call(call, caller)
        else:
            with pytest.raises(getattr(errors, call.allowed_error)):
                fresh.call(call, caller)


def test_the_table_lists_every_public_service_call():
    """A new service function — in a new module or subpackage too — must be added to the table (or to
    NOT_CALLS with a reason)."""
    calls = {key for key in public_functions() if key not in PURE_HELPERS}
    assert calls == {c.key for c in CALLS}
    assert {"auth.*", "sso.*"} == set(NOT_CALLS)
    assert set(NOT_SERVICE_MODULES) <= set(public_modules())


def test_every_service_call_takes_the_database_and_the_caller():
    """The services contract: a public function of a service module takes ``db`` first and ``actor`` (second,
    or a keyword for `demo.load_demo`), except the pure helpers listed in PURE_HELPERS."""
    wrong = {}
    for key, fn in public_functions().items():
        params = list(inspect.signature(fn).parameters)
        if key not in PURE_HELPERS and (params[:1] != ["db"] or "actor" not in params):
            wrong[key] = params
    assert wrong == {}
    assert set(PURE_HELPERS) <= set(public_functions())


def test_private_names_stay_in_their_module():
    """No module of services or store imports another module's private (``_``) name; shared helpers live in
    private modules (``services._context``, ...) whose names are public within them."""
    import ast
    from pathlib import Path

    root = Path(importlib.import_module("annotate_app").__file__).parent
    found = []
    for path in sorted([*root.glob("services/**/*.py"), *root.glob("store/**/*.py")]):
        if "versions" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                found += [f"{path.relative_to(root)}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert found == []


# ---------------------------------------------------------------------------------- others' labels
def test_annotators_never_see_other_annotators_labels(new_world):
    world = new_world()
    alice, rita = world.actors["alice"], world.actors["rita"]
    bob = authenticate(world.db, "bob", PASSWORDS["bob"])
    view = queue.next_pair(world.db, bob, "work")  # a pair alice has not labelled
    labels.save_label(world.db, bob, "work", view.pair_id, grade=3, reason="bob's private reason")
    assert labels.pair_history(world.db, alice, "work", view.pair_id) == []
    with pytest.raises(NotFound, match=rf"^pair {view.pair_id} is not assigned to alice$"):
        queue.get_pair(world.db, alice, "work", view.pair_id)
    assert [x.annotator for x in labels.pair_history(world.db, rita, "work", view.pair_id)] == ["bob"]
    mine = labels.my_labels(world.db, alice, "work")
    assert {x.annotator for x in mine} == {"alice"}
    held = queue.next_pair(
        world.db, alice, "work"
    )  # alice's own open claim: a fresh view, nobody's label in it
    assert held.current is None and "bob's private reason" not in repr(held)


# ------------------------------------------------------------------------------------- sessions
@pytest.mark.parametrize(
    "change",
    [
        lambda db: users.reset_password(db, SYSTEM, "alice", "a reset password"),
        lambda db: users.set_role(db, SYSTEM, "alice", "reviewer"),
        lambda db: users.deactivate(db, SYSTEM, "alice"),
    ],
    ids=["password reset", "role change", "deactivation"],
)
def test_a_changed_user_loses_every_session(new_world, change):
    world = new_world()
    alice = world.actors["alice"]
    assert resolve_actor(world.db, alice.user_id, alice.session_version) == alice
    change(world.db)
    with pytest.raises(PermissionDenied, match=r"^session expired; log in again$"):
        resolve_actor(world.db, alice.user_id, alice.session_version)
    with pytest.raises(PermissionDenied, match=r"^judge pairs: session of 'alice' expired; log in again$"):
        queue.next_pair(world.db, alice, "work")


def test_changing_ones_own_password_ends_the_other_sessions(new_world):
    world = new_world()
    old = world.actors["alice"]
    new = users.change_password(world.db, old, PASSWORDS["alice"], "a brand new password")
    assert queue.next_pair(world.db, new, "work") is not None
    with pytest.raises(PermissionDenied, match="session of 'alice' expired"):
        queue.next_pair(world.db, old, "work")


# ------------------------------------------------------------------------------------ throttling
def test_login_throttling_locks_doubles_caps_and_unlocks(demo):
    now = utcnow()
    for _ in range(MAX_FAILED_LOGINS - 1):
        with pytest.raises(PermissionDenied, match=r"^invalid username or password$"):
            authenticate(demo, "alice", "wrong password", now=now)
    assert (
        authenticate(demo, "alice", "alice-demo", now=now).username == "alice"
    )  # a success resets the count
    for _ in range(MAX_FAILED_LOGINS):
        with pytest.raises(PermissionDenied, match=r"^invalid username or password$"):
            authenticate(demo, "alice", "wrong password", now=now)
    with pytest.raises(PermissionDenied, match=r"^too many failed logins for 'alice'; try again in 30 s$"):
        authenticate(demo, "alice", "alice-demo", now=now)  # the right password does not help while locked
    assert authenticate(demo, "bob", "bob-demo", now=now).username == "bob"  # the lock is per account
    waits, t = [], now
    for _ in range(8):  # each further failure after a lock doubles it, up to LOCK_MAX
        t += timedelta(hours=1)
        with pytest.raises(PermissionDenied, match=r"^invalid username or password$"):
            authenticate(demo, "alice", "wrong password", now=t)
        with pytest.raises(PermissionDenied, match=r"try again in (\d+) s$") as info:
            authenticate(demo, "alice", "alice-demo", now=t)
        waits.append(int(re.search(r"(\d+) s$", str(info.value)).group(1)))
    assert timedelta(seconds=900) == LOCK_MAX
    assert waits == [60, 120, 240, 480, 900, 900, 900, 900]
    with pytest.raises(PermissionDenied, match="try again in 1 s"):
        authenticate(demo, "alice", "alice-demo", now=t + timedelta(seconds=899))
    assert authenticate(demo, "alice", "alice-demo", now=t + timedelta(seconds=900)).username == "alice"


def test_unknown_users_never_lock_and_look_like_wrong_passwords(demo):
    now = utcnow()
    for _ in range(MAX_FAILED_LOGINS + 2):
        with pytest.raises(PermissionDenied, match=r"^invalid username or password$"):
            authenticate(demo, "nobody", "whatever pass", now=now)
    with pytest.raises(PermissionDenied, match=r"^invalid username or password$"):
        authenticate(demo, "al\x00ice", "alice-demo", now=now)  # a NUL cannot name a user
    assert authenticate(demo, "alice", "alice-demo", now=now).username == "alice"


def test_a_burst_of_failures_from_many_replicas_locks_exactly(demo, db_url):
    """Eight threads, each with its own Database (an app replica), fail at once: the failure counter is
    atomic, so the account is locked exactly as after as many sequential failures."""
    from annotate_app.store.db import Database

    now, errors = utcnow(), []
    replicas = [Database(db_url, pool_size=2) for _ in range(8)]
    barrier = threading.Barrier(len(replicas))

    def fail(db) -> None:
        barrier.wait(timeout=30)
        try:
            authenticate(db, "alice", "wrong password", now=now)
        except PermissionDenied as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=fail, args=(r,)) for r in replicas]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for r in replicas:
        r.dispose()
    assert len(errors) == 8
    with pytest.raises(PermissionDenied, match=r"^too many failed logins for 'alice'; try again in \d+ s$"):
        authenticate(demo, "alice", "alice-demo", now=now)
    assert users.get_user(demo, SYSTEM, "alice").locked_until is not None
