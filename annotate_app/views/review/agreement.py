"""Agreement (reviewer): the gate statistic against the threshold, percent agreement, disagreements, the
pairwise kappa heatmap, per-query agreement, confusion, and the machine judges (`judges_panel`).

One definition of disagreement, the statistic's: binary mode, across the relevance cut-off; weighted mode,
different grades. Adjudication's count ("pairs whose grades differ") is named apart.
"""

import math

import streamlit as st

from annotate_app.services import gate
from annotate_app.services.auth import Actor, Role
from annotate_app.services.types import AgreementSummary
from annotate_app.ui import auth, cache, errors, nav, review_cache, state
from annotate_app.ui.components import charts, judges_panel, names, widgets


def fmt(value: float | None) -> str:
    return "undefined" if value is None or math.isnan(value) else f"{value:.3f}"


def statistic_label(summary: AgreementSummary) -> str:
    """The statistic's name as people write it; Cohen's is the mean over pairs of annotators."""
    name = names.statistic_name(summary.statistic)
    return f"{name} (mean pairwise)" if summary.statistic == "cohen" else name


def definition(summary: AgreementSummary, cutoff: int | None) -> str:
    """What counts as a disagreement under the project's agreement mode (stated beside the figures)."""
    if summary.mode == "binary":
        return (
            f"relevant (grade ≥ {'the cut-off' if cutoff is None else cutoff}) or not: two annotators "
            "disagree when one calls the pair relevant "
            "and the other does not"
        )
    return f"graded: two annotators disagree when their grades differ (κ weighs how far, {summary.weights})"


def disagreement_counts(summary: AgreementSummary) -> tuple[int, int]:
    """(pairs that disagree, pairs compared) under the statistic's definition (the per-query figures, which
    use the same labels and cut-off as percent agreement)."""
    table = summary.per_query
    if table.empty or "n_disagreeing" not in table:
        return 0, summary.n_pairs
    return int(table["n_disagreeing"].sum()), int(table["n_compared"].sum())


def _figures(summary: AgreementSummary, cutoff: int | None) -> None:
    disagree, compared = disagreement_counts(summary)
    with st.container(horizontal=True, gap="medium"):
        st.metric(
            statistic_label(summary),
            fmt(summary.value),
            summary.band,
            delta_color="off",
            delta_arrow="off",
            width="content",
        )
        st.metric("Threshold", f"{summary.threshold:.3f}", width="content")
        st.metric("Percent agreement", fmt(summary.percent_agreement), width="content")
        st.metric(
            "Disagreements",
            disagree,
            f"of {names.plural(compared, 'pair')} compared",
            delta_color="off",
            delta_arrow="off",
            width="content",
        )
    st.caption(f"Agreement and disagreements: {definition(summary, cutoff)}.")


def _gate(summary: AgreementSummary) -> None:
    name = names.statistic_name(summary.statistic)
    if summary.passes:
        st.success(
            f"Gate passed: {name} {fmt(summary.value)} ({summary.band}) reaches the "
            f"threshold {summary.threshold:.3f}."
        )
    else:
        st.warning(
            f"Gate not passed: {name} {fmt(summary.value)} ({summary.band}) is below the "
            f"threshold {summary.threshold:.3f}. Adjudicate the disagreements; a release then needs a "
            "written justification."
        )
    weights = f" ({summary.weights} weights)" if summary.weights else ""
    st.caption(
        f"Mode: {summary.mode}{weights} · {names.plural(summary.n_annotators, 'annotator')} · "
        f"{names.plural(summary.n_labels, 'label')} · adjudication: "
        f"{names.plural(summary.disagreements, 'pair')} whose grades differ, "
        f"{summary.unadjudicated} not adjudicated yet"
    )
    for note in summary.warnings:
        st.info(note)


def _tables(summary: AgreementSummary) -> None:
    st.subheader("Pairwise Cohen's κ")
    heatmap = charts.matrix_heatmap(summary.pairwise, summary.pairwise_n, value="κ", center=summary.threshold)
    st.altair_chart(heatmap, width="stretch")
    st.caption(
        f"Cohen's κ of each pair of annotators on the pairs both labelled (n: shared pairs); the colours "
        f"turn from red to green at the threshold {summary.threshold:.3f}."
    )
    st.subheader("Per query")
    table = summary.per_query
    st.altair_chart(charts.per_query_agreement(table), width="stretch")
    st.dataframe(table, hide_index=True, width="stretch", column_config=names.column_config(table))


def _confusion(actor: Actor, project: str, summary: AgreementSummary) -> None:
    st.subheader("Confusion between two annotators")
    people = list(summary.pairwise.index)
    first, second = st.columns(2)
    a = first.selectbox("Annotator A", people, index=0, key=state.AGREE_A)
    b = second.selectbox("Annotator B", people, index=min(1, len(people) - 1), key=state.AGREE_B)
    with errors.shown():
        matrix = gate.confusion(cache.database(), actor, project, a, b)
        st.altair_chart(charts.confusion_heatmap(matrix.table, row="A", column="B"), width="stretch")
        st.caption(
            f"Rows (A): {a}'s grades; columns (B): {b}'s grades; "
            f"{names.plural(matrix.n_pairs, 'shared pair')}; Cohen's κ {fmt(matrix.kappa)}. "
            "Colour: the cell's share of its row."
        )


def _cutoff(actor: Actor, project: str) -> int | None:
    """The project's relevance cut-off (None, and the error shown, if the project cannot be read)."""
    with errors.shown():
        return cache.get_project(actor, project).settings.relevance_cutoff
    return None


def render() -> None:
    actor = auth.require(Role.REVIEWER)
    project = widgets.project_or_stop()
    nav.heading(nav.AGREEMENT)
    if st.button("Refresh"):
        cache.clear_reads()
    with errors.shown() as outcome:
        summary = review_cache.agreement(actor, project)
    if outcome.failed:
        st.stop()
    cutoff = _cutoff(actor, project)
    _figures(summary, cutoff)
    _gate(summary)
    if summary.pairwise.empty:
        st.stop()
    _tables(summary)
    _confusion(actor, project, summary)
    judges_panel.judges_section(actor, project, cutoff)


if __name__ == "__main__":
    render()
