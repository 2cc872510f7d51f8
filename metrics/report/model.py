"""`Report`, the outcome of `metrics.compare.compare`: its numbers (`Settings`, `Comparison`, the means and
per-query values of each run), the legend and the tables for analysis.

`Report.to_text`, ``to_latex``, ``to_markdown`` and ``to_html`` call the renderers of `metrics.report.text`,
`metrics.report.markdown` and `metrics.report.html`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics._choice import Choice
from metrics._text import (
    _TIE,
    Flag,
    Outcome,
    _json_ready,
    _outcomes,
    _sign,
)
from metrics.errors import QrelForgeError
from metrics.evaluate import Result, named_runs
from metrics.measures import Measure, parse_measure
from metrics.stats import significance
from metrics.stats.significance import TESTS, Correction, StatTest

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Report",
    "Comparison",
    "Settings",
    "Direction",
    "named_runs",
    "UP",
    "DOWN",
]

UP, DOWN = Flag.UP, Flag.DOWN


class Direction(Choice):
    """Which way a significant difference with the baseline goes; empty when not significant."""

    BETTER = "better"
    WORSE = "worse"
    NONE = ""


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
    correction: str = Correction.HOLM

    def __post_init__(self) -> None:
        tests = (self.tests,) if isinstance(self.tests, str) else tuple(self.tests)
        bad = [t for t in tests if t not in TESTS]
        if bad or len(set(tests)) != len(tests):
            raise QrelForgeError(
                f"tests must be distinct names among {tuple(map(str, TESTS))}; got {self.tests!r}"
            )
        object.__setattr__(self, "tests", tuple(StatTest(t) for t in tests))
        significance.check_int(self.n_permutations, "n_permutations", 1)
        significance.check_int(self.n_bootstrap, "n_bootstrap", 1)
        significance.check_int(self.seed, "seed", 0)
        significance.check_probability(self.alpha, "alpha")
        significance.check_probability(self.confidence, "confidence")
        correction = Correction.NONE if self.correction is None else self.correction
        if correction not in significance.CORRECTIONS:
            raise QrelForgeError(
                f"correction must be one of {', '.join(significance.CORRECTIONS)}; got {self.correction!r}"
            )
        object.__setattr__(self, "correction", Correction(correction))

    @property
    def flag_test(self) -> StatTest | None:
        """The test that decides 'significant': the permutation test, else the t-test, else the bootstrap
        interval excluding 0 (not corrected for multiple comparisons); None when no test was run."""
        order = (StatTest.PERMUTATION, StatTest.T, StatTest.BOOTSTRAP)
        return next((t for t in order if t in self.tests), None)


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
    direction: str = Direction.NONE

    def to_dict(self) -> dict[str, Any]:
        return _json_ready(asdict(self))


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
        # `metrics.fingerprint.fingerprint` of the inputs, when the caller sets it: JSON, Markdown and HTML
        # carry it (a slice's report carries its slice as ``{"slice": name}``)
        self.fingerprint: dict[str, Any] | None = None

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
        values = {run: v for run, m in self.means.items() if (v := m[measure]) is not None}
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
        return {Direction.BETTER: UP, Direction.WORSE: DOWN}.get(Direction(c.direction), "")

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
            for outcome, count in ((Outcome.WIN, c.wins), (Outcome.TIE, c.ties), (Outcome.LOSS, c.losses))
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
        if self.fingerprint is not None:
            out["fingerprint"] = self.fingerprint
        return _json_ready(out)

    # ---- renderings (metrics.report)
    def legend(self) -> str:
        """One paragraph saying how significance was decided."""
        s, others = self.settings, len(self.runs) - 1
        test = s.flag_test
        if test is None:
            return "No significance test was run."
        family = f"{others} comparison{'s' if others > 1 else ''} per measure"
        correction = (
            ""
            if s.correction == Correction.NONE
            else f", {s.correction.capitalize()}-adjusted over the {family}"
        )
        what = {
            StatTest.PERMUTATION: f"two-sided paired randomization test (sign flips, all 2^n when 2^n ≤ "
            f"{s.n_permutations:,}, else {s.n_permutations:,} random with seed {s.seed})"
            f"{correction}, p ≤ {s.alpha}",
            StatTest.T: f"two-sided paired t-test{correction}, p ≤ {s.alpha}",
            StatTest.BOOTSTRAP: f"the {s.confidence:.0%} bootstrap interval of the mean difference "
            "excludes 0, "
            "not adjusted for multiple comparisons",
        }[test]
        return f"{UP} / {DOWN}: significantly better / worse than the baseline {self.baseline}: {what}."

    def to_markdown(self, *, digits: int = 4, max_queries: int = 50, title: str = "Run comparison") -> str:
        """Markdown: the means (best in bold, significant differences flagged), the tests against the
        baseline, and for each run a per-query table (win/tie/loss) when there are at most ``max_queries``."""
        return _renderer("markdown", "render_markdown")(
            self, digits=digits, max_queries=max_queries, title=title
        )

    def to_text(self, *, digits: int = 4) -> str:
        """Plain aligned text for a terminal: the means (``*`` best, flags), then the tests."""
        return _renderer("text", "render_text")(self, digits=digits)

    def to_latex(self, *, digits: int = 4, caption: str | None = None, label: str | None = None) -> str:
        """A LaTeX table of the means (booktabs): best in bold, ↑/↓ for significant differences. ``caption``
        (default: the legend) and ``label`` are escaped as text."""
        return _renderer("text", "render_latex")(self, digits=digits, caption=caption, label=label)

    def to_html(self, *, digits: int = 4, max_queries: int = 50, title: str = "Run comparison") -> str:
        """One self-contained HTML page (inline CSS and SVG; no script, no external resource): the tables of
        `to_markdown`, a chart of the means, a chart of the differences with their intervals, and for each
        run and measure the per-query differences sorted (wins above, losses below the axis)."""
        return _renderer("html", "render_html")(self, digits=digits, max_queries=max_queries, title=title)

    def __repr__(self) -> str:
        return (
            f"Report(baseline={self.baseline!r}, runs={self.runs}, measures={self.measure_names}, "
            f"{len(self.query_ids)} queries)"
        )


def _renderer(module: str, name: str) -> Callable[..., str]:
    """The renderer ``name`` of `metrics.report.<module>`.

    The renderers import the model; the model finds them by name, so that the imports point one way.
    """
    return getattr(importlib.import_module(f"metrics.report.{module}"), name)
