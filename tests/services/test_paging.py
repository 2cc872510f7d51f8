"""Paging where a team needs the whole list: My labels, the disagreement queue and the audit log read a page
at a time (``offset``, ``limit``) with a count; the pages show "Rows 51–100 of 734"-style captions with
Previous / Next. The services run on SQLite and PostgreSQL; the pages (AppTest) on lists longer than the old
caps (100 labels, 50 disagreements)."""

from __future__ import annotations

import pytest
from app_helpers import APP, PASSWORDS
from store_fixtures import synthetic_project

from annotate_app.services import audit, gate, labels, projects, queue
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import InvalidInput
from annotate_app.ui import nav, state
from annotate_app.ui.components import pager


def _judge_all(db, actor, project: str, grade: int) -> int:
    """``actor`` labels every pair of ``project`` they are offered, with ``grade``; how many."""
    done = 0
    while (view := queue.next_pair(db, actor, project)) is not None:
        labels.save_label(db, actor, project, view.pair_id, grade=grade, reason=f"grade {grade} it is")
        done += 1
    return done


# ---------------------------------------------------------------------------------------------- services
def test_my_labels_pages_through_every_label_and_counts_them(db):
    (a00,) = synthetic_project(db, "big", queries=1, docs=7, n=1, annotators=1)
    assert labels.count_my_labels(db, a00, "big") == 0
    assert _judge_all(db, a00, "big", 1) == 7
    everything = labels.my_labels(db, a00, "big", limit=50)
    pages = [labels.my_labels(db, a00, "big", limit=3, offset=start) for start in (0, 3, 6)]
    assert [len(p) for p in pages] == [3, 3, 1]
    assert [x.pair_id for p in pages for x in p] == [x.pair_id for x in everything]
    assert labels.count_my_labels(db, a00, "big") == 7
    assert labels.my_labels(db, a00, "big", offset=7) == []
    assert labels.my_labels(db, a00, "big") == everything  # the defaults keep today's first 50


def test_disagreements_page_through_the_queue(db):
    people = synthetic_project(db, "split", queries=1, docs=5, n=2, annotators=2)
    for actor, grade in zip(people, (0, 3), strict=True):
        _judge_all(db, actor, "split", grade)
    reviewer = SYSTEM
    whole = gate.disagreements(db, reviewer, "split")
    assert len(whole) == gate.agreement(db, reviewer, "split").unadjudicated == 5
    paged = [gate.disagreements(db, reviewer, "split", limit=2, offset=start) for start in (0, 2, 4)]
    assert [d.pair_id for p in paged for d in p] == [d.pair_id for d in whole]


def test_the_audit_log_pages_filters_and_names_the_project(demo, actors):
    admin = actors["admin"]
    for threshold in (0.5, 0.6, 0.65):
        projects.update_settings(demo, admin, "demo", threshold=threshold)
    projects.create_project(demo, admin, "other", title="Another project")
    everything = audit.audit_log(demo, admin, limit=10_000)
    assert audit.count_audit(demo, admin) == len(everything) >= 6
    pages = [audit.audit_log(demo, admin, limit=4, offset=start) for start in range(0, len(everything), 4)]
    assert [e.id for p in pages for e in p] == [e.id for e in everything]

    mine = audit.audit_log(demo, admin, username="admin", limit=10_000)
    assert {e.actor for e in mine} == {"admin"}
    assert audit.count_audit(demo, admin, username="admin") == len(mine) >= 4
    changed = audit.audit_log(demo, admin, project="demo", action="settings_changed", username="admin")
    assert [e.project for e in changed] == ["demo"] * 3
    assert audit.count_audit(demo, admin, project="demo", action="settings_changed", username="admin") == 3
    created = audit.audit_log(demo, admin, project="other", action="project_created")
    assert [(e.project, e.actor) for e in created] == [("other", "admin")]
    assert {e.project for e in everything if e.project_id is None} == {None}
    assert audit.count_audit(demo, admin, username="nobody") == 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda db, a: labels.my_labels(db, a["alice"], "demo", offset=-1),
            "offset must be an int >= 0; got -1",
        ),
        (
            lambda db, a: labels.my_labels(db, a["alice"], "demo", offset="2"),
            "offset must be an int >= 0; got '2'",
        ),
        (lambda db, a: audit.audit_log(db, a["admin"], offset=True), "offset must be an int >= 0; got True"),
        (lambda db, a: audit.audit_log(db, a["admin"], username=7), "username must be a string; got int"),
        (lambda db, a: audit.count_audit(db, a["admin"], username=7), "username must be a string; got int"),
        (lambda db, a: audit.count_audit(db, a["admin"], action=["x"]), "action must be a string; got list"),
    ],
)
def test_bad_paging_arguments_name_the_parameter_and_the_value(demo, actors, call, message):
    with pytest.raises(InvalidInput) as raised:
        call(demo, actors)
    assert str(raised.value) == message


# ------------------------------------------------------------------------------------------------- pages
def _app(db, username: str, project: str, page: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[state.ACTOR] = authenticate(db, username, PASSWORDS[username])
    at.query_params[nav.PROJECT_PARAM] = project
    at.run()
    at.switch_page(page).run()
    return at


def _caption(at, prefix: str) -> str:
    return next(c.value for c in at.caption if c.value.startswith(prefix))


def _big(db, docs: int) -> dict:
    """Project ``big`` (one query, ``docs`` pairs, N = 2) with alice and bob as members; their actors."""
    synthetic_project(db, "big", queries=1, docs=docs, n=2)
    projects.assign(db, SYSTEM, "big", ["alice", "bob"])
    return {name: authenticate(db, name, PASSWORDS[name]) for name in ("alice", "bob")}


def test_my_labels_pages_beyond_the_old_cap_of_100(app_db):
    people = _big(app_db, 130)
    assert _judge_all(app_db, people["alice"], "big", 2) == 130
    newest = labels.my_labels(app_db, people["alice"], "big", limit=130)
    at = _app(app_db, "alice", "big", "views/annotate/my_labels.py")
    assert not at.exception
    assert _caption(at, "Labels") == "Labels 1–100 of 130"
    assert at.dataframe[0].value["document"].tolist() == [x.doc_id for x in newest[:100]]
    at.button(key=f"{pager.MY_LABELS}_next").click().run()
    assert _caption(at, "Labels") == "Labels 101–130 of 130"
    assert at.dataframe[0].value["document"].tolist() == [x.doc_id for x in newest[100:]]
    assert len(at.selectbox(key=state.EDIT_CHOICE).options) == 30
    at.number_input(key=pager.MY_LABELS).set_value(1).run()
    assert _caption(at, "Labels") == "Labels 1–100 of 130"


def test_adjudicate_pages_beyond_the_old_cap_of_50(app_db):
    people = _big(app_db, 60)
    for name, grade in (("alice", 0), ("bob", 3)):
        _judge_all(app_db, people[name], "big", grade)
    rita = authenticate(app_db, "rita", PASSWORDS["rita"])
    ranked = gate.disagreements(app_db, rita, "big", limit=60)
    assert len(ranked) == 60
    at = _app(app_db, "rita", "big", "views/review/adjudicate.py")
    assert not at.exception
    assert at.get("progress")[0].proto.text == "60 left of 60 disagreements"
    assert _caption(at, "Disagreements") == "Disagreements 1–50 of 60"
    assert at.dataframe[0].value["document"].tolist() == [d.doc_id for d in ranked[:50]]
    at.button(key=f"{pager.ADJUDICATE}_next").click().run()
    assert _caption(at, "Disagreements") == "Disagreements 51–60 of 60"
    assert at.dataframe[0].value["document"].tolist() == [d.doc_id for d in ranked[50:]]
    assert at.button(key=f"{pager.ADJUDICATE}_next").disabled
    card = f"Query {ranked[50].query_id} · document {ranked[50].doc_id}"
    assert card in [c.value for c in at.caption]  # the card shows the first of the page


def test_the_audit_log_pages_shows_the_project_and_filters_by_it(app_db):
    for threshold in (0.5, 0.55, 0.6, 0.65):
        projects.update_settings(app_db, SYSTEM, "demo", threshold=threshold)
    _big(app_db, 3)
    admin = authenticate(app_db, "admin", PASSWORDS["admin"])
    total = audit.count_audit(app_db, admin)
    assert total > 10
    at = _app(app_db, "admin", "demo", "views/admin/audit.py")
    at.number_input(key=state.AUDIT_LIMIT).set_value(10).run()
    assert _caption(at, "Entries") == f"Entries 1–10 of {total}"
    assert "project" in at.dataframe[0].value.columns
    at.button(key=f"{pager.AUDIT}_next").click().run()
    assert _caption(at, "Entries") == f"Entries 11–{min(20, total)} of {total}"
    second = at.dataframe[0].value["id"].tolist()
    assert second == [e.id for e in audit.audit_log(app_db, admin, limit=10, offset=10)]

    at.selectbox(key=state.AUDIT_SCOPE).select("big").run()  # a filter starts again at page 1
    in_big = audit.count_audit(app_db, admin, project="big")
    assert 0 < in_big <= 10
    assert _caption(at, "Entries") == f"Entries 1–{in_big} of {in_big}"
    assert set(at.dataframe[0].value["project"]) == {"big"}
    at.selectbox(key=state.AUDIT_SCOPE).select("demo").run()
    at.text_input(key=state.AUDIT_ACTION).input("settings_changed").run()
    frame = at.dataframe[0].value
    assert frame["action"].tolist() == ["settings_changed"] * 4
    assert set(frame["project"]) == {"demo"}
