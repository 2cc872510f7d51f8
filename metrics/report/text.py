"""A `Report` as plain aligned text (`render_text`) and as a LaTeX table (`render_latex`), and the cells and
notes the other renderings share."""

from __future__ import annotations

import numpy as np

from metrics._text import (
    _fmt,
    _grid,
    _lower_is_better,
    _outcomes,
    _p,
    _sign,
    _signed,
    _tex,
)
from metrics.report.model import DOWN, UP, Comparison, Report
from metrics.stats import significance
from metrics.stats.significance import Correction, StatTest

__all__ = ["render_text", "render_latex"]


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
    """Plain aligned text for a terminal: the means (``*`` best, flags), then the tests.

    Args:
        report: a `Report` from `metrics.compare`.
        digits: the decimals of the numbers, an int >= 0.

    Returns:
        The text.

    Raises:
        QrelForgeError: a bad ``digits``.

    >>> from metrics.compare import compare
    >>> report = compare({"q1": {"D1": 1}, "q2": {"D2": 1}},
    ...                  {"a": {"q1": ["D9", "D1"], "q2": ["D2"]}, "b": {"q1": ["D1"], "q2": ["D2"]}}, ["RR"])
    >>> render_text(report).splitlines()[0]
    'baseline a, 2 queries'
    """
    digits, r = significance.check_int(digits, "digits", 0), report
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
    """A LaTeX table of the means (booktabs): best in bold, ↑/↓ for significant differences.

    Args:
        report: a `Report` from `metrics.compare`.
        digits: the decimals of the numbers, an int >= 0.
        caption: the table's caption, escaped as text; default: the legend.
        label: the table's label (LaTeX's label command), escaped as text; none when None.

    Returns:
        The LaTeX source of the ``table`` environment.

    Raises:
        QrelForgeError: a bad ``digits``.

    >>> from metrics.compare import compare
    >>> report = compare({"q1": {"D1": 1}, "q2": {"D2": 1}},
    ...                  {"a": {"q1": ["D9", "D1"], "q2": ["D2"]}, "b": {"q1": ["D1"], "q2": ["D2"]}}, ["RR"])
    >>> render_latex(report).splitlines()[1].endswith("{table}[t]")
    True
    """
    digits, r = significance.check_int(digits, "digits", 0), report
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
