"""The "Mark as gold" form of a pair (Adjudicate page): an expected grade and an explanation, saved with
`services.gold.add_gold`; the outcome is flashed under the page's flash key."""

from collections.abc import Sequence

import streamlit as st

from annotate_app.services import gold
from annotate_app.services.auth import Actor
from annotate_app.ui import cache, errors, state

__all__ = ["gold_form"]


def _save(actor: Actor, project: str, pair_id: int, query_id: str, doc_id: str, flash_key: str) -> None:
    ss = st.session_state
    with errors.captured(flash_key) as outcome:
        info = gold.add_gold(
            cache.database(),
            actor,
            project,
            query_id,
            doc_id,
            grade=ss.get(state.gold_grade(pair_id)),
            explanation=ss.get(state.gold_explanation(pair_id)) or "",
        )
    if not outcome.failed:
        ss.pop(state.gold_explanation(pair_id), None)
        errors.set_flash(
            flash_key, "success", f"({info.query_id}, {info.doc_id}) is gold: grade {info.grade}."
        )


def gold_form(
    actor: Actor,
    project: str,
    pair_id: int,
    query_id: str,
    doc_id: str,
    scale: Sequence[tuple[int, str]],
    *,
    flash_key: str,
) -> None:
    """An expander with the expected grade, the explanation and "Mark as gold" for the pair."""
    with st.expander("Mark as gold"):
        st.caption(
            "Gold pairs are mixed into every annotator's stream at the project's gold rate; their labels are "
            "scored against this grade and never counted in agreement or releases."
        )
        st.selectbox(
            "Expected grade",
            [g for g, _ in scale],
            format_func=dict(scale).get,
            key=state.gold_grade(pair_id),
        )
        st.text_area("Explanation", key=state.gold_explanation(pair_id), height=70)
        st.button(
            "Mark as gold",
            key=state.gold_submit(pair_id),
            on_click=_save,
            args=(actor, project, pair_id, query_id, doc_id, flash_key),
        )
