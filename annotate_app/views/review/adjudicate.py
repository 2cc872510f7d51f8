"""Adjudicate (reviewer): the disagreements, worst first. Each shows the query, the document (highlighted) and
every annotator's grade and reason side by side; the final grade comes from buttons (keys 0-3) and needs a
reason; Ctrl+Enter saves and moves on. "Mark as gold" makes the pair a gold pair (`gold_form`). The order is
an option: worst first, or least certain first (the Dawid–Skene posterior of the pair's most probable grade,
lowest first)."""

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from annotate_app.services import adjudication, gate
from annotate_app.services.auth import Actor, Role
from annotate_app.services.types import Disagreement
from annotate_app.ui import auth, cache, errors, nav, review_cache, state
from annotate_app.ui.components import keyboard, pager, passage_review, widgets
from annotate_app.ui.components.gold_form import gold_form
from annotate_app.ui.escape import escape_markdown

Scale = Sequence[tuple[int, str]]
PAGE = 50  # disagreements read at a time (worst first); the card shows the first of the page
ORDER_NAMES = {
    gate.DisagreementOrder.WORST: "worst first",
    gate.DisagreementOrder.LEAST_CERTAIN: "least certain first (Dawid–Skene)",
}


def pick(pair_id: int, grade: int) -> None:
    st.session_state[state.grade(pair_id, "a")] = grade


def save(actor: Actor, project: str, pair_id: int, scale: Scale) -> None:
    ss = st.session_state
    grade = ss.get(state.grade(pair_id, "a"))
    if grade is None:
        errors.set_flash(state.ADJ_FLASH, "error", "Pick the final grade first (buttons or keys).")
        return
    with errors.captured(state.ADJ_FLASH) as outcome:
        done = adjudication.adjudicate(
            cache.database(),
            actor,
            project,
            pair_id,
            grade=grade,
            reason=ss.get(state.reason(pair_id, "a")) or "",
        )
    if not outcome.failed:
        for key in state.CARD_KEYS:
            ss.pop(key(pair_id, "a"), None)
        cache.clear_reads()
        errors.set_flash(
            state.ADJ_FLASH,
            "success",
            f"Final grade {widgets.grade_label(scale, done.grade)} saved.",  # plain: flash escapes it
        )


def _labels(item: Disagreement, scale: Scale) -> None:
    st.markdown("**The annotators' labels**")
    for column, label in zip(st.columns(len(item.labels)), item.labels, strict=True):
        with column.container(border=True):
            flags = (" · unsure" if label.unsure else "") + (" · stale" if label.stale else "")
            grade = escape_markdown(widgets.grade_label(scale, label.grade))
            st.markdown(f"**{label.annotator}**: {grade}{flags}")
            widgets.text_block(label.reason)
    if item.prior_grades:
        st.caption(escape_markdown("Prior judgments: " + ", ".join(f"{n} {g}" for n, g in item.prior_grades)))
    if item.adjudication is not None:
        st.info(
            f"Adjudicated before by {item.adjudication.reviewer} (grade {item.adjudication.grade}); the "
            "labels changed since, so it needs a new final grade."
        )


def _final_grade(actor: Actor, project: str, item: Disagreement, scale: Scale, min_reason: int) -> None:
    pid = item.pair_id
    st.markdown("**Final grade**")
    chosen = st.session_state.get(state.grade(pid, "a"))
    widgets.grade_buttons(scale, chosen, lambda g: state.grade_button(pid, g, "a"), lambda g: pick(pid, g))
    if chosen is not None:
        st.markdown(
            f"Final grade: :blue-background[**{escape_markdown(widgets.grade_label(scale, chosen))}**]"
        )
    st.container(key=keyboard.REASON).text_area(
        "Reason",
        key=state.reason(pid, "a"),
        height=90,
        help="Required. Ctrl+Enter saves, Esc leaves the box (then the grade keys work again).",
        placeholder=f"Why this final grade? At least {max(min_reason, 1)} characters.",
    )
    st.button(
        "Save final grade",
        key=state.submit(pid, "a"),
        type="primary",
        shortcut="Ctrl+Enter",
        on_click=save,
        args=(actor, project, pid, scale),
    )


def _queue_table(queue: list[Disagreement]) -> None:
    with st.expander(f"The queue ({len(queue)} on this page, worst first)"):
        rows = [
            {
                "query": d.query_id,
                "document": d.doc_id,
                "disagreement": round(d.disagreement, 3),
                "grades": ", ".join(f"{x.annotator} {x.grade}" for x in d.labels),
            }
            for d in queue
        ]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def render() -> None:
    actor = auth.require(Role.REVIEWER)
    project = widgets.project_or_stop()
    nav.heading(nav.ADJUDICATE)
    errors.flash(state.ADJ_FLASH)
    with errors.shown() as outcome:
        settings = cache.get_project(actor, project).settings
        figures = review_cache.agreement(actor, project)
        start = pager.offset(pager.ADJUDICATE, figures.unadjudicated, size=PAGE)
        order = st.radio(
            "Order",
            list(gate.DisagreementOrder),
            format_func=ORDER_NAMES.get,
            horizontal=True,
            key=state.ADJ_ORDER,
        )
        queue = gate.disagreements(cache.database(), actor, project, limit=PAGE, offset=start, order=order)
    if outcome.failed:
        st.stop()
    if settings.evidence != "off":
        passage_review.passage_section(actor, project)
    if not queue:
        st.success("No disagreement waits for adjudication.")
        nav.link(nav.RELEASE, "Go to the release page")
        st.stop()
    left = max(figures.unadjudicated, len(queue))
    total = max(figures.disagreements, left)
    st.progress((total - left) / total, text=f"{left} left of {total} disagreements")
    item = queue[0]
    widgets.show_pair(item.query_id, item.query_text, item.doc_id, item.doc_title, item.doc_text)
    _labels(item, settings.grade_scale)
    _final_grade(actor, project, item, settings.grade_scale, settings.min_reason_length)
    gold_form(
        actor,
        project,
        item.pair_id,
        item.query_id,
        item.doc_id,
        settings.grade_scale,
        flash_key=state.ADJ_FLASH,
    )
    pager.controls(pager.ADJUDICATE, left, size=PAGE, shown=len(queue), noun="Disagreements")
    _queue_table(queue)
    keyboard.install()


if __name__ == "__main__":
    render()
