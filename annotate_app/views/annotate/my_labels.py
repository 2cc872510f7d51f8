"""My labels: the caller's own labels, newest first, a page at a time; pick one to label it again (a new
version is added)."""

import pandas as pd
import streamlit as st

from annotate_app.services import labels, queue
from annotate_app.services.auth import Actor
from annotate_app.services.types import LabelInfo
from annotate_app.ui import auth, cache, errors, nav, state
from annotate_app.ui.components import keyboard, labelling, pager, widgets

PAGE = 100  # labels read at a time, newest first


def _table(mine: list[LabelInfo]) -> None:
    rows = [
        {
            "query": x.query_id,
            "document": x.doc_id,
            "grade": x.grade,
            "version": x.version,
            "unsure": x.unsure,
            "stale": x.stale,
            "reason": x.reason,
            "saved": x.created_at,
        }
        for x in mine
    ]
    st.dataframe(widgets.shown_cells(pd.DataFrame(rows)), hide_index=True, width="stretch")


def _describe(x: LabelInfo) -> str:
    return f"{x.query_id} · {x.doc_id} (grade {x.grade}, version {x.version}{', stale' if x.stale else ''})"


def _edit(actor: Actor, project: str, mine: list[LabelInfo]) -> None:
    choices = {x.pair_id: x for x in mine}
    pick = st.selectbox(
        "Edit a label",
        list(choices),
        key=state.EDIT_CHOICE,
        index=None,
        placeholder="Choose one of your labels",
        format_func=lambda pair_id: _describe(choices[pair_id]),
    )
    if pick is None:
        return
    view = st.session_state.get(state.EDIT_PAIR)
    if view is None or view.pair_id != pick or view.project != project:
        with errors.shown():
            view = queue.get_pair(cache.database(), actor, project, pick)
            st.session_state[state.EDIT_PAIR] = view
    if view is not None and view.pair_id == pick:
        labelling.edit_card(actor, view)


def render() -> None:
    actor = auth.require()
    project = widgets.project_or_stop()
    nav.heading(nav.MY_LABELS)
    st.caption("Your labels, newest first (only yours). Editing one adds a new version; the old one is kept.")
    errors.flash(state.EDIT_FLASH)
    with errors.shown() as outcome:
        total = labels.count_my_labels(cache.database(), actor, project)
        start = pager.offset(pager.MY_LABELS, total, size=PAGE)
        mine = labels.my_labels(cache.database(), actor, project, limit=PAGE, offset=start)
    if outcome.failed:
        st.stop()
    if not mine:
        st.info("You have not labelled anything in this project yet.")
        nav.link(nav.ANNOTATE, "Start annotating")
        st.stop()
    pager.controls(pager.MY_LABELS, total, size=PAGE, shown=len(mine), noun="Labels")
    _table(mine)
    _edit(actor, project, mine)
    keyboard.install()


if __name__ == "__main__":
    render()
