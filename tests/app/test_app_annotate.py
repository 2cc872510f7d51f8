"""AppTest: the annotate card (grades, reason, unsure, skip, progress, stale labels) and My labels (edits)."""

from __future__ import annotations

import re

import pytest
from app_helpers import app_as, judge_all, plain, texts

from annotate_app.services import labels, queue
from annotate_app.services.auth import authenticate
from annotate_app.ui import state

PAIR = re.compile(r"Query (\S+) · document (\S+)")


def _pair(at) -> tuple[str, str]:
    found = [PAIR.fullmatch(c.value) for c in at.caption]
    return next(m.groups() for m in found if m)


def _view(at):
    return at.session_state[state.CURRENT_PAIR]


def _label(at, grade: int | None, reason: str, *, unsure: bool = False):
    view = _view(at)
    if grade is not None:
        at.button(key=state.grade_button(view.pair_id, grade)).click().run()
    at.text_area(key=state.reason(view.pair_id)).input(reason)
    if unsure:
        at.checkbox(key=state.unsure(view.pair_id)).check()
    return at.button(key=state.submit(view.pair_id)).click().run()


def test_the_card_shows_guidelines_pair_highlight_grades_and_progress(app_db):
    at = app_as(app_db, "alice")
    assert not at.exception
    assert [t.value for t in at.title] == ["Annotate"]
    assert at.expander[0].label == "Guidelines (version 1)"
    assert "Judging guidelines (demo)" in at.expander[0].markdown[0].value
    assert _pair(at) == ("q1", "D1")
    assert any(":orange-background[" in m.value for m in at.markdown)  # query terms highlighted
    assert [plain(b.label) for b in at.main.button][:4] == [
        "0 · Not relevant",
        "1 · Related, does not answer",
        "2 · Partly answers",
        "3 · Fully answers",
    ]
    assert at.get("progress")[0].proto.text == "0 / 12 judged"


def test_a_grade_click_shows_the_chosen_grade(app_db):
    at = app_as(app_db, "alice")
    at.button(key=state.grade_button(_view(at).pair_id, 3)).click().run()
    assert "Chosen grade: :blue-background[**3 · Fully answers**]" in [m.value for m in at.markdown]
    assert at.button(key=state.grade_button(_view(at).pair_id, 3)).proto.type == "primary"


def test_submit_saves_the_label_and_shows_the_next_pair(app_db):
    at = app_as(app_db, "alice")
    first = _view(at)
    at = _label(at, 2, "describes the power-off step", unsure=True)
    assert not at.error
    assert plain(at.success[0].value) == "Saved q1 · D1: grade 2 · Partly answers (version 1)."
    assert _view(at).pair_id != first.pair_id
    assert _pair(at) == ("q1", "D2")
    assert at.get("progress")[0].proto.text == "1 / 12 judged"
    alice = authenticate(app_db, "alice", "alice-demo")
    saved = labels.my_labels(app_db, alice, "demo")
    assert [(x.doc_id, x.grade, x.reason, x.unsure, x.version) for x in saved] == [
        ("D1", 2, "describes the power-off step", True, 1)
    ]
    assert 0 <= saved[0].seconds < 60


@pytest.mark.parametrize(
    ("grade", "reason", "message"),
    [
        (2, "ok", "reason must have at least 5 characters; got 2"),
        (2, "    ", "reason must have at least 5 characters; got 0"),
        (None, "a fine reason", "Pick a grade first (buttons or keys 0/1/2/3)."),
    ],
)
def test_validation_errors_keep_the_pair_and_the_text(app_db, grade, reason, message):
    at = app_as(app_db, "alice")
    view = _view(at)
    at = _label(at, grade, reason)
    assert texts(at.error) == [message]
    assert _view(at).pair_id == view.pair_id
    assert at.text_area(key=state.reason(view.pair_id)).value == reason
    assert at.get("progress")[0].proto.text == "0 / 12 judged"


def test_skip_needs_a_reason_then_moves_on(app_db):
    at = app_as(app_db, "alice")
    view = _view(at)
    at.button(key=state.skip(view.pair_id)).click().run()
    assert texts(at.error) == ["skip reason must have at least 5 characters; got 0"]
    at.text_area(key=state.reason(view.pair_id)).input("cannot read this document")
    at.button(key=state.skip(view.pair_id)).click().run()
    assert plain(at.warning[0].value) == "Skipped q1 · D1."
    assert _view(at).pair_id != view.pair_id


def test_the_card_never_shows_another_annotators_label(app_db):
    bob = authenticate(app_db, "bob", "bob-demo")
    while (view := queue.next_pair(app_db, bob, "demo")) is not None:  # bob labels every pair first
        labels.save_label(app_db, bob, "demo", view.pair_id, grade=3, reason="BOB-SECRET-REASON")
    at = app_as(app_db, "alice")
    assert _pair(at) == ("q1", "D1")
    shown = " ".join(str(e.value) for e in at.main if hasattr(e, "value") and isinstance(e.value, str))
    assert "BOB-SECRET-REASON" not in shown and "bob" not in shown


def test_when_everything_is_judged_the_card_says_so(app_db):
    judge_all(app_db)
    at = app_as(app_db, "alice")
    assert plain(at.success[0].value).startswith("Nothing left to judge")
    assert at.get("progress")[0].proto.text == "12 / 12 judged"
    from annotate_app.services import scoring

    rita = authenticate(app_db, "rita", "rita-demo")
    scoring.queue_pairs(app_db, rita, "demo", [("q2", "D5")], note="a new pair")
    at.run()  # a full page run asks the queue again
    assert _pair(at) == ("q2", "D5")
    assert at.get("progress")[0].proto.text == "12 / 13 judged"


def test_a_stale_label_is_shown_as_such(app_db):
    from annotate_app.services import imports
    from annotate_app.services.auth import SYSTEM

    _label(app_as(app_db, "alice"), 2, "power off first")
    changed = b'{"doc_id": "D1", "title": "new title", "text": "rewritten text of D1"}\n'
    imports.import_documents(app_db, SYSTEM, "demo", changed, filename="docs-v2.jsonl")
    alice = authenticate(app_db, "alice", "alice-demo")
    queue.release_stale_claims(app_db, SYSTEM, "demo", older_than_minutes=0)  # free her open claim on D2
    at = app_as(app_db, "alice")
    assert _pair(at) == ("q1", "D1")
    stale = (
        "The document changed since you judged it (your grade was 2 · Partly answers on version 1; it is now"
    )
    assert plain(at.warning[0].value).startswith(stale)
    assert queue.my_progress(app_db, alice, "demo").stale == 1


def test_my_labels_lists_own_labels_and_an_edit_adds_a_version(app_db):
    at = _label(app_as(app_db, "alice"), 2, "power off first")
    at.switch_page("views/annotate/my_labels.py").run()
    assert [t.value for t in at.title] == ["My labels"]
    assert len(at.dataframe) == 1
    view = _view(at)
    at.selectbox(key=state.EDIT_CHOICE).select(at.selectbox(key=state.EDIT_CHOICE).options[0]).run()
    edit = at.session_state[state.EDIT_PAIR]
    assert at.text_area(key=state.reason(edit.pair_id, "e")).value == "power off first"
    at.button(key=state.grade_button(edit.pair_id, 3, "e")).click().run()
    at.text_area(key=state.reason(edit.pair_id, "e")).input("it also covers the reassembly").run()
    at.button(key=state.submit(edit.pair_id, "e")).click().run()
    assert plain(at.success[0].value) == "Saved q1 · D1: grade 3 · Fully answers (version 2)."
    alice = authenticate(app_db, "alice", "alice-demo")
    history = labels.pair_history(app_db, alice, "demo", edit.pair_id)
    assert [(x.version, x.grade) for x in history] == [(2, 3), (1, 2)]
    assert view.pair_id != edit.pair_id


def test_a_reviewer_who_is_not_a_member_is_told_so(app_db):
    at = app_as(app_db, "rita", "views/annotate/annotate.py")
    assert texts(at.error) == ["rita is not an annotator of project 'demo'"]
