"""Compare runs with confidence: paired significance tests against a baseline, with the numbers kept apart
from their rendering.

`compare` scores runs on the same qrels and returns a `Report`: means, per-query paired differences, t-test,
randomization test and bootstrap interval, Holm-adjusted, and win/tie/loss counts. Queries undefined in
either run of a pair are dropped from its tests (``n`` says how many remain). Re-exports the related
analyses for ``from metrics.compare import X``. The module is callable (`metrics._callable`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from metrics import _callable
from metrics._text import _TIE, _py, _sign
from metrics.checks import CheckResult, CheckRow, check_thresholds, parse_threshold
from metrics.coverage import Coverage, judging_coverage
from metrics.errors import QrelForgeError
from metrics.evaluate import Result, as_qrels, evaluate, named_runs
from metrics.measures import REGISTRY, Measure, parse_measures
from metrics.report import DOWN, UP, Comparison, Direction, Report, Settings
from metrics.report import svg_differences as svg_differences  # re-exported (public before the split)
from metrics.report import svg_means as svg_means
from metrics.report import svg_per_query as svg_per_query
from metrics.report.charts import svg_line_chart
from metrics.stats import significance
from metrics.stats.sensitivity import LABEL_COLUMNS as LABEL_COLUMNS
from metrics.stats.sensitivity import Sensitivity, assessor_sensitivity, majority_qrels
from metrics.stats.significance import TESTS, StatTest

__all__ = [
    "compare",
    "slice_report",
    "Report",
    "Comparison",
    "Settings",
    "Direction",
    "StatTest",
    "named_runs",
    "LOWER_IS_BETTER",
    "UP",
    "DOWN",
    "assessor_sensitivity",
    "Sensitivity",
    "majority_qrels",
    "judging_coverage",
    "Coverage",
    "check_thresholds",
    "parse_threshold",
    "CheckResult",
    "CheckRow",
    "svg_line_chart",
]

# The registered measures where a smaller value is the better one, as of import; kept for callers of this
# name. `compare` itself reads `MeasureDef.higher_is_better`, so measures registered later count too.
LOWER_IS_BETTER = frozenset(name for name, d in REGISTRY.items() if not d.higher_is_better)


def _comparisons(
    results: dict[str, Result], baseline: str, measures: Sequence[Measure], settings: Settings
) -> list[Comparison]:
    cols = [(run, str(m)) for m in measures for run in results if run != baseline]
    diffs = np.column_stack([results[r].values[m] - results[baseline].values[m] for r, m in cols])
    tests = _run_tests(diffs, settings)
    signed = diffs * np.array([_sign(m) for _, m in cols])
    with np.errstate(invalid="ignore"):
        wins, losses, ties = (signed > _TIE).sum(0), (signed < -_TIE).sum(0), (np.abs(signed) <= _TIE).sum(0)
    n = (~np.isnan(diffs)).sum(0)
    mean_diff = np.divide(np.nansum(diffs, 0), n, out=np.full(len(cols), np.nan), where=n > 0)
    for key in ("p_t", "p_permutation"):
        if key in tests:
            tests[key + "_adjusted"] = _adjust_per_measure(
                tests[key], [m for _, m in cols], settings.correction
            )
    out = []
    for j, (run, measure) in enumerate(cols):
        c = Comparison(
            run=run,
            measure=measure,
            mean=results[run].mean[measure],
            baseline_mean=results[baseline].mean[measure],
            diff=_py(mean_diff[j]),
            n=int(n[j]),
            wins=int(wins[j]),
            ties=int(ties[j]),
            losses=int(losses[j]),
            **{k: _py(v[j]) for k, v in tests.items()},
        )
        out.append(_finish(c, settings))
    return out


def _run_tests(diffs: np.ndarray, settings: Settings) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    if StatTest.T in settings.tests:
        out["t"], out["p_t"], _ = significance.paired_t(diffs)
    if StatTest.PERMUTATION in settings.tests:
        perm = significance.permutation_test(
            diffs, n_permutations=settings.n_permutations, seed=settings.seed
        )
        out["p_permutation"], out["permutations"], out["exact"] = perm.p, perm.resamples, perm.exact
    if StatTest.BOOTSTRAP in settings.tests:
        out["ci_low"], out["ci_high"] = significance.bootstrap_ci(
            diffs, n_bootstrap=settings.n_bootstrap, seed=settings.seed, confidence=settings.confidence
        )
    return out


def _adjust_per_measure(p: np.ndarray, measures: list[str], correction: str) -> np.ndarray:
    out = np.full(len(p), np.nan)
    for name in dict.fromkeys(measures):
        idx = np.array([i for i, m in enumerate(measures) if m == name])
        out[idx] = significance.adjust(p[idx], correction)
    return out


def _finish(c: Comparison, settings: Settings) -> Comparison:
    """Decide significance with the settings' flag test, and its direction."""
    test = settings.flag_test
    if test == StatTest.BOOTSTRAP:
        significant = _excludes_zero(c.ci_low, c.ci_high)
    elif test is not None:
        p = c.p_permutation_adjusted if test == StatTest.PERMUTATION else c.p_t_adjusted
        significant = p is not None and p <= settings.alpha and bool(c.diff)
    else:
        significant = False
    better = (c.diff or 0.0) * _sign(c.measure) > 0
    direction = (Direction.BETTER if better else Direction.WORSE) if significant else Direction.NONE
    return Comparison(**{**asdict(c), "significant": bool(significant), "direction": direction})


def _excludes_zero(low: float | None, high: float | None) -> bool:
    return low is not None and high is not None and (low > 0 or high < 0)


# ------------------------------------------------------------------------------------------------ compare
def compare(
    qrels: Any,
    runs: Any,
    measures: Iterable[str | Measure] | str,
    *,
    baseline: str | None = None,
    tests: Sequence[str] = TESTS,
    n_permutations: int = 10_000,
    n_bootstrap: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    confidence: float = 0.95,
    correction: str | None = significance.Correction.HOLM,
    corpus: Any = None,
    strict: bool = False,
    chunk_map: Any = None,
) -> Report:
    """Score ``runs`` on ``qrels`` and test each run against ``baseline``, measure by measure.

    The tests are paired by query: the difference of run and baseline on each query where both are defined
    (the others are dropped and counted in ``Comparison.n``). A difference is significant when the adjusted p
    of the permutation test (else the t-test) is <= ``alpha``; with only the bootstrap, when its interval
    excludes 0.

    Args:
        qrels: anything `metrics.evaluate` accepts (path, DataFrame, mapping, `Qrels`).
        runs: ``{name: run}`` or a list of runs named by their tags; each run as `metrics.evaluate` takes it.
        measures: measure names or `Measure` objects.
        baseline: the run the others are tested against; the first run when None.
        tests: any of ``"t"`` (paired t-test), ``"permutation"`` (Fisher randomization test by sign flips;
            exact when ``2**n <= n_permutations``) and ``"bootstrap"`` (percentile interval of the mean
            difference at ``confidence``).
        n_permutations: the most sign-flip samples of the permutation test.
        n_bootstrap: the bootstrap samples.
        seed: the seed of the permutation and bootstrap samples; a fixed seed gives the same report.
        alpha: the significance level.
        confidence: the bootstrap interval's level.
        correction: the adjustment of p-values per measure across the runs compared with the baseline:
            ``"holm"``, ``"bonferroni"`` or ``"none"`` (None is ``"none"``).
        corpus: as in `metrics.evaluate`.
        strict: as in `metrics.evaluate`.
        chunk_map: as in `metrics.evaluate`.

    Returns:
        A `Report`: each run's `Result` and a `Comparison` per (run, measure) against the baseline.

    Raises:
        QrelForgeError: fewer than two runs, an unnamed or repeated run, an unknown baseline, or a setting
            out of range; and whatever `metrics.evaluate` raises for a run.

    >>> qrels = {"q1": {"D1": 1}, "q2": {"D2": 1}}
    >>> report = compare(qrels, {"a": {"q1": ["D9", "D1"], "q2": ["D2"]}, "b": {"q1": ["D1"], "q2": ["D2"]}},
    ...                  ["RR"], baseline="a")
    >>> c = report.comparison("b", "RR")
    >>> c.diff, (c.wins, c.ties, c.losses), c.p_permutation
    (0.25, (1, 1, 0), 1.0)
    """
    settings = Settings(
        tests=(tests,) if isinstance(tests, str) else tuple(tests),
        n_permutations=n_permutations,
        n_bootstrap=n_bootstrap,
        seed=seed,
        alpha=alpha,
        confidence=confidence,
        correction=significance.Correction.NONE if correction is None else correction,
    )
    specs = parse_measures(measures)
    named = named_runs(runs)
    baseline = _check_baseline(baseline, list(named))
    qrels = as_qrels(qrels)
    corpus = _read_corpus_once(corpus)
    results = {
        name: evaluate(qrels, run, specs, corpus=corpus, strict=strict, chunk_map=chunk_map)
        for name, run in named.items()
    }
    for name, result in results.items():
        result.name = name
    comparisons = _comparisons(results, baseline, specs, settings)
    return Report(results, baseline, specs, comparisons, settings)


def slice_report(report: Report, tags: Any, *, by: str = "tag") -> dict[str, Report]:
    """``report`` split into slices of its queries, each tested on its own.

    Each slice's report holds the slice's queries only, its means over them and its significance tests run
    within the slice (its ``n`` pairs, the same settings and seed; p-values adjusted across the runs as in
    `compare`). It carries the fingerprint of ``report`` with ``{"slice": {"by": by, "name": name}}`` added.

    Args:
        report: a report from `compare`.
        tags: the queries' tags, as `metrics.slices.query_tags` reads them (``{qid: [tag, ...]}``, a path
            or a DataFrame).
        by: ``"tag"`` (a slice per tag) or ``"tag:KEY"`` (a slice per value of tags ``KEY=value``).

    Returns:
        ``{slice name: Report}``, in the order of `metrics.slices.query_slices`.

    Raises:
        QrelForgeError: ``by`` is neither form, or a tag cannot be read.

    >>> qrels = {"q1": {"D1": 1}, "q2": {"D2": 1}, "q3": {"D3": 1}}
    >>> runs = {"a": {"q1": ["D9", "D1"], "q2": ["D2"], "q3": ["D3"]},
    ...         "b": {"q1": ["D1"], "q2": ["D2"], "q3": []}}
    >>> parts = slice_report(compare(qrels, runs, ["RR"]), {"q1": ["head"], "q2": ["tail"], "q3": ["tail"]})
    >>> [(s, r.comparison("b", "RR").n, r.comparison("b", "RR").diff) for s, r in parts.items()]
    [('head', 1, 0.5), ('tail', 2, -0.5)]
    """
    from metrics.slices import query_slices

    out: dict[str, Report] = {}
    for name, rows in query_slices(report.query_ids, tags, by=by).items():
        results = {run: r.take(rows) for run, r in report.results.items()}
        part = Report(
            results,
            report.baseline,
            report.measures,
            _comparisons(results, report.baseline, report.measures, report.settings),
            report.settings,
        )
        if report.fingerprint is not None:
            part.fingerprint = {**report.fingerprint, "slice": {"by": by, "name": name}}
        out[name] = part
    return out


def _check_baseline(baseline: str | None, names: list[str]) -> str:
    if baseline is None:
        return names[0]
    if baseline not in names:
        raise QrelForgeError(f"baseline must name one of the runs {names}; got {baseline!r}")
    return baseline


def _read_corpus_once(corpus: Any) -> Any:
    from metrics.formats import read_corpus

    return read_corpus(corpus) if isinstance(corpus, str | os.PathLike) or hasattr(corpus, "read") else corpus


_callable.make_callable(__name__, compare)
