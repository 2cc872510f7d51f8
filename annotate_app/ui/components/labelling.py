"""The labelling card: one pair, grade buttons, a required reason, "unsure", Submit and Skip; `queue_card` for
the annotate page, `edit_card` to re-judge one of one's own labels.

The card never shows another's label; typed text is kept per pair. The save sends the version shown: on
`DocumentChanged` the card reloads the pair, keeps the typed grade and reason, and warns.
"""

from __future__ import annotations

import time
import uuid

import streamlit as st

from annotate_app.services import labels, qualification, queue
from annotate_app.services.auth import Actor
from annotate_app.services.errors import DOCUMENT_CHANGED, Conflict, DocumentChanged, NotFound, retry_once
from annotate_app.services.labels import MAX_SECONDS
from annotate_app.services.types import PairView
from annotate_app.ui import cache, errors, state
from annotate_app.ui.components import evidence, keyboard, widgets
from annotate_app.ui.escape import escape_markdown, escape_name

__all__ = ["queue_card", "edit_card", "pair_card", "recheck_if_done"]


def _forget(pair_id: int, scope: str) -> None:
    for key in state.CARD_KEYS:
        st.session_state.pop(key(pair_id, scope), None)


def _pick(pair_id: int, scope: str, grade: int) -> None:
    st.session_state[state.grade(pair_id, scope)] = grade


def _seconds(pair_id: int, scope: str) -> float:
    shown = st.session_state.get(state.shown_at(pair_id, scope), time.monotonic())
    return min(max(time.monotonic() - shown, 0.0), MAX_SECONDS)


def _save(actor: Actor, view: PairView, scope: str, flash: str) -> errors.Failed:
    """Save the card's label (a message waits under ``flash`` either way); the outcome says if it failed."""
    ss, pid = st.session_state, view.pair_id
    grade = ss.get(state.grade(pid, scope))
    if grade is None:
        keys = "/".join(str(g) for g, _ in view.grade_scale if widgets.shortcut_for(g))
        errors.set_flash(flash, "error", f"Pick a grade first (buttons or keys {keys}).")
        return errors.Failed(failed=True)
    expected = view.current.version if view.current is not None else 0
    with errors.captured(flash) as outcome:
        # a dropped connection is retried once: the request_id finds the label a lost reply had stored
        saved = retry_once(
            labels.save_label,
            cache.database(),
            actor,
            view.project,
            pid,
            grade=grade,
            reason=ss.get(state.reason(pid, scope)) or "",
            unsure=bool(ss.get(state.unsure(pid, scope))),
            seconds=_seconds(pid, scope),
            expected_version=expected,
            doc_version=ss.get(state.shown_version(pid, scope), view.doc_version),
            evidence=evidence.marks(pid, scope) if view.evidence != "off" else None,
            request_id=uuid.uuid4().hex,
            idempotent=True,
        )
    if outcome.failed:
        return outcome
    _forget(pid, scope)
    grade_text = widgets.grade_label(view.grade_scale, saved.grade)
    # plain text: `errors.flash` escapes it for Markdown (escaping here too showed "Related\, does not ...")
    errors.set_flash(
        flash,
        "success",
        f"Saved {saved.query_id} · {saved.doc_id}: grade {grade_text} (version {saved.version}).",
    )
    if saved.gold_grade is not None:  # training feedback, after the save only
        expected = widgets.grade_label(view.grade_scale, saved.gold_grade)
        ss[state.GOLD_FEEDBACK] = (expected, saved.gold_explanation or "")
    return outcome


def _gold_feedback() -> None:
    """The training feedback of the gold pair just saved, once, as plain text (the explanation is escaped)."""
    item = st.session_state.pop(state.GOLD_FEEDBACK, None)
    if item:
        expected, explanation = item
        st.info(escape_markdown(f"Training feedback: that was a gold pair. Expected grade: {expected}."))
        st.text(explanation)


def _standing(actor: Actor, project: str) -> bool:
    """Say why a paused annotator gets no pair (plain text); returns whether they are paused."""
    with errors.shown() as outcome:
        mine = qualification.my_status(cache.database(), actor, project)
    if outcome.failed or mine.status != qualification.Standing.PAUSED:
        return False
    st.warning(escape_markdown(mine.explain()))
    return True


# -------------------------------------------------------------------------------------------- the queue
def _submit_next(actor: Actor, view: PairView) -> None:
    outcome = _save(actor, view, "q", state.CARD_FLASH)
    if not outcome.failed or isinstance(outcome.error, Conflict | NotFound):  # saved, or the claim is gone
        st.session_state.pop(state.CURRENT_PAIR, None)
    if isinstance(outcome.error, DocumentChanged):  # the card reloads the new version and warns itself
        st.session_state.pop(state.CARD_FLASH, None)


def _skip(actor: Actor, view: PairView) -> None:
    ss, pid = st.session_state, view.pair_id
    with errors.captured(state.CARD_FLASH) as outcome:
        queue.skip(cache.database(), actor, view.project, pid, reason=ss.get(state.reason(pid)) or "")
    if outcome.failed:
        return
    _forget(pid, "q")
    ss.pop(state.CURRENT_PAIR, None)
    errors.set_flash(state.CARD_FLASH, "warning", f"Skipped {view.query_id} · {view.doc_id}.")


def _current(actor: Actor, project: str) -> PairView | None:
    """The pair on the card: kept in session state between reruns, else claimed with `queue.next_pair`."""
    ss = st.session_state
    view = ss.get(state.CURRENT_PAIR)
    if view is not None and (view is False or view.project == project):
        return view or None
    view = retry_once(queue.next_pair, cache.database(), actor, project)  # again only if nothing was written
    ss[state.CURRENT_PAIR] = view if view is not None else False
    return view


def recheck_if_done() -> None:
    """Forget an earlier "nothing left" so that a full page run asks the queue again (new pairs may exist)."""
    if st.session_state.get(state.CURRENT_PAIR) is False:
        del st.session_state[state.CURRENT_PAIR]


@st.fragment
def queue_card(actor: Actor, project: str) -> None:
    """The annotate card: progress, the next pair and its form (a fragment: a submit reruns only this)."""
    flashed = errors.flash(state.CARD_FLASH)
    with errors.shown(already=flashed) as outcome:  # a save's fault and the reload's: one message
        view = _current(actor, project)
        mine = retry_once(queue.my_progress, cache.database(), actor, project).progress
    if outcome.failed:
        return
    st.progress(mine.fraction, text=f"{mine.done} / {mine.total} judged")
    _gold_feedback()
    if view is None:
        if not _standing(actor, project):
            st.success("Nothing left to judge in this project right now. Thank you!")
        st.button("Check again", on_click=st.session_state.pop, args=(state.CURRENT_PAIR, None))
        return
    pair_card(view, "q", on_submit=lambda: _submit_next(actor, view), on_skip=lambda: _skip(actor, view))


# ------------------------------------------------------------------------------------------------- edit
def _save_edit(actor: Actor, view: PairView) -> None:
    """Save the edit once: then the card closes (the picker is cleared and lists the new version). Should a
    second click still reach this callback, ``view`` is no longer the open edit and nothing is added."""
    ss = st.session_state
    if ss.get(state.EDIT_PAIR) is not view:
        return
    outcome = _save(actor, view, "e", state.EDIT_FLASH)
    if not outcome.failed:
        ss.pop(state.EDIT_PAIR, None)
        ss[state.EDIT_CHOICE] = None  # set, not popped: the browser's picker is told to clear its text
    elif isinstance(outcome.error, DocumentChanged):
        ss.pop(state.EDIT_PAIR, None)  # the page reloads the pair, with the new version (the form is kept)


def edit_card(actor: Actor, view: PairView) -> None:
    """Re-judge one of the caller's labels: the form starts from their current label; saving adds a
    version."""
    ss, pid = st.session_state, view.pair_id
    if view.current is not None:
        ss.setdefault(state.grade(pid, "e"), view.current.grade)
        ss.setdefault(state.reason(pid, "e"), widgets.shown(view.current.reason))
        ss.setdefault(state.unsure(pid, "e"), view.current.unsure)
        evidence.start_marks(pid, "e", view.current.evidence)
    pair_card(
        view, "e", on_submit=lambda: _save_edit(actor, view), on_skip=None, submit_label="Save new version"
    )


# ------------------------------------------------------------------------------------------------- card
def pair_card(view: PairView, scope: str, *, on_submit, on_skip, submit_label: str = "Submit") -> None:
    """The pair and its form. ``on_submit``/``on_skip``: callbacks (``on_skip`` None: no Skip button)."""
    ss, pid = st.session_state, view.pair_id
    ss.setdefault(state.shown_at(pid, scope), time.monotonic())
    ss[state.shown_version(pid, scope)] = view.doc_version  # what a save of this card was shown
    if view.doc_changed:
        st.warning(f"{DOCUMENT_CHANGED.capitalize()} (it is now version {view.doc_version}).")
    elif view.stale and view.current is not None:
        st.warning(
            f"The document changed since you judged it (your grade was "
            f"{escape_name(widgets.grade_label(view.grade_scale, view.current.grade))} on version "
            f"{view.current.doc_version}; it is now version {view.doc_version}). Please judge it "
            "again."
        )
    if view.evidence == "off":
        evidence.show_window(view, scope, widgets.shown(view.doc_text, widgets.SHOWN_DOCUMENT))
        evidence.retrieved_caption(view)
    else:
        evidence.show_pair(view, scope, widgets.shown(view.doc_text, widgets.SHOWN_DOCUMENT))
    chosen = ss.get(state.grade(pid, scope))
    widgets.grade_buttons(
        view.grade_scale, chosen, lambda g: state.grade_button(pid, g, scope), lambda g: _pick(pid, scope, g)
    )
    if chosen is None:
        st.caption("No grade chosen yet: click a grade or press its key.")
    else:
        label = escape_markdown(widgets.grade_label(view.grade_scale, chosen))
        st.markdown(f"Chosen grade: :blue-background[**{label}**]")
    st.container(key=keyboard.REASON).text_area(
        "Reason",
        key=state.reason(pid, scope),
        height=90,
        placeholder=f"Why this grade? At least {max(view.min_reason_length, 1)} characters.",
        help="Required. Ctrl+Enter submits, Esc leaves the box (then the grade keys work again).",
    )
    st.checkbox("Unsure", key=state.unsure(pid, scope))
    left, right, _ = st.columns([2, 2, 6])
    left.button(
        submit_label,
        key=state.submit(pid, scope),
        type="primary",
        shortcut="Ctrl+Enter",
        on_click=on_submit,
        width="stretch",
    )
    if on_skip is not None:
        right.button(
            "Skip",
            key=state.skip(pid, scope),
            on_click=on_skip,
            width="stretch",
            help="Give the pair back; the reason box says why.",
        )
