"""Agreement (reviewer): the gate statistic with its Landis & Koch band against the threshold, the pairwise
kappa heatmap, agreement per query, and the grade confusion matrix of any two annotators."""

import math

import streamlit as st

from annotate_app.services import gate
from annotate_app.services.auth import Actor, Role
from annotate_app.services.types import AgreementSummary
from annotate_app.ui import auth, cache, errors, nav, review_cache, state
from annotate_app.ui.components import charts, widgets

NAMES = {
    "cohen": "Cohen's kappa (mean pairwise)",
    "fleiss": "Fleiss' kappa",
    "krippendorff": "Krippendorff's alpha",
}


def fmt(value: float | None) -> str:
    return "undefined" if value is None or math.isnan(value) else f"{value:.3f}"


def _figures(summary: AgreementSummary) -> None:
    left, mid, right, extra = st.columns(4)
    left.metric(
        NAMES.get(summary.statistic, summary.statistic),
        fmt(summary.value),
        summary.band,
        delta_color="off",
        delta_arrow="off",
    )
    mid.metric("Threshold", f"{summary.threshold:.3f}")
    right.metric("Percent agreement", fmt(summary.percent_agreement))
    extra.metric(
        "Pairs compared",
        summary.n_pairs,
        f"{summary.disagreements} disagreements",
        delta_color="off",
        delta_arrow="off",
    )


def _gate(summary: AgreementSummary) -> None:
    if summary.passes:
        st.success(
            f"Gate passed: {summary.statistic} {fmt(summary.value)} ({summary.band}) reaches the "
            f"threshold {summary.threshold:.3f}."
        )
    else:
        st.warning(
            f"Gate not passed: {summary.statistic} {fmt(summary.value)} ({summary.band}) is below the "
            f"threshold {summary.threshold:.3f}. Adjudicate the disagreements; a release then needs a "
            "written justification."
        )
    st.caption(
        f"Mode: {summary.mode}{f' ({summary.weights} weights)' if summary.weights else ''} · "
        f"{summary.n_annotators} annotators · {summary.n_labels} labels · {summary.unadjudicated} "
        "disagreements not adjudicated yet"
    )
    for note in summary.warnings:
        st.info(note)


def _tables(summary: AgreementSummary) -> None:
    st.subheader("Pairwise kappa")
    st.altair_chart(charts.matrix_heatmap(summary.pairwise, summary.pairwise_n), width="stretch")
    st.caption("Cohen's kappa of each pair of annotators on the pairs both labelled (n: shared pairs).")
    st.subheader("Per query")
    table = summary.per_query
    st.altair_chart(charts.per_query_agreement(table), width="stretch")
    st.dataframe(table, hide_index=True, width="stretch")


def _confusion(actor: Actor, project: str, summary: AgreementSummary) -> None:
    st.subheader("Confusion between two annotators")
    people = list(summary.pairwise.index)
    first, second = st.columns(2)
    a = first.selectbox("Annotator A", people, index=0, key=state.AGREE_A)
    b = second.selectbox("Annotator B", people, index=min(1, len(people) - 1), key=state.AGREE_B)
    with errors.shown():
        matrix = gate.confusion(cache.database(), actor, project, a, b)
        st.altair_chart(
            charts.matrix_heatmap(
                matrix.table,
                value="pairs",
                row="A",
                column="B",
                domain=(0, max(1, int(matrix.table.to_numpy().max()))),
                fmt="d",
            ),
            width="stretch",
        )
        st.caption(
            f"Rows (A): {a}'s grades; columns (B): {b}'s grades; {matrix.n_pairs} shared pairs; Cohen's "
            f"kappa {fmt(matrix.kappa)}."
        )


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
    _figures(summary)
    _gate(summary)
    if summary.pairwise.empty:
        st.stop()
    _tables(summary)
    _confusion(actor, project, summary)


if __name__ == "__main__":
    render()
