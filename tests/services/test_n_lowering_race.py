"""Issue 16, item 1: an admin lowers ``annotators_per_pair`` from 3 to 2 while 24 annotators (threads, each
call its own session) claim and label; no pair may end with more than the N in force. Before the fix the
claims in flight kept the N they read at the start of their transaction and PostgreSQL over-assigned pairs in
20 of 20 rounds; now a claim holds the project's claim lock in shared mode and reads N under it, and lowering
N takes that lock exclusively (`store.annotation.claim_lock`, `settings_lock`)."""

from __future__ import annotations

import json
import threading
import time

from sqlalchemy import text

from annotate_app.services import imports, labels, pooling, projects, queue, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import Conflict
from annotate_app.store import annotation

ROUNDS = 20
ANNOTATORS = 24
QUERIES, DOCS = 2, 12  # 24 pairs: every pair has 2 claims before any gets a third


def _project(db, name: str, people: list[str]) -> None:
    projects.create_project(db, SYSTEM, name, annotators_per_pair=3)
    docs = "".join(json.dumps({"doc_id": f"D{i}", "text": f"text {i}"}) + "\n" for i in range(DOCS))
    queries = "".join(json.dumps({"query_id": f"q{j}", "text": f"query {j}"}) + "\n" for j in range(QUERIES))
    run = "".join(f"q{j} Q0 D{i} {i + 1} {DOCS - i} sys\n" for j in range(QUERIES) for i in range(DOCS))
    imports.import_documents(db, SYSTEM, name, docs.encode(), filename="docs.jsonl")
    imports.import_queries(db, SYSTEM, name, queries.encode(), filename="queries.jsonl")
    imports.import_run(db, SYSTEM, name, run.encode(), filename="run.trec")
    pooling.pool(db, SYSTEM, name, depth=DOCS)
    projects.assign(db, SYSTEM, name, people)


def _annotate(db, actor, name: str, barrier: threading.Barrier, errors: list) -> None:
    try:
        barrier.wait(timeout=60)
        while (view := queue.next_pair(db, actor, name)) is not None:
            labels.save_label(db, actor, name, view.pair_id, grade=1, reason="judged", seconds=1.0)
    except Exception as exc:  # pragma: no cover - reported by the test
        errors.append(f"{actor.username}: {type(exc).__name__}: {exc}")


def _claims(db, project_id: int) -> int:
    with db.read() as s:
        sql = text("SELECT sum(claimed) FROM pairs WHERE project_id = :p")
        return int(s.execute(sql, {"p": project_id}).scalar())


def _lower(db, name: str, project_id: int, at: int, barrier: threading.Barrier, outcome: list) -> None:
    """Lower N to 2 once ``at`` claims have committed (rounds spread ``at`` from the first claim to two per
    pair: concurrent claimers pile onto the same first pairs, so third claims are in flight early)."""
    barrier.wait(timeout=60)
    while _claims(db, project_id) < at:
        time.sleep(0.001)
    try:
        projects.update_settings(db, SYSTEM, name, annotators_per_pair=2)
        outcome.append(2)
    except Conflict:  # a third claim had committed first: the existing guard refuses, N stays 3
        outcome.append(3)


def _over_assigned(db, project_id: int, n: int) -> list[tuple]:
    with db.read() as s:
        return [
            tuple(r)
            for r in s.execute(
                text(
                    "SELECT p.id, p.claimed, "
                    "(SELECT count(*) FROM assignments a WHERE a.pair_id = p.id AND a.slot IS NOT NULL), "
                    "(SELECT count(DISTINCT l.annotator_id) FROM labels l WHERE l.pair_id = p.id) "
                    f"FROM pairs p WHERE p.project_id = {project_id}"
                )
            )
            if max(r[1], r[2], r[3]) > n
        ]


def test_lowering_n_while_24_annotators_claim_never_over_assigns(db, monkeypatch):
    insert = annotation.insert_claim

    def slow_insert(*args, **kwargs):  # a claim stays in flight 30 ms after taking its slot (a loaded server)
        time.sleep(0.03)
        return insert(*args, **kwargs)

    if not db.is_sqlite:  # SQLite serialises writers: holding its one write lock would only slow the test
        monkeypatch.setattr(annotation, "insert_claim", slow_insert)
    people = [f"r{k:02d}" for k in range(ANNOTATORS)]
    for person in people:
        users.create_user(db, SYSTEM, person, f"{person}-password")
    actors = [authenticate(db, p, f"{p}-password") for p in people]
    results = []
    for r in range(ROUNDS):
        name = f"race{r}"
        _project(db, name, people)
        project_id = projects.get_project(db, SYSTEM, name).id
        at = 1 + r * 2 * QUERIES * DOCS // ROUNDS  # from the first claim to ~2 claims per pair
        barrier, errors, outcome = threading.Barrier(ANNOTATORS + 1), [], []
        threads = [threading.Thread(target=_annotate, args=(db, a, name, barrier, errors)) for a in actors]
        threads.append(threading.Thread(target=_lower, args=(db, name, project_id, at, barrier, outcome)))
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not errors, errors[:3]
        assert not any(t.is_alive() for t in threads)
        n = outcome[0]
        results.append((n, _over_assigned(db, project_id, n)))
    assert [bad for _, bad in results] == [[]] * ROUNDS  # (pair, claimed, live claims, labellers) beyond N
    assert any(n == 2 for n, _ in results), results  # N was lowered mid-way
