"""Score (reviewer): score runs on a release, per-query charts, unjudged documents, the compare view, assessor
sensitivity and the machine judge's PPI intervals (`ppi_panel`).

Reviewers and admins only: annotators must not see qrels. Only the open tab runs; k starts at the pool
depth, at most `MAX_DEFAULT_K`.
"""

from enum import StrEnum

import streamlit as st

from annotate_app.services.auth import Actor, Role
from annotate_app.services.types import ReleaseInfo
from annotate_app.ui import auth, errors, nav, review_cache, state
from annotate_app.ui.components import ppi_panel, widgets
from annotate_app.ui.components import score_panels as panels

MAX_DEFAULT_K = 10


class Tab(StrEnum):
    SCORES = "Scores"
    PER_QUERY = "Per query"
    UNJUDGED = "Unjudged"
    COMPARE = "Compare"
    SENSITIVITY = "Sensitivity"
    PPI = "Machine judge (PPI)"
    NEW_RUNS = "BM25 & fusion"


TABS = [tab.value for tab in Tab]


def default_k(depth: int | None) -> int:
    """The cut-off the page opens at: the pool depth, capped at `MAX_DEFAULT_K` (that cap when unknown)."""
    return MAX_DEFAULT_K if depth is None else max(1, min(depth, MAX_DEFAULT_K))


def _choose_release(actor: Actor, project: str, past: list[ReleaseInfo]) -> tuple[int, int]:
    """The chosen release version and cut-off k."""
    versions = {r.version: r for r in past}
    depth = None
    with errors.shown():
        depth = review_cache.pool_depth(actor, project)
    left, right = st.columns([3, 1])
    version = left.selectbox(
        "Release",
        sorted(versions, reverse=True),
        key=state.SCORE_RELEASE,
        format_func=lambda v: (
            f"v{v} · {versions[v].n_qrels} qrels · {versions[v].created_at:%Y-%m-%d %H:%M} UTC"
        ),
    )
    k = int(right.number_input("k (cut-off)", 1, 1000, default_k(depth), key=state.SCORE_K))
    return version, k


def _tabs(actor: Actor, project: str, version: int, k: int) -> None:
    measures = panels.measures_for(k)
    with errors.shown() as outcome:
        qrels = review_cache.release_qrels(actor, project, version)
        runs = panels.choose_runs(actor, project)
    if outcome.failed:
        st.stop()
    tabs = dict(zip(Tab, st.tabs(TABS, key=state.SCORE_TAB, on_change="rerun"), strict=True))
    if tabs[Tab.NEW_RUNS].open:
        with tabs[Tab.NEW_RUNS]:
            panels.make_runs(actor, project, runs)
    opened = next((tab for tab, box in tabs.items() if box.open), Tab.SCORES)
    if opened == Tab.NEW_RUNS:
        return
    if not runs:
        tabs[opened].info("Pick or upload at least one run.")
        st.stop()
    with tabs[opened], errors.shown():
        _panel(opened, actor, project, qrels, runs, measures, k, version)


def _panel(
    tab: Tab, actor: Actor, project: str, qrels, runs: dict, measures: list[str], k: int, version: int
) -> None:
    """The open tab's content."""
    if tab == Tab.PPI:
        ppi_panel.ppi_view(actor, project, version, runs, measures)
    elif tab == Tab.SCORES:
        panels.score_table(qrels, runs, measures, actor, project)
    elif tab == Tab.PER_QUERY:
        panels.per_query(panels.results_of(qrels, runs, measures), measures, actor, project)
    elif tab == Tab.UNJUDGED:
        panels.unjudged(actor, project, qrels, runs, k)
    elif tab == Tab.COMPARE:
        panels.compare_view(qrels, runs, measures, project)
    elif tab == Tab.SENSITIVITY:
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
    version, k = _choose_release(actor, project, past)
    _tabs(actor, project, version, k)


if __name__ == "__main__":
    render()
