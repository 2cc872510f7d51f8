"""Compare runs with confidence: paired significance tests against a baseline, with the numbers kept apart from
their rendering.

`compare` scores several runs on the same qrels (`metrics.evaluate`), pairs every run with a baseline query
by query, and returns a `Report`: means, per-query values, paired differences, a paired t-test, a Fisher
randomization test and a bootstrap interval of the mean difference (`metrics.stats`), Holm-adjusted across
the runs compared with the baseline, and per-query win/tie/loss counts. Renderings (`metrics.report`):
``to_dataframe()``, ``to_markdown()``, ``to_html()`` (one self-contained file, inline SVG charts from
`metrics.charts`), ``to_latex()``, ``to_text()``, ``to_dict()`` (JSON-ready).

Queries undefined in either run of a pair (e.g. R@k on a query without relevant documents; FirstRel when a
run returned nothing relevant) are dropped from that pair's tests, and each comparison reports how many pairs
it kept (``n``). The means are over each run's own defined queries, as in `metrics.evaluate`. Which way is
better comes from the measure's `MeasureDef.higher_is_better` (lower is better for FirstRel).

The related analyses live in their own modules and are re-exported here, so ``from metrics.compare import X``
keeps working: `metrics.sensitivity` (`assessor_sensitivity`, `Sensitivity`, `majority_qrels`),
`metrics.coverage` (`judging_coverage`, `Coverage`), `metrics.checks` (`check_thresholds`, `parse_threshold`,
`CheckResult`, `CheckRow`), `metrics.charts` (`svg_line_chart`) and `metrics.report` (`named_runs`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics import stats
from metrics.charts import svg_line_chart
from metrics.checks import CheckResult, CheckRow, check_thresholds, parse_threshold
from metrics.coverage import Coverage, judging_coverage
from metrics.errors import QrelForgeError
from metrics.evaluate import Result, as_qrels, evaluate
from metrics.measures import REGISTRY, Measure, parse_measure, parse_measures
from metrics.report import (
    _TIE,
    DOWN,
    UP,
    _outcomes,
    _py,
    _sign,
    named_runs,
    render_html,
    render_latex,
    render_markdown,
    render_text,
)
from metrics.report import svg_differences as svg_differences  # re-exported (public before the split)
from metrics.report import svg_means as svg_means
from metrics.report import svg_per_query as svg_per_query
from metrics.sensitivity import LABEL_COLUMNS as LABEL_COLUMNS
from metrics.sensitivity import Sensitivity, assessor_sensitivity, majority_qrels

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "compare",
    "Report",
    "Comparison",
    "Settings",
    "named_runs",
    "LOWER_IS_BETTER",
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

TESTS = ("t", "permutation", "bootstrap")
# The registered measures where a smaller value is the better one, as of import; kept for callers of this
# name. `compare` itself reads `MeasureDef.higher_is_better`, so measures registered later count too.
LOWER_IS_BETTER = frozenset(name for name, d in REGISTRY.items() if not d.higher_is_better)


# --------------------------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class Settings:
    """How `compare` tested: which tests, how many resamples, the seed, alpha, interval level, correction."""

    tests: tuple[str, ...] = TESTS
    n_permutations: int = 10_000
    n_bootstrap: int = 10_000
    seed: int = 0
    alpha: float = 0.05
    confidence: float = 0.95
    correction: str = "holm"

    def __post_init__(self) -> None:
        tests = (self.tests,) if isinstance(self.tests, str) else tuple(self.tests)
        bad = [t for t in tests if t not in TESTS]
        if bad or len(set(tests)) != len(tests):
            raise QrelForgeError(f"tests must be distinct names among {TESTS}; got {self.tests!r}")
        object.__setattr__(self, "tests", tests)
        stats.check_int(self.n_permutations, "n_permutations", 1)
        stats.check_int(self.n_bootstrap, "n_bootstrap", 1)
        stats.check_int(self.seed, "seed", 0)
        stats.check_probability(self.alpha, "alpha")
        stats.check_probability(self.confidence, "confidence")
        correction = "none" if self.correction is None else self.correction
        if correction not in stats.CORRECTIONS:
            raise QrelForgeError(
                f"correction must be one of {', '.join(stats.CORRECTIONS)}; got {self.correction!r}"
            )
        object.__setattr__(self, "correction", correction)

    @property
    def flag_test(self) -> str | None:
        """The test that decides 'significant': the permutation test, else the t-test, else the bootstrap
        interval excluding 0 (not corrected for multiple comparisons); None when no test was run."""
        return next((t for t in ("permutation", "t", "bootstrap") if t in self.tests), None)


# ------------------------------------------------------------------------------------------ comparisons
@dataclass(frozen=True)
class Comparison:
    """One run against the baseline on one measure.

    ``diff`` is the mean of the per-query differences run − baseline over the ``n`` queries where both are
    defined; ``wins``/``ties``/``losses`` count queries where the run is better/equal/worse (for FirstRel,
    lower is better). p-values are two-sided; ``*_adjusted`` are corrected across the runs compared with the
    baseline on this measure. ``direction`` is "better" or "worse" when significant, else "".
    """

    run: str
    measure: str
    mean: float | None
    baseline_mean: float | None
    diff: float | None
    n: int
    wins: int
    ties: int
    losses: int
    t: float | None = None
    p_t: float | None = None
    p_t_adjusted: float | None = None
    p_permutation: float | None = None
    p_permutation_adjusted: float | None = None
    permutations: int = 0
    exact: bool = False
    ci_low: float | None = None
    ci_high: float | None = None
    significant: bool = False
    direction: str = ""

    def to_dict(self) -> dict[str, Any]:
        return stats._json_ready(asdict(self))


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
            run,
            measure,
            results[run].mean[measure],
            results[baseline].mean[measure],
            _py(mean_diff[j]),
            int(n[j]),
            int(wins[j]),
            int(ties[j]),
            int(losses[j]),
            **{k: _py(v[j]) for k, v in tests.items()},
        )
        out.append(_finish(c, settings))
    return out


def _run_tests(diffs: np.ndarray, settings: Settings) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    if "t" in settings.tests:
        out["t"], out["p_t"], _ = stats.paired_t(diffs)
    if "permutation" in settings.tests:
        perm = stats.permutation_test(diffs, n_permutations=settings.n_permutations, seed=settings.seed)
        out["p_permutation"], out["permutations"], out["exact"] = perm.p, perm.resamples, perm.exact
    if "bootstrap" in settings.tests:
        out["ci_low"], out["ci_high"] = stats.bootstrap_ci(
            diffs, n_bootstrap=settings.n_bootstrap, seed=settings.seed, confidence=settings.confidence
        )
    return out


def _adjust_per_measure(p: np.ndarray, measures: list[str], correction: str) -> np.ndarray:
    out = np.full(len(p), np.nan)
    for name in dict.fromkeys(measures):
        idx = np.array([i for i, m in enumerate(measures) if m == name])
        out[idx] = stats.adjust(p[idx], correction)
    return out


def _finish(c: Comparison, settings: Settings) -> Comparison:
    """Decide significance with the settings' flag test, and its direction."""
    test = settings.flag_test
    if test == "bootstrap":
        significant = c.ci_low is not None and (c.ci_low > 0 or c.ci_high < 0)
    elif test is not None:
        p = c.p_permutation_adjusted if test == "permutation" else c.p_t_adjusted
        significant = p is not None and p <= settings.alpha and bool(c.diff)
    else:
        significant = False
    better = (c.diff or 0.0) * _sign(c.measure) > 0
    direction = ("better" if better else "worse") if significant else ""
    return Comparison(**{**asdict(c), "significant": bool(significant), "direction": direction})


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
    correction: str | None = "holm",
    corpus: Any = None,
    strict: bool = False,
    chunk_map: Any = None,
) -> Report:
    """Score ``runs`` on ``qrels`` and test each run against ``baseline``, measure by measure.

    ``runs``: ``{name: run}`` or a list of runs named by their tags; each run and ``qrels`` is anything
    `metrics.evaluate` accepts (paths, DataFrames, mappings, `Run`/`Qrels`). ``baseline``: a run name
    (default: the first run). ``tests``: any of ``"t"`` (paired t-test), ``"permutation"`` (Fisher
    randomization test, sign flips; exact when ``2**n <= n_permutations``), ``"bootstrap"`` (percentile
    interval of the mean difference at ``confidence``), all with ``seed`` fixed. p-values are adjusted per
    measure across the runs compared with the baseline (``correction``: ``"holm"``, ``"bonferroni"`` or
    ``"none"``). A difference is significant when the adjusted p of the permutation test (else the t-test) is
    <= ``alpha``; with only the bootstrap, when its interval excludes 0. ``corpus``, ``strict``,
    ``chunk_map``: as in `metrics.evaluate`.

    Pairs where either run is undefined are dropped and counted (``Comparison.n``).

    >>> qrels = {"q1": {"D1": 1}, "q2": {"D2": 1}}
    >>> report = compare(qrels, {"a": {"q1": ["D9", "D1"], "q2": ["D2"]}, "b": {"q1": ["D1"], "q2": ["D2"]}},
    ...                  ["RR"], baseline="a")
    >>> c = report.comparison("b", "RR")
    >>> c.diff, (c.wins, c.ties, c.losses), c.p_permutation
    (0.25, (1, 1, 0), 1.0)
    """
    settings = Settings(
        tuple(tests) if not isinstance(tests, str) else tests,
        n_permutations,
        n_bootstrap,
        seed,
        alpha,
        confidence,
        correction,
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
    return Report(results, baseline, specs, _comparisons(results, baseline, specs, settings), settings)


def _check_baseline(baseline: str | None, names: list[str]) -> str:
    if baseline is None:
        return names[0]
    if baseline not in names:
        raise QrelForgeError(f"baseline must name one of the runs {names}; got {baseline!r}")
    return baseline


def _read_corpus_once(corpus: Any) -> Any:
    from metrics.formats import read_corpus

    return read_corpus(corpus) if isinstance(corpus, str | os.PathLike) or hasattr(corpus, "read") else corpus


# ------------------------------------------------------------------------------------------------- report
class Report:
    """The outcome of `compare`: numbers first (``means``, ``comparisons``, ``to_dataframe``), renderings
    second (``to_markdown``, ``to_html``, ``to_latex``, ``to_text``, ``to_dict``)."""

    def __init__(
        self,
        results: dict[str, Result],
        baseline: str,
        measures: Sequence[Measure],
        comparisons: list[Comparison],
        settings: Settings,
    ):
        self.results = results
        self.baseline = baseline
        self.measures = tuple(measures)
        self.comparisons = comparisons
        self.settings = settings
        self._means = {run: r.mean for run, r in results.items()}

    # ---- numbers
    @property
    def runs(self) -> list[str]:
        return list(self.results)

    @property
    def measure_names(self) -> list[str]:
        return [str(m) for m in self.measures]

    @property
    def query_ids(self) -> list[str]:
        return self.results[self.baseline].query_ids

    @property
    def means(self) -> dict[str, dict[str, float | None]]:
        """``{run: {measure: mean}}``; None where a measure is defined for no query."""
        return self._means

    def comparison(self, run: str, measure: str | Measure) -> Comparison:
        """The comparison of ``run`` with the baseline on ``measure``."""
        name = str(parse_measure(measure))
        for c in self.comparisons:
            if c.run == run and c.measure == name:
                return c
        others = [r for r in self.runs if r != self.baseline]
        raise QrelForgeError(
            f"no comparison for run {run!r} on {name!r}; runs compared: {others}, "
            f"measures: {self.measure_names}"
        )

    def best(self, measure: str) -> list[str]:
        """The runs with the best mean on ``measure`` (highest; lowest for FirstRel); ties all count."""
        values = {run: m[measure] for run, m in self.means.items() if m[measure] is not None}
        if not values:
            return []
        pick = min if _sign(measure) < 0 else max
        top = pick(values.values())
        return [run for run, v in values.items() if abs(v - top) <= _TIE]

    def _flag(self, run: str, measure: str) -> str:
        """▲ / ▼ when ``run`` is significantly better / worse than the baseline on ``measure``, else ""."""
        if run == self.baseline:
            return ""
        c = self.comparison(run, measure)
        return UP if c.direction == "better" else DOWN if c.direction == "worse" else ""

    def to_dataframe(self, what: str = "summary") -> pd.DataFrame:
        """Tables for analysis and charts.

        ``"summary"``: one row per run and measure (the baseline too) with the mean, the number of queries
        it is taken over, whether it is best, and the comparison's fields (NaN for the baseline).
        ``"means"``: runs × measures. ``"per_query"``: one row per run, query and measure with the value,
        the baseline's value, the difference and the outcome (win/tie/loss; None for the baseline or an
        undefined pair). ``"wtl"``: one row per run, measure and outcome with its count (stacked bars).
        """
        kinds = {
            "summary": self._summary_frame,
            "means": self._means_frame,
            "per_query": self._per_query_frame,
            "wtl": self._wtl_frame,
        }
        if what not in kinds:
            raise QrelForgeError(f"what must be one of {', '.join(kinds)}; got {what!r}")
        return kinds[what]()

    def _summary_frame(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for run, result in self.results.items():
            for m in self.measure_names:
                row = {
                    "run": run,
                    "measure": m,
                    "baseline": run == self.baseline,
                    "mean": self.means[run][m],
                    "queries": result.n[m],
                    "best": run in self.best(m),
                }
                if run != self.baseline:
                    extra = self.comparison(run, m).to_dict()
                    extra["pairs"] = extra.pop("n")
                    row.update({k: v for k, v in extra.items() if k not in ("run", "measure", "mean")})
                rows.append(row)
        return pd.DataFrame(rows).drop(columns=["baseline_mean"], errors="ignore")

    def _means_frame(self) -> pd.DataFrame:
        import pandas as pd

        frame = pd.DataFrame.from_dict(self.means, orient="index")[self.measure_names]
        frame.index.name = "run"
        return frame.astype(float)

    def _per_query_frame(self) -> pd.DataFrame:
        import pandas as pd

        base, parts = self.results[self.baseline], []
        for run, result in self.results.items():
            for m in self.measure_names:
                value, ref = result.values[m], base.values[m]
                diff = value - ref
                outcome = _outcomes(diff * _sign(m)) if run != self.baseline else np.full(len(diff), None)
                parts.append(
                    pd.DataFrame(
                        {
                            "run": run,
                            "query_id": result.query_ids,
                            "measure": m,
                            "value": value,
                            "baseline_value": ref,
                            "diff": diff,
                            "outcome": outcome,
                        }
                    )
                )
        return pd.concat(parts, ignore_index=True)

    def _wtl_frame(self) -> pd.DataFrame:
        import pandas as pd

        rows = [
            {"run": c.run, "measure": c.measure, "outcome": outcome, "count": count}
            for c in self.comparisons
            for outcome, count in (("win", c.wins), ("tie", c.ties), ("loss", c.losses))
        ]
        return pd.DataFrame(rows, columns=["run", "measure", "outcome", "count"])

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """Everything as JSON-ready Python types (NaN → None)."""
        out = {
            "baseline": self.baseline,
            "runs": self.runs,
            "measures": self.measure_names,
            "queries": len(self.query_ids),
            "settings": asdict(self.settings),
            "means": self.means,
            "n": {run: r.n for run, r in self.results.items()},
            "counts": {run: r.counts.to_dict() for run, r in self.results.items()},
            "best": {m: self.best(m) for m in self.measure_names},
            "comparisons": [c.to_dict() for c in self.comparisons],
        }
        if per_query:
            out["per_query"] = {run: r.per_query_dict() for run, r in self.results.items()}
        return stats._json_ready(out)

    # ---- renderings (metrics.report)
    def legend(self) -> str:
        """One paragraph saying how significance was decided."""
        s, others = self.settings, len(self.runs) - 1
        test = s.flag_test
        if test is None:
            return "No significance test was run."
        family = f"{others} comparison{'s' if others > 1 else ''} per measure"
        correction = (
            "" if s.correction == "none" else f", {s.correction.capitalize()}-adjusted over the {family}"
        )
        what = {
            "permutation": f"two-sided paired randomization test (sign flips, all 2^n when 2^n ≤ "
            f"{s.n_permutations:,}, else {s.n_permutations:,} random with seed {s.seed})"
            f"{correction}, p ≤ {s.alpha}",
            "t": f"two-sided paired t-test{correction}, p ≤ {s.alpha}",
            "bootstrap": f"the {s.confidence:.0%} bootstrap interval of the mean difference excludes 0, "
            "not adjusted for multiple comparisons",
        }[test]
        return f"{UP} / {DOWN}: significantly better / worse than the baseline {self.baseline}: {what}."

    def to_markdown(self, *, digits: int = 4, max_queries: int = 50, title: str = "Run comparison") -> str:
        """Markdown: the means (best in bold, significant differences flagged), the tests against the
        baseline, and for each run a per-query table (win/tie/loss) when there are at most ``max_queries``."""
        return render_markdown(self, digits=digits, max_queries=max_queries, title=title)

    def to_text(self, *, digits: int = 4) -> str:
        """Plain aligned text for a terminal: the means (``*`` best, flags), then the tests."""
        return render_text(self, digits=digits)

    def to_latex(self, *, digits: int = 4, caption: str | None = None, label: str | None = None) -> str:
        """A LaTeX table of the means (booktabs): best in bold, ↑/↓ for significant differences. ``caption``
        (default: the legend) and ``label`` are escaped as text."""
        return render_latex(self, digits=digits, caption=caption, label=label)

    def to_html(self, *, digits: int = 4, max_queries: int = 50, title: str = "Run comparison") -> str:
        """One self-contained HTML page (inline CSS and SVG; no script, no external resource): the tables of
        `to_markdown`, a chart of the means, a chart of the differences with their intervals, and for each
        run and measure the per-query differences sorted (wins above, losses below the axis)."""
        return render_html(self, digits=digits, max_queries=max_queries, title=title)

    def __repr__(self) -> str:
        return (
            f"Report(baseline={self.baseline!r}, runs={self.runs}, measures={self.measure_names}, "
            f"{len(self.query_ids)} queries)"
        )
