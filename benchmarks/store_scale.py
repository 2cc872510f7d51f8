"""Store at scale: 100k documents, 10k queries, 200k pairs and 1M labels, on SQLite and on PostgreSQL.

    .venv/bin/python benchmarks/store_scale.py            # full size, both databases
    .venv/bin/python benchmarks/store_scale.py --small    # a tenth of it, for a quick check
    .venv/bin/python benchmarks/store_scale.py --backend sqlite --ops 500

Setup goes through the real services where they are the product's path (documents, queries and a 200k-entry
run imported from files, depth-20 pooling into 200k pairs) and reports those times too; the 1M labels are then
bulk-loaded (COPY on PostgreSQL, executemany on SQLite) followed by ANALYZE: N = 5 annotators per pair out of
20, 95% of the pairs complete, the rest with 4 of their 5 labels, 1% of the labels edited once (a second
version). Then it measures, through the services:

- ``next_pair`` + ``save_label`` by random annotators, one after the other: median and p95
  (target p95 < 50 ms);
- the full agreement computation, ``gate.agreement`` (load + statistics + matrix + per query; target < 2 s);
- ``releases.create_release`` + ``export.export_release(format="trec")`` (target < 10 s), after bulk
  adjudication of the disagreements and exclusion of the incomplete pairs.

Each figure is printed for both databases with the PostgreSQL / SQLite ratio. SQLite files live in
benchmarks/.data/ (git-ignored); the PostgreSQL database ``qrelforge_bench_<pid>`` is dropped at the end.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # _pg, also when loaded by a test

from _pg import scratch_database  # noqa: E402

from annotate_app.services import _gate_state as gate_state  # noqa: E402
from annotate_app.services import export, gate, imports, pooling, projects, queue, releases, users  # noqa: E402
from annotate_app.services import labels as label_service  # noqa: E402
from annotate_app.services.auth import SYSTEM, authenticate  # noqa: E402
from annotate_app.store import projects as project_store  # noqa: E402
from annotate_app.store.db import Database  # noqa: E402
from annotate_app.store.migrate import upgrade  # noqa: E402

DATA = Path(__file__).resolve().parent / ".data"
ANNOTATORS, N, DEPTH = 20, 5, 20


@dataclass
class Size:
    docs: int
    queries: int

    @property
    def pairs(self) -> int:
        return self.queries * DEPTH


@dataclass
class Figures:
    backend: str
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------- input files
def _files(size: Size) -> dict[str, bytes]:
    docs = "".join(
        json.dumps(
            {
                "doc_id": f"D{i}",
                "title": f"title {i}",
                "text": f"text of document {i}, about topic {i % 97} and {i % 89}.",
            }
        )
        + "\n"
        for i in range(size.docs)
    )
    queries = "".join(
        json.dumps({"query_id": f"q{j}", "text": f"question {j}"}) + "\n" for j in range(size.queries)
    )
    step = 4729 % size.docs or 1
    run = io.StringIO()
    for j in range(size.queries):
        base = (j * 7919) % size.docs
        for r in range(DEPTH):
            run.write(f"q{j} Q0 D{(base + r * step) % size.docs} {r + 1} {DEPTH - r} bench\n")
    return {"docs": docs.encode(), "queries": queries.encode(), "run": run.getvalue().encode()}


def _timed(figures: Figures, name: str, fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    figures.timings[name] = time.perf_counter() - start
    return out


# ------------------------------------------------------------------------------------------------ setup
def _build(db: Database, size: Size, figures: Figures) -> None:
    upgrade(db)
    projects.create_project(db, SYSTEM, "bench", annotators_per_pair=N, guidelines="# bench")
    files = _files(size)
    _timed(
        figures,
        "import documents",
        imports.import_documents,
        db,
        SYSTEM,
        "bench",
        files["docs"],
        filename="docs.jsonl",
    )
    _timed(
        figures,
        "import queries",
        imports.import_queries,
        db,
        SYSTEM,
        "bench",
        files["queries"],
        filename="queries.jsonl",
    )
    _timed(figures, "import run", imports.import_run, db, SYSTEM, "bench", files["run"], filename="run.trec")
    report = _timed(figures, "pool (depth 20)", pooling.pool, db, SYSTEM, "bench", depth=DEPTH)
    figures.counts["pairs"] = report.added
    names = [f"ann{k:02d}" for k in range(ANNOTATORS)] + ["rev"]
    for name in names:
        users.create_user(
            db, SYSTEM, name, f"{name}-password", role="reviewer" if name == "rev" else "annotator"
        )
    projects.assign(db, SYSTEM, "bench", names[:-1])
    _timed(figures, "bulk load labels", _load_labels, db, figures)


def _label_plan(db: Database, rng: np.random.Generator) -> dict[str, np.ndarray]:
    with db.read() as s:
        conn = s.connection()
        pair_ids = np.array(
            conn.exec_driver_sql("SELECT id FROM pairs ORDER BY id").scalars().all(), dtype=np.int64
        )
        users_ = dict(conn.exec_driver_sql("SELECT username, id FROM users").all())
    annotator_ids = np.array([users_[f"ann{k:02d}"] for k in range(ANNOTATORS)], dtype=np.int64)
    n_pairs = len(pair_ids)
    per_pair = np.where(np.arange(n_pairs) < int(n_pairs * 0.95), N, N - 1)
    picks = np.argsort(rng.random((n_pairs, ANNOTATORS)), axis=1)[:, :N]
    truth = rng.choice([0, 0, 0, 1, 2, 3], size=n_pairs)
    mask = np.arange(N)[None, :] < per_pair[:, None]
    pair = np.broadcast_to(pair_ids[:, None], (n_pairs, N))[mask]
    slot = np.broadcast_to(np.arange(1, N + 1)[None, :], (n_pairs, N))[mask]
    annotator = annotator_ids[picks][mask]
    grade = np.where(
        rng.random(mask.sum()) < 0.85,
        np.broadcast_to(truth[:, None], (n_pairs, N))[mask],
        rng.integers(0, 4, mask.sum()),
    )
    return {
        "pair": pair,
        "slot": slot,
        "annotator": annotator,
        "grade": grade,
        "claimed": per_pair,
        "pair_ids": pair_ids,
    }


def _load_labels(db: Database, figures: Figures) -> None:
    rng = np.random.default_rng(7)
    plan = _label_plan(db, rng)
    n = len(plan["pair"])
    edited = np.zeros(n, dtype=bool)
    edited[rng.choice(n, size=n // 99, replace=False)] = True  # 1% edited: 2 versions → 1M labels in all
    version = np.where(edited, 2, 1)
    label_id_current = np.arange(1, n + 1) + np.cumsum(edited)  # the edited ones have their v1 just before
    with db.read() as s:
        project_id = s.connection().exec_driver_sql("SELECT id FROM projects WHERE name = 'bench'").scalar()
    now = "2026-01-01 00:00:00"
    assignments = [
        (
            i + 1,
            project_id,
            int(plan["pair"][i]),
            int(plan["annotator"][i]),
            int(plan["slot"][i]),
            "done",
            int(version[i]),
            int(label_id_current[i]),
            int(plan["grade"][i]),
            False,
            now,
            now,
        )
        for i in range(n)
    ]
    labels = []
    for i in range(n):
        common = (i + 1, int(plan["pair"][i]), int(plan["annotator"][i]))
        if edited[i]:
            labels.append(
                (
                    int(label_id_current[i]) - 1,
                    *common,
                    1,
                    (int(plan["grade"][i]) + 1) % 4,
                    "first look",
                    False,
                    5.0,
                    1,
                    1,
                    now,
                )
            )
        labels.append(
            (
                int(label_id_current[i]),
                *common,
                int(version[i]),
                int(plan["grade"][i]),
                "judged",
                False,
                7.5,
                1,
                1,
                now,
            )
        )
    claimed = [(int(c), int(p)) for p, c in zip(plan["pair_ids"], plan["claimed"], strict=True)]
    _bulk(db, assignments, labels, claimed)
    figures.counts["labels"] = len(labels)
    figures.counts["current labels"] = n


ASSIGNMENT_COLS = (
    "id",
    "project_id",
    "pair_id",
    "annotator_id",
    "slot",
    "status",
    "version",
    "label_id",
    "grade",
    "stale",
    "assigned_at",
    "updated_at",
)
LABEL_COLS = (
    "id",
    "assignment_id",
    "pair_id",
    "annotator_id",
    "version",
    "grade",
    "reason",
    "unsure",
    "seconds",
    "doc_version",
    "guidelines_version",
    "created_at",
)


def _bulk(db: Database, assignments: list, labels: list, claimed: list) -> None:
    raw = db.engine.raw_connection()
    try:
        cur = raw.cursor()
        if db.is_sqlite:
            cur.execute("PRAGMA foreign_keys=OFF")
            cur.execute("BEGIN IMMEDIATE")
            cur.executemany(
                f"INSERT INTO assignments ({', '.join(ASSIGNMENT_COLS)}) VALUES "
                f"({', '.join('?' * len(ASSIGNMENT_COLS))})",
                assignments,
            )
            cur.executemany(
                f"INSERT INTO labels ({', '.join(LABEL_COLS)}) VALUES ({', '.join('?' * len(LABEL_COLS))})",
                labels,
            )
            cur.executemany("UPDATE pairs SET claimed = ? WHERE id = ?", claimed)
            cur.execute("COMMIT")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("ANALYZE")
        else:
            cur.execute("SET CONSTRAINTS ALL DEFERRED")
            _copy(cur, "assignments", ASSIGNMENT_COLS, assignments)
            _copy(cur, "labels", LABEL_COLS, labels)
            cur.execute("CREATE TEMP TABLE claimed_tmp (claimed int, id int)")
            _copy(cur, "claimed_tmp", ("claimed", "id"), claimed)
            cur.execute("UPDATE pairs p SET claimed = t.claimed FROM claimed_tmp t WHERE p.id = t.id")
            for table in ("assignments", "labels"):
                cur.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
                )
            raw.commit()
            raw.driver_connection.autocommit = True
            cur = raw.cursor()
            cur.execute("VACUUM ANALYZE")
            raw.driver_connection.autocommit = False
    finally:
        raw.close()


def _copy(cur, table: str, cols: tuple, rows: list) -> None:
    with cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


# ------------------------------------------------------------------------------------------- measuring
def _queue_latency(db: Database, ops: int, figures: Figures) -> None:
    actors = [authenticate(db, f"ann{k:02d}", f"ann{k:02d}-password") for k in range(ANNOTATORS)]
    rng = np.random.default_rng(11)
    times = []
    for _ in range(ops):
        actor = actors[int(rng.integers(ANNOTATORS))]
        start = time.perf_counter()
        view = queue.next_pair(db, actor, "bench")
        if view is None:
            continue
        label_service.save_label(
            db, actor, "bench", view.pair_id, grade=int(rng.integers(4)), reason="benchmark", seconds=3.0
        )
        times.append(time.perf_counter() - start)
    times.sort()
    figures.timings["next_pair+save_label median"] = statistics.median(times)
    figures.timings["next_pair+save_label p95"] = times[int(0.95 * (len(times) - 1))]
    figures.counts["queue operations"] = len(times)


def _agreement(db: Database, reviewer, figures: Figures) -> None:
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        summary = gate.agreement(db, reviewer, "bench")
        runs.append(time.perf_counter() - start)
    figures.timings["agreement (full)"] = statistics.median(runs)
    figures.counts["agreement pairs"] = summary.n_pairs
    figures.counts["disagreements"] = summary.disagreements


def _prepare_release(db: Database, figures: Figures) -> None:
    """Adjudicate every open disagreement and exclude the incomplete pairs (bulk, untimed)."""
    with db.read() as s:
        project = project_store.find(s, "bench")
        state = gate_state.load_state(s, project)
    unresolved = state.unresolved()
    verdicts = state.verdicts.loc[unresolved]
    now = "2026-01-02 00:00:00"
    with db.write() as s:
        conn = s.connection()
        reviewer = conn.exec_driver_sql("SELECT id FROM users WHERE username = 'rev'").scalar()
        rows = [
            {
                "project_id": project.id,
                "pair_id": int(p),
                "reviewer_id": reviewer,
                "grade": 0,
                "reason": "bench",
                "label_state": st,
                "created_at": now,
            }
            for p, st in zip(unresolved, verdicts["label_state"], strict=True)
        ]
        if rows:
            s.execute(
                text(
                    "INSERT INTO adjudications (project_id, pair_id, reviewer_id, grade, reason, "
                    "label_state, created_at) VALUES (:project_id, :pair_id, :reviewer_id, :grade, :reason, "
                    ":label_state, :created_at)"
                ),
                rows,
            )
        conn.exec_driver_sql(
            f"UPDATE pairs SET excluded = {'1' if db.is_sqlite else 'true'} WHERE id NOT IN "
            "(SELECT pair_id FROM assignments WHERE status = 'done' GROUP BY pair_id "
            f"HAVING count(*) >= {N})"
        )
    figures.counts["adjudicated (bulk)"] = len(rows)


def _release(db: Database, reviewer, figures: Figures) -> None:
    start = time.perf_counter()
    info = releases.create_release(db, reviewer, "bench", justification="benchmark data: random grades")
    middle = time.perf_counter()
    data = export.export_release(db, reviewer, "bench", format="trec")
    end = time.perf_counter()
    figures.timings["create_release"] = middle - start
    figures.timings["export TREC"] = end - middle
    figures.timings["release + TREC export"] = end - start
    figures.counts["released qrels"] = info.n_qrels
    assert data.count(b"\n") == info.n_qrels


# ------------------------------------------------------------------------------------------------ main
def _sqlite_url(tag: str) -> str:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"store_scale_{tag}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return f"sqlite:///{path}"


def _pg_database(create: bool) -> str:
    return scratch_database("qrelforge_bench", create=create)


def run_backend(backend: str, size: Size, ops: int, tag: str, keep: bool = False) -> Figures:
    url = _sqlite_url(tag) if backend == "sqlite" else _pg_database(create=True)
    db = Database(url, pool_size=4)
    figures = Figures(backend)
    try:
        print(
            f"[{backend}] building {size.docs} docs, {size.queries} queries, {size.pairs} pairs ...",
            flush=True,
        )
        _build(db, size, figures)
        print(f"[{backend}] measuring ...", flush=True)
        reviewer = authenticate(db, "rev", "rev-password")
        _queue_latency(db, ops, figures)
        _agreement(db, reviewer, figures)
        _prepare_release(db, figures)
        _release(db, reviewer, figures)
    finally:
        db.dispose()
        if backend == "postgresql" and not keep:
            _pg_database(create=False)
        elif backend == "postgresql":
            print(f"[{backend}] kept {url}", flush=True)
    return figures


TARGETS = {"next_pair+save_label p95": 0.050, "agreement (full)": 2.0, "release + TREC export": 10.0}


def _report(results: list[Figures]) -> str:
    names = list(dict.fromkeys(k for f in results for k in f.timings))
    header = (
        ["measure", *(f.backend for f in results)] + (["pg/sqlite"] if len(results) == 2 else []) + ["target"]
    )
    rows = []
    for name in names:
        values = [f.timings.get(name) for f in results]
        cells = [
            f"{v * 1000:.1f} ms" if v is not None and v < 1 else (f"{v:.2f} s" if v is not None else "-")
            for v in values
        ]
        ratio = (
            [f"{values[1] / values[0]:.2f}x" if None not in values and values[0] else "-"]
            if len(values) == 2
            else []
        )
        target = TARGETS.get(name)
        ok = "" if target is None else (f"< {target * 1000:.0f} ms" if target < 1 else f"< {target:.0f} s")
        if target is not None:
            ok += "  " + " ".join("ok" if v is not None and v < target else "MISS" for v in values)
        rows.append([name, *cells, *ratio, ok])
    counts = "; ".join(f"{f.backend}: " + ", ".join(f"{k} {v}" for k, v in f.counts.items()) for f in results)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]
    ]
    return "\n".join(lines) + "\n\n" + counts + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="10k docs, 1k queries, 20k pairs, 100k labels")
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument(
        "--ops", type=int, help="next_pair+save_label operations to time (default 1000, small 300)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL database (prints its URL)")
    args = parser.parse_args(argv)
    size = Size(10_000, 1_000) if args.small else Size(100_000, 10_000)
    ops = args.ops or (300 if args.small else 1000)
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    results = [run_backend(b, size, ops, "small" if args.small else "full", args.keep) for b in backends]
    print()
    print(_report(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
