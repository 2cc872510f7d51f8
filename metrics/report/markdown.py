"""A `Report` as Markdown (`render_markdown`): the means, the tests against the baseline, per-query tables."""

from __future__ import annotations

from metrics._text import (
    _fmt,
    _md,
    _p,
    _signed,
    _table,
)
from metrics.report.model import Report
from metrics.report.text import _ci, _label, _notes, _per_query_cell, _tests_header
from metrics.stats import significance

__all__ = ["render_markdown"]


# ------------------------------------------------------------------------------------------------ Markdown
def render_markdown(
    report: Report, *, digits: int = 4, max_queries: int = 50, title: str = "Run comparison"
) -> str:
    """A Markdown report: the means, the tests against the baseline, and the per-query tables.

    The means show the best in bold and flag significant differences; each run gets a per-query table
    (win/tie/loss) when there are at most ``max_queries`` queries.

    Args:
        report: a `Report` from `metrics.compare`.
        digits: the decimals of the numbers, an int >= 0.
        max_queries: the most queries a per-query table is shown for, an int >= 0.
        title: the first heading.

    Returns:
        The Markdown text.

    Raises:
        QrelForgeError: a bad ``digits`` or ``max_queries``.

    >>> from metrics.compare import compare
    >>> report = compare({"q1": {"D1": 1}, "q2": {"D2": 1}},
    ...                  {"a": {"q1": ["D9", "D1"], "q2": ["D2"]}, "b": {"q1": ["D1"], "q2": ["D2"]}}, ["RR"])
    >>> render_markdown(report).splitlines()[0]
    '# Run comparison'
    """
    digits = significance.check_int(digits, "digits", 0)
    max_queries = significance.check_int(max_queries, "max_queries", 0)
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
