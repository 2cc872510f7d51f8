"""Compare runs with confidence: paired significance tests against a baseline, assessor sensitivity, judging
coverage and threshold checks, with the numbers kept apart from their rendering.

- `compare` scores several runs on the same qrels (`metrics.evaluate`), pairs every run with a baseline
  query by query, and returns a `Report`: means, per-query values, paired differences, a paired t-test, a
  Fisher randomization test and a bootstrap interval of the mean difference (`metrics.stats`), Holm-adjusted
  across the runs compared with the baseline, and per-query win/tie/loss counts. Renderings:
  ``to_dataframe()``, ``to_markdown()``, ``to_html()`` (one self-contained file, inline SVG charts),
  ``to_latex()``, ``to_text()``, ``to_dict()`` (JSON-ready).
- `assessor_sensitivity` re-scores the runs under each annotator's labels, the majority labels and the
  adjudicated release: the spread of each run's score, Kendall's tau between the system rankings, and
  optionally a bootstrap over queries and annotators (`Sensitivity`).
- `judging_coverage` reports Judged@k per run, the unjudged top-k documents, and how many pairs each run
  would add to a depth-k pool (`Coverage`).
- `check_thresholds` checks a run's means against minimum / maximum values (a CI gate, `CheckResult`).

Queries undefined in either run of a pair (e.g. R@k on a query without relevant documents; FirstRel when a
run returned nothing relevant) are dropped from that pair's tests, and each comparison reports how many pairs
it kept (``n``). The means are over each run's own defined queries, as in `metrics.evaluate`.
"""

from __future__ import annotations

import html
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics import _ids, stats
from metrics.data import Qrels, Run
from metrics.errors import FormatError, Problem, QrelForgeError
from metrics.evaluate import Result, as_qrels, as_run, evaluate
from metrics.measures import Measure, parse_measure, parse_measures

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "compare", "Report", "Comparison", "Settings", "named_runs", "LOWER_IS_BETTER",
    "assessor_sensitivity", "Sensitivity", "majority_qrels",
    "judging_coverage", "Coverage",
    "check_thresholds", "parse_threshold", "CheckResult", "CheckRow",
    "svg_line_chart",
]

TESTS = ("t", "permutation", "bootstrap")
LOWER_IS_BETTER = frozenset({"FirstRel"})  # measures where a smaller value is the better one
UP, DOWN = "▲", "▼"
_TIE = 1e-12  # per-query differences at most this far from 0 are ties
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")


# ------------------------------------------------------------------------------------------------- runs
def named_runs(runs: Any, *, minimum: int = 2) -> dict[str, Run]:
    """Runs keyed by name: a mapping ``{name: run}`` (names as given), or a sequence of runs named by their
    tags (a TREC run's tag, or ``Run.name``). Each run is anything `metrics.evaluate` accepts.

    Errors: fewer than ``minimum`` runs, an empty or repeated name, a run in a sequence without a name.
    """
    if isinstance(runs, Mapping):
        pairs = [(_run_name(name, f"run names must be non-empty strings; got {name!r}"), as_run(run))
                 for name, run in runs.items()]
    elif isinstance(runs, str | os.PathLike | Run) or hasattr(runs, "columns") or not isinstance(runs, Iterable):
        raise QrelForgeError(f"runs must be a mapping {{name: run}} or a list of runs; got {type(runs).__name__}")
    else:
        coerced = [as_run(run) for run in runs]
        pairs = [(_run_name(r.name, f"runs[{i}] has no name; pass runs as a mapping {{name: run}}"), r)
                 for i, r in enumerate(coerced)]
    named: dict[str, Run] = {}
    for i, (name, run) in enumerate(pairs):
        if name in named:
            first = [n for n, _ in pairs].index(name)
            raise QrelForgeError(f"runs[{first}] and runs[{i}] are both named {name!r}; pass runs as a mapping "
                                 "{name: run} to name them apart")
        named[name] = run
    if len(named) < minimum:
        raise QrelForgeError(f"runs must hold at least {minimum} run{'s' if minimum > 1 else ''}; got {len(named)}")
    return named


def _run_name(name: Any, problem: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise QrelForgeError(problem if name is None else f"run names must be non-empty strings; got {name!r}")
    return name


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
            raise QrelForgeError(f"correction must be one of {', '.join(stats.CORRECTIONS)}; got {self.correction!r}")
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


def _sign(measure: str) -> float:
    """+1 when a larger value of ``measure`` (canonical text, e.g. ``"P@5"``) is better, -1 when smaller."""
    return -1.0 if re.match(r"[A-Za-z][A-Za-z0-9_-]*", measure)[0] in LOWER_IS_BETTER else 1.0


def _py(value: Any) -> Any:
    """A numpy scalar as a plain Python value; NaN as None."""
    value = value.item() if isinstance(value, np.generic) else value
    return None if isinstance(value, float) and value != value else value


def _comparisons(results: dict[str, Result], baseline: str, measures: Sequence[Measure],
                 settings: Settings) -> list[Comparison]:
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
            tests[key + "_adjusted"] = _adjust_per_measure(tests[key], [m for _, m in cols], settings.correction)
    out = []
    for j, (run, measure) in enumerate(cols):
        c = Comparison(run, measure, results[run].mean[measure], results[baseline].mean[measure], _py(mean_diff[j]),
                       int(n[j]), int(wins[j]), int(ties[j]), int(losses[j]), **{k: _py(v[j]) for k, v in tests.items()})
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
        out["ci_low"], out["ci_high"] = stats.bootstrap_ci(diffs, n_bootstrap=settings.n_bootstrap,
                                                           seed=settings.seed, confidence=settings.confidence)
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
def compare(qrels: Any, runs: Any, measures: Iterable[str | Measure] | str, *, baseline: str | None = None,
            tests: Sequence[str] = TESTS, n_permutations: int = 10_000, n_bootstrap: int = 10_000, seed: int = 0,
            alpha: float = 0.05, confidence: float = 0.95, correction: str | None = "holm", corpus: Any = None,
            strict: bool = False, chunk_map: Any = None) -> Report:
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
    settings = Settings(tuple(tests) if not isinstance(tests, str) else tests, n_permutations, n_bootstrap,
                        seed, alpha, confidence, correction)
    specs = parse_measures(measures)
    named = named_runs(runs)
    baseline = _check_baseline(baseline, list(named))
    qrels = as_qrels(qrels)
    corpus = _read_corpus_once(corpus)
    results = {name: evaluate(qrels, run, specs, corpus=corpus, strict=strict, chunk_map=chunk_map)
               for name, run in named.items()}
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

    def __init__(self, results: dict[str, Result], baseline: str, measures: Sequence[Measure],
                 comparisons: list[Comparison], settings: Settings):
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
        raise QrelForgeError(f"no comparison for run {run!r} on {name!r}; runs compared: {others}, "
                             f"measures: {self.measure_names}")

    def best(self, measure: str) -> list[str]:
        """The runs with the best mean on ``measure`` (highest; lowest for FirstRel); ties all count."""
        values = {run: m[measure] for run, m in self.means.items() if m[measure] is not None}
        if not values:
            return []
        pick = min if _sign(measure) < 0 else max
        top = pick(values.values())
        return [run for run, v in values.items() if abs(v - top) <= _TIE]

    def _flag(self, run: str, measure: str) -> str:
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
        kinds = {"summary": self._summary_frame, "means": self._means_frame, "per_query": self._per_query_frame,
                 "wtl": self._wtl_frame}
        if what not in kinds:
            raise QrelForgeError(f"what must be one of {', '.join(kinds)}; got {what!r}")
        return kinds[what]()

    def _summary_frame(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for run, result in self.results.items():
            for m in self.measure_names:
                row = {"run": run, "measure": m, "baseline": run == self.baseline, "mean": self.means[run][m],
                       "queries": result.n[m], "best": run in self.best(m)}
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
                parts.append(pd.DataFrame({"run": run, "query_id": result.query_ids, "measure": m, "value": value,
                                           "baseline_value": ref, "diff": diff, "outcome": outcome}))
        return pd.concat(parts, ignore_index=True)

    def _wtl_frame(self) -> pd.DataFrame:
        import pandas as pd

        rows = [{"run": c.run, "measure": c.measure, "outcome": outcome, "count": count} for c in self.comparisons
                for outcome, count in (("win", c.wins), ("tie", c.ties), ("loss", c.losses))]
        return pd.DataFrame(rows, columns=["run", "measure", "outcome", "count"])

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """Everything as JSON-ready Python types (NaN → None)."""
        out = {"baseline": self.baseline, "runs": self.runs, "measures": self.measure_names,
               "queries": len(self.query_ids), "settings": asdict(self.settings),
               "means": self.means, "n": {run: r.n for run, r in self.results.items()},
               "counts": {run: r.counts.to_dict() for run, r in self.results.items()},
               "best": {m: self.best(m) for m in self.measure_names},
               "comparisons": [c.to_dict() for c in self.comparisons]}
        if per_query:
            out["per_query"] = {run: r.per_query_dict() for run, r in self.results.items()}
        return stats._json_ready(out)

    # ---- text renderings
    def legend(self) -> str:
        """One paragraph saying how significance was decided."""
        s, others = self.settings, len(self.runs) - 1
        test = s.flag_test
        if test is None:
            return "No significance test was run."
        family = f"{others} comparison{'s' if others > 1 else ''} per measure"
        correction = "" if s.correction == "none" else f", {s.correction.capitalize()}-adjusted over the {family}"
        what = {"permutation": f"two-sided paired randomization test (sign flips, all 2^n when 2^n ≤ "
                               f"{s.n_permutations:,}, else {s.n_permutations:,} random with seed {s.seed})"
                               f"{correction}, p ≤ {s.alpha}",
                "t": f"two-sided paired t-test{correction}, p ≤ {s.alpha}",
                "bootstrap": f"the {s.confidence:.0%} bootstrap interval of the mean difference excludes 0, "
                             "not adjusted for multiple comparisons"}[test]
        return f"{UP} / {DOWN}: significantly better / worse than the baseline {self.baseline}: {what}."

    def _notes(self) -> list[str]:
        s, notes = self.settings, []
        if "bootstrap" in s.tests:
            notes.append(f"CI: {s.confidence:.0%} percentile bootstrap interval of the mean difference "
                         f"({s.n_bootstrap:,} resamples of the queries, seed {s.seed}).")
        notes.append("W/T/L: queries where the run is better / tied / worse than the baseline; n: queries where "
                     "both runs are defined (others are dropped from the tests).")
        sizes = [c.n for c in self.comparisons if c.n > 0]
        if "permutation" in s.tests and sizes and 2 / 2 ** min(sizes) > s.alpha:
            n = min(sizes)
            notes.append(f"With {n} queries no difference can be significant in the randomization test: its "
                         f"smallest two-sided p is 2/2^{n} = {2 / 2 ** n:.4g}, above {s.alpha}.")
        if any(m.name in LOWER_IS_BETTER for m in self.measures):
            notes.append(f"Lower is better for {', '.join(sorted(LOWER_IS_BETTER))}.")
        if s.correction != "none" and ({"t", "permutation"} & set(s.tests)):
            notes.append(f"p-values are {s.correction.capitalize()}-adjusted per measure over the runs compared "
                         "with the baseline.")
        return notes

    def to_markdown(self, *, digits: int = 4, max_queries: int = 50, title: str = "Run comparison") -> str:
        """Markdown: the means (best in bold, significant differences flagged), the tests against the
        baseline, and for each run a per-query table (win/tie/loss) when there are at most ``max_queries``."""
        digits = stats.check_int(digits, "digits", 0)
        max_queries = stats.check_int(max_queries, "max_queries", 0)
        md = _Markdown(self, digits)
        parts = [f"# {_md(title)}\n", md.header(), md.means_table(), md.legend(), md.tests_table()]
        parts += md.per_query_tables(max_queries)
        return "\n".join(p for p in parts if p)

    def to_text(self, *, digits: int = 4) -> str:
        """Plain aligned text for a terminal: the means (``*`` best, flags), then the tests."""
        digits = stats.check_int(digits, "digits", 0)
        names = self.measure_names
        rows = [["run", *names]] + [[_label(run, self.baseline), *(
            _fmt(self.means[run][m], digits) + ("*" if run in self.best(m) else " ") + (self._flag(run, m) or " ")
            for m in names)] for run in self.runs]
        out = f"baseline {self.baseline}, {len(self.query_ids)} queries\n\n" + _grid(rows, "l" + "r" * len(names))
        tests = [["run", "measure", "diff", "CI", "p (t)", "p (perm.)", "W/T/L", "n"]]
        tests += [[c.run, c.measure, _signed(c.diff, digits), _ci(c, digits), _p(c.p_t_adjusted),
                   _p(c.p_permutation_adjusted), f"{c.wins}/{c.ties}/{c.losses}", str(c.n)] for c in self.comparisons]
        notes = ["* best mean per measure.", self.legend(), *self._notes()]
        return out + "\n" + _grid(tests, "llrrrrrr") + "\n" + "".join(f"{n}\n" for n in notes)

    def to_latex(self, *, digits: int = 4, caption: str | None = None, label: str | None = None) -> str:
        """A LaTeX table of the means (booktabs): best in bold, ↑/↓ for significant differences. ``caption``
        (default: the legend) and ``label`` are escaped as text."""
        digits = stats.check_int(digits, "digits", 0)
        names = self.measure_names
        lines = ["% requires \\usepackage{booktabs}", "\\begin{table}[t]", "\\centering",
                 f"\\begin{{tabular}}{{l{'r' * len(names)}}}", "\\toprule",
                 " & ".join(["Run", *(_tex(n) for n in names)]) + " \\\\", "\\midrule"]
        for run in self.runs:
            cells = [_tex(_label(run, self.baseline))] + [self._tex_cell(run, m, digits) for m in names]
            lines.append(" & ".join(cells) + " \\\\")
        text = caption if caption is not None else "Bold: best mean per measure. " + self.legend()
        lines += ["\\bottomrule", "\\end{tabular}", f"\\caption{{{_tex(text)}}}"]
        lines += [f"\\label{{{_tex(label)}}}"] if label else []
        return "\n".join([*lines, "\\end{table}"]) + "\n"

    def _tex_cell(self, run: str, measure: str, digits: int) -> str:
        value = _fmt(self.means[run][measure], digits)
        value = f"\\textbf{{{value}}}" if run in self.best(measure) else value
        flag = {UP: "$^{\\uparrow}$", DOWN: "$^{\\downarrow}$"}.get(self._flag(run, measure), "")
        return value + flag

    def to_html(self, *, digits: int = 4, max_queries: int = 50, title: str = "Run comparison") -> str:
        """One self-contained HTML page (inline CSS and SVG; no script, no external resource): the tables of
        `to_markdown`, a chart of the means, a chart of the differences with their intervals, and for each
        run and measure the per-query differences sorted (wins above, losses below the axis)."""
        digits = stats.check_int(digits, "digits", 0)
        max_queries = stats.check_int(max_queries, "max_queries", 0)
        return _Html(self, digits).page(title, max_queries)

    def __repr__(self) -> str:
        return (f"Report(baseline={self.baseline!r}, runs={self.runs}, measures={self.measure_names}, "
                f"{len(self.query_ids)} queries)")


def _outcomes(signed: np.ndarray) -> np.ndarray:
    out = np.full(len(signed), None, dtype=object)
    out[signed > _TIE], out[signed < -_TIE], out[np.abs(signed) <= _TIE] = "win", "loss", "tie"
    return out


# ------------------------------------------------------------------------------------- formatting helpers
def _fmt(value: float | None, digits: int = 4) -> str:
    return "undef" if value is None or value != value else f"{value:.{digits}f}"


def _signed(value: float | None, digits: int = 4) -> str:
    return "undef" if value is None or value != value else f"{value:+.{digits}f}"


def _p(value: float | None) -> str:
    return stats._p(value)


def _ci(c: Comparison, digits: int) -> str:
    return "-" if c.ci_low is None else f"[{_signed(c.ci_low, digits)}, {_signed(c.ci_high, digits)}]"


def _label(run: str, baseline: str) -> str:
    return f"{run} (baseline)" if run == baseline else run


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|&#"})


def _md(text: str) -> str:
    """Markdown-escaped text for a table cell or a heading (no emphasis, links, HTML or cell breaks)."""
    return " ".join(str(text).split()).translate(_MD_SPECIAL)


_TEX_SPECIAL = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#", "_": "\\_",
                "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}",
                "≤": "$\\leq$", "Δ": "$\\Delta$", "→": "$\\rightarrow$", "·": "\\textperiodcentered{}", "−": "-",
                UP: "$\\uparrow$", DOWN: "$\\downarrow$"}


def _tex(text: str) -> str:
    """LaTeX-escaped text (special characters, the few non-ASCII symbols of our legends, ▲/▼ as arrows)."""
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in " ".join(str(text).split()))


def _grid(rows: list[list[str]], align: str) -> str:
    """Plain-text columns, two spaces apart; ``align`` holds l or r per column."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(r, widths, align, strict=True))
             for r in rows]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _table(header: list[str], rows: list[list[str]], align: str) -> str:
    """A Markdown table; ``align`` holds one of l / r / c per column."""
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


class _Markdown:
    """The Markdown rendering of a `Report`."""

    def __init__(self, report: Report, digits: int):
        self.r, self.d = report, digits

    def header(self) -> str:
        r = self.r
        return (f"Baseline: {_md(r.baseline)} · {len(r.query_ids)} queries · {len(r.runs)} runs · "
                f"measures: {', '.join(_md(m) for m in r.measure_names)}\n")

    def means_table(self) -> str:
        r = self.r
        rows = [[_md(_label(run, r.baseline)), *(self.cell(run, m) for m in r.measure_names)] for run in r.runs]
        return "## Means\n\n" + _table(["run", *map(_md, r.measure_names)], rows, "l" + "r" * len(r.measure_names))

    def cell(self, run: str, measure: str) -> str:
        value = _fmt(self.r.means[run][measure], self.d)
        value = f"**{value}**" if run in self.r.best(measure) else value
        flag = self.r._flag(run, measure)
        return f"{value} {flag}" if flag else value

    def legend(self) -> str:
        return f"Bold: best mean per measure. {_md(self.r.legend())}\n"

    def tests_table(self) -> str:
        s, d = self.r.settings, self.d
        header = ["run", "measure", "Δ mean", f"{s.confidence:.0%} CI", "p (t)", "p (perm.)", "W/T/L", "n"]
        rows = [[_md(c.run), _md(c.measure), _signed(c.diff, d) + (f" {self.r._flag(c.run, c.measure)}"
                 if c.significant else ""), _ci(c, d), _p(c.p_t_adjusted), _p(c.p_permutation_adjusted),
                 f"{c.wins}/{c.ties}/{c.losses}", str(c.n)] for c in self.r.comparisons]
        notes = " ".join(self.r._notes())
        return "## Against the baseline\n\n" + _table(header, rows, "llrcrrcr") + "\n" + _md(notes) + "\n"

    def per_query_tables(self, max_queries: int) -> list[str]:
        r = self.r
        if len(r.query_ids) > max_queries:
            return [f"Per-query tables left out: {len(r.query_ids)} queries, more than max\\_queries = {max_queries}.\n"]
        return [self.per_query(run) for run in r.runs if run != r.baseline]

    def per_query(self, run: str) -> str:
        r, d = self.r, self.d
        base, other = r.results[r.baseline], r.results[run]
        rows = []
        for i, qid in enumerate(r.query_ids):
            cells = []
            for m in r.measure_names:
                a, b = base.values[m][i], other.values[m][i]
                outcome = _outcomes(np.array([(b - a) * _sign(m)]))[0] or "dropped"
                cells.append(f"{_fmt(a, d)} → {_fmt(b, d)} {outcome}")
            rows.append([_md(qid), *cells])
        rows.append(["W/T/L", *(self.wtl(run, m) for m in r.measure_names)])
        title = f"## Per query: {_md(run)} vs {_md(r.baseline)}\n\n"
        return title + _table(["query", *map(_md, r.measure_names)], rows, "l" + "l" * len(r.measure_names))

    def wtl(self, run: str, measure: str) -> str:
        c = self.r.comparison(run, measure)
        return f"{c.wins}/{c.ties}/{c.losses}"


# ----------------------------------------------------------------------------------------------- HTML/SVG
_CSS = """body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem;color:#222;max-width:72rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #ccc;padding:.25rem .6rem}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}.best{font-weight:700}
.up{color:#1a7f37}.down{color:#b42318}.note{color:#555;font-size:.9rem}svg{display:block;margin:.5rem 0 1.5rem}
figure{margin:0}figcaption{color:#555;font-size:.9rem}"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _html_table(header: list[str], rows: list[list[str]], numeric: Sequence[bool]) -> str:
    """``rows`` hold already-escaped cell HTML; ``header`` plain text."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class=\"num\">{c}</td>" if num else f"<td>{c}</td>"
                                    for c, num in zip(row, numeric, strict=True)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n"


class _Html:
    """The HTML rendering of a `Report`."""

    def __init__(self, report: Report, digits: int):
        self.r, self.d = report, digits

    def page(self, title: str, max_queries: int) -> str:
        r = self.r
        body = [f"<h1>{_e(title)}</h1>",
                f"<p>Baseline: <b>{_e(r.baseline)}</b> · {len(r.query_ids)} queries · {len(r.runs)} runs · "
                f"measures: {_e(', '.join(r.measure_names))}</p>",
                "<h2>Means</h2>", self.means_table(),
                f"<p class=\"note\">Bold: best mean per measure. {_e(r.legend())}</p>",
                _figure(svg_means(r), "Mean of each run per measure."),
                "<h2>Against the baseline</h2>", self.tests_table(),
                f"<p class=\"note\">{_e(' '.join(r._notes()))}</p>"]
        if r.settings.flag_test is not None:
            body += [_figure(svg_differences(r, m), f"{m}: mean difference with the baseline {r.baseline}"
                             + (" and its bootstrap interval." if "bootstrap" in r.settings.tests else "."))
                     for m in r.measure_names]
        body += self.per_query(max_queries)
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n<body>\n"
                + "\n".join(body) + "\n</body></html>\n")

    def means_table(self) -> str:
        r, names = self.r, self.r.measure_names
        rows = [[_e(_label(run, r.baseline)), *(self.cell(run, m) for m in names)] for run in r.runs]
        return _html_table(["run", *names], rows, [False] + [True] * len(names))

    def cell(self, run: str, measure: str) -> str:
        value = _e(_fmt(self.r.means[run][measure], self.d))
        if run in self.r.best(measure):
            value = f"<span class=\"best\">{value}</span>"
        flag = self.r._flag(run, measure)
        return value + (f" <span class=\"{'up' if flag == UP else 'down'}\">{flag}</span>" if flag else "")

    def tests_table(self) -> str:
        d, s = self.d, self.r.settings
        header = ["run", "measure", "Δ mean", f"{s.confidence:.0%} CI", "p (t)", "p (perm.)", "W/T/L", "n"]
        rows = [[_e(c.run), _e(c.measure), _e(_signed(c.diff, d)) + (f" {self.r._flag(c.run, c.measure)}"
                 if c.significant else ""), _e(_ci(c, d)), _e(_p(c.p_t_adjusted)), _e(_p(c.p_permutation_adjusted)),
                 f"{c.wins}/{c.ties}/{c.losses}", str(c.n)] for c in self.r.comparisons]
        return _html_table(header, rows, [False, False, True, True, True, True, True, True])

    def per_query(self, max_queries: int) -> list[str]:
        r, out = self.r, []
        for run in r.runs:
            if run == r.baseline:
                continue
            out.append(f"<h2>Per query: {_e(run)} vs {_e(r.baseline)}</h2>")
            for m in r.measure_names:
                order = f"{r.baseline} − {run}, lower is better" if _sign(m) < 0 else f"{run} − {r.baseline}"
                caption = f"{m}: per-query improvement over the baseline ({order}), sorted; wins up, losses down."
                out.append(_figure(svg_per_query(r, run, m), caption))
            if len(r.query_ids) <= max_queries:
                out.append(self.per_query_table(run))
        return out

    def per_query_table(self, run: str) -> str:
        r, d = self.r, self.d
        base, other = r.results[r.baseline], r.results[run]
        rows = [[_e(q), *(_e(f"{_fmt(base.values[m][i], d)} → {_fmt(other.values[m][i], d)} "
                             f"{_outcomes(np.array([(other.values[m][i] - base.values[m][i]) * _sign(m)]))[0] or 'dropped'}")
                          for m in r.measure_names)] for i, q in enumerate(r.query_ids)]
        return _html_table(["query", *r.measure_names], rows, [False] * (1 + len(r.measure_names)))


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (f"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0f}\" height=\"{height:.0f}\" "
            f"viewBox=\"0 0 {width:.0f} {height:.0f}\" role=\"img\" aria-label=\"{_e(label)}\" "
            f"font-family=\"sans-serif\" font-size=\"11\">" + "".join(body) + "</svg>")


def _text(x: float, y: float, text: Any, anchor: str = "middle", extra: str = "") -> str:
    return f"<text x=\"{x:.1f}\" y=\"{y:.1f}\" text-anchor=\"{anchor}\"{extra}>{_e(text)}</text>"


def _rect(x: float, y: float, w: float, h: float, fill: str, tip: str = "") -> str:
    title = f"<title>{_e(tip)}</title>" if tip else ""
    return (f"<rect x=\"{x:.1f}\" y=\"{y:.1f}\" width=\"{max(w, 0):.1f}\" height=\"{max(h, 0):.1f}\" "
            f"fill=\"{fill}\">{title}</rect>")


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str = "#999", extra: str = "") -> str:
    return f"<line x1=\"{x1:.1f}\" y1=\"{y1:.1f}\" x2=\"{x2:.1f}\" y2=\"{y2:.1f}\" stroke=\"{stroke}\"{extra}/>"


def _y_axis(top: float, bottom: float, left: float, right: float, lo: float, hi: float,
            ticks: int = 5) -> list[str]:
    """Horizontal grid lines with labels at ``ticks`` evenly spaced values from ``lo`` to ``hi``."""
    out = []
    for v in np.linspace(lo, hi, ticks):
        y = bottom - (v - lo) / ((hi - lo) or 1) * (bottom - top)
        out += [_line(left, y, right, y, "#e5e5e5"), _text(left - 4, y + 4, f"{v:.2f}", "end")]
    return out


def svg_means(report: Report) -> str:
    """Bar charts of the means: one panel per measure, with its own scale, one bar per run."""
    runs, bar, top, plot_h, panel_gap = report.runs, 16, 16, 150, 56
    body, x = [], 44.0
    for m in report.measure_names:
        values = np.array([_nan(report.means[run][m]) for run in runs])
        hi = max(1.0, float(np.nanmax(values))) if np.isfinite(values).any() else 1.0
        right = x + len(runs) * bar + 8
        body += _y_axis(top, top + plot_h, x, right, 0.0, hi, ticks=3)
        for i, run in enumerate(runs):
            h = 0.0 if np.isnan(values[i]) else values[i] / hi * plot_h
            body.append(_rect(x + 4 + i * bar, top + plot_h - h, bar - 2, h, _PALETTE[i % len(_PALETTE)],
                              f"{run} · {m}: {_fmt(report.means[run][m])}"))
        body.append(_text((x + right) / 2, top + plot_h + 14, m))
        x = right + panel_gap
    body += _legend(runs, 44, top + plot_h + 32)
    return _svg(max(x - panel_gap + 16, 200), top + plot_h + 40 + 16 * len(runs), body, "mean per run and measure")


def _legend(labels: Sequence[str], x: float, y: float) -> list[str]:
    out = []
    for i, label in enumerate(labels):
        out += [_rect(x, y + 16 * i - 9, 10, 10, _PALETTE[i % len(_PALETTE)]), _text(x + 14, y + 16 * i, label, "start")]
    return out


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def svg_differences(report: Report, measure: str) -> str:
    """Mean difference with the baseline on ``measure`` (dot) and its bootstrap interval (whisker), one row
    per run, on the measure's own scale; green when significantly better, red when significantly worse."""
    rows = [c for c in report.comparisons if c.measure == measure]
    points = np.array([[_nan(c.diff), _nan(c.ci_low), _nan(c.ci_high)] for c in rows], dtype=np.float64)
    extent = float(np.nanmax(np.abs(points))) * 1.1 if np.isfinite(points).any() else 0.0
    extent = extent or 1.0
    left, row_h, width = 150, 20, 520
    scale = (width - left - 20) / (2 * extent)
    zero = left + extent * scale
    body = [_line(zero, 8, zero, 12 + row_h * len(rows), "#666")]
    for i, (c, (diff, lo, hi)) in enumerate(zip(rows, points, strict=True)):
        y = 20 + i * row_h
        color = "#1a7f37" if c.direction == "better" else "#b42318" if c.direction == "worse" else "#555"
        body.append(_text(left - 8, y + 4, c.run, "end"))
        if np.isfinite(lo):
            body.append(_line(zero + lo * scale, y, zero + hi * scale, y, color, " stroke-width=\"2\""))
        if np.isfinite(diff):
            tip = f"{c.run} · {measure}: {_signed(c.diff)} {_ci(c, 4)}"
            body.append(f"<circle cx=\"{zero + diff * scale:.1f}\" cy=\"{y:.1f}\" r=\"4\" fill=\"{color}\">"
                        f"<title>{_e(tip)}</title></circle>")
    axis_y = 24 + row_h * len(rows)
    body += [_text(left, axis_y, f"{-extent:+.3g}"), _text(zero, axis_y, "0"), _text(width - 20, axis_y, f"{extent:+.3g}")]
    return _svg(width, axis_y + 8, body, f"differences with the baseline on {measure}")


def svg_per_query(report: Report, run: str, measure: str, *, max_bars: int = 400) -> str:
    """Per-query differences ``run − baseline`` sorted from best to worst: green bars up (wins), red down
    (losses), ties as thin grey marks. Above ``max_bars`` queries, ``max_bars`` evenly spaced quantiles of the
    sorted differences are drawn instead of every query."""
    base, other = report.results[report.baseline], report.results[run]
    signed = (other.values[measure] - base.values[measure]) * _sign(measure)
    keep = ~np.isnan(signed)
    order = np.argsort(-signed[keep], kind="stable")
    diffs, qids = signed[keep][order], np.asarray(other.query_ids, dtype=object)[keep][order]
    if len(diffs) > max_bars:
        diffs, qids = np.quantile(diffs, np.linspace(0, 1, max_bars))[::-1], None
    extent = float(np.abs(diffs).max()) if len(diffs) and np.abs(diffs).max() > 0 else 1.0
    left, width, half = 48, 560, 60
    bar = (width - left - 10) / max(len(diffs), 1)
    body = _y_axis(8, 8 + 2 * half, left, width - 10, -extent, extent)
    for i, v in enumerate(diffs):
        h = abs(v) / extent * half
        color = "#1a7f37" if v > _TIE else "#b42318" if v < -_TIE else "#999"
        tip = f"{qids[i]}: {v:+.4f}" if qids is not None else f"{v:+.4f}"
        y = 8 + half - h if v > 0 else 8 + half
        body.append(_rect(left + i * bar, y, max(bar - 1, 0.5), max(h, 1.0), color, tip))
    return _svg(width, 2 * half + 20, body, f"per-query differences {run} vs {report.baseline} on {measure}")


def svg_line_chart(series: Mapping[str, Sequence[float | None]], *, x_labels: Sequence[str], title: str) -> str:
    """A standalone SVG line chart (one line per series, None for gaps), e.g. a measure's history across CI
    checks. Values on a shared y axis from min(0, lowest) to max(1, highest)."""
    values = np.array([[_nan(v) for v in s] for s in series.values()], dtype=np.float64).reshape(len(series), -1)
    lo = min(0.0, float(np.nanmin(values))) if np.isfinite(values).any() else 0.0
    hi = max(1.0, float(np.nanmax(values))) if np.isfinite(values).any() else 1.0
    left, top, plot_w, plot_h = 48, 28, 520, 180
    n = values.shape[1]
    x = left + (np.arange(n) * plot_w / max(n - 1, 1) if n > 1 else np.full(n, plot_w / 2))
    body = [_text(left, 16, title, "start", " font-weight=\"bold\"")] + _y_axis(top, top + plot_h, left, left + plot_w, lo, hi)
    for i, row in enumerate(values):
        y = top + plot_h - (row - lo) / (hi - lo) * plot_h
        color = _PALETTE[i % len(_PALETTE)]
        ok = np.isfinite(y)
        body.append(f"<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\""
                    + " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(x[ok], y[ok], strict=True)) + "\"/>")
        body += [f"<circle cx=\"{a:.1f}\" cy=\"{b:.1f}\" r=\"3\" fill=\"{color}\"><title>{_e(x_labels[j])}: "
                 f"{row[j]:.4f}</title></circle>" for j, (a, b) in enumerate(zip(x, y, strict=True)) if ok[j]]
    if n:
        body += [_text(x[0], top + plot_h + 14, x_labels[0], "start"), _text(x[-1], top + plot_h + 14, x_labels[-1], "end")]
    body += _legend(list(series), left, top + plot_h + 34)
    return _svg(left + plot_w + 20, top + plot_h + 44 + 16 * len(series), body, title)


# ------------------------------------------------------------------------------------ assessor sensitivity
LABEL_COLUMNS = ("query_id", "doc_id", "annotator", "grade")


def _labels_frame(labels: Any, source: str = "labels") -> pd.DataFrame:
    """A validated copy of a long labels table: one row per (query_id, doc_id, annotator) with an int grade."""
    import pandas as pd

    frame = labels if hasattr(labels, "columns") else pd.DataFrame(list(labels))
    missing = [c for c in LABEL_COLUMNS if c not in frame.columns]
    if missing:
        raise FormatError(Problem(source, None, repr(list(frame.columns)),
                                  f"missing column{'s' if len(missing) > 1 else ''} {missing}"))
    if not len(frame):
        raise QrelForgeError(f"{source} has no labels; nothing to score")
    problems = [p for row, rec in enumerate(frame[list(LABEL_COLUMNS)].itertuples(index=False))
                if (p := _label_problem(rec, source, row)) is not None]
    if problems:
        raise FormatError(problems)
    out = pd.DataFrame({"query_id": frame["query_id"].astype(str).to_numpy(dtype=object),
                        "doc_id": frame["doc_id"].astype(str).to_numpy(dtype=object),
                        "annotator": frame["annotator"].astype(str).to_numpy(dtype=object),
                        "grade": frame["grade"].to_numpy().astype(np.int64)})
    _no_duplicate_labels(out, source)
    return out


def _label_problem(rec: tuple, source: str, row: int) -> Problem | None:
    query, doc, annotator, grade = rec
    for value, name in zip(rec, LABEL_COLUMNS, strict=True):
        if stats.is_missing(value):
            return Problem(source, row + 1, "", f"{name} is missing", "row")
    for value, name in ((query, "query_id"), (doc, "doc_id"), (annotator, "annotator")):
        ok_int = isinstance(value, int | np.integer) and not isinstance(value, bool) and name == "annotator"
        if not ok_int and not (isinstance(value, str) and value.strip()):
            return Problem(source, row + 1, str(value), f"{name} must be a non-empty string", "row")
    integral = isinstance(grade, int | np.integer) or (isinstance(grade, float | np.floating) and float(grade).is_integer())
    if isinstance(grade, bool | np.bool_) or not integral:
        return Problem(source, row + 1, str(grade), "grade must be an integer", "row")
    return None


def _no_duplicate_labels(frame: pd.DataFrame, source: str) -> None:
    dup = frame.duplicated(["query_id", "doc_id", "annotator"], keep="first")
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        q, d, a = frame.iloc[row][["query_id", "doc_id", "annotator"]]
        first = int(np.flatnonzero(((frame["query_id"] == q) & (frame["doc_id"] == d) & (frame["annotator"] == a))
                                   .to_numpy())[0])
        raise FormatError(Problem(source, row + 1, f"{q} {d} {a}", f"duplicate label of {d!r} for query {q!r} by "
                                  f"annotator {a!r} (first at row {first + 1}); pass each annotator's current "
                                  "label only", "row"))


def majority_qrels(labels: Any, *, tie: str = "lower") -> Qrels:
    """Qrels with each (query, document) graded by the most frequent grade among its annotators.

    Tie rule: among the most frequent grades the lowest wins with ``tie="lower"`` (conservative: two
    annotators saying 2 and 0 give 0), the highest with ``tie="higher"``.

    >>> import pandas as pd
    >>> labels = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["D1"] * 3, "annotator": ["a", "b", "c"],
    ...                        "grade": [2, 2, 0]})
    >>> majority_qrels(labels).to_dict()
    {'q1': {'D1': 2}}
    """
    if tie not in ("lower", "higher"):
        raise QrelForgeError(f"tie must be 'lower' or 'higher'; got {tie!r}")
    frame = _labels_frame(labels)
    counts = frame.groupby(["query_id", "doc_id", "grade"], sort=False).size().reset_index(name="count")
    counts = counts.sort_values(["count", "grade"], ascending=[False, tie == "lower"], kind="stable")
    winner = counts.drop_duplicates(["query_id", "doc_id"]).set_index(["query_id", "doc_id"])["grade"]
    order = frame.drop_duplicates(["query_id", "doc_id"])[["query_id", "doc_id"]]
    grades = winner.reindex(_pairs_index(order)).to_numpy()
    return Qrels(order["query_id"].tolist(), order["doc_id"].tolist(), grades, source="majority labels")


def _pairs_index(frame: pd.DataFrame) -> Any:
    import pandas as pd

    return pd.MultiIndex.from_frame(frame)


def _filled(own: pd.DataFrame, reference: pd.DataFrame, source: str) -> Qrels:
    """``own`` judgments (query_id, doc_id, relevance) plus the reference's for pairs ``own`` lacks."""
    import pandas as pd

    keys = _pairs_index(own[["query_id", "doc_id"]])
    rest = reference[~_pairs_index(reference[["query_id", "doc_id"]]).isin(keys)]
    both = pd.concat([own, rest], ignore_index=True)
    return Qrels(both["query_id"].tolist(), both["doc_id"].tolist(), both["relevance"].to_numpy(), source=source,
                 _validated=True)


def _variants(labels: pd.DataFrame, release: Qrels | None, tie: str, fill: bool) -> dict[str, Qrels]:
    """The qrels to score under: the release (if any), the majority, then each annotator (sorted)."""
    majority = majority_qrels(labels, tie=tie)
    reference = (release if release is not None else majority).to_dataframe()
    out: dict[str, Qrels] = {} if release is None else {"release": release}
    out["majority"] = _filled(majority.to_dataframe(), reference, "majority") if fill and release else majority
    for annotator, own in labels.groupby("annotator", sort=True):
        own = own.rename(columns={"grade": "relevance"})[["query_id", "doc_id", "relevance"]]
        out[f"annotator:{annotator}"] = (_filled(own, reference, f"annotator {annotator}") if fill else
                                         Qrels(own["query_id"].tolist(), own["doc_id"].tolist(),
                                               own["relevance"].to_numpy(), source=f"annotator {annotator}"))
    return out


def assessor_sensitivity(labels: Any, runs: Any, measures: Iterable[str | Measure] | str, *, release: Any = None,
                         tie: str = "lower", fill: bool = True, n_bootstrap: int = 0, seed: int = 0,
                         confidence: float = 0.95) -> Sensitivity:
    """Would the conclusion change if someone else had judged? Score ``runs`` under several qrels.

    ``labels``: a long table (DataFrame or records) with ``query_id``, ``doc_id``, ``annotator``, ``grade``,
    one row per annotator and pair (their current label). The qrels scored under: ``release`` (the adjudicated
    qrels, anything `metrics.evaluate` accepts; optional), ``majority`` (`majority_qrels`, ``tie`` rule), and
    ``annotator:NAME`` for each annotator. With ``fill=True`` an annotator's qrels are the reference (the
    release, else the majority) with that annotator's grades substituted where they judged, so every variant
    judges the same pairs; with ``fill=False`` they hold only the annotator's own labels (unseen pairs count as
    unjudged, i.e. non-relevant).

    Reported: every run's mean under every variant; per run and measure the spread (min, max, range, std with
    ddof=0 over the variants); per variant and measure Kendall's tau-b between the system ranking it gives and
    the reference's (`metrics.stats.kendall_tau`), the discordant run pairs and whether the top run is the same.
    ``n_bootstrap > 0`` adds a bootstrap: each replicate draws the reference's queries with replacement and, for
    each drawn query, one annotator uniformly among those who labelled it (the reference when none did), and
    takes that annotator's per-query value (``default_rng(seed)``): intervals of each run's mean, the chance each
    run ranks first (ties share), and the distribution of tau against the reference ranking.
    """
    specs = parse_measures(measures)
    if not isinstance(fill, bool):
        raise QrelForgeError(f"fill must be a bool; got {fill!r}")
    n_bootstrap = stats.check_int(n_bootstrap, "n_bootstrap", 0)
    seed, confidence = stats.check_int(seed, "seed", 0), stats.check_probability(confidence, "confidence")
    frame = _labels_frame(labels)
    variants = _variants(frame, None if release is None else as_qrels(release), tie, fill)
    named = named_runs(runs, minimum=1)
    results = {v: {name: evaluate(q, run, specs) for name, run in named.items()} for v, q in variants.items()}
    reference = "release" if release is not None else "majority"
    out = Sensitivity(results, reference, specs, frame)
    if n_bootstrap:
        out.bootstrap(n_bootstrap, seed, confidence)
    return out


class Sensitivity:
    """Scores of the same runs under several qrels (release, majority, each annotator), and how much the
    system ranking moves. Tables via ``to_dataframe``: ``"scores"``, ``"spread"``, ``"tau"``, and after a
    bootstrap ``"bootstrap"`` and ``"bootstrap_tau"``."""

    def __init__(self, results: dict[str, dict[str, Result]], reference: str, measures: Sequence[Measure],
                 labels: pd.DataFrame):
        self.results, self.reference, self.measures, self.labels = results, reference, tuple(measures), labels
        self.boot: dict[str, pd.DataFrame] | None = None
        self.boot_settings: dict[str, Any] | None = None

    @property
    def variants(self) -> list[str]:
        return list(self.results)

    @property
    def runs(self) -> list[str]:
        return list(self.results[self.reference])

    def _means(self, measure: str) -> np.ndarray:
        """variants × runs matrix of means (NaN where undefined)."""
        return np.array([[_nan(self.results[v][r].mean[measure]) for r in self.runs] for v in self.variants])

    def to_dataframe(self, what: str = "scores") -> pd.DataFrame:
        kinds = {"scores": self._scores, "spread": self._spread, "tau": self._tau}
        if what in ("bootstrap", "bootstrap_tau"):
            if self.boot is None:
                raise QrelForgeError(f"no bootstrap was run; pass n_bootstrap > 0 to get {what!r}")
            return self.boot[what].copy()
        if what not in kinds:
            raise QrelForgeError(f"what must be one of scores, spread, tau, bootstrap, bootstrap_tau; got {what!r}")
        return kinds[what]()

    def _scores(self) -> pd.DataFrame:
        import pandas as pd

        rows = [{"qrels": v, "run": r, "measure": str(m), "mean": res.mean[str(m)], "queries": res.n[str(m)]}
                for v, by_run in self.results.items() for r, res in by_run.items() for m in self.measures]
        return pd.DataFrame(rows)

    def _spread(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for m in map(str, self.measures):
            means = self._means(m)
            ref = means[self.variants.index(self.reference)]
            for j, run in enumerate(self.runs):
                col = means[:, j]
                ok = ~np.isnan(col)
                lo, hi = (np.nanmin(col), np.nanmax(col)) if ok.any() else (np.nan, np.nan)
                rows.append({"run": run, "measure": m, "reference": ref[j], "min": lo, "max": hi, "range": hi - lo,
                             "std": float(np.std(col[ok])) if ok.any() else np.nan,
                             "min_qrels": self.variants[int(np.nanargmin(col))] if ok.any() else None,
                             "max_qrels": self.variants[int(np.nanargmax(col))] if ok.any() else None})
        return pd.DataFrame(rows)

    def _tau(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for m in map(str, self.measures):
            means = self._means(m)
            ref = means[self.variants.index(self.reference)]
            for v, row in zip(self.variants, means, strict=True):
                if v != self.reference:
                    rows.append({"qrels": v, "measure": m, **_ranking_agreement(row, ref, self.runs, _sign(m))})
        return pd.DataFrame(rows, columns=["qrels", "measure", "tau", "discordant", "top", "same_top"])

    def bootstrap(self, n_bootstrap: int, seed: int, confidence: float) -> None:
        """Run the query × annotator bootstrap (see `assessor_sensitivity`) and keep its tables."""
        values, judges = self._per_query_cube()
        rng = np.random.default_rng(seed)
        means = _boot_means(values, judges, n_bootstrap, rng)  # (B, runs, measures)
        self.boot = _boot_tables(means, self, confidence)
        self.boot_settings = {"n_bootstrap": n_bootstrap, "seed": seed, "confidence": confidence}

    def _per_query_cube(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """values (annotators + reference, runs, measures, queries) on the reference's queries, and for each
        query the indices of the annotators who labelled it."""
        ref = self.results[self.reference][self.runs[0]]
        qids = ref.query_ids
        annotators = [v for v in self.variants if v.startswith("annotator:")]
        cube = np.stack([self._aligned(v, qids) for v in [*annotators, self.reference]])
        names = [a.removeprefix("annotator:") for a in annotators]
        labelled = self.labels.groupby("query_id")["annotator"].unique().to_dict()
        judges = [np.array([names.index(a) for a in labelled.get(q, ()) if a in names], dtype=np.int64) for q in qids]
        return cube, judges

    def _aligned(self, variant: str, qids: list[str]) -> np.ndarray:
        out = np.full((len(self.runs), len(self.measures), len(qids)), np.nan)
        for i, run in enumerate(self.runs):
            res = self.results[variant][run]
            at = {q: k for k, q in enumerate(res.query_ids)}
            idx = np.array([at.get(q, -1) for q in qids])
            for j, m in enumerate(map(str, self.measures)):
                out[i, j] = np.where(idx >= 0, res.values[m][np.maximum(idx, 0)], np.nan)
        return out

    def to_dict(self) -> dict[str, Any]:
        out = {"reference": self.reference, "qrels": self.variants, "runs": self.runs,
               "measures": [str(m) for m in self.measures],
               "scores": self._scores().to_dict(orient="records"), "spread": self._spread().to_dict(orient="records"),
               "tau": self._tau().to_dict(orient="records")}
        if self.boot is not None:
            out["bootstrap"] = {"settings": self.boot_settings,
                                **{k: v.to_dict(orient="records") for k, v in self.boot.items()}}
        return stats._json_ready(out)

    def to_markdown(self, *, digits: int = 4) -> str:
        """Markdown: scores per qrels variant, the spread per run, tau per variant (and the bootstrap)."""
        digits = stats.check_int(digits, "digits", 0)
        parts = ["# Assessor sensitivity\n",
                 f"Reference qrels: {_md(self.reference)} · {len(self.variants)} qrels variants · "
                 f"{len(self.runs)} runs\n"]
        for m in map(str, self.measures):
            parts += [f"## {_md(m)}\n", self._md_scores(m, digits), self._md_tau(m, digits)]
        if self.boot is not None:
            parts.append(self._md_boot(digits))
        return "\n".join(parts)

    def _md_scores(self, measure: str, digits: int) -> str:
        means = self._means(measure)
        spread = self._spread()
        spread = spread[spread["measure"] == measure].set_index("run")
        header = ["qrels", *map(_md, self.runs)]
        rows = [[_md(v), *(_fmt(_py(x), digits) for x in row)] for v, row in zip(self.variants, means, strict=True)]
        for stat in ("min", "max", "std"):
            rows.append([f"*{stat}*", *(_fmt(_py(spread.loc[r, stat]), digits) for r in self.runs)])
        return _table(header, rows, "l" + "r" * len(self.runs))

    def _md_tau(self, measure: str, digits: int) -> str:
        tau = self._tau()
        tau = tau[tau["measure"] == measure]
        rows = [[_md(t.qrels), _fmt(_py(t.tau), digits), str(t.discordant), _md(", ".join(t.top)),
                 "yes" if t.same_top else "no"] for t in tau.itertuples()]
        note = f"Kendall's tau-b between each variant's system ranking and the {_md(self.reference)} ranking.\n"
        return _table(["qrels", "tau", "discordant pairs", "top run", "same top"], rows, "lrrll") + "\n" + note

    def _md_boot(self, digits: int) -> str:
        s, boot = self.boot_settings, self.boot
        rows = [[_md(b.run), _md(b.measure), _fmt(_py(b.mean), digits),
                 f"[{_fmt(_py(b.ci_low), digits)}, {_fmt(_py(b.ci_high), digits)}]", f"{b.p_first:.3f}"]
                for b in boot["bootstrap"].itertuples()]
        taus = [[_md(b.measure), _fmt(_py(b.tau_mean), digits), f"[{_fmt(_py(b.tau_low), digits)}, "
                 f"{_fmt(_py(b.tau_high), digits)}]", f"{b.p_same_ranking:.3f}"] for b in boot["bootstrap_tau"].itertuples()]
        level = f"{s['confidence']:.0%}"
        return ("## Bootstrap over queries and annotators\n\n"
                f"{s['n_bootstrap']:,} replicates, seed {s['seed']}.\n\n"
                + _table(["run", "measure", "mean", f"{level} interval", "P(ranked first)"], rows, "llrcr") + "\n"
                + _table(["measure", "mean tau", f"{level} interval", "P(same ranking)"], taus, "lrcr"))

    def __repr__(self) -> str:
        return f"Sensitivity(reference={self.reference!r}, {len(self.variants)} qrels, runs={self.runs})"


def _ranking_agreement(values: np.ndarray, reference: np.ndarray, runs: list[str], sign: float) -> dict[str, Any]:
    ok = ~np.isnan(values) & ~np.isnan(reference)
    x, y = values[ok], reference[ok]
    i, j = np.triu_indices(len(x), k=1)
    discordant = int((np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) < 0).sum())
    top = _top(values, runs, sign)
    return {"tau": stats.kendall_tau(x, y) if len(x) >= 2 else math.nan, "discordant": discordant,
            "top": top, "same_top": top == _top(reference, runs, sign)}


def _top(values: np.ndarray, runs: list[str], sign: float) -> list[str]:
    if np.isnan(values).all():
        return []
    best = np.nanmax(values * sign)
    return [r for r, v in zip(runs, values * sign, strict=True) if abs(v - best) <= _TIE]


def _boot_means(values: np.ndarray, judges: list[np.ndarray], n_bootstrap: int,
                rng: np.random.Generator) -> np.ndarray:
    """(B, runs, measures) means: per replicate, queries drawn with replacement, each with one random judge."""
    n_var, n_runs, n_meas, nq = values.shape
    counts = np.array([len(j) for j in judges])
    flat = np.concatenate([*judges, np.zeros(0, np.int64)])
    offsets = np.r_[0, np.cumsum(counts)[:-1]]
    chunk = max(1, (1 << 22) // max(nq * n_runs * n_meas, 1))
    out = np.empty((n_bootstrap, n_runs, n_meas))
    for start in range(0, n_bootstrap, chunk):
        rows = min(chunk, n_bootstrap - start)
        q = rng.integers(0, nq, size=(rows, nq))
        pick = (rng.random((rows, nq)) * counts[q]).astype(np.int64)
        variant = np.where(counts[q] > 0, flat[np.minimum(offsets[q] + pick, max(len(flat) - 1, 0))], n_var - 1)
        sample = values[variant, :, :, q]  # (rows, nq, runs, measures)
        with np.errstate(invalid="ignore"), _quiet():
            out[start : start + rows] = np.nanmean(sample, axis=1)
    return out


class _quiet:
    """Silence numpy's 'mean of empty slice' warning (all-NaN columns are meant to give NaN)."""

    def __enter__(self) -> None:
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)


def _boot_tables(means: np.ndarray, s: Sensitivity, confidence: float) -> dict[str, pd.DataFrame]:
    """The bootstrap's tables from the replicate means (B, runs, measures)."""
    import pandas as pd

    q = [(1 - confidence) / 2, (1 + confidence) / 2]
    rows, taus = [], []
    for j, m in enumerate(map(str, s.measures)):
        rows += _boot_run_rows(means[:, :, j], s.runs, m, q)
        ref = s._means(m)[s.variants.index(s.reference)]
        tau = stats.kendall_tau(means[:, :, j], np.broadcast_to(ref, means[:, :, j].shape))
        ok = np.isfinite(tau).any()
        taus.append({"measure": m, "tau_mean": float(np.nanmean(tau)) if ok else np.nan,
                     "tau_low": float(np.nanquantile(tau, q[0])) if ok else np.nan,
                     "tau_high": float(np.nanquantile(tau, q[1])) if ok else np.nan,
                     "p_same_ranking": float((tau >= 1 - 1e-12).mean())})
    return {"bootstrap": pd.DataFrame(rows), "bootstrap_tau": pd.DataFrame(taus)}


def _boot_run_rows(means: np.ndarray, runs: list[str], measure: str, q: list[float]) -> list[dict[str, Any]]:
    """Per run: mean of the replicate means, their quantile interval, and the share of replicates where the
    run ranks first (ties share the replicate)."""
    block = means * _sign(measure)  # larger is better
    with _quiet():
        best = np.nanmax(block, axis=1, keepdims=True)
        low, high = np.nanquantile(means, q, axis=0)
        centre = np.nanmean(means, axis=0)
    first = np.abs(block - best) <= _TIE
    share = (first / np.maximum(first.sum(1, keepdims=True), 1)).mean(0)
    return [{"run": run, "measure": measure, "mean": float(centre[i]), "ci_low": float(low[i]),
             "ci_high": float(high[i]), "p_first": float(share[i])} for i, run in enumerate(runs)]


# ------------------------------------------------------------------------------------------------ coverage
def judging_coverage(qrels: Any, runs: Any, *, k: int = 10) -> Coverage:
    """How well the qrels cover each run's top ``k``.

    Per run: Judged@k (judged documents in the top k / min(k, returned), averaged over the qrels' queries as
    `metrics.evaluate` does); the unjudged documents in its top k (queries of the qrels only; other queries
    are not in the topic set); how many unjudged (query, document) pairs it would add to a depth-``k`` pool,
    and how many of those no other run would add (``only_this_run``). ``Coverage.pool_total`` is the size of
    the union over all runs: the new pairs a depth-k pool of these runs needs judged.

    >>> cov = judging_coverage({"q1": {"D1": 1}}, {"a": {"q1": ["D1", "D2"]}, "b": {"q1": ["D3"]}}, k=2)
    >>> cov.pool["unjudged_pairs"].tolist(), cov.pool["only_this_run"].tolist(), cov.pool_total
    ([1, 1], [1, 1], 2)
    """
    k = stats.check_int(k, "k", 1)
    qrels, named = as_qrels(qrels), named_runs(runs, minimum=1)
    judged, parts = {}, []
    for name, run in named.items():
        judged[name], rows = _unjudged_top(qrels, run, k)
        parts.append((name, run.query_id.take(_ids.indices(rows)).to_pylist(), _rank_of(run, rows),
                      run.doc_id.take(_ids.indices(rows)).to_pylist()))
    return Coverage(k, judged, parts)


def _unjudged_top(qrels: Qrels, run: Run, k: int) -> tuple[tuple[float, int], np.ndarray]:
    """(mean Judged@k, queries) and the run rows (in rank order) of unjudged top-k documents of qrels queries."""
    from metrics.ranking import compute, position_within, rank_run, trec_order

    ranked = rank_run(qrels, run)
    judged_at = float(compute(ranked, Measure("Judged", k)).mean()) if ranked.nq else math.nan
    codes, qids = run.query_codes()
    asked = _ids.lookup(qids, qrels.query_codes()[1]) >= 0
    order = trec_order(codes, run.score, run.doc_id)
    is_judged = np.zeros(len(run), dtype=bool)
    is_judged[ranked.row] = True
    keep = (position_within(codes[order]) < k) & asked[codes[order]] & ~is_judged[order]
    return (judged_at, ranked.nq), order[keep]


def _rank_of(run: Run, rows: np.ndarray) -> np.ndarray:
    """1-based rank of each of ``rows`` within its query (trec_eval order)."""
    from metrics.ranking import position_within, trec_order

    codes = run.query_codes()[0]
    order = trec_order(codes, run.score, run.doc_id)
    rank = np.empty(len(run), dtype=np.int64)
    rank[order] = position_within(codes[order]) + 1
    return rank[rows]


class Coverage:
    """Judged@k per run, the unjudged top-k documents, and what each run adds to a depth-k pool. Tables via
    ``to_dataframe``: ``"judged"``, ``"unjudged"``, ``"pool"``."""

    def __init__(self, k: int, judged: dict[str, tuple[float, int]], parts: list[tuple[str, Any, Any, list[str]]]):
        import pandas as pd

        self.k = k
        self.judged = pd.DataFrame([{"run": r, f"Judged@{k}": v, "queries": n} for r, (v, n) in judged.items()])
        frames = [pd.DataFrame({"run": name, "query_id": q, "rank": rank, "doc_id": docs})
                  for name, q, rank, docs in parts]
        self.unjudged = pd.concat(frames, ignore_index=True).astype({"rank": np.int64})
        self.pool = self._pool(list(judged))

    def _pool(self, runs: list[str]) -> pd.DataFrame:
        import pandas as pd

        pairs = self.unjudged[["run", "query_id", "doc_id"]]
        seen_by = pairs.groupby(["query_id", "doc_id"])["run"].transform("size")
        only = pairs[seen_by == 1].groupby("run").size()
        total = pairs.groupby("run").size()
        self.pool_total = int(len(pairs.drop_duplicates(["query_id", "doc_id"])))
        return pd.DataFrame({"run": runs, "unjudged_pairs": [int(total.get(r, 0)) for r in runs],
                             "only_this_run": [int(only.get(r, 0)) for r in runs]})

    def to_dataframe(self, what: str = "judged") -> pd.DataFrame:
        tables = {"judged": self.judged, "unjudged": self.unjudged, "pool": self.pool}
        if what not in tables:
            raise QrelForgeError(f"what must be one of judged, unjudged, pool; got {what!r}")
        return tables[what].copy()

    def to_dict(self, *, unjudged: bool = True) -> dict[str, Any]:
        out = {"k": self.k, "judged": self.judged.to_dict(orient="records"),
               "pool": self.pool.to_dict(orient="records"), "pool_total": self.pool_total}
        if unjudged:
            out["unjudged"] = self.unjudged.to_dict(orient="records")
        return stats._json_ready(out)

    def to_markdown(self, *, digits: int = 4, max_rows: int = 50) -> str:
        """Markdown: Judged@k and pool additions per run, then up to ``max_rows`` unjudged documents."""
        digits, max_rows = stats.check_int(digits, "digits", 0), stats.check_int(max_rows, "max_rows", 0)
        pool = self.pool.set_index("run")
        rows = [[_md(j.run), _fmt(_py(j[2]), digits), str(j.queries), str(pool.loc[j.run, "unjudged_pairs"]),
                 str(pool.loc[j.run, "only_this_run"])] for j in self.judged.itertuples()]
        out = [f"# Judging coverage at depth {self.k}\n",
               _table(["run", f"Judged@{self.k}", "queries", "unjudged pairs", "only this run"], rows, "lrrrr"),
               f"A depth-{self.k} pool of these runs adds {self.pool_total} unjudged (query, document) pairs.\n"]
        shown = self.unjudged.head(max_rows)
        if len(shown):
            out.append(_table(["run", "query", "rank", "document"], [[_md(u.run), _md(u.query_id), str(u.rank),
                                                                        _md(u.doc_id)] for u in shown.itertuples()], "llrl"))
        if len(self.unjudged) > max_rows:
            out.append(f"{len(self.unjudged) - max_rows} more unjudged documents not shown.\n")
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"Coverage(k={self.k}, runs={self.judged['run'].tolist()}, pool_total={self.pool_total})"


# ------------------------------------------------------------------------------------------ threshold checks
def parse_threshold(text: str) -> tuple[Measure, float]:
    """``"R@5=0.7"`` → (``Measure('R@5')``, 0.7). The value is a finite number.

    >>> parse_threshold("nDCG@10 = 0.5")
    (Measure('nDCG@10'), 0.5)
    """
    if not isinstance(text, str) or "=" not in text:
        raise QrelForgeError(f"threshold must look like MEASURE=VALUE, e.g. 'R@5=0.7'; got {text!r}")
    name, _, raw = text.rpartition("=")
    measure = parse_measure(name.strip())
    try:
        value = float(raw.strip())
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise QrelForgeError(f"threshold value must be a finite number; got {raw.strip()!r} in {text!r}")
    return measure, value


@dataclass(frozen=True)
class CheckRow:
    """One threshold: the run's mean on ``measure`` must be >= (``bound="min"``) or <= (``"max"``) it."""

    measure: str
    value: float | None
    bound: str
    threshold: float
    passed: bool

    def describe(self) -> str:
        if self.value is None:
            return f"{self.measure} is undefined (no query where it is defined)"
        op = "<" if self.bound == "min" else ">"
        return f"{self.measure} = {self.value:.4f} {op} {self.threshold:g} ({'minimum' if self.bound == 'min' else 'maximum'})"


@dataclass(frozen=True)
class CheckResult:
    """The outcome of `check_thresholds`: one row per threshold; ``passed`` when every row passed."""

    run: str | None
    rows: tuple[CheckRow, ...]
    queries: int

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)

    @property
    def failures(self) -> list[CheckRow]:
        return [r for r in self.rows if not r.passed]

    @property
    def values(self) -> dict[str, float | None]:
        return {r.measure: r.value for r in self.rows}

    def message(self) -> str:
        """``PASS: ...`` or ``FAIL: ...`` naming every measure that missed its threshold."""
        if self.passed:
            return f"PASS: {len(self.rows)} threshold{'s' if len(self.rows) > 1 else ''} met"
        fails = self.failures
        return (f"FAIL: {len(fails)} of {len(self.rows)} threshold{'s' if len(self.rows) > 1 else ''} missed: "
                + "; ".join(r.describe() for r in fails))

    def to_text(self) -> str:
        rows = [["measure", "value", "threshold", "result"]]
        rows += [[r.measure, _fmt(r.value), f"{'>=' if r.bound == 'min' else '<='} {r.threshold:g}",
                  "pass" if r.passed else "FAIL"] for r in self.rows]
        return f"run {self.run} ({self.queries} queries)\n" + _grid(rows, "lrrl")

    def to_dict(self) -> dict[str, Any]:
        return stats._json_ready({"run": self.run, "queries": self.queries, "passed": self.passed,
                                  "rows": [asdict(r) for r in self.rows]})


def _thresholds(items: Any, bound: str) -> list[tuple[Measure, float, str]]:
    if isinstance(items, str):
        items = [items]
    pairs = ([(parse_measure(k), v) for k, v in items.items()] if isinstance(items, Mapping)
             else [parse_threshold(t) for t in items])
    out = []
    for measure, value in pairs:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise QrelForgeError(f"threshold for {measure} must be a finite number; got {value!r}")
        out.append((measure, float(value), bound))
    return out


def check_thresholds(qrels: Any, run: Any, *, minimum: Any = (), maximum: Any = (), corpus: Any = None) -> CheckResult:
    """Score ``run`` and check its means: each ``minimum`` must be reached (mean >= value), each ``maximum``
    not exceeded (mean <= value). Thresholds: a mapping ``{measure: value}`` or texts ``"R@5=0.7"``. An
    undefined mean fails. A measure may have one minimum and one maximum.

    >>> r = check_thresholds({"q1": {"D1": 1}}, {"q1": ["D2", "D1"]}, minimum=["RR=0.5", "P@1=0.5"])
    >>> r.passed, r.message()
    (False, 'FAIL: 1 of 2 thresholds missed: P@1 = 0.0000 < 0.5 (minimum)')
    """
    wanted = _thresholds(minimum, "min") + _thresholds(maximum, "max")
    if not wanted:
        raise QrelForgeError("check_thresholds needs at least one minimum or maximum threshold; got none")
    seen: dict[tuple[str, str], float] = {}
    for measure, value, bound in wanted:
        key = (str(measure), bound)
        if key in seen:
            raise QrelForgeError(f"{measure} has two {bound}imum thresholds: {seen[key]:g} and {value:g}")
        seen[key] = value
    result = evaluate(qrels, run, [m for m, _, _ in wanted], corpus=corpus)
    rows = []
    for measure, value, bound in wanted:
        mean = result.mean[str(measure)]
        ok = mean is not None and (mean >= value if bound == "min" else mean <= value)
        rows.append(CheckRow(str(measure), mean, bound, value, bool(ok)))
    return CheckResult(result.name, tuple(rows), result.counts.evaluated)
