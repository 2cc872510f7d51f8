"""Marking evidence on the labelling card: the document with its passages highlighted, and two ways to mark.

Keyboard: J and K move a sentence cursor, E marks or unmarks the sentence (one rerun each, like the grade
keys). Mouse: select text, then "Mark selection" (or M); a constant script (never user text) writes the
selection into a hidden box, located in the text by `evidence_text.locate_selection`. Marks show in green,
each with a Remove button; the card's save sends them. Details: docs/modules.md.

With evidence off, `show_window` shows a long document in the same windows, moved by K and J (the buttons
"K Earlier" and "J Later", pressed by the same script).

"""

from __future__ import annotations

import json
from collections.abc import Sequence

import streamlit as st

from annotate_app.services.types import PairView
from annotate_app.ui import state
from annotate_app.ui.components import evidence_text, keyboard, widgets
from annotate_app.ui.escape import escape_markdown

__all__ = [
    "EVIDENCE",
    "SELECTION",
    "DOC_TEXT",
    "MARK",
    "marks",
    "start_marks",
    "show_pair",
    "show_window",
    "retrieved_span",
    "retrieved_caption",
    "EXCERPT",
]

EVIDENCE = "qf_evidence"  # the container of the buttons keys J, K and E press (sentences, or windows)
MARK = "qf_mark"  # the container of the "Mark selection" button (M)
SELECTION = "qf_selection"  # the hidden text box the script writes a selection into
DOC_TEXT = keyboard.TEXT  # the container of the document's text (selections count from its start)
EXCERPT = 80  # characters of a passage shown in the list of marks
WINDOW = 20_000  # a longer document shows this many characters at a time (evidence on: around the cursor)
WINDOW_ROW_PX = 56  # the height of the evidence-off card's window row (buttons and caption) and its gap

_STYLE = f"<style>.st-key-{SELECTION} {{ display: none; }}</style>"

_SCRIPT = """<script>
(function () {
  if (window.__qrelforgeEvidence) return;
  window.__qrelforgeEvidence = true;
  var doc = window.document;
  var STALE = '[data-stale="true"]';
  var last = null;  // the last selection made in the document: {text, before}
  function current(selector) {
    var found = Array.prototype.filter.call(doc.querySelectorAll(selector), function (el) {
      return !el.closest(STALE);
    });
    return found.length ? found[found.length - 1] : null;
  }
  function squeeze(s) { return Array.from(s.replace(/\\s+/g, "")).length; }
  function remember() {
    var sel = doc.getSelection(), box = current(".st-key-@DOC_TEXT@");
    if (!sel || sel.isCollapsed || !box || sel.rangeCount === 0) return;
    var r = sel.getRangeAt(0);
    if (!box.contains(r.startContainer) || !box.contains(r.endContainer)) return;
    var pre = doc.createRange();
    pre.selectNodeContents(box);
    pre.setEnd(r.startContainer, r.startOffset);
    last = {text: r.toString(), before: squeeze(pre.toString()), nonce: Date.now()};
  }
  function editable(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  function send() {  // write the last selection into the hidden box and commit it; true if sent
    var input = current(".st-key-@SELECTION@ input");
    if (!last || !input) return false;
    var setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
    setter.call(input, JSON.stringify(last));
    input.dispatchEvent(new Event("input", {bubbles: true}));
    var enter = {key: "Enter", code: "Enter", keyCode: 13, bubbles: true};
    input.dispatchEvent(new KeyboardEvent("keydown", enter));
    last = null;
    var sel = doc.getSelection();
    if (sel) sel.removeAllRanges();
    return true;
  }
  function button(container, key) {
    var found = null;
    doc.querySelectorAll(".st-key-" + container + " button").forEach(function (b) {
      if (b.innerText.trim().indexOf(key + " ") === 0 && (!found || !b.closest(STALE))) found = b;
    });
    return found;
  }
  doc.addEventListener("selectionchange", remember);
  doc.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest(".st-key-@MARK@ button");
    if (b && send()) { e.preventDefault(); e.stopImmediatePropagation(); }
  }, true);
  doc.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || editable(doc.activeElement)) return;
    var key = e.key.toUpperCase();
    if (key === "M" && last) { e.preventDefault(); send(); return; }
    if (!/^[JKE]$/.test(key)) return;
    var b = button("@EVIDENCE@", key);
    if (!b || b.disabled) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    b.click();
  }, true);
})();
</script>"""
_SCRIPT = (
    _SCRIPT.replace("@DOC_TEXT@", DOC_TEXT)
    .replace("@SELECTION@", SELECTION)
    .replace("@MARK@", MARK)
    .replace("@EVIDENCE@", EVIDENCE)
)

Span = tuple[int, int]


def marks(pair_id: int, scope: str) -> list[Span]:
    """The passages marked on a pair's card."""
    return list(st.session_state.get(state.evidence(pair_id, scope), []))


def start_marks(pair_id: int, scope: str, spans: Sequence[Span]) -> None:
    """Start a card's marks from a label's (an edit), once."""
    st.session_state.setdefault(state.evidence(pair_id, scope), [tuple(s) for s in spans])


def _set(pair_id: int, scope: str, spans: list[Span]) -> None:
    st.session_state[state.evidence(pair_id, scope)] = spans


def _move(pair_id: int, scope: str, step: int, count: int) -> None:
    key = state.evidence_cursor(pair_id, scope)
    at = st.session_state.get(key)
    st.session_state[key] = 0 if at is None else min(max(at + step, 0), count - 1)


def _toggle(pair_id: int, scope: str, span: Span) -> None:
    _set(pair_id, scope, evidence_text.toggle(marks(pair_id, scope), span))


def _selected(pair_id: int, scope: str, text: str, offset: int = 0) -> None:
    """The hidden box's callback: mark the selection the script wrote into it (``text``: the window shown,
    which starts at character ``offset`` of the document)."""
    raw = st.session_state.get(state.evidence_selection(pair_id, scope)) or ""
    try:
        sent = json.loads(raw)
        span = evidence_text.locate_selection(text, str(sent["text"]), int(sent["before"]))
    except (ValueError, KeyError, TypeError):
        span = None
    if span is None:
        st.session_state[state.evidence_note(pair_id, scope)] = "The selection is not in the document's text."
        return
    st.session_state.pop(state.evidence_note(pair_id, scope), None)
    _set(pair_id, scope, evidence_text.mark(marks(pair_id, scope), (span[0] + offset, span[1] + offset)))


def _no_selection(pair_id: int, scope: str) -> None:
    st.session_state[state.evidence_note(pair_id, scope)] = "Select text in the document first."


def show_pair(view: PairView, scope: str, text: str) -> None:
    """The query and document with the passages marked, the marking controls and the list of passages.
    ``text``: the document's text as shown (a prefix of it, for a huge one)."""
    pid, ss = view.pair_id, st.session_state
    found = evidence_text.sentences(text)
    cursor_key = state.evidence_cursor(pid, scope)
    chunk = retrieved_span(view, len(text))
    if cursor_key not in ss and found:  # the card opens at the retrieved chunk, else the first query term
        ss[cursor_key] = evidence_text.opening(found, text, view.query_text, chunk)
    at = ss.get(cursor_key)
    cursor = found[at] if found and at is not None and at < len(found) else None
    chosen = marks(pid, scope)
    st.caption(f"Query {escape_markdown(view.query_id)} · document {escape_markdown(view.doc_id)}")
    st.markdown(f"**Query:** {escape_markdown(view.query_text)}")
    retrieved_caption(view)
    start, end = evidence_text.window(len(text), cursor, WINDOW)
    shown = text[start:end]
    if (start, end) != (0, len(text)):
        caption = evidence_text.window_caption(start, end, len(text))
        st.caption(f"{caption}: the window follows the sentence cursor (J/K).")
    within = evidence_text.clip(cursor and [cursor] or [], start, end)
    with keyboard.document_box(shown):
        if view.doc_title:
            st.markdown(f"#### {escape_markdown(view.doc_title)}")
        st.container(key=DOC_TEXT).markdown(
            evidence_text.to_markdown(
                shown,
                view.query_text,
                evidence_text.clip(chosen, start, end),
                within[0] if within else None,
                next(iter(evidence_text.clip([chunk] if chunk else [], start, end)), None),
            )
        )
        keyboard.open_at(f"{scope}_{pid}", shown, cursor[0] - start if cursor else 0)
    _controls(view, scope, (shown, start), found, cursor)
    _listed(pid, scope, text, chosen)
    st.html(_STYLE + _SCRIPT, unsafe_allow_javascript=True, width="content")


def show_window(view: PairView, scope: str, text: str) -> None:
    """The evidence-off card's query and document: a document longer than `WINDOW` characters shows one window
    of it at a time (`evidence_text.window`, as with evidence on), first the one holding the retrieved chunk,
    else the first query-term match, else the start, and "K Earlier" / "J Later" move to the window before
    or after. ``text``: the document's text as shown (a prefix of it, for a huge one)."""
    pid, ss = view.pair_id, st.session_state
    chunk = retrieved_span(view, len(text))
    key = state.window_at(pid, scope)
    if key not in ss:
        ss[key] = evidence_text.open_offset(text, view.query_text, chunk) or 0
    at = ss[key]
    start, end = evidence_text.window(len(text), (at, at), WINDOW)
    paged = (start, end) != (0, len(text))
    widgets.show_pair(
        view.query_id,
        view.query_text,
        view.doc_id,
        view.doc_title,
        text[start:end],
        chunk=next(iter(evidence_text.clip([chunk] if chunk else [], start, end)), None),
        card=(f"{scope}_{pid}_{start}" if paged else f"{scope}_{pid}", at - start),
        below=WINDOW_ROW_PX if paged else 0,
    )
    if not paged:
        return
    row = st.container(key=EVIDENCE, horizontal=True, vertical_alignment="center")
    row.button(
        "K Earlier",
        key=f"{scope}_win_prev_{pid}",
        on_click=_show_from,
        args=(key, max(start - WINDOW, 0)),
        disabled=start == 0,
    )
    row.button(
        "J Later",
        key=f"{scope}_win_next_{pid}",
        on_click=_show_from,
        args=(key, end),
        disabled=end == len(text),
    )
    caption = evidence_text.window_caption(start, end, len(text))
    row.caption(f"{caption}: K/J (Earlier/Later) show the window before or after.")
    st.html(_STYLE + _SCRIPT, unsafe_allow_javascript=True, width="content")


def _show_from(key: str, at: int) -> None:
    st.session_state[key] = at


def retrieved_span(view: PairView, length: int) -> Span | None:
    """The retrieved chunk's ``[start, end)`` within the first ``length`` characters shown, or None."""
    chunk = view.retrieved
    if chunk is None or chunk.start >= length:
        return None
    return chunk.start, min(chunk.end, length)


def retrieved_caption(view: PairView) -> None:
    """The card's note of the retrieved chunk (shaded gray in the text), when a chunk-level run ranked one."""
    chunk = view.retrieved
    if chunk is not None:
        st.caption(
            f"Retrieved chunk {escape_markdown(chunk.chunk_id)} `[{chunk.start}, {chunk.end})` "
            f"(run {escape_markdown(chunk.run)}, document rank {chunk.rank}), shaded gray: the card opens "
            "there."
        )


def _controls(
    view: PairView, scope: str, shown: tuple[str, int], found: list[Span], cursor: Span | None
) -> None:
    pid, ss = view.pair_id, st.session_state
    row = st.container(key=EVIDENCE, horizontal=True)
    row.button(
        "K Previous sentence", key=f"{scope}_ev_prev_{pid}", on_click=_move, args=(pid, scope, -1, len(found))
    )
    row.button(
        "J Next sentence", key=f"{scope}_ev_next_{pid}", on_click=_move, args=(pid, scope, 1, len(found))
    )
    on = cursor is not None and len(evidence_text.unmark(marks(pid, scope), cursor)) != len(marks(pid, scope))
    row.button(
        "E Unmark sentence" if on else "E Mark sentence",
        key=f"{scope}_ev_toggle_{pid}",
        on_click=_toggle,
        args=(pid, scope, cursor),
        disabled=cursor is None,
    )
    st.container(key=MARK).button(
        "M Mark selection",
        key=f"{scope}_ev_mark_{pid}",
        on_click=_no_selection,
        args=(pid, scope),
        help="Select text in the document, then press this (or M).",
    )
    st.container(key=SELECTION).text_input(
        "selection",
        key=state.evidence_selection(pid, scope),
        on_change=_selected,
        args=(pid, scope, *shown),
        label_visibility="collapsed",
    )
    note = ss.get(state.evidence_note(pid, scope))
    if note:
        st.caption(escape_markdown(note))
    required = view.evidence == "required"
    st.caption(
        "Evidence: mark the passages that make the document relevant"
        + (f" (required for grades ≥ {view.relevance_cutoff})." if required else " (optional).")
        + " Keys: J/K move through the sentences, E marks or unmarks one; or select text and press M."
    )


def _listed(pid: int, scope: str, text: str, chosen: list[Span]) -> None:
    if not chosen:
        st.caption("No passage marked.")
        return
    for i, (start, end) in enumerate(chosen):
        piece = text[start:end]
        shown = piece if len(piece) <= EXCERPT else piece[: EXCERPT - 1] + "…"
        left, right = st.columns([8, 1])
        left.markdown(f":green-background[{escape_markdown(' '.join(shown.split()))}] `[{start}, {end})`")
        right.button(
            "Remove",
            key=f"{scope}_ev_remove_{pid}_{start}_{end}",
            on_click=lambda s=(start, end): _set(pid, scope, evidence_text.unmark(marks(pid, scope), s)),
            help=f"Remove passage {i + 1}.",
        )
