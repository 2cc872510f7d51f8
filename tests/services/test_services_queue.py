"""The annotator queue and labels: blind, never twice, N per pair, skip, edits as versions, progress."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlalchemy import text

from annotate_app.services import labels, projects, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from annotate_app.store.models import utcnow


def _drain(db, actor, grade: int = 1) -> list[int]:
    seen = []
    while (view := queue.next_pair(db, actor, "demo")) is not None:
        seen.append(view.pair_id)
        labels.save_label(db, actor, "demo", view.pair_id, grade=grade, reason="judged it")
    return seen


def test_pair_view_has_what_the_screen_needs(actors, demo):
    view = queue.next_pair(demo, actors["alice"], "demo")
    assert (view.project, view.query_id, view.doc_id, view.doc_version) == ("demo", "q1", "D1", 1)
    assert view.query_text.startswith("A 型设备") and view.doc_title.startswith("A 型设备换电池前")
    assert view.doc_meta["title_en"].startswith("Model A") and view.query_meta["text_en"].startswith("What")
    assert view.grade_scale[3] == (3, "Fully answers") and view.min_reason_length == 5
    assert view.guidelines_version == 1 and view.guidelines.startswith("# Judging guidelines")
    assert view.current is None and not view.stale
    assert queue.next_pair(demo, actors["alice"], "demo") == view  # a reload shows the same pair


def test_least_covered_first_and_never_twice(actors, demo):
    alice, bob = actors["alice"], actors["bob"]
    first = queue.next_pair(demo, alice, "demo")
    second = queue.next_pair(demo, bob, "demo")
    assert first.pair_id != second.pair_id  # bob gets an untouched pair, not alice's
    labels.save_label(demo, bob, "demo", second.pair_id, grade=0, reason="not relevant")
    alice_pairs = [first.pair_id] + _drain(demo, alice)[1:]
    assert sorted(set(alice_pairs)) == sorted(alice_pairs) and len(alice_pairs) == 12
    assert sorted(_drain(demo, bob) + [second.pair_id]) == sorted(alice_pairs)
    assert queue.next_pair(demo, alice, "demo") is None and queue.next_pair(demo, bob, "demo") is None


def test_never_more_than_n_annotators(actors, demo):
    projects.assign(demo, SYSTEM, "demo", ["rita"])
    for name in ("alice", "bob"):
        _drain(demo, actors[name])
    assert queue.next_pair(demo, actors["rita"], "demo") is None  # every pair has its 2 labels


def test_the_view_never_shows_other_labels(actors, demo):
    alice, bob = actors["alice"], actors["bob"]
    _drain(demo, alice, grade=3)
    view = queue.next_pair(demo, bob, "demo")
    assert view.current is None and "3" not in repr(view.current)
    with pytest.raises(NotFound, match="is not assigned to bob"):
        queue.get_pair(demo, bob, "demo", _other_pair(demo, view.pair_id))
    assert all(h.annotator == "bob" for h in labels.pair_history(demo, bob, "demo", view.pair_id))
    assert {h.annotator for h in labels.pair_history(demo, actors["rita"], "demo", view.pair_id)} == {"alice"}


def _other_pair(db, pair_id: int) -> int:
    with db.read() as s:
        return s.execute(text("SELECT max(id) FROM pairs WHERE id <> :p"), {"p": pair_id}).scalar()


def test_edits_add_versions(actors, demo):
    alice = actors["alice"]
    view = queue.next_pair(demo, alice, "demo")
    first = labels.save_label(
        demo, alice, "demo", view.pair_id, grade=1, reason="related", unsure=True, seconds=12.5
    )
    assert (first.version, first.grade, first.unsure, first.seconds, first.annotator) == (
        1,
        1,
        True,
        12.5,
        "alice",
    )
    edit = labels.save_label(
        demo, alice, "demo", view.pair_id, grade=2, reason="partly answers", expected_version=1
    )
    assert edit.version == 2
    with pytest.raises(Conflict, match="your claim changed meanwhile"):
        labels.save_label(demo, alice, "demo", view.pair_id, grade=3, reason="stale tab", expected_version=1)
    assert [(x.version, x.grade) for x in labels.pair_history(demo, alice, "demo", view.pair_id)] == [
        (2, 2),
        (1, 1),
    ]
    mine = labels.my_labels(demo, alice, "demo")
    assert [(x.pair_id, x.version, x.grade) for x in mine] == [(view.pair_id, 2, 2)]
    again = queue.get_pair(demo, alice, "demo", view.pair_id)
    assert (again.current.version, again.current.grade, again.current.reason) == (2, 2, "partly answers")
    with demo.read() as s:
        assert s.execute(text("SELECT count(*) FROM labels")).scalar() == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"grade": 4}, "grade must be one of [0, 1, 2, 3]; got 4"),
        ({"grade": True}, "grade must be one of [0, 1, 2, 3]; got True"),
        ({"reason": "ok"}, "reason must have at least 5 characters; got 2"),
        ({"reason": "     "}, "reason must have at least 5 characters; got 0"),
        ({"seconds": -1}, "seconds must be a number in [0, 86400] or None; got -1"),
        ({"unsure": "yes"}, "unsure must be a bool; got 'yes'"),
    ],
)
def test_label_validation(actors, demo, kwargs, message):
    view = queue.next_pair(demo, actors["alice"], "demo")
    args = {"grade": 1, "reason": "a fine reason", **kwargs}
    with pytest.raises(InvalidInput, match=re.escape(message)):
        labels.save_label(demo, actors["alice"], "demo", view.pair_id, **args)


def test_skip_frees_the_slot_for_someone_else(actors, demo):
    alice, bob = actors["alice"], actors["bob"]
    view = queue.next_pair(demo, alice, "demo")
    with pytest.raises(InvalidInput, match="skip reason must have at least 5 characters; got 3"):
        queue.skip(demo, alice, "demo", view.pair_id, reason="meh")
    queue.skip(demo, alice, "demo", view.pair_id, reason="cannot read this")
    with pytest.raises(Conflict, match="no longer assigned to alice \\(skipped\\)"):
        labels.save_label(demo, alice, "demo", view.pair_id, grade=1, reason="changed my mind")
    assert view.pair_id not in _drain(demo, alice)
    assert view.pair_id in _drain(demo, bob)
    progress = queue.my_progress(demo, alice, "demo")
    assert (progress.done, progress.skipped, progress.available, progress.progress.fraction) == (
        11,
        1,
        0,
        1.0,
    )


def test_cannot_skip_a_labelled_pair(actors, demo):
    view = queue.next_pair(demo, actors["alice"], "demo")
    labels.save_label(demo, actors["alice"], "demo", view.pair_id, grade=1, reason="related")
    with pytest.raises(Conflict, match="is already labelled; edit the label instead"):
        queue.skip(demo, actors["alice"], "demo", view.pair_id, reason="oops oops")


def test_abandoned_claims_expire(actors, demo):
    projects.update_settings(demo, SYSTEM, "demo", annotators_per_pair=1)
    alice, bob = actors["alice"], actors["bob"]
    held = queue.next_pair(demo, alice, "demo")
    assert len(_drain(demo, bob)) == 11  # alice's claim is not bob's to take yet
    with demo.write() as s:
        s.execute(
            text("UPDATE assignments SET assigned_at = :t WHERE status = 'active'"),
            {
                "t": (utcnow() - timedelta(hours=2)).replace(tzinfo=None)
                if demo.is_sqlite
                else utcnow() - timedelta(hours=2)
            },
        )
        # the clock is moved by SQL: the "nothing left" markers were dated from the claim's real age
        s.execute(text("UPDATE project_members SET exhausted_until = NULL"))
        s.execute(text("UPDATE projects SET full_until = NULL"))
    taken = queue.next_pair(demo, bob, "demo")
    assert taken.pair_id == held.pair_id  # the queue ran dry, so the 2-hour-old claim went to bob
    with pytest.raises(Conflict, match="no longer assigned to alice \\(expired\\)"):
        labels.save_label(demo, alice, "demo", held.pair_id, grade=1, reason="too late now")
    assert queue.next_pair(demo, alice, "demo") is None


def test_reviewer_frees_claims_on_demand(actors, demo):
    queue.next_pair(demo, actors["alice"], "demo")
    assert queue.release_stale_claims(demo, actors["rita"], "demo", older_than_minutes=0) == 1
    with pytest.raises(PermissionDenied, match="alice \\(annotator\\) may not free claims"):
        queue.release_stale_claims(demo, actors["alice"], "demo")


def test_quota_caps_an_annotator(actors, demo):
    projects.assign(demo, SYSTEM, "demo", ["alice"], quota=3)
    assert len(_drain(demo, actors["alice"])) == 3
    progress = queue.my_progress(demo, actors["alice"], "demo")
    assert (progress.done, progress.quota, progress.progress.total) == (3, 3, 3)


def test_who_may_judge(actors, demo):
    with pytest.raises(PermissionDenied, match="the system actor cannot judge pairs"):
        queue.next_pair(demo, SYSTEM, "demo")
    with pytest.raises(PermissionDenied, match="rita is not an annotator of project 'demo'"):
        queue.next_pair(demo, actors["rita"], "demo")
    projects.assign(demo, SYSTEM, "demo", ["rita"])
    assert queue.next_pair(demo, actors["rita"], "demo") is not None  # reviewers may judge when members
