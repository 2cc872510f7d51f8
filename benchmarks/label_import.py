"""Label import throughput and annotators' saves during it, on SQLite and PostgreSQL.

    .venv/bin/python benchmarks/label_import.py                 # 20k and 200k labels, both databases
    .venv/bin/python benchmarks/label_import.py --old           # and the old code (git main) at 20k
    .venv/bin/python benchmarks/label_import.py --sizes 20000 --backends sqlite   # a quick look

Each measurement is a child process on a fresh database (a SQLite file in a temporary folder, or a scratch
PostgreSQL database dropped afterwards), migrated and filled by the code under test: a project ``big`` whose
pool holds every pair of ``size / 2000`` queries × 1000 documents, and a JSONL file of ``size`` labels by ten
annotators (two per pair, accounts the import creates). The child times ``imports.import_labels`` alone and
prints labels/s. A second import of the same file is timed too (nothing to add: every label unchanged).
CPU of the first import: the child's (``time.process_time``) and, on PostgreSQL, the server's (the
backends serving the scratch database, from ``/proc/<pid>/stat``), and labels per CPU-second of both: a
figure the load of a shared machine moves far less than wall time.

Saves (SQLite, the largest size; ``--no-saves`` skips them): while the child imports, this process saves
labels as an annotator of another project of the same database (``queue.next_pair`` + ``labels.save_label``,
0.05 s apart, `tests/helpers/import_load.saves_during`), and reports their p50, p99, max and the saves that
failed ("the database is busy"), and how many imported labels were visible after the saves (SQLite writes
a big import a piece at a time).

``--old`` runs the code of git ``--old-revision`` (default `OLD_REVISION`, main before the label import was
rewritten), exported into a temporary folder (`_code.export_revision`), in the child processes, at
``--old-sizes``; and the saves during its import of the smallest of them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from _code import export_revision  # noqa: E402
from _pg import scratch_database  # noqa: E402
from import_load import labels_file  # noqa: E402

OLD_REVISION = "c097a53"  # main before the label import was rewritten
DOCS = 1000  # documents per query: the pool is queries × documents
ANNOTATORS = 10
SETUP = """
import json, sys, time
from annotate_app.services import imports, pooling, projects, users
from annotate_app.services.auth import SYSTEM
from annotate_app.store.db import Database
from annotate_app.store.migrate import upgrade

url, queries, docs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
upgrade(url)
db = Database(url)

def project(name, queries, docs, n):
    projects.create_project(db, SYSTEM, name, annotators_per_pair=n)
    lines = "".join(json.dumps({"doc_id": f"D{i}", "title": f"t{i}", "text": f"text {i}"}) + "\\n"
                    for i in range(docs))
    imports.import_documents(db, SYSTEM, name, lines.encode(), filename="docs.jsonl")
    lines = "".join(json.dumps({"query_id": f"q{j}", "text": f"query {j}"}) + "\\n" for j in range(queries))
    imports.import_queries(db, SYSTEM, name, lines.encode(), filename="queries.jsonl")
    run = "".join(f"q{j} Q0 D{i} {i + 1} {docs - i} sys\\n" for j in range(queries) for i in range(docs))
    imports.import_run(db, SYSTEM, name, run.encode(), filename="run.trec")
    pooling.pool(db, SYSTEM, name, depth=docs)

project("big", queries, docs, 2)
project("team", 100, 30, 1)
users.create_user(db, SYSTEM, "alice", "alice-password-1")
projects.assign(db, SYSTEM, "team", ["alice"])
"""
IMPORT = """
import json, os, sys, time
from sqlalchemy import text
from annotate_app.services import imports
from annotate_app.services.auth import SYSTEM
from annotate_app.store.db import Database

db = Database(sys.argv[1])
TICK = os.sysconf("SC_CLK_TCK")

def server_cpu():
    # pid -> CPU seconds (user + system) of the PostgreSQL backends serving this database
    if db.is_sqlite:
        return {}
    with db.read() as s:
        sql = "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        pids = list(s.execute(text(sql)).scalars())
    out = {}
    for pid in pids:
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = (int(fields[11]) + int(fields[12])) / TICK
    return out

times = []
for _ in range(2):
    server, cpu, t0 = server_cpu(), time.process_time(), time.monotonic()
    report = imports.import_labels(db, SYSTEM, "big", sys.argv[2], fmt="jsonl")
    wall, cpu = time.monotonic() - t0, time.process_time() - cpu
    after = server_cpu()
    served = sum(v - server.get(pid, 0.0) for pid, v in after.items())
    times.append((wall, str(report), cpu, served))
print(json.dumps(times))
"""


@contextlib.contextmanager
def database(backend: str, folder: Path, tag: str) -> Iterator[str]:
    """A fresh database URL (dropped afterwards on PostgreSQL)."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / f'{tag}.db'}"
        return
    url = scratch_database(f"qf_bench_labels_{tag}", create=True)
    try:
        yield url
    finally:
        scratch_database(f"qf_bench_labels_{tag}", create=False)


def child(code: Path, script: str, *args: str, timeout: float) -> str:
    """Run ``script`` with the packages of ``code`` first on the path; its standard output."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return done.stdout


def measure(code: Path, backend: str, size: int, folder: Path, tag: str, timeout: float) -> dict:
    """Set up a database with the code of ``code``, then time the import of ``size`` labels (twice)."""
    path = labels_file(folder / f"labels-{size}.jsonl", size // 2, docs=DOCS, annotators=ANNOTATORS)
    with database(backend, folder, tag) as url:
        child(code, SETUP, url, str(max(size // (2 * DOCS), 1)), str(DOCS), timeout=timeout)
        try:
            (first, report, cpu, served), (again, *_) = json.loads(
                child(code, IMPORT, url, str(path), timeout=timeout)
            )
        except subprocess.TimeoutExpired:
            return {
                "backend": backend,
                "size": size,
                "seconds": None,
                "report": f"not done in {timeout:.0f} s",
            }
    return {
        "backend": backend,
        "size": size,
        "seconds": first,
        "again": again,
        "report": report,
        "client_cpu": cpu,
        "server_cpu": served,
    }


def saves(code: Path, size: int, folder: Path, tag: str) -> str:
    """Saves of an annotator of project ``team`` while a child process (code of ``code``) imports ``size``
    labels into project ``big`` of the same SQLite database."""
    from import_load import saves_during
    from sqlalchemy import text

    from annotate_app.services.auth import authenticate
    from annotate_app.store.db import Database

    path = labels_file(folder / f"labels-{size}.jsonl", size // 2, docs=DOCS, annotators=ANNOTATORS)
    with database("sqlite", folder, tag) as url:
        child(code, SETUP, url, str(max(size // (2 * DOCS), 1)), str(DOCS), timeout=3600)
        db = Database(url)
        alice = authenticate(db, "alice", "alice-password-1")

        def visible() -> int:
            with db.read() as s:
                sql = "SELECT count(*) FROM assignments a JOIN projects p ON p.id = a.project_id "
                return int(s.execute(text(sql + "WHERE p.name = 'big' AND a.status = 'done'")).scalar())

        seen = saves_during(
            db,
            alice,
            "team",
            ("import_labels", "big", path, "--fmt=jsonl"),
            probe=visible,
            code=code,
            most=3000,  # the pairs of project team
            pause=0.05,
        )
        db.dispose()
    between = sorted(set(seen.visible) - {0, size})
    pieces = f"; {len(between)} counts between 0 and all seen ({between[:3]}...)" if between else ""
    return seen.summary() + (pieces or "; imported labels seen: none, then all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--no-saves", dest="saves", action="store_false", help="skip the saves measurement")
    parser.add_argument("--old", action="store_true", help="also measure the old code")
    parser.add_argument("--old-revision", default=OLD_REVISION)
    parser.add_argument("--old-sizes", type=int, nargs="+", default=[20_000])
    parser.add_argument("--timeout", type=float, default=900, help="seconds an import may take")
    args = parser.parse_args()
    runs = [("new", ROOT, size) for size in args.sizes]
    old = export_revision(args.old_revision) if args.old else None
    if old is not None:
        runs += [(f"old ({args.old_revision})", old, size) for size in args.old_sizes]
    with tempfile.TemporaryDirectory(prefix="qf-label-import-") as tmp:
        folder = Path(tmp)
        print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores)", flush=True)
        for name, code, size in runs:
            for backend in args.backends:
                tag = f"{name.split()[0]}_{backend}_{size}_{int(time.time())}"
                got = measure(code, backend, size, folder, tag, args.timeout)
                rate = "—" if got["seconds"] is None else f"{size / got['seconds']:,.0f} labels/s"
                again = "" if got.get("again") is None else f"; again (all unchanged) {got['again']:.1f} s"
                took = "" if got["seconds"] is None else f" in {got['seconds']:.1f} s"
                print(f"{name:>12} {backend:<10} {size:>7} labels: {rate}{took}{again} — {got['report']}")
                if got["seconds"] is not None:
                    cpu = got["client_cpu"] + got["server_cpu"]
                    print(
                        f"{'':>12} CPU: client {got['client_cpu']:.2f} s, server {got['server_cpu']:.2f} s; "
                        f"{size / cpu:,.0f} labels per CPU-second (load {os.getloadavg()[0]:.1f})",
                        flush=True,
                    )
        if args.saves and "sqlite" in args.backends:
            biggest = max(args.sizes)
            seen = saves(ROOT, biggest, folder, "sv_new")
            print(f"new: saves during a {biggest}-label import (SQLite): {seen}")
            if old is not None:
                small = min(args.old_sizes)
                seen = saves(old, small, folder, "sv_old")
                print(f"old: saves during a {small}-label import (SQLite): {seen}")
        print(f"load average at end: {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
