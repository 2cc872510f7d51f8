"""AppTest: the card sends the document version it showed (issue 16 item 2). A re-import between showing the
pair and Submit refuses the save: the card reloads the new version with the warning, keeps the typed grade
and reason, and the next Submit stores the label for the version now shown."""

from __future__ import annotations

import json

from app_helpers import SAMPLE, app_as, plain
from sqlalchemy import text

from annotate_app.services import imports
from annotate_app.services.auth import SYSTEM
from annotate_app.ui import state

WARNING = "This document changed while you read it; please judge it again (it is now version 2)."
REASON = "the steps are all there"


def _reimport_d1(db) -> None:
    docs = [json.loads(line) for line in (SAMPLE / "docs.jsonl").read_text().splitlines()]
    lines = "".join(
        json.dumps(dict(d, text=d["text"] + " (updated)") if d["doc_id"] == "D1" else d) + "\n" for d in docs
    )
    imports.import_documents(db, SYSTEM, "demo", lines.encode(), filename="docs-v2.jsonl")


def _labels(db) -> list[tuple]:
    with db.read() as s:
        return [
            tuple(r) for r in s.execute(text("SELECT grade, reason, doc_version FROM labels ORDER BY id"))
        ]


def _fill_and_submit(at, pair_id: int, scope: str = "q"):
    at.button(key=state.grade_button(pair_id, 3, scope)).click().run()
    at.text_area(key=state.reason(pair_id, scope)).input(REASON)
    return at.button(key=state.submit(pair_id, scope)).click().run()


def test_a_document_reimported_while_shown_is_judged_again_with_the_form_kept(app_db):
    at = app_as(app_db, "alice")
    shown = at.session_state[state.CURRENT_PAIR]
    assert (shown.doc_id, shown.doc_version) == ("D1", 1) and not at.warning
    assert at.session_state[state.shown_version(shown.pair_id)] == 1
    _reimport_d1(app_db)  # an admin, elsewhere, while alice reads version 1
    at = _fill_and_submit(at, shown.pair_id)
    assert _labels(app_db) == []  # refused: never stored as version 2
    assert [plain(w.value) for w in at.warning] == [WARNING]
    assert not at.error and not at.success
    now = at.session_state[state.CURRENT_PAIR]
    assert (now.pair_id, now.doc_version, now.doc_changed) == (shown.pair_id, 2, True)
    assert any("(updated)" in plain(m.value) for m in at.markdown)  # the new text is on the card
    assert at.text_area(key=state.reason(shown.pair_id)).value == REASON  # nothing typed is lost
    assert at.session_state[state.grade(shown.pair_id)] == 3
    at = at.button(key=state.submit(shown.pair_id)).click().run()
    assert [plain(s.value) for s in at.success] == ["Saved q1 · D1: grade 3 · Fully answers (version 1)."]
    assert _labels(app_db) == [(3, REASON, 2)]


def test_an_edit_of_a_document_reimported_meanwhile_is_refused_and_reloaded(app_db):
    at = app_as(app_db, "alice")
    first = at.session_state[state.CURRENT_PAIR]
    at = _fill_and_submit(at, first.pair_id)
    assert _labels(app_db) == [(3, REASON, 1)]
    at.switch_page("views/annotate/my_labels.py").run()
    picker = at.selectbox(key=state.EDIT_CHOICE)
    at = picker.select(picker.options[0]).run()
    assert at.session_state[state.EDIT_PAIR].doc_version == 1
    _reimport_d1(app_db)
    at.button(key=state.grade_button(first.pair_id, 2, "e")).click().run()
    at = at.button(key=state.submit(first.pair_id, "e")).click().run()
    assert [plain(e.value) for e in at.error] == [
        "this document changed while you read it; please judge it again"
    ]
    assert _labels(app_db) == [(3, REASON, 1)]
    assert at.session_state[state.EDIT_PAIR].doc_version == 2  # reloaded: the stale label's warning shows
    assert [plain(w.value) for w in at.warning] == [
        "The document changed since you judged it (your grade was 3 · Fully answers on version 1; it is now "
        "version 2). Please judge it again."
    ]
    assert at.session_state[state.grade(first.pair_id, "e")] == 2  # the new choice is kept
    at = at.button(key=state.submit(first.pair_id, "e")).click().run()
    assert _labels(app_db) == [(3, REASON, 1), (2, REASON, 2)]
