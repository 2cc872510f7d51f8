"""Ray scoring benchmark: `metrics.distributed` with 1 and 2 workers against `qrelforge score` in one process.

Generates, in a temporary directory, graded qrels of 1,000 queries and 20 runs of 1M lines (1,000 queries x
1,000 documents), each run held as 4 TREC partition files split by query. Every measurement is the wall time
of a whole process (Python start, imports, reading, scoring; for Ray also starting and stopping the local
cluster), the median of ``--repeat`` runs:

- ``local``: ``qrelforge score QRELS RUN...`` on the 20 runs, one process;
- ``ray N``: ``evaluate_ray_runs`` on a local Ray with N CPUs (N workers), the 20 runs at once; the time
  inside the process spent starting Ray and scoring is shown too;
- ``ray cli``: ``qrelforge score --engine ray --address local`` (all the machine's CPUs).

The JSON outputs of the local and the Ray engine are compared: the script fails when they differ.

    .venv/bin/python benchmarks/score_ray.py                    # 20 runs, 3 repeats
    .venv/bin/python benchmarks/score_ray.py --runs 4 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

VENV_BIN = Path(sys.executable).parent
MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR"]
QUERIES, DEPTH = 1_000, 1_000

RAY_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
MEASURES = json.loads(sys.argv[1])
import ray
from metrics.distributed import evaluate_ray_runs
ray.init(num_cpus=int(sys.argv[2]), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
t1 = time.perf_counter()
results = evaluate_ray_runs(sys.argv[3], sys.argv[4:], MEASURES)
t2 = time.perf_counter()
ray.shutdown()
print(json.dumps({"start": t1 - t0, "score": t2 - t1, "mean": results[0].mean}))
"""


def generate(root: Path, n_runs: int, parts: int, seed: int = 7) -> tuple[Path, list[Path]]:
    """Qrels (ten judgments per query, half on retrieved documents) and ``n_runs`` partitioned runs."""
    rng = np.random.default_rng(seed)
    qids = [str(100_000 + q) for q in range(QUERIES)]
    pool = [rng.choice(5_000_000, size=DEPTH, replace=False) for _ in qids]
    qrels = root / "qrels.txt"
    with qrels.open("w") as f:
        for qid, docs in zip(qids, pool, strict=True):
            judged = np.r_[docs[rng.choice(DEPTH, 5, replace=False)], rng.integers(6_000_000, 7_000_000, 5)]
            grades = rng.integers(0, 4, size=10)
            f.write(
                "".join(f"{qid} 0 D{d} {g}\n" for d, g in zip(judged.tolist(), grades.tolist(), strict=True))
            )
    runs = []
    for r in range(n_runs):
        run_dir = root / f"run{r:02d}"
        run_dir.mkdir()
        per_part = -(-QUERIES // parts)
        for p in range(parts):
            block = range(p * per_part, min(QUERIES, (p + 1) * per_part))
            lines = "".join(_lines(rng, qids[q], pool[q], f"run{r:02d}") for q in block)
            (run_dir / f"part-{p:05d}.txt").write_text(lines)
        runs.append(run_dir)
    return qrels, runs


def _lines(rng: np.random.Generator, qid: str, docs: np.ndarray, tag: str) -> str:
    order = rng.permutation(DEPTH)
    scores = np.sort(rng.normal(10.0, 3.0, size=DEPTH))[::-1]
    return "".join(
        f"{qid} Q0 D{d} {i + 1} {s:.6f} {tag}\n"
        for i, (d, s) in enumerate(zip(docs[order].tolist(), scores.tolist(), strict=True))
    )


def timed(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} ... failed:\n{done.stderr}")
    return wall, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--parts", type=int, default=4, help="partition files per run (default 4)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="score_ray_") as tmp:
        start = time.perf_counter()
        qrels, runs = generate(Path(tmp), args.runs, args.parts)
        print(
            f"generated {args.runs} runs x {QUERIES * DEPTH:,} lines ({args.parts} partitions each) "
            f"in {time.perf_counter() - start:.1f}s; cpus={os.cpu_count()}"
        )
        measure_args = [a for m in MEASURES for a in ("-m", m)]
        paths = [str(p) for p in runs]
        cli = [str(VENV_BIN / "qrelforge"), "score", str(qrels), *paths, *measure_args, "--format", "json"]
        rows: dict[str, list[float]] = {}
        inner: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
        outputs: dict[str, str] = {}
        for _ in range(args.repeat):
            wall, outputs["local"] = timed(cli)
            rows.setdefault("local (qrelforge score, 1 process)", []).append(wall)
            for workers in (1, 2):
                code = [
                    sys.executable,
                    "-c",
                    RAY_SCRIPT,
                    json.dumps(MEASURES),
                    str(workers),
                    str(qrels),
                    *paths,
                ]
                wall, out = timed(code)
                rows.setdefault(f"ray {workers} worker{'s' if workers > 1 else ''}", []).append(wall)
                parsed = json.loads(out)
                inner[workers].append((parsed["start"], parsed["score"]))
            wall, outputs["ray"] = timed([*cli, "--engine", "ray", "--address", "local"])
            rows.setdefault("ray cli (--engine ray --address local)", []).append(wall)
        if outputs["local"] != outputs["ray"]:
            raise SystemExit("the Ray engine's output differs from the local engine's")
        print("outputs of the local and the Ray engine: identical")
        medians = {k: statistics.median(v) for k, v in rows.items()}
        base = medians["local (qrelforge score, 1 process)"]
        print(f"\n{'engine':<42}{'wall s (median)':>16}{'vs local':>10}")
        for name, value in medians.items():
            print(f"{name:<42}{value:>16.2f}{base / value:>9.2f}x")
        for workers, pairs in inner.items():
            start_s = statistics.median(p[0] for p in pairs)
            score_s = statistics.median(p[1] for p in pairs)
            print(f"  ray {workers}: start {start_s:.2f}s, scoring {score_s:.2f}s (inside the process)")
        one, two = medians["ray 1 worker"], medians["ray 2 workers"]
        score_one = statistics.median(p[1] for p in inner[1])
        score_two = statistics.median(p[1] for p in inner[2])
        print(f"\nspeed-up 2 workers vs 1: {one / two:.2f}x whole process, ", end="")
        print(f"{score_one / score_two:.2f}x scoring only")


if __name__ == "__main__":
    main()
