"""Whole-process scoring benchmark: `qrelforge score` (CSV and the JSON report CI keeps) against pytrec_eval,
ir_measures and trec_eval.

Two workloads, each generated once and cached in benchmarks/.data/ (see `WORKLOADS`): ``today`` (runs sorted
by query then rank, ten judgments per query, half on retrieved documents) and ``graded`` (each query's lines
in random order, 60 graded judgments per query, half on retrieved documents). Two sizes: 1,000 queries x 1,000
documents (1M lines) and 7,000 x 1,000 (7M lines, MS MARCO dev size). Each tool runs as its own process,
parsing the files and computing P@10, R@100, nDCG@10, AP and RR, its standard output going to a file (as in
CI; ``--stdout null`` for /dev/null). The tools run interleaved, repeat after repeat; the script reports the
median wall time, CPU time (user + system) and peak RSS of each, the ratios to pytrec_eval's and to the first
trec_eval's, all measured in the same run, and the load average before and after each block (the machine is
shared: compare ratios within one run, not wall times across runs; on a loaded machine CPU time is the
steadier of the two). A summary at the end puts every workload, size and tool side by side and checks the
JSON report against trec_eval (`GOALS`).

trec_eval is timed when ``--trec-eval [LABEL=]PATH`` is given (repeatable, e.g. one binary built with the
Makefile as it is and one with -O2) or a ``trec_eval`` is on PATH; build it from usnistgov/trec_eval with
``make``. ranx with --ranx.

Peak RSS is ``ru_maxrss`` of the tool's process, read by a small launcher that forks it: Linux starts a
process's ``ru_maxrss`` at the RSS of the image it replaced at exec, so a tool spawned straight from a big
process reports at least that process's RSS (a ``/bin/true`` spawned by a Python process holding 160 MB
reports 162 MB). The launcher (a bare ``python -I -S``, ~9 MB) keeps that floor below every tool.

    .venv/bin/python benchmarks/score_large.py       # both workloads, both sizes, 3 repeats
    .venv/bin/python benchmarks/score_large.py --sizes 1000 --workloads graded --repeat 5 \\
        --trec-eval make=/tmp/trec_eval-make/trec_eval
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / ".data"
VENV_BIN = Path(sys.executable).parent
MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR"]
TREC_EVAL_MEASURES = ["P_10", "recall_100", "ndcg_cut_10", "map", "recip_rank"]
GOALS = {1000: (0.5, 1.2), 7000: (0.25, 0.6)}
"""Per size (queries), the JSON report's most time and peak RSS as a multiple of trec_eval's."""
JSON_TOOL = "qrelforge json"

PYTREC = """
import statistics, sys, pytrec_eval
with open(sys.argv[1]) as f: qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f: run = pytrec_eval.parse_run(f)
keys = ['P_10', 'recall_100', 'ndcg_cut_10', 'map', 'recip_rank']
res = pytrec_eval.RelevanceEvaluator(qrels, set(keys)).evaluate(run)
n = len(qrels)  # trec_eval -c: queries missing from the run count as 0
print(' '.join(f'{sum(v[k] for v in res.values()) / n:.4f}' for k in keys))
"""
IR_MEASURES = """
import sys, warnings
warnings.simplefilter('ignore')
import ir_measures
from ir_measures import P, R, nDCG, AP, RR
ms = [P@10, R@100, nDCG@10, AP, RR]
agg = ir_measures.calc_aggregate(ms, ir_measures.read_trec_qrels(sys.argv[1]), \
ir_measures.read_trec_run(sys.argv[2]))
print(' '.join(f'{agg[m]:.4f}' for m in ms))
"""
RANX = """
import sys
from ranx import Qrels, Run, evaluate
qrels, run = Qrels.from_file(sys.argv[1], kind='trec'), Run.from_file(sys.argv[2], kind='trec')
res = evaluate(qrels, run, ['precision@10', 'recall@100', 'ndcg@10', 'map', 'mrr'])
print(' '.join(f'{v:.4f}' for v in res.values()))
"""
LAUNCH = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], 'w') as f:
    f.write(f'{time.perf_counter() - start} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}')
sys.exit(os.waitstatus_to_exitcode(status))
"""
"""Runs ``argv[2:]`` in a child forked from this small process; writes its wall seconds, ru_maxrss (KB) and
CPU seconds (user + system) to the file ``argv[1]``."""


def generate(n_queries: int, workload: str = "today", depth: int = 1000, seed: int = 7) -> tuple[Path, Path]:
    """A run and its qrels, cached by workload and size (see `WORKLOADS`)."""
    DATA.mkdir(parents=True, exist_ok=True)
    prefix = "" if workload == "today" else f"{workload}_"
    run_path = DATA / f"run_{prefix}{n_queries}x{depth}.trec"
    qrels_path = DATA / f"qrels_{prefix}{n_queries}.trec"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    lines = WORKLOADS[workload][1]
    rng = np.random.default_rng(seed)
    with open(run_path, "w") as run_file, open(qrels_path, "w") as qrels_file:
        for start in range(0, n_queries, 250):
            block = range(start, min(n_queries, start + 250))
            run_file.write("".join(lines(rng, q, depth, qrels_file) for q in block))
    return run_path, qrels_path


def _run_lines(rng: np.random.Generator, q: int, depth: int, qrels_file) -> str:
    """Today's workload: lines in rank order, ten judgments per query (five on retrieved documents)."""
    qid = str(100_000 + q)
    docs = rng.choice(8_841_823, size=depth, replace=False)
    scores = np.sort(rng.normal(10.0, 3.0, size=depth))[::-1]
    judged = np.r_[docs[rng.choice(depth, 5, replace=False)], rng.integers(9_000_000, 9_999_999, 5)]
    grades = rng.integers(0, 4, size=10)
    qrels_file.write(
        "".join(f"{qid} 0 {d} {g}\n" for d, g in zip(judged.tolist(), grades.tolist(), strict=True))
    )
    rows = zip(docs.tolist(), scores.tolist(), strict=True)
    return "".join(f"{qid} Q0 {d} {i + 1} {s:.6f} bench\n" for i, (d, s) in enumerate(rows))


def _graded_lines(rng: np.random.Generator, q: int, depth: int, qrels_file) -> str:
    """Unsorted scores, 60 graded judgments per query: each query's lines in random order (rank column: the
    document's rank by score), 30 judgments on retrieved documents and 30 on others, grades 0-3, the
    judgments in random order too."""
    qid = str(100_000 + q)
    docs = rng.choice(8_841_823, size=depth, replace=False)
    scores = np.sort(rng.normal(10.0, 3.0, size=depth))[::-1]
    judged = np.r_[
        docs[rng.choice(depth, 30, replace=False)], 9_000_000 + rng.choice(999_999, 30, replace=False)
    ]
    judged = judged[rng.permutation(len(judged))]
    grades = rng.integers(0, 4, size=len(judged))
    qrels_file.write(
        "".join(f"{qid} 0 {d} {g}\n" for d, g in zip(judged.tolist(), grades.tolist(), strict=True))
    )
    shuffled = rng.permutation(depth).tolist()
    docs_l, scores_l = docs.tolist(), scores.tolist()
    return "".join(f"{qid} Q0 {docs_l[i]} {i + 1} {scores_l[i]:.6f} bench\n" for i in shuffled)


WORKLOADS = {
    "today": ("sorted by rank, 10 judgments a query", _run_lines),
    "graded": ("unsorted scores, 60 graded judgments a query", _graded_lines),
}


def timed(cmd: list[str], stdout: str = "file") -> tuple[float, float, float, str]:
    """Wall seconds, peak RSS (MB) and CPU seconds of that one process (through `LAUNCH`), and its standard
    output (empty when ``stdout`` is ``null``)."""
    with (
        tempfile.NamedTemporaryFile("r") as figures,
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
    ):
        sink = out if stdout == "file" else subprocess.DEVNULL
        launcher = [str(VENV_BIN / "python"), "-I", "-S", "-c", LAUNCH, figures.name]
        status = subprocess.run([*launcher, *cmd], stdout=sink, stderr=err).returncode
        if status:
            err.seek(0)
            raise SystemExit(f"{cmd[0]} failed: {err.read().strip()[-500:]}")
        wall, rss, cpu = figures.read().split()
        out.seek(0)
        return float(wall), int(rss) / 1024, float(cpu), out.read()


def _qrelforge(tree: Path, qrels: Path, run: Path) -> list[str]:
    """``qrelforge score`` of the source tree ``tree`` (first on the path, whatever is installed)."""
    env = [shutil.which("env") or "/usr/bin/env", f"PYTHONPATH={tree}"]
    return [*env, str(VENV_BIN / "qrelforge"), "score", str(qrels), str(run), *_measure_args()]


def _measure_args() -> list[str]:
    return [arg for m in MEASURES for arg in ("-m", m)]


def tools(qrels: Path, run: Path, args: argparse.Namespace) -> dict[str, list[str]]:
    py = str(VENV_BIN / "python")
    score = _qrelforge(ROOT, qrels, run)
    out = {
        "qrelforge csv": [*score, "--format", "csv"],
        JSON_TOOL: [*score, "--format", "json"],
        **(
            {f"{JSON_TOOL} (before)": [*_qrelforge(args.before, qrels, run), "--format", "json"]}
            if args.before
            else {}
        ),
        "pytrec_eval": [py, "-c", PYTREC, str(qrels), str(run)],
        "ir_measures": [py, "-c", IR_MEASURES, str(qrels), str(run)],
    }
    for label, path in args.trec_eval.items():
        out[f"trec_eval {label}"] = [
            path,
            "-c",
            *(arg for m in ("P.10", "recall.100", "ndcg_cut.10", "map", "recip_rank") for arg in ("-m", m)),
            str(qrels),
            str(run),
        ]
    if args.ranx:
        out["ranx (warm)"] = [py, "-c", RANX, str(qrels), str(run)]
    return {name: cmd for name, cmd in out.items() if not any(name.startswith(s) for s in args.skip)}


@dataclass
class Samples:
    """One tool's figures in one block, a value per repeat, and its last output."""

    wall: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    out: str = ""

    def median(self, what: str) -> float:
        return statistics.median(getattr(self, what))


Results = dict[str, Samples]
COLUMNS = (("wall", "wall s", ".2f"), ("cpu", "CPU s", ".2f"), ("rss", "RSS MB", ".0f"))


def measure(n_queries: int, workload: str, repeat: int, args: argparse.Namespace) -> Results:
    run, qrels = generate(n_queries, workload)
    print(
        f"\n## {workload} ({WORKLOADS[workload][0]}): {n_queries * 1000 / 1e6:.0f}M-line run "
        f"({n_queries} queries x 1000), {run.stat().st_size / 1e6:.0f} MB; qrels "
        f"{qrels.stat().st_size / 1e6:.1f} MB"
    )
    print(f"load average before: {_load()}")
    commands = tools(qrels, run, args)
    if "ranx (warm)" in commands:
        timed(commands["ranx (warm)"])  # compile numba kernels once, as a warm user would have
    results: Results = {name: Samples() for name in commands}
    for _ in range(repeat):  # interleave tools so machine noise hits all of them alike
        for name, cmd in commands.items():
            wall, rss, cpu, results[name].out = timed(cmd, args.stdout)
            results[name].wall.append(wall)
            results[name].rss.append(rss)
            results[name].cpu.append(cpu)
    report(results, args.stdout == "file")
    print(f"load average after: {_load()}")
    return results


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def _bases(results: Results) -> dict[str, Samples]:
    bases = {"pytrec": results["pytrec_eval"]}
    trec = [name for name in results if name.startswith("trec_eval")]
    if trec:
        bases["trec_eval"] = results[trec[0]]
    return bases


def _row(name: str, samples: Samples, bases: dict[str, Samples]) -> str:
    line = f"{name:<25}" + "".join(f"{samples.median(what):>8{fmt}}" for what, _, fmt in COLUMNS)
    for base in bases.values():
        line += "".join(f"{samples.median(what) / base.median(what):>15.2f}" for what, _, _ in COLUMNS)
    return line


def _header(bases: dict[str, Samples]) -> str:
    return (
        f"{'tool':<25}"
        + "".join(f"{title:>8}" for _, title, _ in COLUMNS)
        + "".join(f"{what + '/' + b:>15}" for b in bases for what, _, _ in COLUMNS)
    )


def report(results: Results, with_means: bool) -> None:
    """Medians of wall time, CPU time and peak RSS per tool, and their ratios to pytrec_eval's (and to the
    first trec_eval's when one ran)."""
    bases = _bases(results)
    print(_header(bases))
    for name, values in results.items():
        print(_row(name, values, bases))
    if with_means:
        print("means (P@10 R@100 nDCG@10 AP RR):")
        for name, samples in results.items():
            print(f"  {name:<25} {_means(name, samples.out)}")


def _means(name: str, out: str) -> str:
    if name.startswith(JSON_TOOL):
        means = json.loads(out)["runs"][0]["mean"]
        return " ".join(f"{means[m]:.4f}" for m in MEASURES)
    if name.startswith("qrelforge"):
        last = out.strip().splitlines()[-1].split(",")[2:]
        return " ".join(f"{float(v):.4f}" for v in last)
    if name.startswith("trec_eval"):
        values = {line.split()[0]: line.split()[2] for line in out.strip().splitlines()}
        return " ".join(values[k] for k in TREC_EVAL_MEASURES)
    return out.strip()


def summary(blocks: dict[tuple[str, int], Results]) -> None:
    """Every workload, size and tool side by side; the JSON report against `GOALS`."""
    print("\n## Summary (medians; ratios within each block)")
    for (workload, size), results in blocks.items():
        bases = _bases(results)
        print(f"\n{workload}, {size * 1000 / 1e6:.0f}M lines")
        print(_header(bases))
        for name, values in results.items():
            print(_row(name, values, bases))
    print("\nThe JSON report against each trec_eval (goal: time, RSS at most):")
    for (workload, size), results in blocks.items():
        goal = GOALS.get(size)
        for mine in (n for n in results if n.startswith(JSON_TOOL)):
            for name in (n for n in results if n.startswith("trec_eval")):
                wall, cpu, rss = (results[mine].median(w) / results[name].median(w) for w, _, _ in COLUMNS)
                verdict = ""
                if goal:
                    verdict = f"  goal {goal[0]}x / {goal[1]}x: time {_met(wall <= goal[0])} "
                    verdict += f"(CPU {_met(cpu <= goal[0])}), RSS {_met(rss <= goal[1])}"
                where = f"{workload:<7} {size * 1000 / 1e6:.0f}M  {mine:<24} vs {name:<15}"
                print(f"  {where} time {wall:.2f}x  CPU {cpu:.2f}x  RSS {rss:.2f}x{verdict}")


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _trec_evals(given: list[str]) -> dict[str, str]:
    """``LABEL=PATH`` or ``PATH`` (labelled by its folder) → {label: path}; else ``trec_eval`` on PATH."""
    if not given:
        found = shutil.which("trec_eval")
        return {"(PATH)": found} if found else {}
    out = {}
    for item in given:
        label, _, path = item.rpartition("=")
        path = os.path.abspath(path)
        if not os.access(path, os.X_OK):
            raise SystemExit(f"--trec-eval {item!r}: {path} is not an executable file")
        out[label or Path(path).parent.name] = path
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,7000", help="numbers of queries (x 1000 documents each)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help=f"among {', '.join(WORKLOADS)}")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--trec-eval",
        action="append",
        default=[],
        metavar="[LABEL=]PATH",
        help="a trec_eval binary to time (repeatable; the first is the ratios' base)",
    )
    parser.add_argument(
        "--stdout", choices=("file", "null"), default="file", help="where each tool's output goes"
    )
    parser.add_argument("--ranx", action="store_true", help="also time ranx (after one warm-up run)")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="TOOL",
        help="leave out the tools whose name starts with TOOL (repeatable; pytrec_eval is always timed)",
    )
    parser.add_argument(
        "--before",
        type=Path,
        metavar="TREE",
        help="also time the JSON report of an older source tree (e.g. `git archive COMMIT` unpacked)",
    )
    args = parser.parse_args()
    if args.before:
        args.before = args.before.resolve()
        if not (args.before / "annotate_app" / "cli" / "__init__.py").is_file():
            parser.error(f"--before {str(args.before)!r}: not a qrelforge source tree")
        subprocess.run([str(VENV_BIN / "python"), "-m", "compileall", "-q", str(args.before)], check=True)
    args.trec_eval = _trec_evals(args.trec_eval)
    workloads = args.workloads.split(",")
    for w in workloads:
        if w not in WORKLOADS:
            parser.error(f"--workloads: {w!r} is not one of {', '.join(WORKLOADS)}")
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; whole processes, median of {args.repeat}; "
        f"standard output to {'a file' if args.stdout == 'file' else '/dev/null'}; trec_eval: "
        + (", ".join(f"{k} = {v}" for k, v in args.trec_eval.items()) or "none")
    )
    blocks = {
        (w, size): measure(size, w, args.repeat, args)
        for size in (int(s) for s in args.sizes.split(","))
        for w in workloads
    }
    summary(blocks)


if __name__ == "__main__":
    main()
