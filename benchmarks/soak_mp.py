"""Multi-process soak: annotators in separate OS processes (as app replicas are), a reviewer adjudicating and
releasing as waves complete, on SQLite and PostgreSQL, the new claim path against the old one.

    .venv/bin/python benchmarks/soak_mp.py                 # 16 processes x 3 annotators, 3 000 pairs x 2
    .venv/bin/python benchmarks/soak_mp.py --old           # and the old code too, new/old ratios
    .venv/bin/python benchmarks/soak_mp.py --old --read 0.5   # annotators reading 0.5 s per pair
    .venv/bin/python benchmarks/soak_mp.py --processes 4 --pairs 300 --backend sqlite   # a quick look

Each worker process (``multiprocessing``, spawn) opens its own `Database` (its own connection pool) and runs
``--per-process`` annotator threads; the reviewer is one more process. The annotators take pairs
(``queue.next_pair``: "take" when it returns one, "nothing" when it returns None), label them, now and then
skip one and edit an earlier label; after "nothing left" an annotator asks again after a pause
(``--recheck``, 1 s on average, as a person pressing "Check again"; the first version of this soak polled
every 0.1 s, and 48 pollers took most of the CPU of the 2 cores while waves changed); the reviewer
adjudicates every disagreement and releases each complete wave, then pools the next (the clients and the
checks are benchmarks/soak.py's). The clock starts once every process is up and every annotator has logged
in and opened the project once, before the first wave is pooled (replicas that were already running, people
who had the page open); that first call, made by all 48 at once in cold processes, is printed on its own row
("first"), not among the takes and nothing-lefts. Afterwards, from the database: acknowledged vs stored
label versions (lost, phantom), over-assigned pairs, duplicate (assignment, version), stale cached labels
and releases whose hash is not reproducible.

``--old`` runs the old code — git revision ``--old-revision`` (default `OLD_REVISION`: the code when issue 14
was filed), exported into a temporary folder — in a child process (``QRELFORGE_BENCH_CODE``, see
benchmarks/_code.py) on a fresh database of the same size, in the same run, and prints new/old ratios.
``--read`` gives the annotators a reading time per pair (0 by default: back to back, which finds the
capacity; with a reading time the latencies are those of a team at that pace). `run_soak_mp(url, ...)` is
the library form used by tests/services/test_soak_mp_short.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import soak  # noqa: E402  (puts the checkout of `_code.code_root` on the path)
from _code import CODE_ENV, OLD_REVISION, export_revision  # noqa: E402
from _pg import scratch_database  # noqa: E402

from annotate_app.services import queue  # noqa: E402
from annotate_app.services.auth import authenticate  # noqa: E402
from annotate_app.store.db import Database  # noqa: E402
from annotate_app.store.migrate import upgrade  # noqa: E402

try:
    from annotate_app.services.errors import DatabaseBusy
except ImportError:  # the old code (--old) had no such error: a busy database stopped the soak

    class DatabaseBusy(Exception):  # type: ignore[no-redef]
        """Never raised by the old code."""


OPERATIONS = ("take", "nothing", "label", "skip", "edit", "adjudicate", "release", "first")
PROJECT = soak.PROJECT


@dataclass
class MpReport:
    backend: str
    path: str  # "new" or "old"
    processes: int
    annotators: int
    pairs: int
    seconds: float
    labels: int
    skips: int
    releases: int
    checks: dict[str, int]
    latency: dict[str, dict[str, float]]
    errors: list[str] = field(default_factory=list)
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    busy: int = 0  # "the database is busy, try again" answers (SQLite's lock held > 5 s); the client retries

    @property
    def ok(self) -> bool:
        return not self.errors and not any(self.checks.values())


# --------------------------------------------------------------------------------------------- workers
def _setup_env() -> None:
    soak._cheap_hashing()


@dataclass(frozen=True)
class Client:
    """How the simulated people behave: the chance to skip a new pair, to edit an earlier label after a save;
    the mean pause (seconds, drawn uniformly from 0.5x to 1.5x) before asking again after "nothing left" —
    the app shows "Nothing left to judge ... Check again", which a person presses now and then, not ten
    times a second; the mean time spent reading a pair before judging it (``read``; 0: back to back, the
    load that finds the capacity); and the reviewer's pause before looking again while a wave is not
    complete (``review``)."""

    p_skip: float = 0.03
    p_edit: float = 0.12
    recheck: float = 1.0
    read: float = 0.0
    review: float = 1.0


def _annotate(db: Database, name: str, seed: int, stop, log: soak.Log, client: Client, warm, go) -> None:
    rng = random.Random(seed)
    mine: dict[int, int] = {}
    try:
        me = _warm_up(db, name, log, warm, go)
        while not stop.is_set():
            try:
                _step(db, me, rng, log, client, mine)
            except DatabaseBusy:  # the page says "the database is busy, try again": the person does
                log.conflicts["busy: try again"] += 1
                time.sleep(rng.uniform(0.5, 1.5) * client.recheck)
    except Exception as exc:  # noqa: BLE001 - reported in the figures, and the soak stops
        warm.abort()  # the process's other annotators stop waiting for this one
        log.errors.append(f"{name}: {type(exc).__name__}: {exc}")
        print(f"  {name} failed: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr, flush=True)
        stop.set()


def _warm_up(db: Database, name: str, log: soak.Log, warm: threading.Barrier, go):
    """Before the clock: log in and open the project once ("first": a cold process, every annotator of the
    run at once; no pair is pooled yet, so it answers "nothing left"), as people who had the page open when
    the first pairs were pooled. Then wait for the whole run to be ready."""
    me = authenticate(db, name, f"{name}-password")
    soak._timed(log, "first", lambda: queue.next_pair(db, me, PROJECT))
    warm.wait(timeout=600)
    go.wait()
    return me


def _step(db: Database, me, rng: random.Random, log: soak.Log, client: Client, mine: dict[int, int]) -> None:
    """One turn of an annotator: take a pair (or hear that nothing is left), then skip or label it."""
    start = time.perf_counter()
    view = queue.next_pair(db, me, PROJECT)
    log.latency["nothing" if view is None else "take"].append(time.perf_counter() - start)
    if view is None:  # the wave is done: wait for the next one
        time.sleep(rng.uniform(0.5, 1.5) * client.recheck)
        return
    if client.read:
        time.sleep(rng.uniform(0.5, 1.5) * client.read)  # reading the query and the document
    if view.current is None and rng.random() < client.p_skip:
        soak._timed(log, "skip", lambda v=view: queue.skip(db, me, PROJECT, v.pair_id, reason="cannot judge"))
        log.skips += 1
        return
    soak._save(db, me, view.pair_id, mine.get(view.pair_id, 0), rng, log, "label", mine)
    if mine and rng.random() < client.p_edit:
        pair = rng.choice(list(mine))
        soak._save(db, me, pair, mine[pair], rng, log, "edit", mine)


def _plain(log: soak.Log) -> dict:
    return {
        "acked": log.acked,
        "skips": log.skips,
        "conflicts": dict(log.conflicts),
        "latency": dict(log.latency),
        "errors": log.errors,
    }


def _started(ready, go) -> None:
    """Say this process is up (code imported, pool made, its annotators logged in) and wait until every
    process is: the clock starts then, as replicas are running before the first pairs are pooled (importing
    the app costs ~1.5-2.7 s of CPU per process, which 17 processes starting at once would otherwise add to
    the first wave)."""
    ready.put(os.getpid())
    go.wait()


def _worker(url: str, names: list[str], seed: int, stop, results, client: Client, ready, go):
    """One replica: its own Database and one thread per annotator; sends its logs back when stopped. The
    process says it is ready once its annotators are logged in and have opened the project (`_warm_up`)."""
    _setup_env()
    db = Database(url, pool_size=len(names) + 2)
    logs = [soak.Log() for _ in names]
    warm = threading.Barrier(len(names) + 1)
    threads = [
        threading.Thread(target=_annotate, args=(db, n, seed + i, stop, logs[i], client, warm, go))
        for i, n in enumerate(names)
    ]
    for t in threads:
        t.start()
    with contextlib.suppress(threading.BrokenBarrierError):  # an annotator failed: its error is logged
        warm.wait(timeout=600)
    _started(ready, go)
    for t in threads:
        t.join()
    db.dispose()
    results.put([_plain(log) for log in logs])


def _reviewer(url: str, stop, results, waves: int, client: Client, ready, go) -> None:
    _setup_env()
    db = Database(url, pool_size=4)
    _started(ready, go)
    log, released = soak.Log(), []
    soak._reviewer(db, stop, log, waves, released, pause=client.review)
    db.dispose()
    results.put([{**_plain(log), "released": released}])


# ---------------------------------------------------------------------------------------------- the run
def run_soak_mp(
    url: str,
    *,
    processes: int = 16,
    per_process: int = 3,
    pairs: int = 3000,
    n: int = 2,
    waves: int = 6,
    client: Client = Client(),
    path: str = "new",
    backend: str = "",
    timeout: float = 3600,
) -> MpReport:
    """Run the soak on an empty, migrated database at ``url`` and check it (see the module doc)."""
    _setup_env()
    annotators = processes * per_process
    queries_per_wave = max(1, -(-pairs // (waves * soak.DOCS_PER_QUERY)))
    setup_db = Database(url, pool_size=4)
    actors = soak._setup(setup_db, annotators, n, waves, queries_per_wave)
    names = [a.username for a in actors]
    ctx = mp.get_context("spawn")
    stop, results, ready, go = ctx.Event(), ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(
            target=_worker,
            args=(url, names[i::processes], 1000 + i * per_process, stop, results, client, ready, go),
        )
        for i in range(processes)
    ]
    procs.append(ctx.Process(target=_reviewer, args=(url, stop, results, waves, client, ready, go)))
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=300)  # every process up: the clock starts
    start = time.perf_counter()
    go.set()
    stop.wait(timeout)
    seconds = time.perf_counter() - start
    stop.set()
    logs = [log for _ in procs for log in results.get(timeout=300)]
    for p in procs:
        p.join(timeout=60)
    acked = [tuple(a) for log in logs for a in log["acked"]]
    checks = soak._verify(setup_db, n, acked)
    checks["unreproducible_releases"] = soak._releases_reproducible(setup_db)
    released = next(log["released"] for log in logs if "released" in log)
    errors = [e for log in logs for e in log["errors"]]
    if len(released) < waves:
        errors.append(f"only {len(released)} of {waves} releases made in {timeout:.0f} s")
    setup_db.dispose()
    latency = {op: _percentiles([x for log in logs for x in log["latency"].get(op, [])]) for op in OPERATIONS}
    conflicts = sum((Counter(log["conflicts"]) for log in logs), Counter())
    if conflicts:
        print(f"  conflicts: {dict(conflicts)}", flush=True)
    return MpReport(
        backend=backend or Database(url).dialect,
        path=path,
        processes=processes,
        annotators=annotators,
        pairs=queries_per_wave * waves * soak.DOCS_PER_QUERY,
        seconds=seconds,
        labels=len(acked),
        skips=sum(log["skips"] for log in logs),
        releases=len(released),
        checks=checks,
        latency=latency,
        errors=errors,
        load=os.getloadavg(),
        busy=conflicts.pop("busy: try again", 0),
    )


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"n": len(ordered), "p50": pick(0.50), "p95": pick(0.95), "p99": pick(0.99), "max": ordered[-1]}


# ------------------------------------------------------------------------------------------- reporting
def render(reports: list[MpReport]) -> str:
    """One column per (database, path); a new/old ratio column after each database's old run."""
    columns: list[tuple[str, list]] = []
    by_backend: dict[str, dict[str, MpReport]] = defaultdict(dict)
    for r in reports:
        by_backend[r.backend][r.path] = r
    for backend, runs in by_backend.items():
        for path in ("new", "old"):
            if path in runs:
                columns.append((f"{backend} {path}", _cells(runs[path])))
        if len(runs) == 2:
            columns.append(
                (
                    f"{backend} new/old",
                    [_ratio(a, b) for a, b in zip(columns[-2][1], columns[-1][1], strict=True)],
                )
            )
    labels = _row_names()
    header = ["", *(c[0] for c in columns)]
    rows = [[label, *(c[1][i] for c in columns)] for i, label in enumerate(labels)]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]
    ]
    notes = [f"{r.backend} {r.path}: errors {r.errors[:3] or 'none'}" for r in reports]
    return "\n".join(lines + [""] + notes) + "\n"


CHECKS = ("lost", "phantom", "over_assigned", "duplicates", "stale_cache", "unreproducible_releases")


def _row_names() -> list[str]:
    names = ["processes x annotators", "pairs", "labels (versions)", "skips / releases"]
    names += [f"{c} (must be 0)" for c in CHECKS]
    names += ["busy, try again (retried)", "wall time", "labels / s", "load average (1 min) at the end"]
    return names + [f"{op} p{q}" for op in OPERATIONS for q in (50, 95, 99)]


def _cells(r: MpReport) -> list[str]:
    cells = [f"{r.processes} x {r.annotators // r.processes}", str(r.pairs), str(r.labels)]
    cells.append(f"{r.skips} / {r.releases}")
    cells += [str(r.checks.get(c, "-")) for c in CHECKS]
    cells += [str(r.busy), f"{r.seconds:.1f} s", f"{r.labels / r.seconds:.1f}", f"{r.load[0]:.1f}"]
    for op in OPERATIONS:
        for q in ("p50", "p95", "p99"):
            v = r.latency.get(op, {}).get(q)
            cells.append(f"{v * 1000:.0f} ms" if v is not None else "-")
    return cells


def _ratio(new: str, old: str) -> str:
    try:
        x, y = (float(str(v).split()[0]) for v in (new, old))
    except ValueError:
        return ""
    return f"{x / y:.2f}x" if y else ""


def run_backend(backend: str, args: argparse.Namespace) -> MpReport:
    """The soak on a fresh database, with this process's code (`_code.code_root`)."""
    folder = tempfile.mkdtemp(prefix="qrelforge-soak-mp-")
    url = (
        f"sqlite:///{folder}/soak.db"
        if backend == "sqlite"
        else scratch_database("qrelforge_soakmp", create=True)
    )
    upgrade(url)
    print(
        f"[{backend} {args.label}] {args.processes} processes x {args.per_process} annotators, read "
        f"{args.read} s, recheck {args.recheck} s, reviewer pause {args.review_pause} s ...",
        flush=True,
    )
    try:
        report = run_soak_mp(
            url,
            processes=args.processes,
            per_process=args.per_process,
            pairs=args.pairs,
            n=args.n,
            waves=args.waves,
            path=args.label,
            backend=backend,
            client=Client(recheck=args.recheck, read=args.read, review=args.review_pause),
        )
        print(render([report]), flush=True)
        return report
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if backend == "postgresql":
            scratch_database("qrelforge_soakmp", create=False)


def run_old(backend: str, args: argparse.Namespace, code: Path) -> MpReport:
    """The same soak in a child process that imports the old code exported at ``code``."""
    out = Path(tempfile.mkdtemp(prefix="qrelforge-soak-old-")) / "report.json"
    argv = [sys.executable, str(Path(__file__).resolve()), "--backend", backend, "--label", "old"]
    argv += ["--json", str(out), *_shared_flags(args)]
    subprocess.run(argv, env={**os.environ, CODE_ENV: str(code)}, check=False)
    if not out.exists():
        raise SystemExit(f"the old code's soak on {backend} wrote no report (see its output above)")
    fields = json.loads(out.read_text())
    shutil.rmtree(out.parent, ignore_errors=True)
    return MpReport(**{**fields, "load": tuple(fields["load"])})


def _shared_flags(args: argparse.Namespace) -> list[str]:
    flags = {"--processes": args.processes, "--per-process": args.per_process, "--pairs": args.pairs}
    flags |= {"-n": args.n, "--waves": args.waves, "--recheck": args.recheck, "--read": args.read}
    flags |= {"--review-pause": args.review_pause}
    return [str(x) for item in flags.items() for x in item]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--per-process", type=int, default=3, help="annotators per process")
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("-n", type=int, default=2, help="annotators per pair")
    parser.add_argument("--waves", type=int, default=6)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument(
        "--old",
        action="store_true",
        help=f"also run the old code (git revision --old-revision, default {OLD_REVISION}), print new/old",
    )
    parser.add_argument("--old-revision", default=OLD_REVISION, help="the git revision --old measures")
    parser.add_argument(
        "--recheck",
        type=float,
        default=Client.recheck,
        help="mean pause in seconds before asking again after 'nothing left' (0.1: the first soak's polling)",
    )
    parser.add_argument(
        "--read",
        type=float,
        default=Client.read,
        help="mean seconds an annotator reads a pair before judging it (default 0: back to back)",
    )
    parser.add_argument(
        "--review-pause",
        type=float,
        default=Client.review,
        help="seconds before the reviewer looks again while a wave is incomplete (0.1: the first soak's)",
    )
    parser.add_argument("--label", default="new", help=argparse.SUPPRESS)  # set for the old code's child
    parser.add_argument("--json", type=Path, help=argparse.SUPPRESS)  # the child's report, for its parent
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    code = export_revision(args.old_revision) if args.old else None
    reports = []
    try:
        for backend in backends:
            reports.append(run_backend(backend, args))
            if code is not None:
                reports.append(run_old(backend, args, code))
    finally:
        if code is not None:
            shutil.rmtree(code, ignore_errors=True)
    if args.json is not None:
        args.json.write_text(json.dumps(asdict(reports[0])))
        return 0
    print()
    print(render(reports))
    return 0 if all(r.ok for r in reports) else 1


if __name__ == "__main__":
    raise SystemExit(main())
