"""The Release page's "Create a release" form: justification, note and a button that makes one release.

A double click, or a second click before the page has redrawn, must not ask for a second release. The button
runs `create` as its ``on_click`` callback (the callbacks of one session run one after the other), which does
nothing while a request runs (``RELEASE_BUSY``) or once this session made the release of the current qrels
(``RELEASE_MADE``); the button is drawn disabled in both cases, and again enabled as soon as the qrels differ
from that release (`releases.preview_release`). On success the justification and the note are cleared. The
service itself creates nothing for qrels identical to an existing release (it answers "identical to vN").
"""

from __future__ import annotations

import streamlit as st

from annotate_app.services import releases
from annotate_app.services.auth import Actor
from annotate_app.services.types import Blockers
from annotate_app.ui import cache, errors, state

__all__ = ["create_form", "create"]


def create(actor: Actor, project: str) -> None:
    """The button's callback: create the release (once) and leave the outcome as the page's flash."""
    ss = st.session_state
    if ss.get(state.RELEASE_BUSY) or _made(project) is not None:
        return
    ss[state.RELEASE_BUSY] = True
    try:
        with errors.captured(state.RELEASE_FLASH) as outcome:
            made = releases.create_release(
                cache.database(),
                actor,
                project,
                note=ss.get(state.RELEASE_NOTE) or "",
                justification=ss.get(state.RELEASE_JUSTIFICATION) or None,
            )
    finally:
        ss.pop(state.RELEASE_BUSY, None)
    if outcome.failed:
        return
    cache.clear_reads()
    ss.pop(state.RELEASE_JUSTIFICATION, None)
    ss.pop(state.RELEASE_NOTE, None)
    ss[state.RELEASE_MADE] = (project, made.version)
    if made.unchanged:
        errors.set_flash(
            state.RELEASE_FLASH,
            "warning",
            f"Nothing new to release: the qrels are identical to v{made.version}.",
        )
        return
    errors.set_flash(
        state.RELEASE_FLASH,
        "success",
        f"Release {made.version} created: {made.n_qrels} qrels, content sha256 {made.content_hash[:12]}…",
    )


def _made(project: str) -> int | None:
    """The version this session made (or found identical) for ``project``, if any."""
    made = st.session_state.get(state.RELEASE_MADE)
    return made[1] if made and made[0] == project else None


def _still_current(actor: Actor, project: str) -> int | None:
    """The release this session made, while the qrels are still identical to it (else forget it)."""
    version = _made(project)
    if version is None:
        return None
    with errors.shown():
        plan = releases.preview_release(cache.database(), actor, project)
        if plan.identical_to is not None:
            return plan.identical_to
    st.session_state.pop(state.RELEASE_MADE, None)
    return None


def create_form(actor: Actor, project: str, block: Blockers) -> None:
    """The subheader, the justification and note boxes and the Create release button."""
    st.subheader("Create a release")
    needed = " (required: agreement below the threshold)" if block.below_threshold else " (optional)"
    st.text_area("Justification" + needed, key=state.RELEASE_JUSTIFICATION, height=90)
    st.text_input("Note (optional)", key=state.RELEASE_NOTE)
    current = _still_current(actor, project)
    busy = bool(st.session_state.get(state.RELEASE_BUSY))
    st.button(
        "Create release",
        type="primary",
        disabled=bool(block.hard) or busy or current is not None,
        on_click=create,
        args=(actor, project),
    )
    if current is not None:
        st.caption(f"v{current} holds the current qrels: nothing new to release.")
