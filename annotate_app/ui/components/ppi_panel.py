"""The Score page's "Machine judge (PPI)" tab: each run's mean by prediction-powered inference with a machine
judge (`metrics.stats.ppi.ppi_run`, as ``qrelforge score --ppi``), beside the human-only interval; with a
calibration chosen, also the interval with the judge's grades calibrated on the human sample and how much
narrower it is (as ``--calibrate``).

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
from metrics.stats.isotonic import Calibration
from metrics.stats.ppi import PPIResult, ppi_run

__all__ = ["ppi_view", "ppi_table", "COLUMNS", "CALIBRATED_COLUMNS", "NO_CALIBRATION"]

COLUMNS = {
    "human_n": "Human queries n/N",
    "human_mean": "Human mean",
    "human_ci": "Human-only 95% CI",
    "estimate": "PPI estimate",
    "ppi_ci": "PPI 95% CI",
    "width_ratio": "Width ratio (PPI / human)",
}
CALIBRATED_COLUMNS = {
    "calibrated_estimate": "Calibrated PPI estimate",
    "calibrated_ci": "Calibrated PPI 95% CI",
    "narrower": "Narrower (1 − calibrated / PPI width)",
}
NO_CALIBRATION = "none"


def _interval(low: float, high: float) -> str:
    return "undefined" if math.isnan(low) or math.isnan(high) else f"[{low:.4f}, {high:.4f}]"


def _share(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN when the denominator is 0 or either is undefined."""
    if not denominator or math.isnan(denominator) or math.isnan(numerator):
        return math.nan
    return numerator / denominator


def ppi_table(results: dict[str, PPIResult], calibrated: dict[str, PPIResult] | None = None) -> pd.DataFrame:
    """One row per run: human n/N, human mean and its 95% CI, the PPI estimate and its 95% CI, and the ratio
    of the widths (NaN when the human-only interval has width 0 or is undefined). With ``calibrated`` (the
    same runs' results with calibrated judge grades) also its estimate, its 95% CI and ``narrower`` =
    1 − its width / the PPI width (negative when wider; NaN when either is undefined or PPI's is 0)."""
    rows = []
    for run, r in results.items():
        row = {
            "run": run,
            "human_n": f"{r.n_human}/{r.n_total}",
            "human_mean": r.human_mean,
            "human_ci": _interval(r.human_ci_low, r.human_ci_high),
            "estimate": r.estimate,
            "ppi_ci": _interval(r.ci_low, r.ci_high),
            "width_ratio": _share(r.width, r.human_width),
        }
        if calibrated is not None:
            c = calibrated[run]
            row["calibrated_estimate"] = c.estimate
            row["calibrated_ci"] = _interval(c.ci_low, c.ci_high)
            row["narrower"] = 1 - _share(c.width, r.width)
        rows.append(row)
    columns = ["run", *COLUMNS, *(CALIBRATED_COLUMNS if calibrated is not None else ())]
    return pd.DataFrame(rows, columns=columns)


def _config(table: pd.DataFrame) -> dict:
    config = names.column_config(table)
    labels = {**COLUMNS, **CALIBRATED_COLUMNS}
    for column in table.columns.drop("run"):
        label, number = labels[column], table[column].dtype.kind == "f"
        config[column] = (
            st.column_config.NumberColumn(
                label, format="%.2f" if column in ("width_ratio", "narrower") else "%.4f"
            )
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
    left, middle, right = st.columns(3)
    name = left.selectbox("Judge", judges, key=state.SCORE_PPI_JUDGE)
    measure = middle.selectbox(
        "Measure", choices, index=min(2, len(choices) - 1), key=state.SCORE_PPI_MEASURE
    )
    calibration = right.selectbox(
        "Calibrate the judge's grades",
        [NO_CALIBRATION, *(c.value for c in Calibration)],
        key=state.SCORE_PPI_CALIBRATE,
        help="Fit a map from the judge's grade and confidence to the human grade on the human sample "
        "(cross-fitted) and add the PPI interval with the calibrated grades, as `score --calibrate`.",
    )
    judge = review_cache.judge_qrels(actor, project, name)
    if len(judge.relevance) == 0:
        st.info(f"Judge {escape_name(name)} has no current label yet.")
        return
    human = review_cache.human_release_qrels(actor, project, version)
    calibrate = None if calibration == NO_CALIBRATION else calibration
    confidence: dict[str, dict[str, float | None]] = {}
    if calibrate is not None:
        for (query, doc), value in review_cache.judge_confidences(actor, project, name).items():
            confidence.setdefault(query, {})[doc] = value
    results: dict[str, PPIResult] = {}
    calibrated: dict[str, PPIResult] = {}
    for run_name, run in runs.items():
        with errors.shown(), warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            result = ppi_run(human, judge, run, [measure], name=run_name)[measure]
            if calibrate is not None:
                calibrated[run_name] = ppi_run(
                    human,
                    judge,
                    run,
                    [measure],
                    name=run_name,
                    calibrate=calibrate,
                    judge_confidence=confidence,
                )[measure]
            results[run_name] = result
    if not results:
        return
    table = ppi_table(results, calibrated if calibrate is not None else None)
    st.dataframe(table, hide_index=True, width="stretch", column_config=_config(table))
    st.caption(
        f"{escape_name(measure)} with judge {escape_name(name)}: PPI = the judge's mean over every query it "
        "judged + the mean (human − judge) over the queries with human qrels in this release (pairs a judge "
        "filled left out), with its 95% interval; beside it the human-only 95% interval from the same "
        "human queries. A width ratio below 1: the judge narrows the interval. Valid when the human "
        "queries are a uniformly random subset (same as `qrelforge score --ppi`)."
    )
    if calibrate is not None:
        st.caption(
            f"Calibrated ({escape_name(calibrate)}): the judge's grades mapped to the human grades by a "
            "map fitted on the human sample, cross-fitted over 5 folds so no human query is corrected with "
            "a map that saw its own labels; its interval counts the covariance the human queries share "
            "with the rest. Narrower = 1 − calibrated width / PPI width (negative: calibration widened "
            "it; use the narrower interval, both are valid). Same as `qrelforge score --ppi "
            f"{escape_name(name)} --calibrate {escape_name(calibrate)}`."
        )
