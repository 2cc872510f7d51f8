"""Every public service call, who may make it, and a world in which each call can succeed.

Shared by tests/services/test_access_control.py (every call × every kind of caller) and
tests/services/test_hostile_arguments.py (every call × hostile argument values).

The world (`build_world`): project ``demo`` (sample corpus, 12 pairs) fully labelled by alice and bob, one
disagreement adjudicated by rita, release 1 made, (q1, D2) gold; project ``work`` (same corpus) where alice
labelled one pair (``Y``) and holds an unlabelled claim on another (``X``), with prior qrels ``prior`` (import
``prior_import``). Users: alice, bob (annotators, members of both),
carol (annotator, member of nothing), rita (reviewer), admin, gone (an admin, deactivated), stale (an admin
whose password was reset after they logged in).

Callers (`CALLERS`): the logged-in users above, `SYSTEM`, a forged copy of SYSTEM, and alice's own session
claiming the admin role (the role a caller claims is ignored: it is re-read from the database).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
PASSWORDS = {
    "alice": "alice-demo",
    "bob": "bob-demo",
    "rita": "rita-demo",
    "admin": "admin-demo",
    "carol": "carol-password",
    "gone": "gone-password",
    "stale": "stale-password",
}
CALLERS = ("alice", "alice_as_admin", "carol", "rita", "admin", "system", "gone", "stale", "forged_system")

# Who gets through each level: "ok" (the call runs), "denied" (PermissionDenied) or "hidden" (NotFound: the
# project is invisible to a non-member annotator).
_UNTRUSTED = {"gone": "denied", "stale": "denied", "forged_system": "denied"}
LEVELS = {
    "judge": {
        "alice": "ok",
        "alice_as_admin": "ok",
        "carol": "hidden",
        "rita": "denied",
        "admin": "denied",
        "system": "denied",
        **_UNTRUSTED,
    },
    "member": {
        "alice": "ok",
        "alice_as_admin": "ok",
        "carol": "hidden",
        "rita": "ok",
        "admin": "ok",
        "system": "ok",
        **_UNTRUSTED,
    },
    "anyone": {
        "alice": "ok",
        "alice_as_admin": "ok",
        "carol": "ok",
        "rita": "ok",
        "admin": "ok",
        "system": "ok",
        **_UNTRUSTED,
    },
    "reviewer": {
        "alice": "denied",
        "alice_as_admin": "denied",
        "carol": "denied",
        "rita": "ok",
        "admin": "ok",
        "system": "ok",
        **_UNTRUSTED,
    },
    "admin": {
        "alice": "denied",
        "alice_as_admin": "denied",
        "carol": "denied",
        "rita": "denied",
        "admin": "ok",
        "system": "ok",
        **_UNTRUSTED,
    },
    "self": {
        "alice": "ok",
        "alice_as_admin": "ok",
        "carol": "ok",
        "rita": "ok",
        "admin": "ok",
        "system": "denied",
        **_UNTRUSTED,
    },
}


@dataclass(frozen=True)
class Call:
    """One service call: ``fn(db, actor, *args, **kwargs)``; values produced by `World` attributes are given
    as ``"@name"`` strings (e.g. ``"@X"`` the pair alice holds) and resolved against the world."""

    module: str
    name: str
    level: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    allowed_error: str | None = None  # the domain error an allowed caller gets in this world (None: success)

    @property
    def key(self) -> str:
        return f"{self.module}.{self.name}"

    def function(self) -> Callable:
        import importlib

        return getattr(importlib.import_module(f"annotate_app.services.{self.module}"), self.name)

    def resolved(self, world: World, caller: str) -> tuple[tuple, dict]:
        def value(v: Any) -> Any:
            if isinstance(v, str) and v.startswith("@"):
                return world.value(v[1:], caller)
            return v

        return tuple(value(a) for a in self.args), {k: value(v) for k, v in self.kwargs.items()}

    def with_argument(self, position: int | str, new: Any) -> Call:
        if isinstance(position, int):
            args = list(self.args)
            args[position] = new
            return dataclasses.replace(self, args=tuple(args))
        return dataclasses.replace(self, kwargs={**self.kwargs, position: new})


_RUN = "q1 Q0 D2 1 0.5 extra_run\nq2 Q0 D5 1 0.4 extra_run\n"
_DOCS = '{"doc_id": "D7", "title": "new", "text": "a new document"}\n'
_QUERIES = '{"query_id": "q9", "text": "a new query"}\n'
_QRELS = "q1 0 D2 1\nq3 0 D6 0\n"
_CHUNKS = '{"chunk_id": "D1#1", "doc_id": "D1"}\n'
_REASON = "a considered reason"
_MACHINE = '{"query_id": "q1", "doc_id": "D1", "grade": 2, "reason": "made elsewhere"}\n'
_HUMAN = (
    '{"query_id": "q1", "doc_id": "D1", "annotator": "ext-ann", "grade": 2, "reason": "made elsewhere"}\n'
)

CALLS = (
    # judging (members only)
    Call("queue", "next_pair", "judge", ("work",)),
    Call("queue", "get_pair", "judge", ("work", "@X")),
    Call("queue", "skip", "judge", ("work", "@X"), {"reason": _REASON}),
    Call("queue", "my_progress", "judge", ("work",)),
    Call("labels", "save_label", "judge", ("work", "@Y"), {"grade": 1, "reason": _REASON, "doc_version": 1}),
    Call("labels", "my_labels", "judge", ("work",)),
    Call("labels", "count_my_labels", "judge", ("work",)),
    # reading a visible project
    Call("labels", "pair_history", "member", ("work", "@Y")),
    Call("projects", "get_project", "member", ("demo",)),
    Call("projects", "get_guidelines", "member", ("demo",)),
    Call("projects", "list_projects", "anyone"),
    Call("users", "change_password", "self", ("@password", "a brand new password")),
    # reviewers
    Call("queue", "release_stale_claims", "reviewer", ("work",)),
    Call("adjudication", "adjudicate", "reviewer", ("demo", "@D"), {"grade": 2, "reason": _REASON}),
    Call("adjudication", "get_adjudication", "reviewer", ("demo", "@D")),
    Call("export", "export_release", "reviewer", ("demo",), {"format": "jsonl"}),
    Call("export", "export_labels_csv", "reviewer", ("demo",)),
    Call("label_studio", "export_label_studio_tasks", "reviewer", ("demo",)),
    Call("label_studio", "label_studio_config", "reviewer", ("demo",)),
    Call("gate", "agreement", "reviewer", ("demo",)),
    Call("passage_agreement", "passage_agreement", "reviewer", ("demo",)),
    Call("passage_adjudication", "passage_disagreements", "reviewer", ("demo",)),
    Call(
        "passage_adjudication",
        "adjudicate_passages",
        "reviewer",
        ("demo", "@D"),
        {"spans": [(0, 1)], "reason": _REASON},
        allowed_error="Conflict",  # the demo's pairs have no passages to disagree on
    ),
    Call("gate", "disagreements", "reviewer", ("demo",), {"include_resolved": True}),
    Call("gate", "confusion", "reviewer", ("demo", "alice", "bob")),
    Call("gate", "blockers", "reviewer", ("demo",)),
    Call("imports", "list_runs", "reviewer", ("demo",)),
    Call("pooling", "add_pair", "reviewer", ("demo", "q1", "D6"), {"note": "by hand"}),
    Call("pooling", "exclude_pair", "reviewer", ("work", "q1", "D1"), {"reason": "duplicate"}),
    Call("pooling", "include_pair", "reviewer", ("work", "q1", "D1")),
    Call("pooling", "get_pair_info", "reviewer", ("demo", "q1", "D1")),
    Call("pooling", "list_pairs", "reviewer", ("demo",)),
    Call("pooling", "pool_depth", "reviewer", ("demo",)),
    Call("projects", "set_guidelines", "reviewer", ("demo", "# New guidelines")),
    Call("projects", "list_members", "reviewer", ("demo",)),
    Call(
        "releases", "create_release", "reviewer", ("demo",), {"justification": "accepted for the test world"}
    ),
    Call("releases", "preview_release", "reviewer", ("demo",)),
    Call("releases", "list_releases", "reviewer", ("demo",)),
    Call("releases", "get_release", "reviewer", ("demo",)),
    Call("releases", "release_qrels", "reviewer", ("demo",)),
    Call("status", "project_status", "reviewer", ("demo",)),
    Call("scoring", "stored_run", "reviewer", ("demo", "scheme_a")),
    Call("scoring", "bm25_baseline", "reviewer", ("demo",), {"k": 10}),
    Call("scoring", "label_table", "reviewer", ("demo",)),
    Call("scoring", "query_tags", "reviewer", ("demo",)),
    Call("scoring", "queue_pairs", "reviewer", ("work", [("q1", "D6")]), {"note": "unjudged in scheme_a"}),
    Call("gold", "add_gold", "reviewer", ("demo", "q1", "D1"), {"grade": 2, "explanation": _REASON}),
    Call("gold", "list_gold", "reviewer", ("demo",)),
    Call("gold", "gold_from_adjudications", "reviewer", ("demo",)),
    Call("gold", "gold_from_prior", "reviewer", ("work", "prior"), {"explanation": _REASON}),
    Call("gold", "set_gold_rate", "reviewer", ("demo", 0.05)),
    Call("gold", "remove_gold", "reviewer", ("demo", "q1", "D2")),
    Call("annotators", "annotator_table", "reviewer", ("demo",)),
    Call("annotators", "annotator_charts", "reviewer", ("demo", "alice")),
    Call("qualification", "annotator_statuses", "reviewer", ("demo",)),
    Call("qualification", "my_status", "judge", ("work",)),
    Call("qualification", "resume", "reviewer", ("demo", "alice"), allowed_error="Conflict"),
    Call("judges", "list_judges", "reviewer", ("demo",)),
    Call("judges", "calibrate", "reviewer", ("demo",)),
    Call("judges", "probe_results", "reviewer", ("demo",)),
    Call("judges", "probe_reports", "reviewer", ("demo",)),
    Call("judges", "set_run_model", "admin", ("demo", "scheme_a", "gpt-4o")),
    Call("judges", "compare_judges", "reviewer", ("demo", ["lex", "gone"]), allowed_error="NotFound"),
    Call("judges", "judge_qrels", "reviewer", ("demo", "lex")),
    Call("judges", "judge_confidences", "reviewer", ("demo", "lex")),
    Call("judges", "judge_settings", "reviewer", ("demo",)),
    Call("judges", "human_release_qrels", "reviewer", ("demo",)),
    Call("judges", "judge_failures", "reviewer", ("demo", "lex")),
    Call("judges", "failure_counts", "reviewer", ("demo",)),
    # admins
    Call("audit", "audit_log", "admin"),
    Call("judges", "add_judge", "admin", ("demo", "lex2"), {"backend": "lexical"}),
    Call("judges", "run_judge", "admin", ("demo", "lex"), {"pairs": "all"}),
    Call(
        "judges", "import_labels", "admin", ("demo", "replayed", _MACHINE.encode()), {"filename": "m.jsonl"}
    ),
    Call("judges", "probe", "admin", ("demo", "lex"), {"sample": 3}),
    Call("judges", "probe", "admin", ("demo", "lex"), {"sample": 3, "kind": "injection"}),
    Call("judges", "update_judge_settings", "admin", ("demo",), {"queue_order": "uncertainty"}),
    Call("audit", "count_audit", "admin"),
    Call("imports", "import_documents", "admin", ("demo", _DOCS.encode()), {"filename": "d.jsonl"}),
    Call("imports", "import_queries", "admin", ("demo", _QUERIES.encode()), {"filename": "q.jsonl"}),
    Call("imports", "import_run", "admin", ("demo", _RUN.encode()), {"filename": "r.trec"}),
    Call("imports", "import_qrels", "admin", ("demo", _QRELS.encode()), {"name": "prior"}),
    Call("imports", "import_chunk_map", "admin", ("demo", _CHUNKS.encode()), {"filename": "c.jsonl"}),
    Call(
        "imports",
        "import_labels",
        "admin",
        ("demo", _HUMAN.encode()),
        {"fmt": "jsonl", "filename": "h.jsonl"},
    ),
    Call(
        "imports",
        "preview_labels",
        "admin",
        ("demo", _HUMAN.encode()),
        {"fmt": "jsonl", "filename": "h.jsonl"},
    ),
    Call(
        "imports.irdatasets",
        "import_ir_dataset",
        "admin",
        ("demo", "no-such/dataset"),
        allowed_error="InvalidInput",
    ),
    Call("imports", "preview", "admin", ("run", _RUN.encode()), {"filename": "r.trec"}),
    Call("imports", "list_imports", "admin", ("work",)),
    Call("imports", "undo_import", "admin", ("work", "@prior_import")),
    Call("pooling", "pool", "admin", ("demo",), {"depth": 5}),
    Call("projects", "create_project", "admin", ("fresh",), {"title": "A fresh project"}),
    Call("projects", "update_settings", "admin", ("demo",), {"threshold": 0.5}),
    Call("projects", "assign", "admin", ("work", ["carol"])),
    Call("projects", "unassign", "admin", ("work", "bob")),
    Call("users", "create_user", "admin", ("newbie", "newbie-password")),
    Call("users", "list_users", "admin"),
    Call("users", "get_user", "admin", ("bob",)),
    Call("users", "set_role", "admin", ("bob", "reviewer")),
    Call("users", "reset_password", "admin", ("bob", "another password")),
    Call("users", "deactivate", "admin", ("bob",)),
    Call("users", "reactivate", "admin", ("bob",)),
    Call("users", "unlock", "admin", ("bob",)),
    Call("backup", "backup", "admin", ("@archive",)),
    Call("backup", "restore", "admin", ("@own_archive",), {"force": True}),
    Call("demo", "load_demo", "admin", (), {"reset": True}, allowed_error="Conflict"),
)

# Service functions that take no caller (they make one).
NOT_CALLS = {
    "auth.*": "authenticate/resolve_actor make the caller; tested in test_access_control",
    "sso.*": "sso_actor makes the caller from a verified e-mail, username_for takes none; tested in "
    "test_app_login (single sign-on)",
}


@dataclass
class World:
    db: Any
    actors: dict
    ids: dict
    tmp: Path

    def value(self, name: str, caller: str) -> Any:
        if name == "password":
            user = "alice" if caller == "alice_as_admin" else caller
            return PASSWORDS.get(user, "not a password")
        if name == "archive":
            return self.tmp / f"backup-{caller}.zip"
        if name == "own_archive":
            return self.ids["archive"]
        return self.ids[name]

    def call(self, call: Call, caller: str):
        args, kwargs = call.resolved(self, caller)
        if call.key == "demo.load_demo":
            return call.function()(self.db, *args, actor=self.actors[caller], **kwargs)
        return call.function()(self.db, self.actors[caller], *args, **kwargs)


def build_world(db, tmp: Path) -> dict:
    """Fill ``db`` (empty, migrated) with the world; returns the ids the calls need (pairs X, Y, D,
    archive). The demo project also has a lexical machine judge ``lex`` that judged every pair."""
    from annotate_app.services import (
        adjudication,
        gold,
        imports,
        judges,
        labels,
        pooling,
        projects,
        queue,
        releases,
        users,
    )
    from annotate_app.services.auth import SYSTEM, authenticate
    from annotate_app.services.demo import load_demo

    load_demo(db)
    for name, role in (("carol", "annotator"), ("gone", "admin"), ("stale", "admin")):
        users.create_user(db, SYSTEM, name, PASSWORDS[name], role=role)
    alice, bob = (authenticate(db, u, PASSWORDS[u]) for u in ("alice", "bob"))
    rita = authenticate(db, "rita", PASSWORDS["rita"])
    qrels = dict(((q, d), int(g)) for q, _, d, g in (line.split() for line in (SAMPLE / "qrels.trec").open()))
    disagreement = None
    for who in (alice, bob):
        while (view := queue.next_pair(db, who, "demo")) is not None:
            grade = qrels.get((view.query_id, view.doc_id), 0)
            if who is bob and disagreement is None:
                grade, disagreement = (3 if grade == 0 else 0), view.pair_id
            labels.save_label(db, who, "demo", view.pair_id, grade=grade, reason="as the qrels say")
    adjudication.adjudicate(db, rita, "demo", disagreement, grade=1, reason="read it twice")
    releases.create_release(db, rita, "demo", justification="agreement is what it is in a tiny world")
    gold.add_gold(db, rita, "demo", "q1", "D2", grade=3, explanation="answers it fully")
    judges.add_judge(db, SYSTEM, "demo", "lex", backend="lexical")
    judges.run_judge(db, SYSTEM, "demo", "lex", pairs="all")
    projects.create_project(db, SYSTEM, "work")
    imports.import_documents(db, SYSTEM, "work", SAMPLE / "docs.jsonl")
    imports.import_queries(db, SYSTEM, "work", SAMPLE / "queries.jsonl")
    imports.import_run(db, SYSTEM, "work", SAMPLE / "run_a.trec")
    pooling.pool(db, SYSTEM, "work", depth=3)
    projects.assign(db, SYSTEM, "work", ["alice", "bob"])
    done = queue.next_pair(db, alice, "work")
    labels.save_label(db, alice, "work", done.pair_id, grade=2, reason="partly answers it")
    held = queue.next_pair(db, alice, "work")
    imports.import_qrels(db, SYSTEM, "work", SAMPLE / "qrels.trec", name="prior")
    prior = imports.list_imports(db, SYSTEM, "work")[0].import_id
    return {"X": held.pair_id, "Y": done.pair_id, "D": disagreement, "prior_import": prior}


def log_in_callers(db) -> dict:
    """The callers of `CALLERS`, logged in now (then `gone` deactivated and `stale` outdated)."""
    from annotate_app.services import users
    from annotate_app.services.auth import SYSTEM, Actor, Role, authenticate

    actors = {
        u: authenticate(db, u, PASSWORDS[u]) for u in ("alice", "carol", "rita", "admin", "gone", "stale")
    }
    users.deactivate(db, SYSTEM, "gone")
    users.reset_password(db, SYSTEM, "stale", "a reset password")
    actors["alice_as_admin"] = dataclasses.replace(actors["alice"], role=Role.ADMIN)
    actors["system"] = SYSTEM
    actors["forged_system"] = Actor(None, "system", Role.ADMIN, 0)
    return actors


def fingerprint(db) -> str:
    """sha256 over every row of every table: equal fingerprints, equal databases."""
    import hashlib
    import json

    from annotate_app.store import backup

    digest = hashlib.sha256()
    with db.read() as s:
        for table in backup.tables():
            for row in backup.rows(s, table):
                digest.update(json.dumps([table.name, row], ensure_ascii=False, default=str).encode())
    return digest.hexdigest()


def fast_hashes():
    """A MonkeyPatch making argon2 cheap (for session-scoped fixtures; call ``.undo()`` when done)."""
    import pytest
    from argon2 import PasswordHasher

    from annotate_app.services import auth

    patch = pytest.MonkeyPatch()
    fast = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    patch.setattr(auth, "_HASHER", fast)
    patch.setattr(auth, "_DUMMY_HASH", fast.hash("timing"))
    return patch
