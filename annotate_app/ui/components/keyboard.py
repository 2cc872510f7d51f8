"""The keyboard flow and form style of the labelling pages: one constant script and style sheet.

`install` sends the same bytes to every browser: no user text, ever. It owns the grade keys, moves the focus
to the reason box, and handles Esc and Ctrl+Enter. Pages mark their parts with `document_box` and the
containers keyed `GRADES` and `REASON`. The key handling in detail: docs/modules.md.

It also scrolls the document box to where a card opens: `open_at` leaves a marker naming the card and the
place, the count of non-space characters before it in the text container keyed `TEXT` (a number, so the
script still reads no user text). A new card's box starts at the top, and scrolls that character to its top
when it is out of view there; when only the place moves on the same card (the sentence cursor), the box
scrolls only if it is out of view.
"""

from __future__ import annotations

import streamlit as st

__all__ = [
    "DOCUMENT",
    "GRADES",
    "REASON",
    "LONG_DOCUMENT_CHARS",
    "DOCUMENT_HEIGHT",
    "install",
    "document_box",
    "TEXT",
    "OPEN",
    "open_at",
]

DOCUMENT = "qf_document"
GRADES = "qf_grades"
REASON = "qf_reason"
TEXT = "qf_doctext"  # the container of the document's text inside `document_box`
OPEN = "qf_open"  # the prefix of `open_at`'s marker: OPEN_<card>_<non-space characters before the place>
OPEN_MARGIN_PX = 8  # the place opened at stands this far below the top of the box
LONG_DOCUMENT_CHARS = 1500  # longer documents (or more than `LONG_DOCUMENT_LINES` lines) scroll in their box
LONG_DOCUMENT_LINES = 12
DOCUMENT_HEIGHT = 300  # px: at 1400x900 the grade buttons and the reason box stay in view below the box
NEUTRAL_FOCUS = "#8a8d98"
REFOCUS_MS = 30_000  # a grade key's rerun that has not finished by then no longer takes the focus back
QUIET_MS = 500  # after the grade key's rerun: the focus is kept until the page has not changed for this long
PENDING_MS = 10_000  # a grade key pressed while its button is disabled is pressed if enabled within this time

_STYLE = f"""<style>
.st-key-{DOCUMENT} span.stMarkdownColoredBackground {{ padding-left: 0; padding-right: 0; }}
[data-testid="stTextArea"] [data-testid="InputInstructions"] {{ display: none; }}
[class*="st-key-{OPEN}_"] {{ display: none; }}
[data-testid="stTextAreaRootElement"]:focus-within {{ border-color: {NEUTRAL_FOCUS} !important; }}
</style>"""

_SCRIPT = """<script>
(function () {
  if (window.__qrelforgeKeyboard) return;
  window.__qrelforgeKeyboard = true;
  var doc = window.document;
  var REASON = ".st-key-@REASON@ textarea";
  var STALE = '[data-stale="true"]';
  var GRADES = ".st-key-@GRADES@ button";
  var HELP = '[data-testid="stTooltipIcon"] button:not([tabindex="-1"])';
  var APP = '[data-testid="stApp"]';
  var refocusUntil = 0;  // after a grade key: put the focus back in the reason box if a rerun drops it
  var refocusLimit = 0;  // ... never after REFOCUS_MS
  var rerunSeen = false, settled = false;  // the grade key's rerun has started / has finished
  var releaseUntil = 0;  // after a dropdown choice: take the focus out of the dropdown
  var pending = null, pendingUntil = 0;  // a grade key whose button was disabled when it was pressed
  function editable(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  function closedDropdown(el) {
    return !!el && el.getAttribute("role") === "combobox" && el.getAttribute("aria-expanded") !== "true";
  }
  function current(selector) {  // the last match outside the stale copies of the previous run, or null
    var found = Array.prototype.filter.call(doc.querySelectorAll(selector), function (el) {
      return !el.closest(STALE);
    });
    return found.length ? found[found.length - 1] : null;
  }
  function gradeButton(key) {  // the current grade button of a digit key, or null
    var found = null;
    doc.querySelectorAll(GRADES).forEach(function (b) {
      if (b.innerText.trim().indexOf(key + " ") === 0 && (!found || !b.closest(STALE))) found = b;
    });
    return found;
  }
  function isGradeKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || !/^[0-9]$/.test(e.key)) return false;
    return !!gradeButton(e.key);
  }
  function focusReason() {
    var box = current(REASON);
    if (!box || box.disabled || doc.activeElement === box) return;
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  }
  function state(name) {
    var app = doc.querySelector(APP);
    return app ? app.getAttribute("data-test-" + name + "-state") : null;
  }
  function busy() { var s = state("script"); return s !== null && s !== "notRunning"; }
  function press(key) {  // click the grade button if it is enabled and the app connected; true if clicked
    var button = gradeButton(key);
    if (!button || button.disabled || state("connection") !== "CONNECTED") return false;
    button.click();
    return true;
  }
  function pressPending() {  // a pending key is pressed once its button is enabled again
    if (pending !== null && (Date.now() >= pendingUntil || press(pending))) pending = null;
  }
  function graded(key) {
    if (!press(key)) { pending = key; pendingUntil = Date.now() + @PENDING_MS@; }
    refocusUntil = refocusLimit = Date.now() + @REFOCUS_MS@;
    rerunSeen = settled = false;
    setTimeout(focusReason, 0);
  }
  function refocus() {  // while the grade key's rerun has not finished, and until the page is still after it
    if (Date.now() >= refocusUntil) return;
    var el = doc.activeElement;
    if (!el || el === doc.body) focusReason();
    if (settled) {  // the renders after the run (stale copies removed) may still drop it
      refocusUntil = Math.min(refocusLimit, Math.max(refocusUntil, Date.now() + @QUIET_MS@));
      return;
    }
    if (busy()) rerunSeen = true;
    else if (rerunSeen) {
      settled = true;
      refocusUntil = Math.min(refocusLimit, Date.now() + @QUIET_MS@);
    }
  }
  function release() {
    if (Date.now() < releaseUntil && closedDropdown(doc.activeElement)) doc.activeElement.blur();
  }
  function chosen() {
    releaseUntil = Date.now() + 2000;
    setTimeout(release, 0);
  }
  doc.addEventListener("keydown", function (e) {
    var el = doc.activeElement;
    if (!/^(Control|Shift|Alt|Meta)$/.test(e.key)) pending = null;
    if (e.key === "Escape") {
      refocusUntil = 0;
      var open = el && el.getAttribute("aria-expanded") === "true";  // an open dropdown closes first
      if (editable(el) && !open) setTimeout(function () { el.blur(); }, 0);
    } else if (e.key === "Enter") {
      refocusUntil = 0;
      if (el && el.getAttribute("role") === "combobox") chosen();
    } else if (!editable(el) && isGradeKey(e)) {
      e.preventDefault();
      e.stopImmediatePropagation();  // Streamlit's shortcut (hotkeys-js, on the document) never sees it
      graded(e.key);
    }
  }, true);
  doc.addEventListener("pointerdown", function () { refocusUntil = 0; pending = null; }, true);
  doc.addEventListener("pointerup", function (e) {
    if (e.target.closest && e.target.closest('[role="option"]')) chosen();
  }, true);
  var opened = null;  // the name of the last marker the box was scrolled for: card_count
  function placeOf(box, count) {  // the text node and offset after `count` non-space characters, or null
    var walker = doc.createTreeWalker(box, NodeFilter.SHOW_TEXT), node;
    while ((node = walker.nextNode())) {
      for (var i = 0; i < node.data.length; i++) {
        var c = node.data.charCodeAt(i);
        if ((c >= 0xDC00 && c <= 0xDFFF) || /\\s/.test(node.data[i])) continue;  // a pair's 2nd half: counted
        if (count === 0) return {node: node, offset: i};
        count--;
      }
    }
    return null;
  }
  function openAt() {  // scroll the document box to the place its card's marker names (once per marker)
    var marker = current('[class*="st-key-@OPEN@_"]');
    if (!marker) return;
    var name = Array.prototype.find.call(marker.classList, function (c) {
      return c.indexOf("st-key-@OPEN@_") === 0;
    }).slice("st-key-@OPEN@_".length);
    if (name === opened) return;
    var box = current(".st-key-@DOCUMENT@"), text = current(".st-key-@TEXT@");
    if (!box || !text) return;
    var cut = name.lastIndexOf("_"), card = name.slice(0, cut);
    var place = placeOf(text, parseInt(name.slice(cut + 1), 10));
    var sameCard = opened !== null && opened.slice(0, opened.lastIndexOf("_")) === card;
    opened = name;
    if (!sameCard) box.scrollTop = 0;  // a new card starts at the top (its title) when the place shows there
    if (!place) return;
    var range = doc.createRange();
    range.setStart(place.node, place.offset);
    range.setEnd(place.node, place.offset + 1);
    var at = range.getBoundingClientRect(), frame = box.getBoundingClientRect();
    if (at.top >= frame.top && at.bottom <= frame.bottom) return;
    box.scrollTop = Math.max(box.scrollTop + at.top - frame.top - @OPEN_MARGIN_PX@, 0);
  }
  function tidy() {
    doc.querySelectorAll(HELP).forEach(function (b) { b.tabIndex = -1; });
    release();
    pressPending();
    refocus();
    openAt();
  }
  new MutationObserver(tidy).observe(doc.body, {
    childList: true, subtree: true, attributes: true,
    attributeFilter: ["data-test-script-state", "data-test-connection-state", "disabled"]
  });
  tidy();
})();
</script>"""
_SCRIPT = (
    _SCRIPT.replace("@REASON@", REASON)
    .replace("@GRADES@", GRADES)
    .replace("@REFOCUS_MS@", str(REFOCUS_MS))
    .replace("@QUIET_MS@", str(QUIET_MS))
    .replace("@PENDING_MS@", str(PENDING_MS))
    .replace("@OPEN@", OPEN)
    .replace("@DOCUMENT@", DOCUMENT)
    .replace("@TEXT@", TEXT)
    .replace("@OPEN_MARGIN_PX@", str(OPEN_MARGIN_PX))
)


def install() -> None:
    """Send the keyboard script and the form's style (constant text) to the page; call once per page run. It
    goes in the sidebar (present, if collapsed, on every page), out of the way of the page's own content."""
    st.sidebar.html(_STYLE + _SCRIPT, unsafe_allow_javascript=True, width="content")


def document_box(text: str, *, below: int = 0):
    """The bordered box the document goes in: of fixed height (scrolling) for a long document, so the form
    below stays in view; a short one takes the room it needs. ``below``: the px of controls the page puts
    between the box and the form, taken from a long document's box so the form stays where it was."""
    long = len(text) > LONG_DOCUMENT_CHARS or text.count("\n") > LONG_DOCUMENT_LINES
    return st.container(border=True, key=DOCUMENT, height=DOCUMENT_HEIGHT - below if long else "content")


def open_at(card: str, text: str, offset: int) -> None:
    """Open the document box at character ``offset`` of ``text`` (what the `TEXT` container shows): a hidden
    marker, keyed by ``card`` (letters, digits and ``_``: one name per card and pair) and the count of
    non-space characters before ``offset``, that the script scrolls the box to (see the module's docstring).
    Call it inside `document_box`, after the text."""
    before = len("".join(text[: max(offset, 0)].split()))
    st.container(key=f"{OPEN}_{card}_{before}").markdown("·")  # an empty container is never drawn; hidden
