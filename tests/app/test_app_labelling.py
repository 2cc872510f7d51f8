"""AppTest: the labelling card's messages (exact text, escaped once), the edit card closing after a save, the
long-document box, and the keyboard script (the same constant bytes on every labelling page)."""

from __future__ import annotations

import json

import pytest
from app_helpers import app_as, plain

from annotate_app.services import labels
from annotate_app.services.auth import authenticate
from annotate_app.ui import state
from annotate_app.ui.components import keyboard
from annotate_app.ui.escape import escape_markdown

GRADE_1 = "1 · Related, does not answer"


def _label(at, grade: int, reason: str, scope: str = "q"):
    view = at.session_state[state.CURRENT_PAIR] if scope == "q" else at.session_state[state.EDIT_PAIR]
    at.button(key=state.grade_button(view.pair_id, grade, scope)).click().run()
    at.text_area(key=state.reason(view.pair_id, scope)).input(reason)
    return at.button(key=state.submit(view.pair_id, scope)).click().run()


def test_the_save_message_of_a_grade_with_a_comma_has_no_stray_backslash(app_db):
    at = _label(app_as(app_db, "alice"), 1, "mentions the battery only")
    message = f"Saved q1 · D1: grade {GRADE_1} (version 1)."
    assert [s.value for s in at.success] == [escape_markdown(message)]  # escaped once, for Markdown
    assert plain(at.success[0].value) == message


def test_the_final_grade_message_has_no_stray_backslash(labelled_db):
    at = app_as(labelled_db, "rita", "views/review/adjudicate.py")
    pair_id = next(int(b.key.rsplit("_", 1)[1]) for b in at.button if b.key and b.key.startswith("a_submit_"))
    at.button(key=state.grade_button(pair_id, 1, "a")).click().run()
    at.text_area(key=state.reason(pair_id, "a")).input("related, but it does not answer").run()
    at.button(key=state.submit(pair_id, "a")).click().run()
    assert [s.value for s in at.success] == [escape_markdown(f"Final grade {GRADE_1} saved.")]


def _open_edit(at):
    picker = at.selectbox(key=state.EDIT_CHOICE)
    return picker.select(picker.options[0]).run()


def test_saving_an_edit_closes_the_card_and_the_picker_lists_the_new_version(app_db):
    at = _label(app_as(app_db, "alice"), 2, "power off first")
    at.switch_page("views/annotate/my_labels.py").run()
    assert at.selectbox(key=state.EDIT_CHOICE).options == ["q1 · D1 (grade 2, version 1)"]
    at = _open_edit(at)
    edit = at.session_state[state.EDIT_PAIR]
    at = _label(at, 3, "it also covers the reassembly", scope="e")
    assert [plain(s.value) for s in at.success] == ["Saved q1 · D1: grade 3 · Fully answers (version 2)."]
    assert at.selectbox(key=state.EDIT_CHOICE).value is None
    assert at.selectbox(key=state.EDIT_CHOICE).options == ["q1 · D1 (grade 3, version 2)"]
    assert state.EDIT_PAIR not in at.session_state
    assert not [b for b in at.button if b.key == state.submit(edit.pair_id, "e")]  # the card is closed
    # a later run adds nothing and shows nothing again (a double click: tests/e2e/test_e2e_keyboard.py)
    at.run()
    assert not at.success and not at.error
    alice = authenticate(app_db, "alice", "alice-demo")
    history = labels.pair_history(app_db, alice, "demo", edit.pair_id)
    assert [(x.version, x.grade) for x in history] == [(2, 3), (1, 2)]

    at = _open_edit(at)  # opened again, the card starts from the new version
    assert at.text_area(key=state.reason(edit.pair_id, "e")).value == "it also covers the reassembly"


def _document_heights(at) -> list:
    """The height settings of the document boxes on the page (containers keyed `keyboard.DOCUMENT`)."""

    def walk(block):
        for child in getattr(block, "children", {}).values():
            proto = getattr(child, "proto", None)
            if child.type == "flex_container" and proto.id.endswith(f"-{keyboard.DOCUMENT}"):
                yield proto.height_config
            yield from walk(child)

    return list(walk(at.main))


@pytest.mark.parametrize(("length", "fixed"), [(200, False), (keyboard.LONG_DOCUMENT_CHARS + 1, True)])
def test_a_long_document_gets_a_scroll_box_of_fixed_height(app_db, length, fixed):
    from annotate_app.services import imports
    from annotate_app.services.auth import SYSTEM

    text = ("更换电池 battery " * length)[:length]
    line = json.dumps({"doc_id": "D1", "title": "D1", "text": text}) + "\n"
    imports.import_documents(app_db, SYSTEM, "demo", line.encode(), filename="d1.jsonl")
    at = app_as(app_db, "alice")
    [height] = _document_heights(at)
    assert (height.pixel_height == keyboard.DOCUMENT_HEIGHT) is fixed


@pytest.mark.parametrize(("username", "page"), [("alice", None), ("rita", "views/review/adjudicate.py")])
def test_the_keyboard_script_is_constant_and_holds_no_user_text(labelled_db, username, page):
    if page is None:  # alice's queue is empty in the labelled demo: judge on a fresh pair
        from annotate_app.services import scoring

        rita = authenticate(labelled_db, "rita", "rita-demo")
        scoring.queue_pairs(labelled_db, rita, "demo", [("q2", "D5")], note="a new pair")
    at = app_as(labelled_db, username, page)
    bodies = [e.proto.body for e in at.get("html")]
    assert bodies.count(keyboard._STYLE + keyboard._SCRIPT) == 1
    script = keyboard._STYLE + keyboard._SCRIPT
    for text in ("q2", "D5", "alice", "rita", "普通商品", "退货"):  # on the page, never in the script
        assert text not in script


def test_the_page_scripts_survive_the_html_sanitizer():
    """Streamlit's st.html sanitizer (DOMPurify) drops a script whose text holds ``<`` before a letter, digit,
    ``/`` or ``!``: every key the script handles would be lost."""
    import re

    from annotate_app.ui.components import evidence

    for script in (keyboard._SCRIPT, evidence._SCRIPT):
        body = script.removeprefix("<script>").removesuffix("</script>")
        assert re.findall(r"<[/\w!]", body) == []
