"""What the comparison reports share, and the renderings of `metrics.compare.Report`.

Shared by `metrics.compare`, `metrics.sensitivity`, `metrics.coverage` and `metrics.checks` (kept here, below
`metrics.compare`, because that module re-exports the others):

- `named_runs`: runs keyed by name, from a mapping or from a list of tagged runs;
- how a difference reads: `_sign` (+1 when larger is better, from `MeasureDef.higher_is_better`), ties
  within ``_TIE``, win / tie / loss labels, the ▲ / ▼ flags;
- number formatting, and escaping for Markdown, LaTeX and HTML: run, query and document IDs are text from
  outside and are always escaped.

Renderings of a `Report` (`Report.to_text`, ``to_markdown``, ``to_latex`` and ``to_html`` call them):
`render_text`, `render_markdown`, `render_latex`, `render_html` (one self-contained page, its charts drawn
by `metrics.charts` from `svg_means`, `svg_differences` and `svg_per_query`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics import charts, stats
from metrics.charts import _e
from metrics.data import Run
from metrics.errors import QrelForgeError
from metrics.evaluate import as_run
from metrics.measures import REGISTRY
from metrics.render import _fmt

if TYPE_CHECKING:
    from metrics.compare import Comparison, Report

__all__ = [
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

UP, DOWN = "▲", "▼"
_TIE = 1e-12  # per-query differences at most this far from 0 are ties


# ------------------------------------------------------------------------------------------------- runs
def named_runs(runs: Any, *, minimum: int = 2) -> dict[str, Run]:
    """Runs keyed by name: a mapping ``{name: run}`` (names as given), or a sequence of runs named by their
    tags (a TREC run's tag, or ``Run.name``). Each run is anything `metrics.evaluate` accepts.

    Errors: fewer than ``minimum`` runs, an empty or repeated name, a run in a sequence without a name.
    """
    if isinstance(runs, Mapping):
        pairs = [
            (_run_name(name, f"run names must be non-empty strings; got {name!r}"), as_run(run))
            for name, run in runs.items()
        ]
    elif (
        isinstance(runs, str | os.PathLike | Run)
        or hasattr(runs, "columns")
        or not isinstance(runs, Iterable)
    ):
        raise QrelForgeError(
            f"runs must be a mapping {{name: run}} or a list of runs; got {type(runs).__name__}"
        )
    else:
        coerced = [as_run(run) for run in runs]
        pairs = [
            (_run_name(r.name, f"runs[{i}] has no name; pass runs as a mapping {{name: run}}"), r)
            for i, r in enumerate(coerced)
        ]
    named: dict[str, Run] = {}
    for i, (name, run) in enumerate(pairs):
        if name in named:
            first = [n for n, _ in pairs].index(name)
            raise QrelForgeError(
                f"runs[{first}] and runs[{i}] are both named {name!r}; pass runs as a mapping "
                "{name: run} to name them apart"
            )
        named[name] = run
    if len(named) < minimum:
        raise QrelForgeError(
            f"runs must hold at least {minimum} run{'s' if minimum > 1 else ''}; got {len(named)}"
        )
    return named


def _run_name(name: Any, problem: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise QrelForgeError(
            problem if name is None else f"run names must be non-empty strings; got {name!r}"
        )
    return name


# ----------------------------------------------------------------------------------- reading a difference
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def _sign(measure: str) -> float:
    """+1 when a larger value of ``measure`` (canonical text, e.g. ``"P@5"``) is better, -1 when a smaller one
    is (`MeasureDef.higher_is_better`, False for FirstRel)."""
    definition = REGISTRY.get(_NAME.match(measure)[0])
    return -1.0 if definition is not None and not definition.higher_is_better else 1.0


def _lower_is_better() -> list[str]:
    """The registered measures where a smaller value is the better one, sorted."""
    return sorted(name for name, d in REGISTRY.items() if not d.higher_is_better)


def _outcomes(signed: np.ndarray) -> np.ndarray:
    """Per signed difference (larger is better): "win", "loss", or "tie" within ``_TIE``; None for NaN."""
    out = np.full(len(signed), None, dtype=object)
    out[signed > _TIE], out[signed < -_TIE], out[np.abs(signed) <= _TIE] = "win", "loss", "tie"
    return out


# ------------------------------------------------------------------------------------- formatting helpers
def _py(value: Any) -> Any:
    """A numpy scalar as a plain Python value; NaN as None."""
    value = value.item() if isinstance(value, np.generic) else value
    return None if isinstance(value, float) and value != value else value


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


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


_TEX_SPECIAL = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
    "≤": "$\\leq$",
    "Δ": "$\\Delta$",
    "→": "$\\rightarrow$",
    "·": "\\textperiodcentered{}",
    "−": "-",
    UP: "$\\uparrow$",
    DOWN: "$\\downarrow$",
}


def _tex(text: str) -> str:
    """LaTeX-escaped text (special characters, the few non-ASCII symbols of our legends, ▲/▼ as arrows)."""
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in " ".join(str(text).split()))


def _grid(rows: list[list[str]], align: str) -> str:
    """Plain-text columns, two spaces apart; ``align`` holds l or r per column."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(r, widths, align, strict=True))
        for r in rows
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _table(header: list[str], rows: list[list[str]], align: str) -> str:
    """A Markdown table; ``align`` holds one of l / r / c per column."""
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


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
    if "bootstrap" in s.tests:
        notes.append(
            f"CI: {s.confidence:.0%} percentile bootstrap interval of the mean difference "
            f"({s.n_bootstrap:,} resamples of the queries, seed {s.seed})."
        )
    notes.append(
        "W/T/L: queries where the run is better / tied / worse than the baseline; n: queries where "
        "both runs are defined (others are dropped from the tests)."
    )
    sizes = [c.n for c in report.comparisons if c.n > 0]
    if "permutation" in s.tests and sizes and 2 / 2 ** min(sizes) > s.alpha:
        n = min(sizes)
        notes.append(
            f"With {n} queries no difference can be significant in the randomization test: its "
            f"smallest two-sided p is 2/2^{n} = {2 / 2**n:.4g}, above {s.alpha}."
        )
    if any(not m.definition.higher_is_better for m in report.measures):
        notes.append(f"Lower is better for {', '.join(_lower_is_better())}.")
    if s.correction != "none" and ({"t", "permutation"} & set(s.tests)):
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
    flag = {UP: "$^{\\uparrow}$", DOWN: "$^{\\downarrow}$"}.get(report._flag(run, measure), "")
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
                f"Per-query tables left out: {len(r.query_ids)} queries, more than max\\_queries = {max_queries}.\n"
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
_CSS = """body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem;color:#222;max-width:72rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #ccc;padding:.25rem .6rem}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}.best{font-weight:700}
.up{color:#1a7f37}.down{color:#b42318}.note{color:#555;font-size:.9rem}svg{display:block;margin:.5rem 0 1.5rem}
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
                    + (" and its bootstrap interval." if "bootstrap" in r.settings.tests else "."),
                )
                for m in r.measure_names
            ]
        body += self.per_query(max_queries)
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
        charts.GOOD if c.direction == "better" else charts.BAD if c.direction == "worse" else charts.NEUTRAL
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
