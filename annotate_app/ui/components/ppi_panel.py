"""The Score page's "Machine judge (PPI)" tab: each run's mean by prediction-powered inference with a machine
judge (`metrics.stats.ppi.ppi_run`, as ``qrelforge score --ppi``), beside the human-only interval.

Run and judge names reach captions only through `escape_name`.
"""

from __future__ import annotations

import math
import warnings

import pandas as pd
import streamlit as st

from annotate_app.services.auth import Actor
from annotate_app.ui import errors, review_cache, state
from annotate_app.ui.components import names
from annotate_app.ui.escape import escape_name
from metrics.data import Run
from metrics.errors import UndefinedMetricWarning
from metrics.stats.ppi import PPIResult, ppi_run

__all__ = ["ppi_view", "ppi_table", "COLUMNS"]

COLUMNS = {
    "human_n": "Human queries n/N",
    "human_mean": "Human mean",
    "human_ci": "Human-only 95% CI",
    "estimate": "PPI estimate",
    "ppi_ci": "PPI 95% CI",
    "width_ratio": "Width ratio (PPI / human)",
}


def _interval(low: float, high: float) -> str:
    return "undefined" if math.isnan(low) or math.isnan(high) else f"[{low:.4f}, {high:.4f}]"


def ppi_table(results: dict[str, PPIResult]) -> pd.DataFrame:
    """One row per run: human n/N, human mean and its 95% CI, the PPI estimate and its 95% CI, and the ratio
    of the widths (NaN when the human-only interval has width 0 or is undefined)."""
    rows = []
    for run, r in results.items():
        ratio = r.width / r.human_width if r.human_width and not math.isnan(r.human_width) else math.nan
        rows.append(
            {
                "run": run,
                "human_n": f"{r.n_human}/{r.n_total}",
                "human_mean": r.human_mean,
                "human_ci": _interval(r.human_ci_low, r.human_ci_high),
                "estimate": r.estimate,
                "ppi_ci": _interval(r.ci_low, r.ci_high),
                "width_ratio": ratio,
            }
        )
    return pd.DataFrame(rows, columns=["run", *COLUMNS])


def _config(table: pd.DataFrame) -> dict:
    config = names.column_config(table)
    for column, label in COLUMNS.items():
        number = table[column].dtype.kind == "f"
        config[column] = (
            st.column_config.NumberColumn(label, format="%.4f" if column != "width_ratio" else "%.2f")
            if number
            else st.column_config.Column(label)
        )
    return config


def ppi_view(actor: Actor, project: str, version: int, runs: dict[str, Run], measures: list[str]) -> None:
    """The PPI tab (see the module doc) over release ``version``."""
    judges = [j.name for j in review_cache.list_judges(actor, project)]
    if not judges:
        st.info(
            "No machine judge in this project: an admin adds one (`qrelforge judge add`, `judge run`, or "
            "`judge import`); its labels are then used here."
        )
        return
    choices = [m for m in measures if not m.startswith("Judged@")]
    left, right = st.columns(2)
    name = left.selectbox("Judge", judges, key=state.SCORE_PPI_JUDGE)
    measure = right.selectbox("Measure", choices, index=min(2, len(choices) - 1), key=state.SCORE_PPI_MEASURE)
    judge = review_cache.judge_qrels(actor, project, name)
    if len(judge.relevance) == 0:
        st.info(f"Judge {escape_name(name)} has no current label yet.")
        return
    human = review_cache.human_release_qrels(actor, project, version)
    results: dict[str, PPIResult] = {}
    for run_name, run in runs.items():
        with errors.shown(), warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            results[run_name] = ppi_run(human, judge, run, [measure], name=run_name)[measure]
    if not results:
        return
    table = ppi_table(results)
    st.dataframe(table, hide_index=True, width="stretch", column_config=_config(table))
    st.caption(
        f"{escape_name(measure)} with judge {escape_name(name)}: PPI = the judge's mean over every query it "
        "judged + the mean (human − judge) over the queries with human qrels in this release (pairs a judge "
        "filled left out), with its 95% interval; beside it the human-only 95% interval from the same "
        "human queries. A width ratio below 1: the judge narrows the interval. Valid when the human "
        "queries are a uniformly random subset (same as `qrelforge score --ppi`)."
    )
