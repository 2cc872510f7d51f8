"""The Agreement page's evidence section: αu and the mean character-overlap F1 of the passages, with the F1
of each two annotators (`services.passage_agreement`); shown when the project collects evidence."""

from __future__ import annotations

import math

import streamlit as st

from annotate_app.services import passage_agreement
from annotate_app.services.auth import Actor
from annotate_app.ui import cache, errors
from annotate_app.ui.components import names

__all__ = ["passages_section"]


def _fmt(value: float | None) -> str:
    return "undefined" if value is None or math.isnan(value) else f"{value:.3f}"


def passages_section(actor: Actor, project: str) -> None:
    """Agreement on evidence passages, beside the grade statistic (nothing when evidence is off)."""
    with errors.shown():
        if cache.get_project(actor, project).settings.evidence == "off":
            return
        found = passage_agreement.passage_agreement(cache.database(), actor, project)
        st.subheader("Evidence passages")
        with st.container(horizontal=True, gap="medium"):
            st.metric("Unitizing α (αu)", _fmt(found.alpha), width="content")
            st.metric("Mean character-overlap F1", _fmt(found.mean_f1), width="content")
            st.metric("Pairs compared", found.n_pairs, width="content")
            st.metric("Passages", found.n_passages, width="content")
        st.caption(
            "Krippendorff's unitizing alpha over the pairs some annotator judged relevant, their texts laid "
            "end to end; F1 = 2·overlap / (characters of A + characters of B), per two annotators over the "
            f"pairs both labelled ({names.plural(found.n_pairs, 'pair')})."
        )
        if not found.pairwise.empty:
            st.dataframe(found.pairwise, hide_index=True, width="stretch")
