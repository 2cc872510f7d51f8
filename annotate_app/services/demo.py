"""The demo: the sample corpus as project ``demo`` (unlabelled) with four users, and with ``labelled=True`` a
judged project ``demo-review`` for the reviewer's pages and a project ``demo-chunks``: the long documents with
a chunk-level run, whose cards open at the chunk retrieved.

`load_demo` is idempotent (creates only what is missing); ``reset=True`` wipes the database first and is
refused when it holds a project other than the demo's. Users, passwords and the scripted labels:
docs/app.md and docs/modules.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from annotate_app import shipped
from annotate_app.services import (
    adjudication,
    gate,
    imports,
    judges,
    labels,
    pooling,
    projects,
    queue,
    releases,
    users,
)
from annotate_app.services.auth import SYSTEM, Actor, Role, actor_of, authorize
from annotate_app.services.errors import Conflict, InvalidInput, NotFound
from annotate_app.services.types import PoolReport
from annotate_app.store import backup, migrate
from annotate_app.store import users as users_store
from annotate_app.store.db import Database

__all__ = [
    "load_demo",
    "DemoInfo",
    "ReviewInfo",
    "DEMO_USERS",
    "DEMO_PROJECT",
    "REVIEW_PROJECT",
    "CHUNKS_PROJECT",
    "REVIEW_LABELS",
    "JUDGE_LABELS",
    "REVIEW_JUDGE",
    "SAMPLE_DIR",
    "GUIDELINES",
]

DEMO_PROJECT = "demo"
REVIEW_PROJECT = "demo-review"
REVIEW_LABELS = "review_labels.jsonl"  # in the sample corpus folder: the labels and verdicts of demo-review
JUDGE_LABELS = "judge_lexical.jsonl"  # in the sample corpus folder: the lexical judge's labels of demo-review
REVIEW_JUDGE = "lexical"
_REVIEW_RUN = "run_bm25.trec"  # demo-review's third run (after the pooling)
CHUNKS_PROJECT = "demo-chunks"
_CHUNKS = ("long_docs.jsonl", "queries.jsonl", "chunks_paragraphs.jsonl", "run_chunks.trec")  # in that order
_FIRST_DEPTH, _DEPTH = 2, 3
_CORPUS = ("docs.jsonl", "queries.jsonl", "run_a.trec", "run_b.trec")
DEMO_USERS = (
    ("alice", "annotator", "alice-demo"),
    ("bob", "annotator", "bob-demo"),
    ("rita", "reviewer", "rita-demo"),
    ("admin", "admin", "admin-demo"),
)
SAMPLE_DIR = shipped.folder(shipped.SAMPLE_CORPUS)
"""The folder `load_demo` reads by default: the installed package's sample corpus, else the checkout's."""
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
class ReviewInfo:
    """Where ``demo-review`` stands: its labels, the disagreements adjudicated and still open, its releases
    and the agreement statistic against the threshold; ``created``: this call created the project."""

    project: str
    pairs: int
    labels: int
    adjudicated: int
    open_disagreements: int
    releases: int
    statistic: str
    value: float
    threshold: float
    created: bool

    def __str__(self) -> str:
        return (
            f"project {self.project}"
            + ("" if self.created else " (exists, unchanged)")
            + f": {self.pairs} pairs, {self.labels} labels by alice and bob, "
            f"{self.adjudicated} disagreements adjudicated by rita, {self.open_disagreements} open, "
            f"{self.releases} release(s); "
            f"{self.statistic} {self.value:.2f} (threshold {self.threshold:.2f})"
        )


@dataclass(frozen=True)
class DemoInfo:
    project: str
    users: tuple[tuple[str, str, str], ...]
    created_users: tuple[str, ...]
    pool: PoolReport
    reset: bool
    review: ReviewInfo | None = None
    chunks: PoolReport | None = None  # demo-chunks' pool (labelled demo only)


def load_demo(
    db: Database,
    *,
    reset: bool = False,
    sample_dir: str | Path | None = None,
    actor: Actor = SYSTEM,
    labelled: bool = False,
) -> DemoInfo:
    """Load (or complete) the demo; with ``labelled=True`` also the judged project ``demo-review`` (see the
    module doc). Runs the migrations first."""
    if not isinstance(labelled, bool):
        raise InvalidInput(f"labelled must be a bool; got {labelled!r}")
    folder = Path(sample_dir) if sample_dir is not None else SAMPLE_DIR
    needed = _CORPUS + ((REVIEW_LABELS, JUDGE_LABELS, _REVIEW_RUN, *_CHUNKS) if labelled else ())
    missing = [f for f in needed if not (folder / f).is_file()]
    if missing:
        raise InvalidInput(f"sample corpus folder {str(folder)!r} lacks {missing[0]}")
    if reset:
        _reset(db, actor)
    migrate.upgrade(db)
    created = _users(db, actor)
    _project(db, actor, DEMO_PROJECT, "Demo: after-sales help centre (sample corpus)")
    _corpus(db, actor, DEMO_PROJECT, folder)
    report = pooling.pool(db, actor, DEMO_PROJECT, depth=_DEPTH)
    projects.assign(db, actor, DEMO_PROJECT, ["alice", "bob"])
    review = _review(db, actor, folder) if labelled else None
    chunks = _chunks(db, actor, folder) if labelled else None
    return DemoInfo(
        project=DEMO_PROJECT,
        users=DEMO_USERS,
        created_users=created,
        pool=report,
        reset=reset,
        review=review,
        chunks=chunks,
    )


def _project(db: Database, actor: Actor, name: str, title: str) -> bool:
    """Create the project ``name`` unless it exists; True when created."""
    if name in {p.name for p in projects.list_projects(db, actor)}:
        return False
    projects.create_project(db, actor, name, title=title, guidelines=GUIDELINES)
    return True


def _corpus(db: Database, actor: Actor, project: str, folder: Path) -> None:
    imports.import_documents(db, actor, project, folder / "docs.jsonl")
    imports.import_queries(db, actor, project, folder / "queries.jsonl")
    for run in ("run_a.trec", "run_b.trec"):
        imports.import_run(db, actor, project, folder / run)


def _chunks(db: Database, actor: Actor, folder: Path) -> PoolReport:
    """``demo-chunks``: the long documents L1–L3, the queries, the paragraph chunking (with offsets) and the
    chunk-level run over it, pooled at depth 3 (6 pairs), evidence optional, alice and bob its annotators."""
    if _project(db, actor, CHUNKS_PROJECT, "Demo: long documents and a chunk-level run (evidence passages)"):
        projects.update_settings(db, actor, CHUNKS_PROJECT, evidence="optional")
    docs, queries, chunk_map, run = (folder / name for name in _CHUNKS)
    imports.import_documents(db, actor, CHUNKS_PROJECT, docs)
    imports.import_queries(db, actor, CHUNKS_PROJECT, queries)
    imports.import_chunk_map(db, actor, CHUNKS_PROJECT, chunk_map)
    imports.import_run(db, actor, CHUNKS_PROJECT, run, chunks=True)
    report = pooling.pool(db, actor, CHUNKS_PROJECT, depth=_DEPTH)
    projects.assign(db, actor, CHUNKS_PROJECT, ["alice", "bob"])
    return report


def _reset(db: Database, actor: Actor) -> None:
    if migrate.current_revision(db) is not None:
        with db.read() as s:  # only an admin may wipe (list_projects would let anyone through)
            authorize(s, actor, Role.ADMIN, "reset the database")
        ours = (DEMO_PROJECT, REVIEW_PROJECT, CHUNKS_PROJECT)
        others = [p.name for p in projects.list_projects(db, actor) if p.name not in ours]
        if others:
            raise Conflict(f"refusing to reset: the database holds other projects ({', '.join(others)})")
        if migrate.current_revision(db) == migrate.head_revision():
            with db.write() as s:  # rows first: SQLite cannot drop labels that assignments still point to
                backup.wipe(s)
    migrate.downgrade_all(db)


def _users(db: Database, actor: Actor) -> tuple[str, ...]:
    with db.read() as s:
        existing = set(users_store.by_names(s, [name for name, _, _ in DEMO_USERS]))
    created = []
    for name, role, password in DEMO_USERS:
        if name not in existing:
            users.create_user(db, actor, name, password, role=Role(role).value)
            created.append(name)
    return tuple(created)


# ------------------------------------------------------------------------------------------ demo-review
_Script = dict[tuple[str, str, str], tuple[int, str, float | None, list | None]]


def _review(db: Database, actor: Actor, folder: Path) -> ReviewInfo:
    """Build or complete ``demo-review`` (the two rounds of the module doc), acting as alice, bob and rita."""
    script = _script(folder / REVIEW_LABELS)
    with db.read() as s:  # acting as the demo's users is for an admin only
        authorize(s, actor, Role.ADMIN, "label the review demo as its users")
    created = _project(
        db,
        actor,
        REVIEW_PROJECT,
        "Demo for reviewers: judged by alice and bob, release v1, disagreements open",
    )
    _corpus(db, actor, REVIEW_PROJECT, folder)
    if created:
        projects.update_settings(db, actor, REVIEW_PROJECT, evidence="optional")
    people = {name: _as_user(db, name) for name in ("alice", "bob", "rita")}
    if not releases.list_releases(db, actor, REVIEW_PROJECT):
        if pooling.pool_depth(db, actor, REVIEW_PROJECT) is None:
            pooling.pool(db, actor, REVIEW_PROJECT, depth=_FIRST_DEPTH)
        projects.assign(db, actor, REVIEW_PROJECT, ["alice", "bob"])
        _label(db, people, script)
        _adjudicate(db, people["rita"], script)
        note = f"the depth-{_FIRST_DEPTH} pool, disagreements adjudicated by rita"
        releases.create_release(db, people["rita"], REVIEW_PROJECT, note=note)
    if (pooling.pool_depth(db, actor, REVIEW_PROJECT) or 0) < _DEPTH:
        pooling.pool(db, actor, REVIEW_PROJECT, depth=_DEPTH)
    _label(db, people, script)
    imports.import_run(db, actor, REVIEW_PROJECT, folder / _REVIEW_RUN)
    _replay_judge(db, actor, folder / JUDGE_LABELS)
    return _review_info(db, actor, created)


def _replay_judge(db: Database, actor: Actor, path: Path) -> None:
    """Import the lexical judge's labels as judge `REVIEW_JUDGE`, unless it already holds a label of every
    line (so a second load writes nothing, not even an audit entry)."""
    lines = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    known = REVIEW_JUDGE in {j.name for j in judges.list_judges(db, actor, REVIEW_PROJECT)}
    if known and len(judges.judge_qrels(db, actor, REVIEW_PROJECT, REVIEW_JUDGE).relevance) >= lines:
        return
    judges.import_labels(db, actor, REVIEW_PROJECT, REVIEW_JUDGE, path, filename=path.name)


def _script(path: Path) -> _Script:
    """The labels and verdicts of ``path``: (user, query_id, doc_id) → (grade, reason, seconds)."""
    out: _Script = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                key, value = _script_line(path, n, line)
                out[key] = value
    return out


def _script_line(
    path: Path, n: int, line: str
) -> tuple[tuple[str, str, str], tuple[int, str, float | None, list | None]]:
    try:
        row = json.loads(line)
        key = (str(row["user"]), str(row["query_id"]), str(row["doc_id"]))
        grade, reason, seconds = row["grade"], str(row["reason"]), row.get("seconds")
    except (ValueError, TypeError, KeyError) as exc:
        raise InvalidInput(
            f"{path}:{n}: not a label (user, query_id, doc_id, grade, reason): {exc}"
        ) from None
    evidence = row.get("evidence")  # passages [[start, end], ...] of the label, if any
    return key, (grade, reason, None if seconds is None else float(seconds), evidence)


def _as_user(db: Database, name: str) -> Actor:
    """The Actor of the demo user ``name`` (without their password, which they may have changed)."""
    with db.read() as s:
        user = users_store.by_name(s, name)
        if user is None:
            raise NotFound(f"demo user {name!r} does not exist")
        return actor_of(user)


def _label(db: Database, people: dict[str, Actor], script: _Script) -> None:
    """alice and bob label every pair their queues hand out, as the script says."""
    for name in ("alice", "bob"):
        who = people[name]
        while (view := queue.next_pair(db, who, REVIEW_PROJECT)) is not None:
            key = (name, view.query_id, view.doc_id)
            if key not in script:
                raise InvalidInput(
                    f"{REVIEW_LABELS} has no label by {name} for {view.query_id} {view.doc_id}"
                )
            grade, reason, seconds, evidence = script[key]
            labels.save_label(
                db,
                who,
                REVIEW_PROJECT,
                view.pair_id,
                grade=grade,
                reason=reason,
                seconds=seconds,
                evidence=None if evidence is None else [tuple(span) for span in evidence],
            )


def _adjudicate(db: Database, rita: Actor, script: _Script) -> None:
    """rita settles every open disagreement, as the script says."""
    for item in gate.disagreements(db, rita, REVIEW_PROJECT, limit=1000):
        key = ("rita", item.query_id, item.doc_id)
        if key not in script:
            raise InvalidInput(f"{REVIEW_LABELS} has no verdict by rita for {item.query_id} {item.doc_id}")
        grade, reason, *_ = script[key]
        adjudication.adjudicate(db, rita, REVIEW_PROJECT, item.pair_id, grade=grade, reason=reason)


def _review_info(db: Database, actor: Actor, created: bool) -> ReviewInfo:
    summary = gate.agreement(db, actor, REVIEW_PROJECT)
    return ReviewInfo(
        project=REVIEW_PROJECT,
        pairs=summary.n_pairs,
        labels=summary.n_labels,
        adjudicated=summary.disagreements - summary.unadjudicated,
        open_disagreements=summary.unadjudicated,
        releases=len(releases.list_releases(db, actor, REVIEW_PROJECT)),
        statistic=str(summary.statistic),
        value=summary.value,
        threshold=summary.threshold,
        created=created,
    )
