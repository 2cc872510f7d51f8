"""The Adjudicate page's passage section: the first pair whose annotators marked different passages, each
annotator's passages overlaid in their own colour (`evidence_text.overlay_markdown`), and the reviewer's
choice of the final passages (the union, the intersection, one annotator's, or edited as ``start-end``
pairs) with a reason (`services.passage_adjudication`)."""

from __future__ import annotations

import re

import streamlit as st

from annotate_app.services import passage_adjudication as pa
from annotate_app.services.auth import Actor
from annotate_app.services.errors import InvalidInput
from annotate_app.ui import cache, errors, state
from annotate_app.ui.components import evidence_text, keyboard
from annotate_app.ui.escape import escape_markdown, escape_name

__all__ = ["passage_section", "FLASH", "parse_spans"]

FLASH = "passage_adjudication_flash"
EDIT = "edit"
_PAIR = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


def parse_spans(text: str) -> list[tuple[int, int]]:
    """``"0-5, 8-12"`` as [(0, 5), (8, 12)]; InvalidInput naming the piece that is not ``start-end``.

    >>> parse_spans("0-5, 8-12")
    [(0, 5), (8, 12)]
    """
    out = []
    for piece in (p for p in text.split(",") if p.strip()):
        found = _PAIR.match(piece)
        if found is None:
            raise InvalidInput(f"passages are start-end pairs separated by commas; got {piece.strip()!r}")
        out.append((int(found.group(1)), int(found.group(2))))
    return out


def _save(actor: Actor, project: str, item: pa.PassageDisagreement) -> None:
    ss, pid = st.session_state, item.pair_id
    how = ss.get(state.per_item("padj_how", pid), "union")
    with errors.captured(FLASH) as outcome:
        spans = (
            parse_spans(ss.get(state.per_item("padj_edit", pid)) or "")
            if how == EDIT
            else pa.combine(item.spans, how)
        )
        final = pa.adjudicate_passages(
            cache.database(),
            actor,
            project,
            pid,
            spans=spans,
            reason=ss.get(state.per_item("padj_reason", pid)) or "",
        )
    if not outcome.failed:
        ss.pop(state.per_item("padj_reason", pid), None)
        shown = ", ".join(f"[{a}, {b})" for a, b in final) or "none"
        errors.set_flash(
            FLASH, "success", f"Final passages of {item.query_id} · {item.doc_id} saved: {shown}."
        )


def passage_section(actor: Actor, project: str) -> None:
    """The passage disagreements, the first one open to adjudicate (nothing when there are none)."""
    flashed = errors.flash(FLASH)
    with errors.shown(already=flashed) as outcome:
        items = pa.passage_disagreements(cache.database(), actor, project)
    if outcome.failed or not items:
        return
    left = sum(d.adjudicated is None for d in items)
    st.subheader(f"Passage disagreements ({left} of {len(items)} not adjudicated)")
    item = items[0]
    names = list(item.spans)
    legend = " ".join(
        f":{evidence_text.OVERLAY[i % len(evidence_text.OVERLAY)]}[{escape_name(n)}]"
        for i, n in enumerate(names)
    )
    st.caption(f"Query {escape_markdown(item.query_id)} · document {escape_markdown(item.doc_id)}")
    st.markdown(f"**Query:** {escape_markdown(item.query_text)}")
    st.markdown(f"Passages: {legend} :{evidence_text.BOTH}[two or more]")
    with keyboard.document_box(item.doc_text):
        st.markdown(evidence_text.overlay_markdown(item.doc_text, [item.spans[n] for n in names]))
    for n in names:
        marks = ", ".join(f"[{a}, {b})" for a, b in item.spans[n]) or "none"
        st.caption(f"{escape_name(n)} (grade {item.grades[n]}): {escape_markdown(marks)}")
    if item.adjudicated is not None:
        done = ", ".join(f"[{a}, {b})" for a, b in item.adjudicated) or "none"
        st.info(f"Adjudicated: {escape_markdown(done)}. Every passage disagreement is settled.")
        return
    pid = item.pair_id
    choices = [*pa.HOW, *names, EDIT]
    how = st.radio(
        "Final passages",
        choices,
        key=state.per_item("padj_how", pid),
        horizontal=True,
        format_func=lambda c: {"union": "Union", "intersection": "Intersection", EDIT: "Edit"}.get(
            c, f"{c}'s"
        ),
    )
    if how == EDIT:
        st.text_input(
            "Passages (start-end, comma separated)",
            key=state.per_item("padj_edit", pid),
            value=", ".join(f"{a}-{b}" for a, b in pa.combine(item.spans, "union")),
        )
    st.text_area("Reason for the final passages", key=state.per_item("padj_reason", pid), height=80)
    st.button(
        "Save final passages",
        key=state.per_item("padj_save", pid),
        on_click=_save,
        args=(actor, project, item),
    )
