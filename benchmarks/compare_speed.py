"""`compare` on a pair of 1M-line runs: 5 measures, 10,000 random sign flips, 10,000 bootstrap resamples.

Generates (once, cached in benchmarks/.data/) a qrels file and two TREC runs of the same shape, run B being
run A re-scored with noise (a re-ranking of the same documents). Two shapes of 1M lines per run: 1,000
queries x 1,000 documents (as benchmarks/score_large.py) and 10,000 queries x 100 (ten times more pairs for
the tests). Reports:

- ``metrics.compare.compare`` in-process, from the file paths (reading, scoring both runs, all three tests);
- ``qrelforge compare`` as a whole process (imports included);
- for one measure, our randomization test (and bootstrap) against ``scipy.stats.permutation_test`` (and
  ``scipy.stats.bootstrap``) on the same per-query differences with the same number of resamples, timed in the
  same run, with the ratio scipy / ours and the two p-values.

    .venv/bin/python benchmarks/compare_speed.py                      # both shapes, median of 3
    .venv/bin/python benchmarks/compare_speed.py --shapes 1000x1000 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = Path(__file__).resolve().parent / ".data"
MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR"]
RESAMPLES = 10_000


def generate(n_queries: int, depth: int, seed: int = 11) -> tuple[Path, Path, Path]:
    """qrels (10 judgments per query, half on retrieved documents) and runs A and B; cached by shape."""
    DATA.mkdir(parents=True, exist_ok=True)
    stem = f"compare_{n_queries}x{depth}"
    qrels, run_a, run_b = (DATA / f"{stem}_{n}.trec" for n in ("qrels", "a", "b"))
    if qrels.exists() and run_a.exists() and run_b.exists():
        return qrels, run_a, run_b
    rng = np.random.default_rng(seed)
    with open(qrels, "w") as fq, open(run_a, "w") as fa, open(run_b, "w") as fb:
        for start in range(0, n_queries, 500):
            for q in range(start, min(n_queries, start + 500)):
                _write_query(rng, q, depth, fq, fa, fb)
    return qrels, run_a, run_b


def _write_query(rng: np.random.Generator, q: int, depth: int, fq, fa, fb) -> None:
    qid = str(100_000 + q)
    docs = rng.choice(8_841_823, size=depth, replace=False)
    judged = np.r_[docs[rng.choice(depth, 5, replace=False)], rng.integers(9_000_000, 9_999_999, 5)]
    fq.write(
        "".join(
            f"{qid} 0 {d} {g}\n"
            for d, g in zip(judged.tolist(), rng.integers(0, 4, 10).tolist(), strict=True)
        )
    )
    score_a = rng.normal(10.0, 3.0, size=depth)
    score_b = score_a + rng.normal(0.3, 2.0, size=depth)
    for f, scores, tag in ((fa, score_a, "A"), (fb, score_b, "B")):
        order = np.argsort(-scores, kind="stable")
        f.write(
            "".join(
                f"{qid} Q0 {docs[i]} {r + 1} {scores[i]:.6f} {tag}\n" for r, i in enumerate(order.tolist())
            )
        )


def median_time(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def scipy_permutation(d: np.ndarray) -> float:
    from scipy.stats import permutation_test

    res = permutation_test(
        (d,),
        lambda x, axis: np.mean(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        batch=max(1, (1 << 22) // len(d)),
        alternative="two-sided",
        random_state=0,
    )
    return float(res.pvalue)


def scipy_bootstrap(d: np.ndarray) -> tuple[float, float]:
    from scipy.stats import bootstrap

    res = bootstrap(
        (d,),
        np.mean,
        n_resamples=RESAMPLES,
        batch=max(1, (1 << 22) // len(d)),
        method="percentile",
        random_state=0,
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def measure(shape: str, repeat: int) -> None:
    from metrics import stats
    from metrics.compare import compare

    n_queries, depth = (int(x) for x in shape.split("x"))
    qrels, run_a, run_b = generate(n_queries, depth)
    print(
        f"\n## {n_queries:,} queries x {depth:,} documents: 2 runs of {n_queries * depth / 1e6:.0f}M lines "
        f"({run_a.stat().st_size / 1e6:.0f} MB each)"
    )

    def library():
        return compare(
            str(qrels), [str(run_a), str(run_b)], MEASURES, n_permutations=RESAMPLES, n_bootstrap=RESAMPLES
        )

    wall, report = median_time(library, repeat)
    cli = [
        str(Path(sys.executable).parent / "qrelforge"),
        "compare",
        str(qrels),
        str(run_a),
        str(run_b),
        *[a for m in MEASURES for a in ("-m", m)],
        "--format",
        "json",
        "-o",
        os.devnull,
    ]
    cli_wall, _ = median_time(lambda: subprocess.run(cli, check=True), repeat)
    print(
        f"compare(), 5 measures, {RESAMPLES:,} permutations + {RESAMPLES:,} bootstrap: "
        f"{wall:6.2f} s in-process, {cli_wall:6.2f} s as `qrelforge compare` (limit 10 s)"
    )
    c = report.comparison("B", "nDCG@10")
    print(
        f"  B vs A on nDCG@10: diff {c.diff:+.4f}, p(perm) {c.p_permutation:.4f}, p(t) {c.p_t:.4f}, "
        f"CI [{c.ci_low:+.4f}, {c.ci_high:+.4f}], W/T/L {c.wins}/{c.ties}/{c.losses}, n {c.n}"
    )
    d = report.results["B"].values["nDCG@10"] - report.results["A"].values["nDCG@10"]
    d = d[~np.isnan(d)]
    peers = [
        (
            "randomization test",
            lambda: float(stats.permutation_test(d, n_permutations=RESAMPLES).p[0]),
            lambda: scipy_permutation(d),
            "scipy.stats.permutation_test",
        ),
        (
            "bootstrap interval",
            lambda: tuple(float(x[0]) for x in stats.bootstrap_ci(d, n_bootstrap=RESAMPLES)),
            lambda: scipy_bootstrap(d),
            "scipy.stats.bootstrap",
        ),
    ]
    print(f"  one measure (nDCG@10, n = {len(d):,} pairs), {RESAMPLES:,} resamples, median of {repeat}:")
    for what, ours, theirs, name in peers:
        t_ours, v_ours = median_time(ours, repeat)
        t_theirs, v_theirs = median_time(theirs, repeat)
        print(
            f"    {what:<19} ours {t_ours:7.3f} s   {name} {t_theirs:7.3f} s   "
            f"ratio {t_theirs / t_ours:6.1f}x   ({_show(v_ours)} vs {_show(v_theirs)})"
        )


def _show(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(f"{v:+.4f}" for v in value) + "]"
    return f"p {value:.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shapes", default="1000x1000,10000x100", help="QUERIESxDEPTH, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    for shape in args.shapes.split(","):
        measure(shape, args.repeat)


if __name__ == "__main__":
    main()
