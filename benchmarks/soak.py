"""Concurrency soak: many annotators at once, a reviewer adjudicating and releasing, on SQLite and PostgreSQL.

    .venv/bin/python benchmarks/soak.py                      # 50 annotators, >= 20 000 labels, both databases
    .venv/bin/python benchmarks/soak.py --annotators 10 --labels 1000 --backend sqlite   # a quick look

Every client is a thread with its own actor (its own login) calling the services, one short transaction per
call, as app replicas would. Annotators take pairs (``queue.next_pair``), label them (``labels.save_label``
with the version they saw), now and then skip one, and edit one of their earlier labels (a new version). The
pool grows in waves: when a wave is complete, the reviewer — who meanwhile keeps adjudicating every
disagreement (``gate.disagreements`` + ``adjudication.adjudicate``, racing the annotators' edits, which reopen
pairs) — releases it (``releases.create_release``) and the admin pools the next wave. Each client keeps a log
of what the server acknowledged.

Afterwards, from the database: no pair beyond N live claims or N current labels (over-assigned), every
acknowledged label version present with its grade (lost) and nothing else (phantom), no duplicate (assignment,
version), the cached current label of every assignment its newest version, and every release's content hash
reproducible from its stored qrels and from a fresh TREC export. Printed per database: labels written, lost,
over-assigned, p50/p95 latency per operation, throughput, with the PostgreSQL/SQLite ratio.

`run_soak(db, ...)` is the library form, used by tests/services/test_soak_short.py on a small scale.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _pg, _code, also when loaded by a test
from _code import code_root  # noqa: E402

sys.path.insert(0, str(code_root()))  # this checkout, or the old code of soak_mp.py --old

from _pg import scratch_database  # noqa: E402
from sqlalchemy import text  # noqa: E402

from annotate_app.services import (  # noqa: E402
    adjudication,
    export,
    gate,
    imports,
    labels,
    pooling,
    projects,
    queue,
    releases,
    users,
)
from annotate_app.services.auth import SYSTEM, authenticate  # noqa: E402
from annotate_app.services.errors import Conflict  # noqa: E402
from annotate_app.store.db import Database  # noqa: E402
from annotate_app.store.migrate import upgrade  # noqa: E402

PROJECT = "soak"
DOCS_PER_QUERY = 20
OPERATIONS = ("take", "label", "edit", "skip", "adjudicate", "release")
AGREE = 0.8  # an annotator gives a pair its "true" grade this often (else a random one): ~30% disagreements


@dataclass
class Log:
    """What the server acknowledged to one client, and how long each call took."""

    acked: list[tuple[int, str, int, int]] = field(default_factory=list)  # (pair, annotator, version, grade)
    skips: int = 0
    conflicts: Counter = field(default_factory=Counter)
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)


@dataclass
class SoakReport:
    backend: str
    annotators: int
    n: int
    seconds: float
    labels: int
    first_labels: int
    edits: int
    skips: int
    releases: int
    lost: int
    phantom: int
    over_assigned: int
    duplicates: int
    stale_cache: int
    unreproducible_releases: int
    conflicts: dict[str, int]
    latency: dict[str, dict[str, float]]
    errors: list[str]

    @property
    def ok(self) -> bool:
        return not (
            self.lost
            or self.phantom
            or self.over_assigned
            or self.duplicates
            or self.stale_cache
            or self.unreproducible_releases
            or self.errors
        )


# ----------------------------------------------------------------------------------------------- setup
def _timed(log: Log, op: str, call):
    start = time.perf_counter()
    try:
        return call()
    finally:
        log.latency[op].append(time.perf_counter() - start)


def _setup(db: Database, annotators: int, n: int, waves: int, queries_per_wave: int) -> list:
    """The project, its corpus, one run per wave (not pooled yet), the annotators and the reviewer."""
    projects.create_project(db, SYSTEM, PROJECT, annotators_per_pair=n, min_reason_length=3)
    docs = "".join(json.dumps({"doc_id": f"D{i}", "text": f"document {i}"}) + "\n" for i in range(400))
    imports.import_documents(db, SYSTEM, PROJECT, docs.encode(), filename="docs.jsonl")
    total = waves * queries_per_wave
    queries = "".join(json.dumps({"query_id": f"q{j}", "text": f"query {j}"}) + "\n" for j in range(total))
    imports.import_queries(db, SYSTEM, PROJECT, queries.encode(), filename="queries.jsonl")
    rng = random.Random(7)
    for w in range(waves):
        lines = [
            f"q{j} Q0 D{d} {r + 1} {100 - r} wave{w}\n"
            for j in range(w * queries_per_wave, (w + 1) * queries_per_wave)
            for r, d in enumerate(rng.sample(range(400), DOCS_PER_QUERY))
        ]
        imports.import_run(db, SYSTEM, PROJECT, "".join(lines).encode(), filename=f"wave{w}.trec")
    names = [f"a{k:02d}" for k in range(annotators)]
    for name in names:
        users.create_user(db, SYSTEM, name, f"{name}-password")
    users.create_user(db, SYSTEM, "rev", "rev-password", role="reviewer")
    projects.assign(db, SYSTEM, PROJECT, names)
    return [authenticate(db, name, f"{name}-password") for name in names]


# --------------------------------------------------------------------------------------------- clients
def _annotator(
    db: Database, me, seed: int, stop: threading.Event, log: Log, p_skip: float, p_edit: float
) -> None:
    rng = random.Random(seed)
    mine: dict[int, int] = {}  # pair -> the label version I last saw acknowledged
    try:
        while not stop.is_set():
            view = _timed(log, "take", lambda: queue.next_pair(db, me, PROJECT))
            if view is None:  # the wave is done: wait for the next one
                time.sleep(rng.uniform(0.05, 0.15))
                continue
            if view.current is None and rng.random() < p_skip:
                _timed(
                    log, "skip", lambda v=view: queue.skip(db, me, PROJECT, v.pair_id, reason="cannot judge")
                )
                log.skips += 1
                continue
            _save(db, me, view.pair_id, mine.get(view.pair_id, 0), rng, log, "label", mine)
            if mine and rng.random() < p_edit:
                pair = rng.choice(list(mine))
                _save(db, me, pair, mine[pair], rng, log, "edit", mine)
    except Exception as exc:  # noqa: BLE001 - reported in the figures, and the soak stops
        log.errors.append(f"{me.username}: {type(exc).__name__}: {exc}")
        print(f"  {me.username} failed: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr, flush=True)
        stop.set()


def _save(db: Database, me, pair: int, seen: int, rng: random.Random, log: Log, op: str, mine: dict) -> None:
    grade = pair * 7919 % 4 if rng.random() < AGREE else rng.randrange(4)  # mostly the pair's "true" grade
    try:
        info = _timed(
            log,
            op,
            lambda: labels.save_label(
                db,
                me,
                PROJECT,
                pair,
                grade=grade,
                reason=f"{op} {grade} (version {seen + 1})",  # an edit is new content: saves are idempotent
                seconds=rng.uniform(1, 30),
                expected_version=seen,
            ),
        )
    except Conflict as exc:  # only another tab of the same user could cause it: counted, never expected here
        log.conflicts[f"{op}: {str(exc)[:40]}"] += 1
        return
    log.acked.append((pair, me.username, info.version, info.grade))
    mine[pair] = info.version


def _reviewer(
    db: Database, stop: threading.Event, log: Log, waves: int, released: list, *, pause: float = 0.1
) -> None:
    """Adjudicate every open disagreement; release each complete wave, then pool the next one. ``pause``:
    seconds before looking again while the wave is not complete."""
    rev = authenticate(db, "rev", "rev-password")
    wave = 0
    pooling.pool(db, SYSTEM, PROJECT, depth=DOCS_PER_QUERY, runs=["wave0"])
    try:
        while not stop.is_set():
            for d in gate.disagreements(db, rev, PROJECT, limit=500):
                grade = sorted(x.grade for x in d.labels)[len(d.labels) // 2]
                try:
                    _timed(
                        log,
                        "adjudicate",
                        lambda p=d.pair_id, g=grade: adjudication.adjudicate(
                            db, rev, PROJECT, p, grade=g, reason="reviewed the reasons"
                        ),
                    )
                except Conflict:  # an edit made the pair agree meanwhile
                    log.conflicts["adjudicate: no longer a disagreement"] += 1
            block = gate.blockers(db, rev, PROJECT)
            if block.hard:
                time.sleep(pause)
                continue
            try:
                info = _timed(
                    log,
                    "release",
                    lambda: releases.create_release(
                        db, rev, PROJECT, justification="soak test: simulated annotators agree by chance"
                    ),
                )
            except Conflict:  # an edit reopened a disagreement between the check and the release
                log.conflicts["release: blocked meanwhile"] += 1
                continue
            released.append(info.version)
            wave += 1
            if wave == waves:
                stop.set()
            else:
                pooling.pool(db, SYSTEM, PROJECT, depth=DOCS_PER_QUERY, runs=[f"wave{wave}"])
    except Exception as exc:  # noqa: BLE001
        log.errors.append(f"reviewer: {type(exc).__name__}: {exc}")
        print(f"  reviewer failed: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr, flush=True)
        stop.set()


# ---------------------------------------------------------------------------------------------- checks
def _rows(db: Database, sql: str) -> list[tuple]:
    with db.read() as s:
        return [tuple(r) for r in s.execute(text(sql))]


def _verify(db: Database, n: int, acked: list[tuple[int, str, int, int]]) -> dict[str, int]:
    stored = _rows(
        db,
        "SELECT l.pair_id, u.username, l.version, l.grade FROM labels l "
        "JOIN users u ON u.id = l.annotator_id",
    )
    acked_set, stored_set = Counter(acked), Counter(stored)
    over = _rows(
        db,
        "SELECT p.id FROM pairs p WHERE p.claimed > {n} OR p.claimed < 0 OR "
        "(SELECT count(*) FROM assignments a WHERE a.pair_id = p.id AND a.slot IS NOT NULL) "
        "NOT IN (p.claimed) OR (SELECT count(*) FROM assignments a WHERE a.pair_id = p.id "
        "AND a.status = 'done') > {n}".replace("{n}", str(int(n))),
    )
    duplicates = _rows(
        db, "SELECT assignment_id, version FROM labels GROUP BY assignment_id, version HAVING count(*) > 1"
    )
    stale_cache = _rows(
        db,
        "SELECT a.id FROM assignments a JOIN labels l ON l.id = a.label_id WHERE "
        "a.version <> l.version OR a.grade <> l.grade OR l.version <> (SELECT max(version) "
        "FROM labels m WHERE m.assignment_id = a.id)",
    )
    return {
        "lost": sum((acked_set - stored_set).values()),
        "phantom": sum((stored_set - acked_set).values()),
        "over_assigned": len(over),
        "duplicates": len(duplicates),
        "stale_cache": len(stale_cache),
    }


def _releases_reproducible(db: Database) -> int:
    """How many releases fail: sha256 of the canonical TREC text rebuilt from the stored qrels, and of a fresh
    export, must both equal the stored content hash; every label behind a qrel must exist on its pair."""
    bad = 0
    for r in releases.list_releases(db, SYSTEM, PROJECT):
        qrels = releases.release_qrels(db, SYSTEM, PROJECT, r.version)
        rebuilt = releases.canonical_trec(
            qrels.query_id.to_pylist(), qrels.doc_id.to_pylist(), qrels.relevance
        )
        exported = export.export_release(db, SYSTEM, PROJECT, r.version, format="trec")
        provenance = _rows(
            db,
            "SELECT q.pair_id, q.label_ids FROM release_qrels q JOIN releases r ON "
            f"r.id = q.release_id WHERE r.version = {int(r.version)}",
        )
        label_pairs = dict(_rows(db, "SELECT id, pair_id FROM labels"))
        orphan = any(label_pairs.get(int(i)) != pair for pair, ids in provenance for i in ids.split(","))
        if (
            releases.sha256_text(rebuilt) != r.content_hash
            or hashlib.sha256(exported).hexdigest() != r.content_hash
            or orphan
            or len(provenance) != r.n_qrels
        ):
            bad += 1
    return bad


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"n": len(ordered), "p50": pick(0.50), "p95": pick(0.95), "max": ordered[-1]}


# ---------------------------------------------------------------------------------------------- the run
def run_soak(
    db: Database,
    *,
    annotators: int = 50,
    labels_target: int = 20_000,
    n: int = 2,
    waves: int = 6,
    p_skip: float = 0.03,
    p_edit: float = 0.12,
    backend: str = "",
    timeout: float = 3600,
) -> SoakReport:
    """Run the soak on an empty, migrated database and check it (see the module doc). The pool holds enough
    pairs for ``labels_target`` label versions (first labels plus edits), in ``waves`` waves."""
    pairs = int(labels_target / (n * (1 + p_edit) * (1 - p_skip)) + 1)
    queries_per_wave = max(1, -(-pairs // (waves * DOCS_PER_QUERY)))
    actors = _setup(db, annotators, n, waves, queries_per_wave)
    stop, logs, released = threading.Event(), [Log() for _ in range(annotators + 1)], []
    threads = [
        threading.Thread(target=_annotator, args=(db, a, 1000 + i, stop, logs[i], p_skip, p_edit))
        for i, a in enumerate(actors)
    ]
    threads.append(threading.Thread(target=_reviewer, args=(db, stop, logs[-1], waves, released)))
    start = time.perf_counter()
    for t in threads:
        t.start()
    stop.wait(timeout)
    stop.set()
    for t in threads:
        t.join(timeout=120)
    seconds = time.perf_counter() - start
    acked = [a for log in logs for a in log.acked]
    checks = _verify(db, n, acked)
    latency = {op: _percentiles([x for log in logs for x in log.latency.get(op, [])]) for op in OPERATIONS}
    conflicts = sum((log.conflicts for log in logs), Counter())
    errors = [e for log in logs for e in log.errors] + [
        f"{t.name} still running" for t in threads if t.is_alive()
    ]
    if len(released) < waves:
        errors.append(f"only {len(released)} of {waves} releases made in {timeout:.0f} s")
    return SoakReport(
        backend or db.dialect,
        annotators,
        n,
        seconds,
        len(acked),
        sum(a[2] == 1 for a in acked),
        sum(a[2] > 1 for a in acked),
        sum(log.skips for log in logs),
        len(released),
        checks["lost"],
        checks["phantom"],
        checks["over_assigned"],
        checks["duplicates"],
        checks["stale_cache"],
        _releases_reproducible(db),
        dict(conflicts),
        latency,
        errors,
    )


# ------------------------------------------------------------------------------------------- reporting
def render(reports: list[SoakReport]) -> str:
    header = ["", *(r.backend for r in reports)] + (["pg/sqlite"] if len(reports) == 2 else [])
    rows = [
        ["annotators (threads)", *(r.annotators for r in reports)],
        ["labels written (versions)", *(r.labels for r in reports)],
        ["  first labels / edits", *(f"{r.first_labels} / {r.edits}" for r in reports)],
        ["skips", *(r.skips for r in reports)],
        ["releases", *(r.releases for r in reports)],
        ["lost (must be 0)", *(r.lost for r in reports)],
        ["phantom (must be 0)", *(r.phantom for r in reports)],
        ["over-assigned (must be 0)", *(r.over_assigned for r in reports)],
        ["duplicate versions (must be 0)", *(r.duplicates for r in reports)],
        ["releases not reproducible (must be 0)", *(r.unreproducible_releases for r in reports)],
        ["wall time", *(f"{r.seconds:.1f} s" for r in reports)],
        ["labels / s", *(f"{r.labels / r.seconds:.0f}" for r in reports)],
    ]
    for op in OPERATIONS:
        for q in ("p50", "p95"):
            values = [r.latency.get(op, {}).get(q) for r in reports]
            rows.append([f"{op} {q}", *(f"{v * 1000:.1f} ms" if v is not None else "-" for v in values)])
    if len(reports) == 2:
        for row in rows:
            row.append(_ratio(row[1], row[2]))
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]
    ]
    notes = [
        f"{r.backend}: conflicts {r.conflicts or 'none'}; errors {r.errors[:3] or 'none'}" for r in reports
    ]
    return "\n".join(lines + [""] + notes) + "\n"


def _ratio(a, b) -> str:
    try:
        x, y = (float(str(v).split()[0]) for v in (a, b))
    except ValueError:
        return ""
    return f"{y / x:.2f}x" if x else ""


def _pg_database(create: bool) -> str:
    return scratch_database("qrelforge_soak", create=create)


def _cheap_hashing() -> None:
    """Logins are not what this measures: cheap argon2 parameters (the real ones cost ~0.14 s per login)."""
    from argon2 import PasswordHasher

    from annotate_app.services import auth

    auth._HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


def run_backend(backend: str, args: argparse.Namespace) -> SoakReport:
    folder = tempfile.mkdtemp(prefix="qrelforge-soak-")
    url = f"sqlite:///{folder}/soak.db" if backend == "sqlite" else _pg_database(create=True)
    upgrade(url)
    db = Database(url, pool_size=args.annotators + 4)
    try:
        print(f"[{backend}] {args.annotators} annotators, >= {args.labels} labels ...", flush=True)
        return run_soak(
            db,
            annotators=args.annotators,
            labels_target=args.labels,
            n=args.n,
            waves=args.waves,
            backend=backend,
        )
    finally:
        db.dispose()
        shutil.rmtree(folder, ignore_errors=True)
        if backend == "postgresql":
            _pg_database(create=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument(
        "--labels", type=int, default=20_000, help="label versions to write (first labels + edits)"
    )
    parser.add_argument("-n", type=int, default=2, help="annotators per pair")
    parser.add_argument("--waves", type=int, default=6, help="pool waves, each released when complete")
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    args = parser.parse_args(argv)
    _cheap_hashing()
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    reports = [run_backend(b, args) for b in backends]
    print()
    print(render(reports))
    return 0 if all(r.ok for r in reports) else 1


if __name__ == "__main__":
    raise SystemExit(main())
