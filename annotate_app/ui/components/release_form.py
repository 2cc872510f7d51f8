"""The Release page's "Create a release" form: the aggregation (an `Aggregation`), justification, note and a
button that makes one release.

A double click makes one release: the service returns the existing one for identical qrels, and the button
and boxes are disabled from what the database says, not from a session flag, since Streamlit may abort a
callback. Why: docs/modules.md.
"""

from __future__ import annotations

import streamlit as st

from annotate_app.services import releases
from annotate_app.services.aggregations import Aggregation
from annotate_app.services.auth import Actor
from annotate_app.services.types import Blockers
from annotate_app.ui import cache, errors, state

__all__ = ["create_form", "create"]


def create(actor: Actor, project: str) -> None:
    """The button's callback: create the release and leave the outcome as the page's flash."""
    ss = st.session_state
    note, justification = ss.get(state.RELEASE_NOTE) or "", ss.get(state.RELEASE_JUSTIFICATION) or None
    aggregate = ss.get(state.RELEASE_AGGREGATE) or Aggregation.MAJORITY
    with errors.captured(state.RELEASE_FLASH) as outcome:
        made = releases.create_release(
            cache.database(), actor, project, note=note, justification=justification, aggregate=aggregate
        )
        cache.clear_reads()  # first: the session-state writes below may be cut short by a second click
    if outcome.failed:
        return
    if made.unchanged:
        message = f"Nothing new to release: the qrels are identical to v{made.version}."
        errors.set_flash(state.RELEASE_FLASH, "warning", message)
        return
    errors.set_flash(
        state.RELEASE_FLASH,
        "success",
        f"Release {made.version} created: {made.n_qrels} qrels, content sha256 {made.content_hash[:12]}…",
    )


def _released_version(actor: Actor, project: str, block: Blockers, aggregate: str) -> int | None:
    """The release that already holds the current qrels under ``aggregate``, if any (None too when the gate
    blocks)."""
    if block.hard:
        return None
    with errors.shown():
        return releases.preview_release(cache.database(), actor, project, aggregate=aggregate).identical_to
    return None


def _clear(version: int | None) -> None:
    """Empty the boxes while a release holds the current qrels: a late rerun of a double click brings the
    typed text back from the browser, and nothing can be released with it anyway."""
    if version is not None:  # assigned, not popped: only an assigned value reaches the browser's box
        st.session_state[state.RELEASE_JUSTIFICATION] = ""
        st.session_state[state.RELEASE_NOTE] = ""


def create_form(actor: Actor, project: str, block: Blockers) -> None:
    """The subheader, the justification and note boxes and the Create release button."""
    st.subheader("Create a release")
    aggregate = st.selectbox(
        "Aggregation",
        [a.value for a in Aggregation],
        format_func=lambda value: Aggregation(value).label,
        key=state.RELEASE_AGGREGATE,
        help="; ".join(f"{a.label}: {a.help}" for a in Aggregation),
    )
    released = _released_version(actor, project, block, aggregate or Aggregation.MAJORITY)
    _clear(released)
    needed = " (required: agreement below the threshold)" if block.below_threshold else " (optional)"
    idle = released is not None
    st.text_area("Justification" + needed, key=state.RELEASE_JUSTIFICATION, height=90, disabled=idle)
    st.text_input("Note (optional)", key=state.RELEASE_NOTE, disabled=idle)
    st.button(
        "Create release",
        type="primary",
        disabled=bool(block.hard) or idle,
        on_click=create,
        args=(actor, project),
    )
    if released is not None:
        st.caption(f"v{released} holds the current qrels: nothing new to release.")
