"""`Report`, the outcome of `metrics.compare.compare`: its numbers (`Settings`, `Comparison`, the means and
per-query values of each run) and its renderings.

Renderings of a `Report` (`Report.to_text`, ``to_markdown``, ``to_latex`` and ``to_html`` call them):
`render_text`, `render_markdown`, `render_latex`, `render_html` (one self-contained page, its charts drawn
by `metrics.charts` from `svg_means`, `svg_differences` and `svg_per_query`). Run, query and document IDs are
text from outside and are always escaped (`metrics._text`).

`metrics.compare` computes the comparisons and re-exports everything public here, so
``from metrics.compare import Report`` keeps working.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics import charts, stats
from metrics._choice import Choice
from metrics._text import (
    _TIE,
    Flag,
    Outcome,
    _e,
    _fmt,
    _grid,
    _json_ready,
    _lower_is_better,
    _md,
    _nan,
    _outcomes,
    _p,
    _sign,
    _signed,
    _table,
    _tex,
)
from metrics.errors import QrelForgeError
from metrics.evaluate import Result, named_runs
from metrics.measures import Measure, parse_measure
from metrics.stats import TESTS, Correction, StatTest

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Report",
    "Comparison",
    "Settings",
    "Direction",
    "named_runs",
    "render_text",
    "render_markdown",
    "render_latex",
    "render_html",
    "svg_means",
    "svg_differences",
    "svg_per_query",
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
        stats.check_int(self.n_permutations, "n_permutations", 1)
        stats.check_int(self.n_bootstrap, "n_bootstrap", 1)
        stats.check_int(self.seed, "seed", 0)
        stats.check_probability(self.alpha, "alpha")
        stats.check_probability(self.confidence, "confidence")
        correction = Correction.NONE if self.correction is None else self.correction
        if correction not in stats.CORRECTIONS:
            raise QrelForgeError(
                f"correction must be one of {', '.join(stats.CORRECTIONS)}; got {self.correction!r}"
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


# ------------------------------------------------------------------------------------------- rendering
def _ci(c: Comparison, digits: int) -> str:
    return "-" if c.ci_low is None else f"[{_signed(c.ci_low, digits)}, {_signed(c.ci_high, digits)}]"


def _label(run: str, baseline: str) -> str:
    return f"{run} (baseline)" if run == baseline else run


def _per_query_cell(report: Report, run: str, measure: str, i: int, digits: int) -> str:
    """``baseline value → run value outcome`` for query ``i`` (``dropped`` when either is undefined)."""
    a, b = report.results[report.baseline].values[measure][i], report.results[run].values[measure][i]
    outcome = _outcomes(np.array([(b - a) * _sign(measure)]))[0] or "dropped"
    return f"{_fmt(a, digits)} → {_fmt(b, digits)} {outcome}"


def _tests_header(report: Report) -> list[str]:
    return [
        "run",
        "measure",
        "Δ mean",
        f"{report.settings.confidence:.0%} CI",
        "p (t)",
        "p (perm.)",
        "W/T/L",
        "n",
    ]


def _notes(report: Report) -> list[str]:
    """The notes under the tests: interval, W/T/L, the smallest attainable p, direction, correction."""
    s, notes = report.settings, []
    if StatTest.BOOTSTRAP in s.tests:
        notes.append(
            f"CI: {s.confidence:.0%} percentile bootstrap interval of the mean difference "
            f"({s.n_bootstrap:,} resamples of the queries, seed {s.seed})."
        )
    notes.append(
        "W/T/L: queries where the run is better / tied / worse than the baseline; n: queries where "
        "both runs are defined (others are dropped from the tests)."
    )
    sizes = [c.n for c in report.comparisons if c.n > 0]
    if StatTest.PERMUTATION in s.tests and sizes and 2 / 2 ** min(sizes) > s.alpha:
        n = min(sizes)
        notes.append(
            f"With {n} queries no difference can be significant in the randomization test: its "
            f"smallest two-sided p is 2/2^{n} = {2 / 2**n:.4g}, above {s.alpha}."
        )
    if any(not m.definition.higher_is_better for m in report.measures):
        notes.append(f"Lower is better for {', '.join(_lower_is_better())}.")
    if s.correction != Correction.NONE and ({StatTest.T, StatTest.PERMUTATION} & set(s.tests)):
        notes.append(
            f"p-values are {s.correction.capitalize()}-adjusted per measure over the runs compared "
            "with the baseline."
        )
    return notes


# ------------------------------------------------------------------------------------ text and LaTeX
def render_text(report: Report, *, digits: int = 4) -> str:
    """Plain aligned text for a terminal: the means (``*`` best, flags), then the tests."""
    digits, r = stats.check_int(digits, "digits", 0), report
    names = r.measure_names
    rows = [["run", *names]] + [
        [
            _label(run, r.baseline),
            *(
                _fmt(r.means[run][m], digits) + ("*" if run in r.best(m) else " ") + (r._flag(run, m) or " ")
                for m in names
            ),
        ]
        for run in r.runs
    ]
    out = f"baseline {r.baseline}, {len(r.query_ids)} queries\n\n" + _grid(rows, "l" + "r" * len(names))
    tests = [["run", "measure", "diff", "CI", "p (t)", "p (perm.)", "W/T/L", "n"]]
    tests += [
        [
            c.run,
            c.measure,
            _signed(c.diff, digits),
            _ci(c, digits),
            _p(c.p_t_adjusted),
            _p(c.p_permutation_adjusted),
            f"{c.wins}/{c.ties}/{c.losses}",
            str(c.n),
        ]
        for c in r.comparisons
    ]
    notes = ["* best mean per measure.", r.legend(), *_notes(r)]
    return out + "\n" + _grid(tests, "llrrrrrr") + "\n" + "".join(f"{n}\n" for n in notes)


def render_latex(
    report: Report, *, digits: int = 4, caption: str | None = None, label: str | None = None
) -> str:
    """A LaTeX table of the means (booktabs): best in bold, ↑/↓ for significant differences. ``caption``
    (default: the legend) and ``label`` are escaped as text."""
    digits, r = stats.check_int(digits, "digits", 0), report
    names = r.measure_names
    lines = [
        "% requires \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        f"\\begin{{tabular}}{{l{'r' * len(names)}}}",
        "\\toprule",
        " & ".join(["Run", *(_tex(n) for n in names)]) + " \\\\",
        "\\midrule",
    ]
    for run in r.runs:
        cells = [_tex(_label(run, r.baseline))] + [_tex_cell(r, run, m, digits) for m in names]
        lines.append(" & ".join(cells) + " \\\\")
    text = caption if caption is not None else "Bold: best mean per measure. " + r.legend()
    lines += ["\\bottomrule", "\\end{tabular}", f"\\caption{{{_tex(text)}}}"]
    lines += [f"\\label{{{_tex(label)}}}"] if label else []
    return "\n".join([*lines, "\\end{table}"]) + "\n"


def _tex_cell(report: Report, run: str, measure: str, digits: int) -> str:
    value = _fmt(report.means[run][measure], digits)
    value = f"\\textbf{{{value}}}" if run in report.best(measure) else value
    marks = {UP.value: "$^{\\uparrow}$", DOWN.value: "$^{\\downarrow}$"}
    flag = marks.get(report._flag(run, measure), "")
    return value + flag


# ------------------------------------------------------------------------------------------------ Markdown
def render_markdown(
    report: Report, *, digits: int = 4, max_queries: int = 50, title: str = "Run comparison"
) -> str:
    """Markdown: the means (best in bold, significant differences flagged), the tests against the baseline,
    and for each run a per-query table (win/tie/loss) when there are at most ``max_queries``."""
    digits = stats.check_int(digits, "digits", 0)
    max_queries = stats.check_int(max_queries, "max_queries", 0)
    md = _Markdown(report, digits)
    parts = [f"# {_md(title)}\n", md.header(), md.means_table(), md.legend(), md.tests_table()]
    parts += md.per_query_tables(max_queries)
    if report.fingerprint is not None:
        from metrics.fingerprint import fingerprint_markdown

        parts.append(fingerprint_markdown(report.fingerprint))
    return "\n".join(p for p in parts if p)


class _Markdown:
    """The Markdown rendering of a `Report`."""

    def __init__(self, report: Report, digits: int):
        self.r, self.d = report, digits

    def header(self) -> str:
        r = self.r
        return (
            f"Baseline: {_md(r.baseline)} · {len(r.query_ids)} queries · {len(r.runs)} runs · "
            f"measures: {', '.join(_md(m) for m in r.measure_names)}\n"
        )

    def means_table(self) -> str:
        r = self.r
        rows = [
            [_md(_label(run, r.baseline)), *(self.cell(run, m) for m in r.measure_names)] for run in r.runs
        ]
        return "## Means\n\n" + _table(
            ["run", *map(_md, r.measure_names)], rows, "l" + "r" * len(r.measure_names)
        )

    def cell(self, run: str, measure: str) -> str:
        value = _fmt(self.r.means[run][measure], self.d)
        value = f"**{value}**" if run in self.r.best(measure) else value
        flag = self.r._flag(run, measure)
        return f"{value} {flag}" if flag else value

    def legend(self) -> str:
        return f"Bold: best mean per measure. {_md(self.r.legend())}\n"

    def tests_table(self) -> str:
        r, d = self.r, self.d
        rows = [
            [
                _md(c.run),
                _md(c.measure),
                _signed(c.diff, d) + (f" {r._flag(c.run, c.measure)}" if c.significant else ""),
                _ci(c, d),
                _p(c.p_t_adjusted),
                _p(c.p_permutation_adjusted),
                f"{c.wins}/{c.ties}/{c.losses}",
                str(c.n),
            ]
            for c in r.comparisons
        ]
        table = _table(_tests_header(r), rows, "llrcrrcr")
        return "## Against the baseline\n\n" + table + "\n" + _md(" ".join(_notes(r))) + "\n"

    def per_query_tables(self, max_queries: int) -> list[str]:
        r = self.r
        if len(r.query_ids) > max_queries:
            return [
                f"Per-query tables left out: {len(r.query_ids)} queries, "
                f"more than max\\_queries = {max_queries}.\n"
            ]
        return [self.per_query(run) for run in r.runs if run != r.baseline]

    def per_query(self, run: str) -> str:
        r, names = self.r, self.r.measure_names
        rows = [
            [_md(qid), *(_per_query_cell(r, run, m, i, self.d) for m in names)]
            for i, qid in enumerate(r.query_ids)
        ]
        rows.append(["W/T/L", *(self.wtl(run, m) for m in names)])
        title = f"## Per query: {_md(run)} vs {_md(r.baseline)}\n\n"
        return title + _table(["query", *map(_md, names)], rows, "l" + "l" * len(names))

    def wtl(self, run: str, measure: str) -> str:
        c = self.r.comparison(run, measure)
        return f"{c.wins}/{c.ties}/{c.losses}"


# ---------------------------------------------------------------------------------------------------- HTML
_CSS = """body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem;color:#222;
max-width:72rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #ccc;padding:.25rem .6rem}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}.best{font-weight:700}
.up{color:#1a7f37}.down{color:#b42318}.note{color:#555;font-size:.9rem}
svg{display:block;margin:.5rem 0 1.5rem}
figure{margin:0}figcaption{color:#555;font-size:.9rem}"""


def render_html(
    report: Report, *, digits: int = 4, max_queries: int = 50, title: str = "Run comparison"
) -> str:
    """One self-contained HTML page (inline CSS and SVG; no script, no external resource): the tables of
    `render_markdown`, a chart of the means, a chart of the differences with their intervals, and for each
    run and measure the per-query differences sorted (wins above, losses below the axis)."""
    digits = stats.check_int(digits, "digits", 0)
    max_queries = stats.check_int(max_queries, "max_queries", 0)
    return _Html(report, digits).page(title, max_queries)


def _html_table(header: list[str], rows: list[list[str]], numeric: Sequence[bool]) -> str:
    """``rows`` hold already-escaped cell HTML; ``header`` plain text."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{c}</td>' if num else f"<td>{c}</td>"
            for c, num in zip(row, numeric, strict=True)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n"


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


class _Html:
    """The HTML rendering of a `Report`."""

    def __init__(self, report: Report, digits: int):
        self.r, self.d = report, digits

    def page(self, title: str, max_queries: int) -> str:
        r = self.r
        body = [
            f"<h1>{_e(title)}</h1>",
            f"<p>Baseline: <b>{_e(r.baseline)}</b> · {len(r.query_ids)} queries · {len(r.runs)} runs · "
            f"measures: {_e(', '.join(r.measure_names))}</p>",
            "<h2>Means</h2>",
            self.means_table(),
            f'<p class="note">Bold: best mean per measure. {_e(r.legend())}</p>',
            _figure(svg_means(r), "Mean of each run per measure."),
            "<h2>Against the baseline</h2>",
            self.tests_table(),
            f'<p class="note">{_e(" ".join(_notes(r)))}</p>',
        ]
        if r.settings.flag_test is not None:
            body += [
                _figure(
                    svg_differences(r, m),
                    f"{m}: mean difference with the baseline {r.baseline}"
                    + (" and its bootstrap interval." if StatTest.BOOTSTRAP in r.settings.tests else "."),
                )
                for m in r.measure_names
            ]
        body += self.per_query(max_queries)
        if r.fingerprint is not None:
            from metrics.fingerprint import fingerprint_html

            body.append(fingerprint_html(r.fingerprint))
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body)
            + "\n</body></html>\n"
        )

    def means_table(self) -> str:
        r, names = self.r, self.r.measure_names
        rows = [[_e(_label(run, r.baseline)), *(self.cell(run, m) for m in names)] for run in r.runs]
        return _html_table(["run", *names], rows, [False] + [True] * len(names))

    def cell(self, run: str, measure: str) -> str:
        value = _e(_fmt(self.r.means[run][measure], self.d))
        if run in self.r.best(measure):
            value = f'<span class="best">{value}</span>'
        flag = self.r._flag(run, measure)
        return value + (f' <span class="{"up" if flag == UP else "down"}">{flag}</span>' if flag else "")

    def tests_table(self) -> str:
        r, d = self.r, self.d
        rows = [
            [
                _e(c.run),
                _e(c.measure),
                _e(_signed(c.diff, d)) + (f" {r._flag(c.run, c.measure)}" if c.significant else ""),
                _e(_ci(c, d)),
                _e(_p(c.p_t_adjusted)),
                _e(_p(c.p_permutation_adjusted)),
                f"{c.wins}/{c.ties}/{c.losses}",
                str(c.n),
            ]
            for c in r.comparisons
        ]
        return _html_table(_tests_header(r), rows, [False, False, True, True, True, True, True, True])

    def per_query(self, max_queries: int) -> list[str]:
        r, out = self.r, []
        for run in r.runs:
            if run == r.baseline:
                continue
            out.append(f"<h2>Per query: {_e(run)} vs {_e(r.baseline)}</h2>")
            for m in r.measure_names:
                order = f"{r.baseline} − {run}, lower is better" if _sign(m) < 0 else f"{run} − {r.baseline}"
                caption = (
                    f"{m}: per-query improvement over the baseline ({order}), sorted; wins up, losses down."
                )
                out.append(_figure(svg_per_query(r, run, m), caption))
            if len(r.query_ids) <= max_queries:
                out.append(self.per_query_table(run))
        return out

    def per_query_table(self, run: str) -> str:
        r, names = self.r, self.r.measure_names
        rows = [
            [_e(q), *(_e(_per_query_cell(r, run, m, i, self.d)) for m in names)]
            for i, q in enumerate(r.query_ids)
        ]
        return _html_table(["query", *names], rows, [False] * (1 + len(names)))


# -------------------------------------------------------------------------------------- the report's charts
def svg_means(report: Report) -> str:
    """Bar charts of the means: one panel per measure, with its own scale, one bar per run."""
    panels = [
        (
            m,
            [_nan(report.means[run][m]) for run in report.runs],
            [f"{run} · {m}: {_fmt(report.means[run][m])}" for run in report.runs],
        )
        for m in report.measure_names
    ]
    return charts.svg_bar_panels(panels, report.runs, label="mean per run and measure")


def svg_differences(report: Report, measure: str) -> str:
    """Mean difference with the baseline on ``measure`` (dot) and its bootstrap interval (whisker), one row
    per run, on the measure's own scale; green when significantly better, red when significantly worse."""
    rows = [c for c in report.comparisons if c.measure == measure]
    points = np.array([[_nan(c.diff), _nan(c.ci_low), _nan(c.ci_high)] for c in rows], dtype=np.float64)
    colors = [
        charts.GOOD
        if c.direction == Direction.BETTER
        else charts.BAD
        if c.direction == Direction.WORSE
        else charts.NEUTRAL
        for c in rows
    ]
    tips = [f"{c.run} · {measure}: {_signed(c.diff)} {_ci(c, 4)}" for c in rows]
    return charts.svg_intervals(
        [c.run for c in rows], points, colors, tips, label=f"differences with the baseline on {measure}"
    )


def svg_per_query(report: Report, run: str, measure: str, *, max_bars: int = 400) -> str:
    """Per-query differences ``run − baseline`` sorted from best to worst: green bars up (wins), red down
    (losses), ties as thin grey marks. Above ``max_bars`` queries, ``max_bars`` evenly spaced quantiles of the
    sorted differences are drawn instead of every query."""
    base, other = report.results[report.baseline], report.results[run]
    signed = (other.values[measure] - base.values[measure]) * _sign(measure)
    keep = ~np.isnan(signed)
    qids = np.asarray(other.query_ids, dtype=object)[keep]
    return charts.svg_sorted_bars(
        signed[keep],
        qids,
        tie=_TIE,
        max_bars=max_bars,
        label=f"per-query differences {run} vs {report.baseline} on {measure}",
    )
