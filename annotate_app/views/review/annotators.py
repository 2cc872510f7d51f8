"""Annotators (reviewer): one row per annotator — accuracy against gold (exact and within one grade, with
Wilson 95% intervals), weighted kappa against gold, median seconds per label, the share of speeders, leniency,
drift, the Dawid–Skene and MACE competences, and the unsure, skip and edit rates (`services.annotators`).
Click a column to sort; select a row (or pick a name) for that annotator's charts: accuracy and agreement
over their stream, seconds per label, and their grade distribution against the team's."""

import altair as alt
import pandas as pd
import streamlit as st

from annotate_app.services import annotators
from annotate_app.services.auth import Actor, Role
from annotate_app.ui import auth, cache, errors, nav, state
from annotate_app.ui.components import widgets


def _table(actor: Actor, project: str) -> pd.DataFrame | None:
    with errors.shown() as outcome:
        table = annotators.annotator_table(cache.database(), actor, project)
    if outcome.failed:
        return None
    return table.rows


def _picked(rows: pd.DataFrame) -> str:
    event = st.dataframe(
        rows,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        key=state.ANNOTATORS_TABLE,
        column_config={c: st.column_config.NumberColumn(format="%.3f") for c in rows.columns[3:]},
    )
    chosen = event.selection.rows if event is not None else []
    people = rows["annotator"].tolist()
    return st.selectbox("Charts of", people, index=chosen[0] if chosen else 0)


def _charts(actor: Actor, project: str, who: str) -> None:
    with errors.shown() as outcome:
        charts = annotators.annotator_charts(cache.database(), actor, project, who)
    if outcome.failed:
        return
    st.subheader(f"{who}: accuracy over time")
    accuracy = charts.accuracy.melt("window", var_name="figure", value_name="share").dropna()
    line = alt.Chart(accuracy).mark_line(point=True).encode(x="window:O", y="share:Q", color="figure:N")
    st.altair_chart(line, width="stretch")
    st.subheader("Time per label")
    seconds = charts.seconds.assign(label=range(1, len(charts.seconds) + 1))
    st.altair_chart(alt.Chart(seconds).mark_point().encode(x="label:Q", y="seconds:Q"), width="stretch")
    st.subheader("Grade distribution")
    grades = charts.grades.rename(columns={"share": who, "team_share": "team"})
    grades = grades.melt("grade", var_name="who", value_name="share")
    bars = alt.Chart(grades).mark_bar().encode(x="grade:O", xOffset="who:N", y="share:Q", color="who:N")
    st.altair_chart(bars, width="stretch")


def render() -> None:
    actor = auth.require(Role.REVIEWER)
    project = widgets.project_or_stop()
    nav.heading(nav.ANNOTATORS)
    rows = _table(actor, project)
    if rows is None:
        st.stop()
    if rows.empty:
        st.info("No annotator has labelled in this project yet.")
        st.stop()
    st.caption(
        "Accuracy against the gold pairs with Wilson 95% intervals; speeders: labels faster than 5 s; "
        "leniency: mean grade distance to the others on the same pairs (above 0: lenient); drift: the last "
        "window of 50 labels minus the first; competence: Dawid–Skene expected accuracy and MACE θ; "
        "unsure: share of labels marked unsure; skip rate: skips / (labels + skips); edit rate: share of "
        "labels edited after their first save."
    )
    _charts(actor, project, _picked(rows))


if __name__ == "__main__":
    render()
