"""AppTest: the gold rules on the pages — a paused annotator reads why, training feedback after a gold pair
(the explanation as plain text), and the Annotators page's standing section with Resume."""

from __future__ import annotations

from app_helpers import app_as, plain, texts

from annotate_app.services import gold, labels, projects, qualification, queue
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.ui import state

HOSTILE = "<b>not bold</b> **nor strong** <script>alert(1)</script>"


def _pause_alice(db) -> None:
    """alice labels q1 · D1 (the queue's first pair, gold, expected 2) wrong with the pause rule at one."""
    rita, alice = authenticate(db, "rita", "rita-demo"), authenticate(db, "alice", "alice-demo")
    gold.add_gold(db, rita, "demo", "q1", "D1", grade=2, explanation="answers half of the question")
    projects.update_settings(db, SYSTEM, "demo", pause_pairs=1, pause_accuracy=0.5)
    view = queue.next_pair(db, alice, "demo")
    assert (view.query_id, view.doc_id) == ("q1", "D1")
    labels.save_label(db, alice, "demo", view.pair_id, grade=0, reason="not about it")


def test_a_paused_annotator_reads_why(app_db):
    _pause_alice(app_db)
    at = app_as(app_db, "alice")
    assert not at.exception
    assert texts(at.warning) == [
        "You are paused: 0 of your last 1 gold pairs were right (0%), below the bar of 50%. You get no new "
        "pairs until a reviewer resumes you."
    ]
    assert not at.success  # not "nothing left"
    assert state.submit(1) not in [b.key for b in at.button]


def test_training_feedback_shows_after_the_save_as_plain_text(app_db):
    rita = authenticate(app_db, "rita", "rita-demo")
    gold.add_gold(app_db, rita, "demo", "q1", "D1", grade=2, explanation=HOSTILE)
    projects.update_settings(app_db, SYSTEM, "demo", gold_feedback=True)
    at = app_as(app_db, "alice")
    assert not at.info and HOSTILE not in [t.value for t in at.text]  # nothing before the save
    view = at.session_state[state.CURRENT_PAIR]
    assert (view.query_id, view.doc_id) == ("q1", "D1")
    at.button(key=state.grade_button(view.pair_id, 3)).click().run()
    at.text_area(key=state.reason(view.pair_id)).input("fully on topic")
    at.button(key=state.submit(view.pair_id)).click().run()
    assert not at.exception
    assert texts(at.info) == ["Training feedback: that was a gold pair. Expected grade: 2 · Partly answers."]
    assert [t.value for t in at.text] == [HOSTILE]  # st.text: never Markdown nor HTML
    assert all("<b>" not in m.value for m in at.markdown)
    nxt = at.session_state[state.CURRENT_PAIR]
    at.button(key=state.grade_button(nxt.pair_id, 0)).click().run()
    at.text_area(key=state.reason(nxt.pair_id)).input("not on topic")
    at.button(key=state.submit(nxt.pair_id)).click().run()
    assert not at.info and not at.text  # once, and for gold pairs only


def test_reviewers_see_standing_and_resume(app_db):
    _pause_alice(app_db)
    at = app_as(app_db, "rita", "views/review/annotators.py")
    assert not at.exception
    assert "Standing under the gold rules" in [e.label for e in at.expander]
    table = at.table[0].value
    assert table.loc["alice"].tolist() == ["paused", "1", "1", "0", "0%", "50%"]
    assert table.loc["bob"].tolist() == ["qualified", "1", "0", "0", "-", "50%"]
    assert at.selectbox(key=state.ANNOTATORS_RESUME).options == ["alice"]
    at.button[[b.label for b in at.button].index("Resume")].click().run()
    assert not at.exception
    assert "alice resumed: their gold window restarts now." in texts(at.success)
    alice = authenticate(app_db, "alice", "alice-demo")
    assert qualification.my_status(app_db, alice, "demo").status == "qualified"
    assert [plain(b.label) for b in at.button].count("Resume") == 0


def test_alice_cannot_open_the_annotators_page(app_db):
    at = app_as(app_db, "alice", "views/review/annotators.py")
    assert "Standing under the gold rules" not in [e.label for e in at.expander]


def _save_settings(at):
    return at.button(key=f"FormSubmitter:{state.SETTINGS_FORM}-Save settings").click().run()


def test_the_project_page_sets_the_gold_rules(app_db):
    at = app_as(app_db, "admin", "views/admin/admin_project.py")
    assert not at.exception
    field = {n.label: n for n in at.number_input}
    field["Qualification: gold pairs a new annotator must pass (0: off)"].set_value(5)
    field["Pause: over the last gold pairs (0: off)"].set_value(10)
    field["Pause: below this exact accuracy"].set_value(0.6)
    next(c for c in at.checkbox if c.label.startswith("Training feedback")).check()
    _save_settings(at)
    assert (
        plain(at.success[0].value)
        == "Settings saved (qualify_pairs, pause_pairs, pause_accuracy, gold_feedback)."
    )
    s = projects.get_project(app_db, SYSTEM, "demo").settings
    assert (s.qualify_pairs, s.qualify_accuracy, s.pause_pairs, s.pause_accuracy, s.gold_feedback) == (
        5,
        0.8,
        10,
        0.6,
        True,
    )
    field = {n.label: n for n in at.number_input}
    field["Qualification: exact accuracy needed"].set_value(0.0)
    _save_settings(at)
    assert texts(at.error) == ["qualify_accuracy must be a number in (0, 1]; got 0.0"]
