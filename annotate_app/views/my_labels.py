"""My labels: the caller's own recent labels; pick one to judge it again (a new version is added)."""

import pandas as pd
import streamlit as st

from annotate_app.services import labels, queue
from annotate_app.ui import auth, errors, labelling, resources, state, widgets

actor = auth.require()
project = widgets.project_or_stop()
st.title("My labels")
st.caption("Your most recent labels (only yours). Editing one adds a new version; the old one is kept.")
errors.flash(state.EDIT_FLASH)
with errors.shown() as outcome:
    mine = labels.my_labels(resources.database(), actor, project, limit=100)
if outcome.failed:
    st.stop()
if not mine:
    st.info("You have not labelled anything in this project yet.")
    st.page_link("views/annotate.py", label="Start annotating")
    st.stop()
st.dataframe(
    pd.DataFrame(
        [
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
    ),
    hide_index=True,
    width="stretch",
)
choices = {x.pair_id: x for x in mine}


def describe(pair_id: int) -> str:
    x = choices[pair_id]
    return f"{x.query_id} · {x.doc_id} (grade {x.grade}, version {x.version}{', stale' if x.stale else ''})"


pick = st.selectbox(
    "Edit a label",
    list(choices),
    key=state.EDIT_CHOICE,
    index=None,
    placeholder="Choose one of your labels",
    format_func=describe,
)
if pick is not None:
    view = st.session_state.get(state.EDIT_PAIR)
    if view is None or view.pair_id != pick or view.project != project:
        with errors.shown():
            view = queue.get_pair(resources.database(), actor, project, pick)
            st.session_state[state.EDIT_PAIR] = view
    if view is not None and view.pair_id == pick:
        labelling.edit_card(actor, view)
