"""Coverage and width of the PPI interval (`metrics.stats.ppi`) with a lenient machine judge, by simulation.

    .venv/bin/python benchmarks/ppi_coverage.py [--trials 1000] [--queries 200] [--human 40] [--seed 0]

Each trial draws ``--queries`` queries, each with a run's top 10 documents. A query has a latent relevance
rate p ~ Beta(2, 3), and each document a human grade ~ Binomial(3, p) on the scale 0..3. The judge is
lenient: it adds 1 to the human grade with probability 0.35 (capped at 3), and otherwise keeps it, except
that with probability 0.1 it gives a uniformly random grade. Two per-query metrics are computed from the
grades: P@10 at relevance grade >= 2, and DCG@10 with linear gain (grade / log2(rank + 1)).

The true mean is the metric with human grades on all queries of the trial; a uniformly random ``--human``
of them get human labels. Printed per metric: the judge-only mean's bias, and for the PPI, PPI++ and
human-only 95% intervals the share of trials covering the true mean, the share covering the population mean
(the expected metric of a query, estimated once from 500,000 simulated queries), and the mean width.
Targets: PPI covers the true mean in >= 93% of trials and is narrower than the human-only interval from the
same human queries.

The intervals are built for the population mean; for the mean over the trial's own queries they are
conservative (that mean moves with the sample, which removes the var(J)/N term and the finite-population
share n/N of the human term), so expect coverage of the true mean above 95% and of the population mean
near 95%.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from metrics.stats.ppi import ppi_mean

DEPTH, TOP_GRADE = 10, 3
P_LENIENT, P_NOISE = 0.35, 0.1


def simulate(rng: np.random.Generator, trials: int, queries: int) -> tuple[np.ndarray, np.ndarray]:
    """Human and judge grades, trials × queries × DEPTH."""
    shape = (trials, queries, DEPTH)
    rate = rng.beta(2.0, 3.0, size=(trials, queries, 1))
    human = rng.binomial(TOP_GRADE, np.broadcast_to(rate, shape))
    lenient = np.minimum(human + (rng.random(shape) < P_LENIENT), TOP_GRADE)
    noisy = rng.random(shape) < P_NOISE
    judge = np.where(noisy, rng.integers(0, TOP_GRADE + 1, size=shape), lenient)
    return human, judge


def metrics_of(grades: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query P@10 (grade >= 2) and DCG@10 (linear gain), trials × queries."""
    discount = 1.0 / np.log2(np.arange(2, DEPTH + 2))
    return {"P@10(rel>=2)": (grades >= 2).mean(axis=-1), "DCG@10": (grades * discount).sum(axis=-1)}


def population_means(rng: np.random.Generator, queries: int = 500_000) -> dict[str, float]:
    """The expected per-query metric (human grades), by Monte Carlo over many simulated queries."""
    human, _ = simulate(rng, 1, queries)
    return {name: float(values.mean()) for name, values in metrics_of(human).items()}


def run_trials(human_values: np.ndarray, judge_values: np.ndarray, n_human: int, rng: np.random.Generator):
    """One row per trial: true mean, judge-only mean, and the three intervals."""
    trials, queries = human_values.shape
    rows = []
    for t in range(trials):
        chosen = np.sort(rng.choice(queries, size=n_human, replace=False))
        judge = pd.DataFrame({"run": judge_values[t]})
        human = pd.DataFrame({"run": human_values[t, chosen]}, index=chosen)
        plain = ppi_mean(judge, human)["run"]
        tuned = ppi_mean(judge, human, method="ppi++")["run"]
        rows.append(
            {
                "truth": human_values[t].mean(),
                "judge_only": judge_values[t].mean(),
                "ppi": (plain.ci_low, plain.ci_high),
                "ppi++": (tuned.ci_low, tuned.ci_high),
                "human-only": (plain.human_ci_low, plain.human_ci_high),
            }
        )
    return rows


def report(name: str, rows: list[dict], population: float) -> dict[str, tuple[float, float]]:
    truth = np.array([r["truth"] for r in rows])
    bias = float(np.mean([r["judge_only"] for r in rows]) - truth.mean())
    print(f"\n{name}: population mean {population:.4f}, judge-only bias {bias:+.4f}")
    print(f"  {'interval':<11} {'covers true mean':>16} {'covers population':>17} {'mean width':>11}")
    figures = {}
    for method in ("ppi", "ppi++", "human-only"):
        bounds = np.array([r[method] for r in rows])
        covered = float(((bounds[:, 0] <= truth) & (truth <= bounds[:, 1])).mean())
        covered_population = float(((bounds[:, 0] <= population) & (population <= bounds[:, 1])).mean())
        width = float((bounds[:, 1] - bounds[:, 0]).mean())
        figures[method] = (covered, width)
        print(f"  {method:<11} {covered:>16.1%} {covered_population:>17.1%} {width:>11.4f}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--human", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    human, judge = simulate(rng, args.trials, args.queries)
    human_metrics, judge_metrics = metrics_of(human), metrics_of(judge)
    population = population_means(rng)
    print(f"{args.trials} trials, {args.queries} queries with judge labels, {args.human} with human labels")
    ok = True
    for name in human_metrics:
        rows = run_trials(human_metrics[name], judge_metrics[name], args.human, rng)
        figures = report(name, rows, population[name])
        ok &= figures["ppi"][0] >= 0.93 and figures["ppi"][1] < figures["human-only"][1]
    print(f"\ntargets (PPI coverage >= 93%, narrower than human-only): {'met' if ok else 'NOT met'}")
    print(f"took {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
