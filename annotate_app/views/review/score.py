"""Score (reviewer): score stored, uploaded, BM25 and fused runs on a release; per-query charts, unjudged
documents (send them to the judging queue), the compare view and assessor sensitivity.

Reviewers and admins only: scoring reads a release's qrels, which annotators must not see while they judge.
"""

import streamlit as st

from annotate_app.services.auth import Actor, Role
from annotate_app.services.types import ReleaseInfo
from annotate_app.ui import auth, errors, nav, review_cache, state
from annotate_app.ui.components import score_panels as panels
from annotate_app.ui.components import widgets

TABS = ["Scores", "Per query", "Unjudged", "Compare", "Sensitivity", "BM25 & fusion"]


def _choose_release(past: list[ReleaseInfo]) -> tuple[int, int]:
    """The chosen release version and cut-off k."""
    versions = {r.version: r for r in past}
    left, right = st.columns([3, 1])
    version = left.selectbox(
        "Release",
        sorted(versions, reverse=True),
        key=state.SCORE_RELEASE,
        format_func=lambda v: (
            f"v{v} · {versions[v].n_qrels} qrels · {versions[v].created_at:%Y-%m-%d %H:%M} UTC"
        ),
    )
    k = int(right.number_input("k (cut-off)", 1, 1000, 10, key=state.SCORE_K))
    return version, k


def _tabs(actor: Actor, project: str, version: int, k: int) -> None:
    measures = panels.measures_for(k)
    with errors.shown() as outcome:
        qrels = review_cache.release_qrels(actor, project, version)
        runs = panels.choose_runs(actor, project)
    if outcome.failed:
        st.stop()
    tabs = st.tabs(TABS)
    with tabs[5]:
        panels.make_runs(actor, project, runs)
    if not runs:
        tabs[0].info("Pick or upload at least one run.")
        st.stop()
    with tabs[0], errors.shown():
        results = panels.score_table(qrels, runs, measures)
        with tabs[1]:
            panels.per_query(results, measures)
    with tabs[2], errors.shown():
        panels.unjudged(actor, project, qrels, runs, k)
    with tabs[3]:
        panels.compare_view(qrels, runs, measures, project)
    with tabs[4]:
        panels.sensitivity_view(actor, project, qrels, runs, measures)


def render() -> None:
    actor = auth.require(Role.REVIEWER)
    project = widgets.project_or_stop()
    nav.heading(nav.SCORE)
    errors.flash(state.SCORE_FLASH)
    with errors.shown() as outcome:
        past = review_cache.list_releases(actor, project)
    if outcome.failed:
        st.stop()
    if not past:
        st.info("No release yet: scores are computed on a release's qrels.")
        nav.link(nav.RELEASE, "Go to the release page")
        st.stop()
    version, k = _choose_release(past)
    _tabs(actor, project, version, k)


if __name__ == "__main__":
    render()
