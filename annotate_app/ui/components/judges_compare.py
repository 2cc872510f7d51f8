"""The Agreement page's comparison of the project's judges on the same random human sample
(`services.judges.compare_judges`): one row per judge with κ, weighted κ and leniency and their bootstrap 95%
intervals, τ, the failure rate and the cost; the best judge is marked only when its κ is significantly above
every other judge's (paired bootstrap), and the sentence below says so or names the judges that show no
significant difference."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from annotate_app.services.auth import Actor
from annotate_app.services.judges import JudgeComparisonReport
from annotate_app.ui import errors, review_cache
from annotate_app.ui.components import names
from annotate_app.ui.escape import escape_name

__all__ = ["comparison_table", "comparison_section"]

BEST = "best (significant)"


def _bounds(interval: tuple[float, float]) -> str:
    if any(math.isnan(b) for b in interval):
        return "undefined"
    return f"{interval[0]:.3f} to {interval[1]:.3f}"


def comparison_table(report: JudgeComparisonReport) -> pd.DataFrame:
    """One row per judge, in the order compared; ``best`` is `BEST` on the significantly best judge only."""
    result = report.comparison
    figures = {f.judge: f for f in result.judges} if result else {}
    rows = []
    for cost in report.costs:
        f = figures.get(cost.judge)
        rows.append(
            {
                "judge": cost.judge,
                "best": BEST if result is not None and result.best == cost.judge else "",
                "kappa": math.nan if f is None else f.kappa,
                "kappa_95ci": "" if f is None else _bounds(f.kappa_ci),
                "weighted_kappa": math.nan if f is None else f.weighted_kappa,
                "weighted_kappa_95ci": "" if f is None else _bounds(f.weighted_kappa_ci),
                "leniency": math.nan if f is None else f.leniency,
                "leniency_95ci": "" if f is None else _bounds(f.leniency_ci),
                "tau": math.nan if cost.tau is None else cost.tau,
                "failure_rate": math.nan if cost.failure_rate is None else cost.failure_rate,
                "tokens": cost.tokens,
                "seconds": cost.seconds,
            }
        )
    return pd.DataFrame(rows)


def comparison_section(actor: Actor, project: str, judge_names: list[str]) -> None:
    """The comparison table of ``judge_names`` (nothing with fewer than two judges)."""
    if len(judge_names) < 2:
        return
    with errors.shown() as outcome:
        report = review_cache.compare_judges(actor, project, tuple(judge_names))
    if outcome.failed:
        return
    st.markdown("**Judges compared on the same random human sample**")
    table = comparison_table(report)
    st.dataframe(table, hide_index=True, width="stretch", column_config=names.column_config(table))
    n = 0 if report.comparison is None else report.comparison.n_pairs
    st.caption(
        f"On {names.plural(n, 'pair')} every judge graded, of {report.n_sample} randomly sampled human "
        f"pairs; 95% intervals by a paired bootstrap. {escape_name(report.message)}."
    )
