"""A `Report` as one self-contained HTML page (`render_html`), and the report's charts (`svg_means`,
`svg_differences`, `svg_per_query`, drawn by `metrics.report.charts`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from metrics._text import (
    _TIE,
    _e,
    _fmt,
    _nan,
    _p,
    _sign,
    _signed,
)
from metrics.report import charts
from metrics.report.model import UP, Direction, Report
from metrics.report.text import _ci, _label, _notes, _per_query_cell, _tests_header
from metrics.stats import significance
from metrics.stats.significance import StatTest

__all__ = ["render_html", "svg_means", "svg_differences", "svg_per_query"]

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
    """One self-contained HTML page: the tables of `render_markdown` and the report's charts.

    Inline CSS and SVG; no script, no external resource. The charts: the means (`svg_means`), the
    differences with their intervals (`svg_differences`), and for each run and measure the per-query
    differences sorted (`svg_per_query`). Every text from the inputs is escaped.

    Args:
        report, digits, max_queries, title: as in `render_markdown`.

    Returns:
        The HTML document.

    Raises:
        QrelForgeError: a bad ``digits`` or ``max_queries``.

    >>> from metrics.compare import compare
    >>> report = compare({"q1": {"D1": 1}, "q2": {"D2": 1}},
    ...                  {"a": {"q1": ["D9", "D1"], "q2": ["D2"]}, "b": {"q1": ["D1"], "q2": ["D2"]}}, ["RR"])
    >>> render_html(report).startswith("<!DOCTYPE html>")
    True
    """
    digits = significance.check_int(digits, "digits", 0)
    max_queries = significance.check_int(max_queries, "max_queries", 0)
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
    """Bar charts of the means: one panel per measure, with its own scale, one bar per run.

    Args:
        report: a `Report` from `metrics.compare`.

    Returns:
        The SVG element.
    """
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
    """The mean difference with the baseline on ``measure``, with its bootstrap interval, one row per run.

    A dot for the difference and a whisker for the interval, on the measure's own scale; green when
    significantly better, red when significantly worse.

    Args:
        report: a `Report` from `metrics.compare`.
        measure: one of the report's measure names; another gives an empty chart.

    Returns:
        The SVG element.
    """
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
    """The per-query differences ``run − baseline``, sorted from best to worst.

    Green bars up (wins), red down (losses), ties as thin grey marks. Above ``max_bars`` queries, ``max_bars``
    evenly spaced quantiles of the sorted differences are drawn instead of every query.

    Args:
        report: a `Report` from `metrics.compare`.
        run: one of the report's runs.
        measure: one of the report's measure names.
        max_bars: the most bars drawn.

    Returns:
        The SVG element.

    Raises:
        KeyError: ``run`` or ``measure`` is not in the report.
    """
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
