"""The demo: the sample corpus loaded as project ``demo`` with four users, both runs pooled at depth 3.

Demo users (documented, fixed passwords — for a local demo only):

========= ============ =============
user      role         password
========= ============ =============
alice     annotator    alice-demo
bob       annotator    bob-demo
rita      reviewer     rita-demo
admin     admin        admin-demo
========= ============ =============

`load_demo` is idempotent: users, project, documents, queries, runs, pool and members are created only if
missing (existing users keep their passwords). ``reset=True`` first wipes the database — refused when it holds
a project other than ``demo``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from annotate_app.services import imports, pooling, projects, users
from annotate_app.services.auth import SYSTEM, Actor, Role, authorize
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.services.types import PoolReport
from annotate_app.store import migrate
from annotate_app.store import users as uq
from annotate_app.store.db import Database

__all__ = ["load_demo", "DemoInfo", "DEMO_USERS", "DEMO_PROJECT", "SAMPLE_DIR", "GUIDELINES"]

DEMO_PROJECT = "demo"
DEMO_USERS = (
    ("alice", "annotator", "alice-demo"),
    ("bob", "annotator", "bob-demo"),
    ("rita", "reviewer", "rita-demo"),
    ("admin", "admin", "admin-demo"),
)
SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_corpus"
GUIDELINES = """# Judging guidelines (demo)

Judge whether the **document answers the question** of the query, for a customer of the help centre.

| grade | meaning |
|---|---|
| 3 | Fully answers: the customer needs nothing else |
| 2 | Partly answers: useful, but something is missing |
| 1 | Related: same topic, does not answer |
| 0 | Not relevant |

Give a short reason in your own words (at least 5 characters). Mark *unsure* when the text leaves you in
doubt; skip only when you cannot judge at all (say why).
"""


@dataclass(frozen=True)
class DemoInfo:
    project: str
    users: tuple[tuple[str, str, str], ...]
    created_users: tuple[str, ...]
    pool: PoolReport
    reset: bool


def load_demo(
    db: Database, *, reset: bool = False, sample_dir: str | Path | None = None, actor: Actor = SYSTEM
) -> DemoInfo:
    """Load (or complete) the demo; see the module doc. Runs the migrations first."""
    folder = Path(sample_dir) if sample_dir is not None else SAMPLE_DIR
    missing = [
        f for f in ("docs.jsonl", "queries.jsonl", "run_a.trec", "run_b.trec") if not (folder / f).is_file()
    ]
    if missing:
        raise InvalidInput(f"sample corpus folder {str(folder)!r} lacks {missing[0]}")
    if reset:
        _reset(db, actor)
    migrate.upgrade(db)
    created = _users(db, actor)
    if DEMO_PROJECT not in {p.name for p in projects.list_projects(db, actor)}:
        projects.create_project(
            db,
            actor,
            DEMO_PROJECT,
            title="Demo: after-sales help centre (sample corpus)",
            guidelines=GUIDELINES,
        )
    imports.import_documents(db, actor, DEMO_PROJECT, folder / "docs.jsonl")
    imports.import_queries(db, actor, DEMO_PROJECT, folder / "queries.jsonl")
    for run in ("run_a.trec", "run_b.trec"):
        imports.import_run(db, actor, DEMO_PROJECT, folder / run)
    report = pooling.pool(db, actor, DEMO_PROJECT, depth=3)
    projects.assign(db, actor, DEMO_PROJECT, ["alice", "bob"])
    return DemoInfo(project=DEMO_PROJECT, users=DEMO_USERS, created_users=created, pool=report, reset=reset)


def _reset(db: Database, actor: Actor) -> None:
    if migrate.current_revision(db) is not None:
        with db.read() as s:  # only an admin may wipe (list_projects would let anyone through)
            authorize(s, actor, Role.ADMIN, "reset the database")
        others = [p.name for p in projects.list_projects(db, actor) if p.name != DEMO_PROJECT]
        if others:
            raise Conflict(f"refusing to reset: the database holds other projects ({', '.join(others)})")
    migrate.downgrade_all(db)


def _users(db: Database, actor: Actor) -> tuple[str, ...]:
    with db.read() as s:
        existing = set(uq.by_names(s, [name for name, _, _ in DEMO_USERS]))
    created = []
    for name, role, password in DEMO_USERS:
        if name not in existing:
            users.create_user(db, actor, name, password, role=Role(role).value)
            created.append(name)
    return tuple(created)
