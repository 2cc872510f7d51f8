"""Qualification, pause and training feedback on gold pairs — on SQLite and PostgreSQL: a new annotator's
labels wait for qualification (left out of agreement and releases, then counted), the pause rule, a
reviewer's resume restarting the window, the settings' validation, the audit rows and the role checks."""

from __future__ import annotations

import json

import pytest

from annotate_app.services import (
    _gold_draw,
    audit,
    gate,
    gold,
    labels,
    pooling,
    projects,
    qualification,
    queue,
)
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from annotate_app.services.qualification import Standing


@pytest.fixture
def always_gold(monkeypatch):
    """Every claim of a project with a gold rate comes up gold (the draw's coin forced)."""
    monkeypatch.setattr(_gold_draw.random, "random", lambda: 0.0)


def _keys(db, rita) -> list[tuple[str, str]]:
    table = pooling.list_pairs(db, rita, "demo", limit=1000)
    return sorted((r.query_id, r.doc_id) for r in table.itertuples())


def _gold(db, rita, keys) -> None:
    for query_id, doc_id in keys:
        gold.add_gold(db, rita, "demo", query_id, doc_id, grade=1, explanation="on topic, partly")


def _label_next(db, who, grade: int) -> tuple[str, str]:
    view = queue.next_pair(db, who, "demo")
    assert view is not None
    labels.save_label(db, who, "demo", view.pair_id, grade=grade, reason="judged it")
    return view.query_id, view.doc_id


def _audit(db, action: str) -> list[tuple[str, dict]]:
    return [(e.target, e.details) for e in audit.audit_log(db, SYSTEM, project="demo", action=action)]


def _status(db, rita, name: str):
    return {s.annotator: s for s in qualification.annotator_statuses(db, rita, "demo")}[name]


def test_labels_wait_for_qualification_then_count(demo, actors):
    """bob labelled before the rule (kept counting, audited); alice is new: two gold pairs first (one wrong:
    not qualified), then ordinary pairs whose labels stay out of agreement and releases; a third gold pair
    right qualifies her and her earlier labels count."""
    alice, bob, rita = actors["alice"], actors["bob"], actors["rita"]
    keys = _keys(demo, rita)
    _gold(demo, rita, keys[:2])
    while queue.next_pair(demo, bob, "demo") is not None:
        _label_next(demo, bob, 1)
    projects.update_settings(demo, SYSTEM, "demo", qualify_pairs=2, qualify_accuracy=1.0)
    assert _audit(demo, "annotator_qualified") == [
        ("bob", {"why": "labelled before the project asked for qualification"})
    ]
    assert _status(demo, rita, "bob").status == Standing.QUALIFIED
    assert _status(demo, rita, "alice").status == Standing.QUALIFYING

    assert {_label_next(demo, alice, 0), _label_next(demo, alice, 1)} == set(keys[:2])  # gold first
    mine = qualification.my_status(demo, alice, "demo")
    assert (mine.status, mine.window, mine.gold_pairs, mine.correct, mine.bar) == ("qualifying", 2, 2, 1, 1.0)
    done = [_label_next(demo, alice, 1) for _ in range(4)]  # no gold left: ordinary pairs
    assert not set(done) & set(keys[:2])
    before = gate.agreement(demo, rita, "demo")
    assert before.n_annotators == 1  # bob only: alice's labels wait
    missing = gate.blockers(demo, rita, "demo").missing_labels

    third = next(k for k in keys if k not in done and k not in keys[:2])
    _gold(demo, rita, [third])
    assert _label_next(demo, alice, 1) == third  # still qualifying: her claims draw gold
    mine = qualification.my_status(demo, alice, "demo")
    assert (mine.status, mine.gold_pairs, mine.correct) == ("qualified", 2, 2)
    after = gate.agreement(demo, rita, "demo")
    assert after.n_annotators == 2
    assert (before.n_pairs, after.n_pairs) == (0, 4)  # her 4 ordinary labels count now (gold draws never)
    assert gate.blockers(demo, rita, "demo").missing_labels < missing
    (entry,) = [d for who, d in _audit(demo, "annotator_qualified") if who == "alice"]
    assert entry == {"gold_pairs": 2, "correct": 2, "bar": 1.0}


def test_a_qualified_annotator_draws_gold_at_the_rate_only(demo, actors):
    """Once qualified, a gold rate of 0 means no more gold draws (the gold pairs are the queue's last)."""
    alice, rita = actors["alice"], actors["rita"]
    keys = _keys(demo, rita)
    _gold(demo, rita, keys[-2:])
    projects.update_settings(demo, SYSTEM, "demo", qualify_pairs=1, qualify_accuracy=0.5)
    assert _label_next(demo, alice, 1) in keys[-2:]
    assert qualification.my_status(demo, alice, "demo").status == Standing.QUALIFIED
    assert _label_next(demo, alice, 1) == keys[0]


def test_pause_then_resume_restarts_the_window(demo, actors, always_gold):
    alice, bob, rita = actors["alice"], actors["bob"], actors["rita"]
    _gold(demo, rita, _keys(demo, rita)[:4])
    gold.set_gold_rate(demo, rita, "demo", 0.5)
    projects.update_settings(demo, SYSTEM, "demo", pause_pairs=2, pause_accuracy=0.75)
    _label_next(demo, alice, 1)
    _label_next(demo, alice, 0)  # 1 of the last 2 right: 50% < 75%
    assert queue.next_pair(demo, alice, "demo") is None
    mine = qualification.my_status(demo, alice, "demo")
    assert (mine.status, mine.window, mine.gold_pairs, mine.correct, mine.bar) == ("paused", 2, 2, 1, 0.75)
    assert mine.explain() == (
        "You are paused: 1 of your last 2 gold pairs were right (50%), below the bar of 75%. You get no new "
        "pairs until a reviewer resumes you."
    )
    assert _audit(demo, "annotator_paused") == [("alice", {"gold_pairs": 2, "correct": 1, "bar": 0.75})]
    assert _status(demo, rita, "alice").status == Standing.PAUSED
    assert _status(demo, rita, "bob").status == Standing.QUALIFIED

    for who in (alice, bob):
        with pytest.raises(PermissionDenied):
            qualification.resume(demo, who, "demo", "alice")
    with pytest.raises(Conflict, match="not paused"):
        qualification.resume(demo, rita, "demo", "bob")
    with pytest.raises(NotFound, match="not a member"):
        qualification.resume(demo, rita, "demo", "nobody")
    resumed = qualification.resume(demo, rita, "demo", "alice")
    assert (resumed.status, resumed.gold_pairs) == ("qualified", 0)  # the window restarts
    (entry,) = _audit(demo, "annotator_resumed")
    assert entry[0] == "alice" and (entry[1]["gold_pairs"], entry[1]["correct"]) == (2, 1)

    _label_next(demo, alice, 0)  # wrong, but alone in the new window: no pause
    assert qualification.my_status(demo, alice, "demo").status == Standing.QUALIFIED
    _label_next(demo, alice, 0)  # two wrong since the resume: paused again
    assert qualification.my_status(demo, alice, "demo").status == Standing.PAUSED
    assert queue.next_pair(demo, alice, "demo") is None
    assert len(_audit(demo, "annotator_paused")) == 2


def test_statuses_and_own_status_need_their_roles(demo, actors):
    with pytest.raises(PermissionDenied):
        qualification.annotator_statuses(demo, actors["alice"], "demo")
    with pytest.raises(PermissionDenied):
        qualification.my_status(demo, SYSTEM, "demo")
    with pytest.raises(PermissionDenied):
        projects.update_settings(demo, actors["rita"], "demo", pause_pairs=3)


def test_training_feedback_after_a_gold_label_only(demo, actors, always_gold):
    alice, bob, rita = actors["alice"], actors["bob"], actors["rita"]
    keys = _keys(demo, rita)
    _gold(demo, rita, keys[-2:])  # the ordinary queue's last pairs
    gold.set_gold_rate(demo, rita, "demo", 0.5)
    view = queue.next_pair(demo, alice, "demo")
    assert "on topic, partly" not in repr(view)  # the blind rule: nothing before the save
    saved = labels.save_label(demo, alice, "demo", view.pair_id, grade=3, reason="judged it")
    assert (saved.gold_grade, saved.gold_explanation) == (None, None)  # feedback is off
    projects.update_settings(demo, SYSTEM, "demo", gold_feedback=True)
    view = queue.next_pair(demo, bob, "demo")
    saved = labels.save_label(demo, bob, "demo", view.pair_id, grade=3, reason="judged it")
    assert (saved.gold_grade, saved.gold_explanation) == (1, "on topic, partly")
    assert "alice" not in repr(saved)
    gold.set_gold_rate(demo, rita, "demo", 0.0)
    view = queue.next_pair(demo, bob, "demo")
    assert (view.query_id, view.doc_id) == keys[0]
    saved = labels.save_label(demo, bob, "demo", view.pair_id, grade=1, reason="judged it")
    assert (saved.gold_grade, saved.gold_explanation) == (None, None)  # not a gold pair


BAD_SETTINGS = [
    ("qualify_pairs", 0),
    ("qualify_pairs", -1),
    ("qualify_pairs", 1.5),
    ("qualify_pairs", True),
    ("qualify_pairs", "3"),
    ("pause_pairs", 0),
    ("pause_pairs", 10_001),
    ("qualify_accuracy", 0),
    ("qualify_accuracy", 1.01),
    ("qualify_accuracy", float("nan")),
    ("qualify_accuracy", None),
    ("pause_accuracy", -0.5),
    ("pause_accuracy", "0.5"),
    ("gold_feedback", "yes"),
]


@pytest.mark.parametrize(("name", "value"), BAD_SETTINGS, ids=[f"{n}={v!r}" for n, v in BAD_SETTINGS])
def test_bad_gold_settings_name_the_parameter_and_value(demo, name, value):
    with pytest.raises(InvalidInput) as caught:
        projects.update_settings(demo, SYSTEM, "demo", **{name: value})
    assert name in str(caught.value) and repr(value) in str(caught.value)
    assert projects.get_project(demo, SYSTEM, "demo").settings.qualify_pairs is None


def test_gold_settings_are_saved_and_audited(demo):
    info = projects.update_settings(
        demo, SYSTEM, "demo", qualify_pairs=5, qualify_accuracy=0.9, pause_pairs=10, pause_accuracy=0.6
    )
    s = info.settings
    assert (s.qualify_pairs, s.qualify_accuracy, s.pause_pairs, s.pause_accuracy) == (5, 0.9, 10, 0.6)
    info = projects.update_settings(demo, SYSTEM, "demo", qualify_pairs=None, gold_feedback=True)
    assert (info.settings.qualify_pairs, info.settings.gold_feedback) == (None, True)
    changed = [d for _, d in _audit(demo, "settings_changed")]
    assert changed[:2] == [
        {"qualify_pairs": None, "gold_feedback": True},
        {"qualify_pairs": 5, "qualify_accuracy": 0.9, "pause_pairs": 10, "pause_accuracy": 0.6},
    ]


def test_passage_agreement_leaves_out_labels_that_wait(demo, actors):
    """The passages' agreement compares the same labels as the gate: not those waiting for qualification."""
    from annotate_app.services import passage_agreement

    alice, bob, rita = actors["alice"], actors["bob"], actors["rita"]
    while queue.next_pair(demo, bob, "demo") is not None:
        _label_next(demo, bob, 2)
    projects.update_settings(demo, SYSTEM, "demo", qualify_pairs=1)  # bob labelled: he keeps counting
    for _ in range(3):
        _label_next(demo, alice, 2)  # no gold pair: ordinary pairs, her labels wait
    assert passage_agreement.passage_agreement(demo, rita, "demo").n_pairs == 0
    projects.update_settings(demo, SYSTEM, "demo", qualify_pairs=None)
    assert passage_agreement.passage_agreement(demo, rita, "demo").n_pairs == 3


def test_passage_agreement_leaves_out_gold_draws(demo, actors, always_gold):
    """A gold draw's label is scored against gold, never compared: the passages' agreement as the gate's."""
    from annotate_app.services import passage_agreement

    alice, bob, rita = actors["alice"], actors["bob"], actors["rita"]
    keys = _keys(demo, rita)
    while queue.next_pair(demo, bob, "demo") is not None:
        _label_next(demo, bob, 2)
    _gold(demo, rita, keys[:1])
    gold.set_gold_rate(demo, rita, "demo", 0.5)
    assert _label_next(demo, alice, 2) == keys[0]  # a gold draw beside bob's ordinary label
    assert gate.agreement(demo, rita, "demo").n_pairs == 0
    assert passage_agreement.passage_agreement(demo, rita, "demo").n_pairs == 0


def _machine(grade: int, keys) -> bytes:
    lines = (
        json.dumps({"query_id": q, "doc_id": d, "grade": grade, "reason": "made elsewhere"}) for q, d in keys
    )
    return ("\n".join(lines) + "\n").encode()


def _counted(confusion: dict) -> dict[tuple[str, str], int]:
    """(human grade, judge grade) → count, the cells that hold labels."""
    return {(h, j): n for h, row in confusion.items() for j, n in row.items() if n}


def test_judges_are_calibrated_on_the_labels_that_count(demo, actors):
    """Calibration reads the gate's labels: not those of a member who waits for qualification, never a gold
    draw's (bob's 12 labels grade 1; alice, qualifying, a gold draw and 3 ordinary labels grade 3)."""
    from annotate_app.services import judges

    alice, bob, rita = actors["alice"], actors["bob"], actors["rita"]
    keys = _keys(demo, rita)
    while queue.next_pair(demo, bob, "demo") is not None:
        _label_next(demo, bob, 1)
    _gold(demo, rita, keys[-1:])
    projects.update_settings(demo, SYSTEM, "demo", qualify_pairs=1, qualify_accuracy=1.0)
    assert _label_next(demo, alice, 3) == keys[-1]  # her gold draw, wrong: she still qualifies
    for _ in range(3):
        _label_next(demo, alice, 3)
    assert _status(demo, rita, "alice").status == Standing.QUALIFYING
    judges.import_labels(demo, SYSTEM, "demo", "machine", _machine(1, keys))

    (cal,) = judges.calibrate(demo, rita, "demo")
    assert _counted(cal.confusion) == {("1", "1"): 12}  # bob's labels only
    assert (cal.n_pairs, cal.n_span_without_evidence) == (12, 12)
    projects.update_settings(demo, SYSTEM, "demo", qualify_pairs=None)  # alice's labels count now
    (cal,) = judges.calibrate(demo, rita, "demo")
    assert _counted(cal.confusion) == {("1", "1"): 12, ("3", "1"): 3}  # her gold draw still does not
    assert cal.n_span_without_evidence == 15


def test_a_change_of_the_rules_takes_effect_at_once(demo, actors, always_gold):
    """Each change of the gold rules re-evaluates every member in its transaction, audited: a lower
    qualification bar qualifies, pause turned on pauses, a lower pause bar or the pause rule off lifts the
    pause (the window is not restarted); an annotator without gold labels stays as they were."""
    alice, rita = actors["alice"], actors["rita"]
    _gold(demo, rita, _keys(demo, rita)[:4])
    projects.update_settings(demo, SYSTEM, "demo", qualify_pairs=2, qualify_accuracy=1.0)
    _label_next(demo, alice, 1)
    _label_next(demo, alice, 0)  # 1 of 2 right: below 100%
    assert _status(demo, rita, "alice").status == Standing.QUALIFYING

    why = qualification_rules_changed()
    projects.update_settings(demo, SYSTEM, "demo", qualify_accuracy=0.5)
    assert _status(demo, rita, "alice").status == Standing.QUALIFIED
    assert _audit(demo, "annotator_qualified") == [
        ("alice", {"why": why, "gold_pairs": 2, "correct": 1, "bar": 0.5})
    ]
    projects.update_settings(demo, SYSTEM, "demo", pause_pairs=2, pause_accuracy=0.75)
    assert _status(demo, rita, "alice").status == Standing.PAUSED
    assert queue.next_pair(demo, alice, "demo") is None
    assert _audit(demo, "annotator_paused") == [
        ("alice", {"why": why, "gold_pairs": 2, "correct": 1, "bar": 0.75})
    ]
    assert _status(demo, rita, "bob").status == Standing.QUALIFYING  # no gold label: nothing to decide

    projects.update_settings(demo, SYSTEM, "demo", pause_accuracy=0.5)
    lifted = _status(demo, rita, "alice")
    assert (lifted.status, lifted.gold_pairs, lifted.since) == (Standing.QUALIFIED, 2, None)
    assert _audit(demo, "annotator_resumed") == [
        ("alice", {"why": why, "gold_pairs": 2, "correct": 1, "bar": 0.5})
    ]
    assert queue.next_pair(demo, alice, "demo") is not None
    projects.update_settings(demo, SYSTEM, "demo", pause_accuracy=0.75)
    assert _status(demo, rita, "alice").status == Standing.PAUSED
    projects.update_settings(demo, SYSTEM, "demo", pause_pairs=None)
    assert _status(demo, rita, "alice").status == Standing.QUALIFIED
    assert _audit(demo, "annotator_resumed")[0] == ("alice", {"why": why})
    projects.update_settings(demo, SYSTEM, "demo", gold_feedback=True)  # not a gold rule: nothing re-read
    assert len(_audit(demo, "annotator_paused")) == 2


def qualification_rules_changed() -> str:
    from annotate_app.services._gold_rules import RULES_CHANGED

    return RULES_CHANGED
