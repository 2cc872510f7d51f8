"""Coverage and width of the PPI interval (`metrics.stats.ppi`), with raw and calibrated machine grades, by
simulation.

    .venv/bin/python benchmarks/ppi_coverage.py [--trials 1000] [--queries 200] [--human 40] [--folds 5]
        [--draws 10] [--seed 0]

Each trial draws ``--queries`` queries, each with a run's top 10 documents. A query has a latent relevance
rate p ~ Beta(2, 3), and each document a human grade ~ Binomial(3, p) on the scale 0..3. Two judges grade
the same documents:

- ``lenient``: adds 1 to the human grade with probability 0.35 (capped at 3), and otherwise keeps it,
  except that with probability 0.1 it gives a uniformly random grade;
- ``monotone``: biased but monotone in the human grade, plus noise: round(0.3 + 3·(1 − (1 − h/3)²) + ε),
  ε ~ N(0, 0.5²), clipped to 0..3 (a 1 becomes a 2 on average, a 2 a 3: lenient most in the middle).

Two per-query metrics are computed from the grades: P@10 at relevance grade >= 2, and DCG@10 with linear gain
(grade / log2(rank + 1)). The true mean is the metric with human grades on all queries of the trial; a
uniformly random ``--human`` of them get human labels. Intervals (95%): ``ppi`` and ``ppi++`` on the raw
grades (``ppi overlap``: with ``variance="overlap"``); ``ppi cal`` and ``ppi++ cal`` on calibrated grades
(`metrics.stats.isotonic`: the metric averaged over ``--draws`` draws of human grades from the isotonic
map), cross-fitted over ``--folds`` folds of the human queries, with ``variance="overlap"``, as
`metrics.stats.ppi.ppi_run` does;
``cal in-sample``: the map fitted on all human queries and used for their own rectifier (shown to say why
cross-fitting: not what QrelForge does); ``human-only``: the classical interval of the human queries. Printed
per judge and metric: the judge-only mean's bias, each interval's coverage of the true mean and of the
population mean (the expected metric of a query, from 500,000 simulated queries), and its mean width.
Targets: calibrated PPI covers the population mean in >= 94% of trials, and with the monotone judge it is
narrower than raw PPI (the lenient judge's errors are nearly a constant shift, which the rectifier already
removes).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from metrics.stats.isotonic import GradeMap, crossfit_folds, crossfit_values, fit_grade_map
from metrics.stats.ppi import ppi_mean

DEPTH, TOP_GRADE = 10, 3
P_LENIENT, P_NOISE = 0.35, 0.1
SHIFT, SPREAD = 0.3, 0.5
METHODS = ("ppi", "ppi overlap", "ppi++", "ppi cal", "ppi++ cal", "cal in-sample", "human-only")


def human_grades(rng: np.random.Generator, trials: int, queries: int) -> np.ndarray:
    """Human grades, trials × queries × DEPTH."""
    rate = rng.beta(2.0, 3.0, size=(trials, queries, 1))
    return rng.binomial(TOP_GRADE, np.broadcast_to(rate, (trials, queries, DEPTH)))


def lenient(rng: np.random.Generator, human: np.ndarray) -> np.ndarray:
    """+1 with probability P_LENIENT (capped), else the human grade; uniform with probability P_NOISE."""
    raised = np.minimum(human + (rng.random(human.shape) < P_LENIENT), TOP_GRADE)
    noisy = rng.random(human.shape) < P_NOISE
    return np.where(noisy, rng.integers(0, TOP_GRADE + 1, size=human.shape), raised)


def monotone(rng: np.random.Generator, human: np.ndarray) -> np.ndarray:
    """round(SHIFT + 3·(1 − (1 − h/3)²) + N(0, SPREAD²)), clipped to the scale."""
    bent = TOP_GRADE * (1.0 - (1.0 - human / TOP_GRADE) ** 2)
    latent = SHIFT + bent + rng.normal(0.0, SPREAD, size=human.shape)
    return np.clip(np.rint(latent), 0, TOP_GRADE).astype(np.int64)


JUDGES: dict[str, Callable[[np.random.Generator, np.ndarray], np.ndarray]] = {
    "lenient": lenient,
    "monotone": monotone,
}


def metrics_of(grades: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query P@10 (grade >= 2) and DCG@10 (linear gain), over the leading axes."""
    discount = 1.0 / np.log2(np.arange(2, DEPTH + 2))
    return {"P@10(rel>=2)": (grades >= 2).mean(axis=-1), "DCG@10": (grades * discount).sum(axis=-1)}


def population_means(rng: np.random.Generator, queries: int = 500_000) -> dict[str, float]:
    """The expected per-query metric (human grades), by Monte Carlo over many simulated queries."""
    return {name: float(values.mean()) for name, values in metrics_of(human_grades(rng, 1, queries)).items()}


def imputed_metrics(grade_map: GradeMap, judge: np.ndarray, uniforms: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query metrics averaged over human grades drawn from the map, one draw per row of ``uniforms``."""
    drawn = np.stack([grade_map.impute(judge.ravel(), uniforms=u).reshape(judge.shape) for u in uniforms])
    return {name: values.mean(axis=0) for name, values in metrics_of(drawn).items()}


def calibrated_metrics(
    human: np.ndarray, judge: np.ndarray, chosen: np.ndarray, settings: tuple[int, int], seed: int
) -> tuple[dict[str, pd.Series], dict[str, np.ndarray]]:
    """(cross-fitted per-query metrics, in-sample ones) of one trial's judge grades after calibration."""
    folds, draws = settings
    fold_of = crossfit_folds(chosen.tolist(), folds, seed=seed)
    fold = np.full(judge.shape[0], -1)
    fold[chosen] = [fold_of[q] for q in chosen.tolist()]
    uniforms = np.random.default_rng(seed).random((draws, judge.size))
    by_fold: dict[str, list[pd.Series]] = {}
    for k in range(max(fold_of.values()) + 1):
        train = chosen[fold[chosen] != k]
        grade_map = fit_grade_map(judge[train].ravel(), human[train].ravel(), scale=(0, TOP_GRADE))
        for name, values in imputed_metrics(grade_map, judge, uniforms).items():
            by_fold.setdefault(name, []).append(pd.Series(values))
    crossfit = {name: crossfit_values(series, fold_of) for name, series in by_fold.items()}
    in_sample_map = fit_grade_map(judge[chosen].ravel(), human[chosen].ravel(), scale=(0, TOP_GRADE))
    return crossfit, imputed_metrics(in_sample_map, judge, uniforms)


def run_trials(
    human: np.ndarray, judge: np.ndarray, n_human: int, settings: tuple[int, int], rng: np.random.Generator
) -> dict[str, list[dict]]:
    """Per metric, one row per trial: true mean, judge-only mean, and every interval of `METHODS`."""
    trials, queries, _ = human.shape
    rows: dict[str, list[dict]] = {}
    for t in range(trials):
        chosen = np.sort(rng.choice(queries, size=n_human, replace=False))
        truth, raw = metrics_of(human[t]), metrics_of(judge[t])
        crossfit, in_sample = calibrated_metrics(human[t], judge[t], chosen, settings, seed=t)
        for name in truth:
            h = pd.DataFrame({"run": truth[name][chosen]}, index=chosen)
            plain = ppi_mean(pd.DataFrame({"run": raw[name]}), h)["run"]
            overlap = ppi_mean(pd.DataFrame({"run": raw[name]}), h, variance="overlap")["run"]
            tuned = ppi_mean(pd.DataFrame({"run": raw[name]}), h, method="ppi++")["run"]
            calibrated = pd.DataFrame({"run": crossfit[name]})
            cal = ppi_mean(calibrated, h, variance="overlap")["run"]
            cal_tuned = ppi_mean(calibrated, h, method="ppi++", variance="overlap")["run"]
            naive = ppi_mean(pd.DataFrame({"run": in_sample[name]}), h, variance="overlap")["run"]
            rows.setdefault(name, []).append(
                {
                    "truth": truth[name].mean(),
                    "judge_only": raw[name].mean(),
                    "ppi": (plain.ci_low, plain.ci_high),
                    "ppi overlap": (overlap.ci_low, overlap.ci_high),
                    "ppi++": (tuned.ci_low, tuned.ci_high),
                    "ppi cal": (cal.ci_low, cal.ci_high),
                    "ppi++ cal": (cal_tuned.ci_low, cal_tuned.ci_high),
                    "cal in-sample": (naive.ci_low, naive.ci_high),
                    "human-only": (plain.human_ci_low, plain.human_ci_high),
                }
            )
    return rows


def report(judge: str, name: str, rows: list[dict], population: float) -> dict[str, tuple[float, float]]:
    truth = np.array([r["truth"] for r in rows])
    bias = float(np.mean([r["judge_only"] for r in rows]) - truth.mean())
    print(f"\n{judge} judge, {name}: population mean {population:.4f}, judge-only bias {bias:+.4f}")
    print(f"  {'interval':<14} {'covers true mean':>16} {'covers population':>17} {'mean width':>11}")
    figures: dict[str, tuple[float, float]] = {}
    for method in METHODS:
        bounds = np.array([r[method] for r in rows])
        covered = float(((bounds[:, 0] <= truth) & (truth <= bounds[:, 1])).mean())
        covered_population = float(((bounds[:, 0] <= population) & (population <= bounds[:, 1])).mean())
        width = float((bounds[:, 1] - bounds[:, 0]).mean())
        figures[method] = (covered_population, width)
        print(f"  {method:<14} {covered:>16.1%} {covered_population:>17.1%} {width:>11.4f}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--human", type=int, default=40)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    human = human_grades(rng, args.trials, args.queries)
    population = population_means(rng)
    print(
        f"{args.trials} trials, {args.queries} queries with judge labels, {args.human} with human labels, "
        f"{args.folds} cross-fitting folds, {args.draws} draws"
    )
    ok = True
    for judge_name, make in JUDGES.items():
        judge = make(rng, human)
        for name, rows in run_trials(human, judge, args.human, (args.folds, args.draws), rng).items():
            figures = report(judge_name, name, rows, population[name])
            ok &= figures["ppi"][0] >= 0.94 and figures["ppi"][1] < figures["human-only"][1]
            ok &= figures["ppi cal"][0] >= 0.94
            ok &= judge_name != "monotone" or figures["ppi cal"][1] < figures["ppi"][1]
    print(
        "\ntargets (population coverage >= 94% for PPI, and it narrower than human-only; >= 94% for "
        f"calibrated PPI, and it narrower than PPI with the monotone judge): {'met' if ok else 'NOT met'}"
    )
    print(f"took {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
