"""Whole-process scoring benchmark: `qrelforge score` against pytrec_eval, ir_measures and trec_eval.

Generates (once, cached in benchmarks/.data/) a TREC run of 1,000 queries x 1,000 documents (1M lines) and
one of 7,000 x 1,000 (7M lines, MS MARCO dev size), with graded qrels: ten judgments per query, half of them
on retrieved documents. Each tool runs as its own process, parsing the files and computing P@10, R@100,
nDCG@10, AP and RR; the script reports the median wall time, the peak RSS of that process, and the ratios to
pytrec_eval, all measured in the same run, and the load average before and after each size (the machine is
shared: compare ratios within one run, not wall times across runs). trec_eval is timed when a `trec_eval`
binary is on PATH (the README's figures: trec_eval 10.0-rc3 from usnistgov/trec_eval, built with
`make CFLAGS='-O2 -I. -DVERSIONID=\\"10.0-rc3\\"'`); ranx with --ranx.

    .venv/bin/python benchmarks/score_large.py                 # both sizes, 3 repeats
    .venv/bin/python benchmarks/score_large.py --sizes 1000 --repeat 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / ".data"
VENV_BIN = Path(sys.executable).parent
MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR"]

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


def generate(n_queries: int, depth: int = 1000, seed: int = 7) -> tuple[Path, Path]:
    """A run sorted like real ones (by query, then rank) and its qrels; cached by size."""
    DATA.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = DATA / f"run_{n_queries}x{depth}.trec", DATA / f"qrels_{n_queries}.trec"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    rng = np.random.default_rng(seed)
    with open(run_path, "w") as run_file, open(qrels_path, "w") as qrels_file:
        for start in range(0, n_queries, 250):
            block = range(start, min(n_queries, start + 250))
            run_file.write("".join(_run_lines(rng, q, depth, qrels_file) for q in block))
    return run_path, qrels_path


def _run_lines(rng: np.random.Generator, q: int, depth: int, qrels_file) -> str:
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


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) of that one process, and its standard output."""
    import tempfile

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise SystemExit(f"{cmd[0]} failed: {err.read().strip()[-500:]}")
        return wall, usage.ru_maxrss / 1024, out.read()


def tools(qrels: Path, run: Path, with_ranx: bool) -> dict[str, list[str]]:
    py = str(VENV_BIN / "python")
    measures = [arg for m in MEASURES for arg in ("-m", m)]
    out = {
        "qrelforge score": [
            str(VENV_BIN / "qrelforge"),
            "score",
            str(qrels),
            str(run),
            *measures,
            "--format",
            "csv",
        ],
        "pytrec_eval": [py, "-c", PYTREC, str(qrels), str(run)],
        "ir_measures": [py, "-c", IR_MEASURES, str(qrels), str(run)],
    }
    trec_eval = shutil.which("trec_eval")
    if trec_eval:
        out["trec_eval -c"] = [
            trec_eval,
            "-c",
            "-m",
            "P.10",
            "-m",
            "recall.100",
            "-m",
            "ndcg_cut.10",
            "-m",
            "map",
            "-m",
            "recip_rank",
            str(qrels),
            str(run),
        ]
    if with_ranx:
        out["ranx (warm)"] = [py, "-c", RANX, str(qrels), str(run)]
    return out


def measure(n_queries: int, repeat: int, with_ranx: bool) -> None:
    run, qrels = generate(n_queries)
    lines = n_queries * 1000
    print(f"\n## {lines / 1e6:.0f}M-line run ({n_queries} queries x 1000), {run.stat().st_size / 1e6:.0f} MB")
    print(f"load average before: {_load()}")
    commands = tools(qrels, run, with_ranx)
    if with_ranx:
        timed(commands["ranx (warm)"])  # compile numba kernels once, as a warm user would have
    results: dict[str, tuple[float, float, str]] = {}
    for _ in range(repeat):  # interleave tools so machine noise hits all of them alike
        for name, cmd in commands.items():
            wall, rss, out = timed(cmd)
            prev = results.get(name, ([], [], ""))
            results[name] = (prev[0] + [wall], prev[1] + [rss], out)
    report(results)
    print(f"load average after: {_load()}")


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def report(results: dict[str, tuple[list[float], list[float], str]]) -> None:
    """Medians and peaks per tool, as ratios to pytrec_eval's (and to trec_eval's when it ran)."""
    bases = {"pytrec": results["pytrec_eval"]}
    if "trec_eval -c" in results:
        bases["trec_eval"] = results["trec_eval -c"]
    header = f"{'tool':<18}{'wall s (median)':>16}{'peak RSS MB':>13}"
    header += "".join(f"{'wall/' + b:>16}{'RSS/' + b:>15}" for b in bases)
    print(header)
    for name, (walls, rss, _) in results.items():
        wall = statistics.median(walls)
        line = f"{name:<18}{wall:>16.2f}{max(rss):>13.0f}"
        for base_walls, base_rss, _ in bases.values():
            line += f"{wall / statistics.median(base_walls):>16.2f}{max(rss) / max(base_rss):>15.2f}"
        print(line)
    print("means (P@10 R@100 nDCG@10 AP RR):")
    for name, (_, _, out) in results.items():
        print(f"  {name:<16} {_means(name, out)}")


def _means(name: str, out: str) -> str:
    if name.startswith("qrelforge"):
        last = out.strip().splitlines()[-1].split(",")[2:]
        return " ".join(f"{float(v):.4f}" for v in last)
    if name.startswith("trec_eval"):
        values = {line.split()[0]: line.split()[2] for line in out.strip().splitlines()}
        return " ".join(values[k] for k in ("P_10", "recall_100", "ndcg_cut_10", "map", "recip_rank"))
    return out.strip()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,7000", help="numbers of queries (x 1000 documents each)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ranx", action="store_true", help="also time ranx (after one warm-up run)")
    args = parser.parse_args()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; whole processes, median of {args.repeat}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        measure(size, args.repeat, args.ranx)


if __name__ == "__main__":
    main()
