"""Time the agreement helpers the app calls, on 100,000 labels: 5,000 items
(query–document pairs in 250 queries) each graded 0..3 by all 20 raters. Where a peer library computes the
same statistic, it is timed in the same run on the same data, and the ratio peer ÷ ours is printed together
with the largest difference between the results.

    .venv/bin/python benchmarks/agreement_speed.py [--repeat 5]

Each time is the best of ``--repeat`` runs. The app helpers take the long (item, rater, label) table; the
peers take the items × raters matrix (sklearn a pair of columns, krippendorff its transpose), built once
beforehand and not timed.
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np
import pandas as pd

from metrics.agreement import (
    agreement_summary,
    disagreements,
    fleiss_kappa,
    group_agreement,
    item_agreement,
    krippendorff_alpha,
    pairwise_kappa,
)

N_ITEMS, N_RATERS, N_QUERIES, GRADES = 5_000, 20, 250, [0, 1, 2, 3]


def labels_table(seed: int = 0) -> pd.DataFrame:
    """100k labels: each rater keeps the item's latent grade with probability 0.7, else draws a random
    grade."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(GRADES, size=N_ITEMS, p=[0.4, 0.3, 0.2, 0.1])
    items = np.repeat(np.arange(N_ITEMS), N_RATERS)
    keep = rng.random(len(items)) < 0.7
    return pd.DataFrame(
        {
            "query": np.array([f"q{i % N_QUERIES:03d}" for i in range(N_ITEMS)])[items],
            "item": np.array([f"q{i % N_QUERIES:03d}/d{i:05d}" for i in range(N_ITEMS)])[items],
            "rater": np.array([f"r{r:02d}" for r in range(N_RATERS)])[np.tile(np.arange(N_RATERS), N_ITEMS)],
            "label": np.where(keep, truth[items], rng.choice(GRADES, size=len(items))),
        }
    )


def best(fn, repeat: int) -> tuple[float, object]:
    """Best wall time of `repeat` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def sklearn_pairwise(wide: pd.DataFrame, weights) -> np.ndarray:
    from sklearn.metrics import cohen_kappa_score

    kappa = np.full((N_RATERS, N_RATERS), np.nan)
    for a, b in itertools.combinations(range(N_RATERS), 2):
        kappa[a, b] = kappa[b, a] = cohen_kappa_score(
            wide.iloc[:, a], wide.iloc[:, b], weights=weights, labels=GRADES
        )
    return kappa


def statsmodels_fleiss(matrix: np.ndarray) -> float:
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    return sm_fleiss(aggregate_raters(matrix)[0])


def krippendorff_package(matrix: np.ndarray, level: str) -> float:
    import krippendorff

    return krippendorff.alpha(matrix.T.astype(float), level_of_measurement=level, value_domain=GRADES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    table = labels_table()
    wide = table.pivot(index="item", columns="rater", values="label")
    matrix = wide.to_numpy()
    print(
        f"{len(table):,} labels, {N_ITEMS:,} items, {N_RATERS} raters, {N_QUERIES} queries; "
        f"best of {repeat}\n"
    )

    helpers = {
        "pairwise_kappa": lambda: pairwise_kappa(table, labels=GRADES),
        "pairwise_kappa quadratic": lambda: pairwise_kappa(table, labels=GRADES, weights="quadratic"),
        "pairwise_kappa cutoff=2": lambda: pairwise_kappa(table, labels=GRADES, cutoff=2),
        "item_agreement": lambda: item_agreement(table, labels=GRADES, group="query"),
        "disagreements linear": lambda: disagreements(table, labels=GRADES, weights="linear"),
        "group_agreement ordinal": lambda: group_agreement(
            table, group="query", labels=GRADES, level="ordinal"
        ),
        "agreement_summary": lambda: agreement_summary(
            table, labels=GRADES, weights="quadratic", level="ordinal"
        ),
    }
    print(f"{'app helper (long table)':<34}{'seconds':>10}")
    total = 0.0
    for name, fn in helpers.items():
        seconds, _ = best(fn, repeat)
        total += seconds
        print(f"{name:<34}{seconds:>10.4f}")
    print(
        f"{'all helpers together':<34}{total:>10.4f}   ({'well under' if total < 0.5 else 'NOT under'} 1 s)\n"
    )

    peers = [
        (
            "pairwise_kappa (long table)",
            lambda: pairwise_kappa(table, labels=GRADES).kappa.to_numpy(),
            "sklearn cohen_kappa_score x190",
            lambda: sklearn_pairwise(wide, None),
        ),
        (
            "pairwise_kappa quadratic",
            lambda: pairwise_kappa(table, labels=GRADES, weights="quadratic").kappa.to_numpy(),
            "sklearn cohen_kappa_score x190",
            lambda: sklearn_pairwise(wide, "quadratic"),
        ),
        (
            "fleiss_kappa (matrix)",
            lambda: fleiss_kappa(matrix),
            "statsmodels aggregate+fleiss",
            lambda: statsmodels_fleiss(matrix),
        ),
        (
            "krippendorff_alpha nominal",
            lambda: krippendorff_alpha(matrix, labels=GRADES),
            "krippendorff.alpha nominal",
            lambda: krippendorff_package(matrix, "nominal"),
        ),
        (
            "krippendorff_alpha ordinal",
            lambda: krippendorff_alpha(matrix, level="ordinal", labels=GRADES),
            "krippendorff.alpha ordinal",
            lambda: krippendorff_package(matrix, "ordinal"),
        ),
    ]
    print(f"{'ours':<30}{'s':>8}   {'peer':<32}{'s':>8}{'peer/ours':>11}{'max |diff|':>12}")
    for name, ours_fn, peer_name, peer_fn in peers:
        ours_s, ours = best(ours_fn, repeat)
        peer_s, theirs = best(peer_fn, max(1, repeat // 2))
        diff = float(np.nanmax(np.abs(np.asarray(ours, float) - np.asarray(theirs, float))))
        print(
            f"{name:<30}{ours_s:>8.4f}   {peer_name:<32}{peer_s:>8.4f}{peer_s / ours_s:>10.1f}x{diff:>12.1e}"
        )


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an undefined statistic here would be a bug in the benchmark data
        main()
