"""Annotators (reviewer): one row per annotator — accuracy against gold (exact and within one grade, with
Wilson 95% intervals), weighted kappa against gold, median seconds per label, the share of speeders, leniency,
drift, the Dawid–Skene and MACE competences, and the unsure, skip and edit rates (`services.annotators`).
Click a column to sort; select a row (or pick a name) for that annotator's charts: accuracy and agreement
over their stream, seconds per label, and their grade distribution against the team's. Above the table, each
member's standing under the gold rules (qualifying, qualified, paused, with the figures) and Resume for a
paused annotator (`services.qualification`)."""

import altair as alt
import pandas as pd
import streamlit as st

from annotate_app.services import annotators, qualification
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


def _resume(actor: Actor, project: str, who: str) -> None:
    with errors.captured(state.ANNOTATORS_FLASH) as outcome:
        qualification.resume(cache.database(), actor, project, who)
    if not outcome.failed:
        errors.set_flash(state.ANNOTATORS_FLASH, "success", f"{who} resumed: their gold window restarts now.")


def _shown(row: dict) -> dict:
    """A standing row as text: shares as percentages, "-" where no rule applies."""
    share = ("accuracy", "bar")
    return {
        k: "-" if v is None else f"{v:.0%}" if k in share else str(v)
        for k, v in row.items()
        if k in qualification.STATUS_COLUMNS
    }


def _standing(actor: Actor, project: str) -> None:
    """Each member's standing under the gold rules, with its figures, and Resume for the paused."""
    with st.expander("Standing under the gold rules", expanded=True):
        _standing_section(actor, project)


def _standing_section(actor: Actor, project: str) -> None:
    errors.flash(state.ANNOTATORS_FLASH)
    with errors.shown() as outcome:
        standing = qualification.annotator_statuses(cache.database(), actor, project)
    if outcome.failed or not standing:
        return
    st.table(pd.DataFrame([_shown(s.row()) for s in standing]).set_index("annotator"))
    st.caption(
        "qualifying: their labels wait for the qualification (the last N gold pairs at accuracy X); paused: "
        "their last M gold pairs fell below Y, so they get no new pairs. window, gold_pairs, correct and "
        "accuracy: the rule that applies, over the gold pairs since the last resume."
    )
    paused = [s.annotator for s in standing if s.status == qualification.Standing.PAUSED]
    if paused:
        cols = st.columns([3, 1])
        who = cols[0].selectbox("Paused annotator", paused, key=state.ANNOTATORS_RESUME)
        cols[1].button("Resume", on_click=_resume, args=(actor, project, who))


def render() -> None:
    actor = auth.require(Role.REVIEWER)
    project = widgets.project_or_stop()
    nav.heading(nav.ANNOTATORS)
    _standing(actor, project)
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
