"""Projects: settings validation, guidelines versions, members and who sees what."""

from __future__ import annotations

import re

import pytest

from annotate_app.services import labels, projects, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from annotate_app.services.types import DEFAULT_GRADE_SCALE, ProjectSettings


def test_defaults_follow_the_issue(db):
    info = projects.create_project(db, SYSTEM, "p1", title="First")
    s = info.settings
    assert (s.grade_scale, s.annotators_per_pair, s.statistic, s.threshold) == (
        DEFAULT_GRADE_SCALE,
        2,
        "cohen",
        0.7,
    )
    assert s.grades == (0, 1, 2, 3) and s.agreement_mode == "binary" and info.guidelines_version is None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"annotators_per_pair": 0}, "annotators_per_pair must be an int in [1, 50]; got 0"),
        ({"annotators_per_pair": True}, "annotators_per_pair must be an int in [1, 50]; got True"),
        ({"threshold": 1.5}, "threshold must be a number in [-1, 1]; got 1.5"),
        ({"threshold": float("nan")}, "threshold must be a number in [-1, 1]; got nan"),
        ({"statistic": "scott"}, "statistic must be one of 'cohen', 'fleiss', 'krippendorff'; got 'scott'"),
        ({"agreement_mode": "fuzzy"}, "agreement_mode must be one of 'binary', 'weighted'; got 'fuzzy'"),
        (
            {"relevance_cutoff": 0},
            "relevance_cutoff must be above the lowest grade 0 and at most the highest 3; got 0",
        ),
        (
            {"relevance_cutoff": 4},
            "relevance_cutoff must be above the lowest grade 0 and at most the highest 3; got 4",
        ),
        ({"grade_scale": [(0, "no")]}, "grade_scale must be 2 to 20 (grade, label) pairs; got [(0, 'no')]"),
        ({"grade_scale": [(1, "a"), (0, "b")]}, "grade_scale grades must increase strictly; got [1, 0]"),
        (
            {"grade_scale": [(0, "a"), (1, "")]},
            "grade_scale entries must be (int grade, non-empty label); got (1, '')",
        ),
        ({"colour": "red"}, "unknown setting 'colour'"),
    ],
)
def test_settings_are_validated(db, changes, message):
    with pytest.raises(InvalidInput, match=re.escape(message)):
        projects.create_project(db, SYSTEM, "p1", **changes)


@pytest.mark.parametrize("name", ["", "Demo", "a b", "x" * 65, "-x"])
def test_project_names(db, name):
    with pytest.raises(InvalidInput, match="project name must be 1-64 characters"):
        projects.create_project(db, SYSTEM, name)


def test_binary_scale_with_cutoff(db):
    info = projects.create_project(db, SYSTEM, "bin", grade_scale=[(0, "no"), (1, "yes")], relevance_cutoff=1)
    assert info.settings.grade_scale == ((0, "no"), (1, "yes"))


def test_update_settings_and_guards(actors, demo):
    info = projects.update_settings(demo, SYSTEM, "demo", threshold=0.6, annotators_per_pair=3)
    assert (info.settings.threshold, info.settings.annotators_per_pair) == (0.6, 3)
    alice = actors["alice"]
    view = queue.next_pair(demo, alice, "demo")
    labels.save_label(demo, alice, "demo", view.pair_id, grade=1, reason="related")
    with pytest.raises(Conflict, match="the grade scale's grades cannot change once labels exist"):
        projects.update_settings(demo, SYSTEM, "demo", grade_scale=[(0, "no"), (1, "yes")])
    renamed = [(g, label.upper()) for g, label in DEFAULT_GRADE_SCALE]
    info = projects.update_settings(demo, SYSTEM, "demo", grade_scale=renamed)
    assert info.settings.grade_scale[0] == (0, "NOT RELEVANT")
    assert (
        projects.update_settings(demo, SYSTEM, "demo", annotators_per_pair=1).settings.annotators_per_pair
        == 1
    )


def test_cannot_drop_n_below_live_claims(actors, demo):
    alice, bob = actors["alice"], actors["bob"]
    while (view := queue.next_pair(demo, alice, "demo")) is not None:
        labels.save_label(demo, alice, "demo", view.pair_id, grade=0, reason="not relevant")
    assert queue.next_pair(demo, bob, "demo") is not None  # a second claim on one pair
    with pytest.raises(
        Conflict, match="annotators_per_pair cannot drop to 1: a pair already has 2 annotators"
    ):
        projects.update_settings(demo, SYSTEM, "demo", annotators_per_pair=1)


def test_settings_need_admin(actors, demo):
    with pytest.raises(PermissionDenied, match=re.escape("rita (reviewer) may not change project settings")):
        projects.update_settings(demo, actors["rita"], "demo", threshold=0.5)


def test_guidelines_are_versioned(actors, demo):
    first = projects.get_guidelines(demo, actors["alice"], "demo")
    assert first.version == 1 and first.markdown.startswith("# Judging guidelines")
    assert projects.set_guidelines(demo, actors["rita"], "demo", "# v2\nBe strict.") == 2
    assert projects.get_guidelines(demo, actors["alice"], "demo").markdown == "# v2\nBe strict."
    assert projects.get_guidelines(demo, actors["alice"], "demo", 1).markdown == first.markdown
    with pytest.raises(NotFound, match="guidelines version 9 of project 'demo' does not exist"):
        projects.get_guidelines(demo, actors["alice"], "demo", 9)
    with pytest.raises(InvalidInput, match="guidelines must be non-empty Markdown"):
        projects.set_guidelines(demo, actors["rita"], "demo", "   ")
    with pytest.raises(PermissionDenied, match="alice \\(annotator\\) may not edit guidelines"):
        projects.set_guidelines(demo, actors["alice"], "demo", "# mine")


def test_annotators_see_only_their_projects(actors, demo):
    projects.create_project(demo, SYSTEM, "secret")
    assert [p.name for p in projects.list_projects(demo, actors["alice"])] == ["demo"]
    assert [p.name for p in projects.list_projects(demo, actors["rita"])] == ["demo", "secret"]
    with pytest.raises(NotFound, match="project 'secret' does not exist or you are not a member"):
        projects.get_project(demo, actors["alice"], "secret")
    assert projects.get_project(demo, actors["rita"], "secret").name == "secret"


def test_members_and_quota(actors, demo):
    members = projects.assign(demo, SYSTEM, "demo", ["alice", "rita"], quota=5)
    assert [(m.username, m.quota) for m in members] == [("alice", 5), ("bob", None), ("rita", 5)]
    with pytest.raises(NotFound, match="user 'zoe' does not exist"):
        projects.assign(demo, SYSTEM, "demo", ["zoe"])
    with pytest.raises(InvalidInput, match="quota must be None or an int >= 1; got 0"):
        projects.assign(demo, SYSTEM, "demo", ["alice"], quota=0)
    view = queue.next_pair(demo, actors["bob"], "demo")
    assert [m.username for m in projects.unassign(demo, SYSTEM, "demo", "bob")] == ["alice", "rita"]
    with pytest.raises(NotFound, match="project 'demo' does not exist or you are not a member"):
        labels.save_label(demo, actors["bob"], "demo", view.pair_id, grade=1, reason="too late")
    projects.assign(demo, SYSTEM, "demo", ["bob"])  # back in: the freed claim went back to the pool
    with pytest.raises(Conflict, match=f"pair {view.pair_id} is no longer assigned to bob \\(expired\\)"):
        labels.save_label(demo, actors["bob"], "demo", view.pair_id, grade=1, reason="too late")
    projects.assign(demo, SYSTEM, "demo", ["rita"])
    rita_view = queue.next_pair(demo, actors["rita"], "demo")
    assert rita_view.pair_id == view.pair_id  # bob's freed slot went back to the pool
    alice_view = queue.next_pair(demo, actors["alice"], "demo")
    with pytest.raises(NotFound, match=f"pair {alice_view.pair_id} is not assigned to bob"):
        labels.save_label(demo, actors["bob"], "demo", alice_view.pair_id, grade=1, reason="not mine")
    with pytest.raises(PermissionDenied, match="reviewer role required"):
        projects.list_members(demo, actors["alice"], "demo")


def test_check_settings_doctest_shape():
    assert projects.check_settings(ProjectSettings(), threshold=1).threshold == 1.0
