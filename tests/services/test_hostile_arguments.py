"""Hostile arguments to every public service call, on SQLite and PostgreSQL: NUL characters, lone
surrogates, SQL metacharacters, huge texts, integers beyond 32 and 64 bits, wrong types. The only outcomes
allowed: the call works, or it raises one of our domain errors (`ServiceError`: InvalidInput, NotFound,
Conflict, PermissionDenied) — never a database error, a TypeError or an encoding error.
"""

from __future__ import annotations

import re

import pytest
from service_table import CALLS, World, build_world, fingerprint, log_in_callers

from annotate_app.services import pooling, projects, queue, releases, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import InvalidInput, ServiceError

TEXTS = ("\x00", "q1\x00", "\ud800", "'; DROP TABLE labels; --", "x" * 70_000, 10**30, None, ["\x00"])
NUMBERS = (10**30, -(10**30), 2**31, -1, True, "1", 1.5, None)
BLOBS = (b"\x00\xff\xfe", "\x00", "no/such/file\x00")


def _variants(value):
    if isinstance(value, bytes):
        return BLOBS
    if isinstance(value, bool):
        return (None, "yes")
    if isinstance(value, int | float):
        return NUMBERS
    if isinstance(value, str) and not value.startswith("@password"):
        return TEXTS
    if isinstance(value, list):
        return (["\x00"], [10**30], "demo")
    return NUMBERS if isinstance(value, str) and value in ("@X", "@Y", "@D") else ()


def hostile_calls():
    for call in CALLS:
        if call.module in ("backup", "demo"):
            # whole-database operations: their hostile inputs are archives (tests/services/test_backup.py)
            continue
        positions = [(i, v) for i, v in enumerate(call.args)] + list(call.kwargs.items())
        for position, value in positions:
            for bad in _variants(value):
                yield call.with_argument(position, bad)


def caller_of(call) -> str:
    return {"judge": "alice", "self": "alice"}.get(call.level, "system")


def test_every_call_survives_hostile_arguments(db, tmp_path):
    ids = build_world(db, tmp_path)
    world = World(db, log_in_callers(db), {"prior_import": ids["prior_import"]}, tmp_path)
    world.ids.update(_pair_ids(db))
    escaped = []
    for call in hostile_calls():
        try:
            world.call(call, caller_of(call))
        except ServiceError:
            pass
        except Exception as exc:  # noqa: BLE001 - the point is to catch anything else
            escaped.append(
                f"{call.key}{call.args}{ {k: str(v)[:20] for k, v in call.kwargs.items()} }: "
                f"{type(exc).__name__}: {str(exc)[:160]}"
            )
    assert not escaped, "\n".join(escaped[:40])


def _pair_ids(db) -> dict:
    from sqlalchemy import text

    with db.read() as s:
        x = s.execute(
            text(
                "SELECT a.pair_id FROM assignments a JOIN users u ON u.id = a.annotator_id "
                "WHERE u.username = 'alice' AND a.status = 'active'"
            )
        ).scalar()
        y = s.execute(
            text(
                "SELECT a.pair_id FROM assignments a JOIN users u ON u.id = a.annotator_id "
                "JOIN projects p ON p.id = a.project_id WHERE u.username = 'alice' "
                "AND a.status = 'done' AND p.name = 'work'"
            )
        ).scalar()
        d = s.execute(text("SELECT pair_id FROM adjudications")).scalar()
    return {"X": x, "Y": y, "D": d}


FREE_TEXT = {  # field -> a call storing ``value`` there (on the demo)
    "title": lambda db, v: projects.create_project(db, SYSTEM, "p", title=v),
    "guidelines": lambda db, v: projects.set_guidelines(db, SYSTEM, "demo", v),
    "display_name": lambda db, v: users.create_user(db, SYSTEM, "newbie", "a good password", display_name=v),
    "reason": lambda db, v: pooling.exclude_pair(db, SYSTEM, "demo", "q1", "D1", reason=v),
    "note": lambda db, v: pooling.add_pair(db, SYSTEM, "demo", "q1", "D6", note=v),
    "justification": lambda db, v: releases.create_release(db, SYSTEM, "demo", justification=v),
    "skip reason": lambda db, v: queue.skip(
        db,
        authenticate(db, "alice", "alice-demo"),
        "demo",
        queue.next_pair(db, authenticate(db, "alice", "alice-demo"), "demo").pair_id,
        reason=v,
    ),
}


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("a\x00b", "contains a NUL character (U+0000)"),
        ("\ud800x", "contains a lone surrogate (not a Unicode character)"),
    ],
    ids=["NUL", "surrogate"],
)
@pytest.mark.parametrize("field", list(FREE_TEXT))
def test_unstorable_text_is_refused_in_every_free_text_field(demo, field, value, why):
    before = fingerprint(demo)
    with pytest.raises(InvalidInput, match=re.escape(f"{field} {why}; got {value!r}")):
        FREE_TEXT[field](demo, value)
    if field != "skip reason":  # next_pair (to have a pair to skip) claims one
        assert fingerprint(demo) == before
