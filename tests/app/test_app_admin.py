"""AppTest: the admin pages (users; project settings, guidelines, members; imports, pooling, pairs; audit)."""

from __future__ import annotations

import pytest
from app_helpers import app_as, plain, texts

from annotate_app.services import projects, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.ui import state


def _form_button(at, form: str, label: str):
    return at.button(key=f"FormSubmitter:{form}-{label}")


def test_users_page_lists_and_adds_users(app_db):
    at = app_as(app_db, "admin", "views/admin/admin_users.py")
    assert at.dataframe[0].value["username"].tolist() == ["admin", "alice", "bob", "rita"]
    at.text_input(key=state.NEW_USER_NAME).input("carol")
    at.text_input(key=state.NEW_USER_PASSWORD).input("carol-password")
    at.selectbox(key=state.NEW_USER_ROLE).select("reviewer")
    _form_button(at, state.NEW_USER_FORM, "Add user").click().run()
    assert plain(at.success[0].value) == "User carol (reviewer) added."
    assert "carol" in at.dataframe[0].value["username"].tolist()


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("short", "password must be 8 to 1024 characters; got 5 characters"),
        ("dave", "password must be 8 to 1024 characters; got 4 characters"),
    ],
)
def test_a_bad_new_user_shows_the_service_message(app_db, password, message):
    at = app_as(app_db, "admin", "views/admin/admin_users.py")
    at.text_input(key=state.NEW_USER_NAME).input("dave")
    at.text_input(key=state.NEW_USER_PASSWORD).input(password)
    _form_button(at, state.NEW_USER_FORM, "Add user").click().run()
    assert texts(at.error) == [message]


def test_role_change_password_reset_and_deactivation(app_db):
    at = app_as(app_db, "admin", "views/admin/admin_users.py")
    at.selectbox(key=state.USER_PICK).select("bob").run()
    at.selectbox(key=state.USER_ROLE).select("reviewer").run()
    next(b for b in at.main.button if b.label == "Change role").click().run()
    assert plain(at.success[0].value) == "bob is now reviewer."
    at.text_input(key=state.USER_PASSWORD).input("bob-new-password").run()
    next(b for b in at.main.button if b.label == "Reset password").click().run()
    assert plain(at.success[0].value) == "Password of bob reset; their sessions ended."
    authenticate(app_db, "bob", "bob-new-password")
    next(b for b in at.main.button if b.label == "Deactivate").click().run()
    assert plain(at.success[0].value) == "bob deactivated."
    assert not users.get_user(app_db, SYSTEM, "bob").active


def test_an_admin_cannot_demote_themselves(app_db):
    at = app_as(app_db, "admin", "views/admin/admin_users.py")
    at.selectbox(key=state.USER_PICK).select("admin").run()
    at.selectbox(key=state.USER_ROLE).select("annotator").run()
    next(b for b in at.main.button if b.label == "Change role").click().run()
    assert texts(at.error) == ["admins cannot demote themselves; ask another admin"]


def test_project_settings_guidelines_and_members(app_db):
    at = app_as(app_db, "admin", "views/admin/admin_project.py")
    assert not at.exception
    threshold = next(n for n in at.number_input if n.label == "Threshold")
    threshold.set_value(0.6)
    _form_button(at, state.SETTINGS_FORM, "Save settings").click().run()
    assert plain(at.success[0].value) == "Settings saved (threshold)."
    assert projects.get_project(app_db, SYSTEM, "demo").settings.threshold == 0.6
    at.text_area(key=state.per_item("guidelines", "demo")).input("# New guidelines\n\nJudge carefully.")
    _form_button(at, state.GUIDELINES_FORM, "Save a new version").click().run()
    assert plain(at.success[0].value) == "Guidelines version 2 saved."
    assert projects.get_guidelines(app_db, SYSTEM, "demo").version == 2
    at.multiselect(key=state.MEMBERS_PICK).select("rita")
    _form_button(at, state.MEMBERS_FORM, "Assign").click().run()
    assert plain(at.success[0].value) == "Assigned rita to demo."
    members = projects.list_members(app_db, SYSTEM, "demo")
    assert sorted(m.username for m in members) == ["alice", "bob", "rita"]


def test_a_bad_setting_is_refused_with_the_service_message(app_db):
    at = app_as(app_db, "admin", "views/admin/admin_project.py")
    next(n for n in at.number_input if n.label.startswith("Relevance cut-off")).set_value(9)
    _form_button(at, state.SETTINGS_FORM, "Save settings").click().run()
    assert texts(at.error) == [
        "relevance_cutoff must be above the lowest grade 0 and at most the highest 3; got 9"
    ]


def test_create_a_project(app_db):
    at = app_as(app_db, "admin", "views/admin/admin_project.py")
    at.text_input(key=state.NEW_PROJECT_NAME).input("faq")
    at.text_input(key=state.NEW_PROJECT_TITLE).input("FAQ search")
    _form_button(at, state.NEW_PROJECT_FORM, "Create project").click().run()
    assert plain(at.success[0].value) == "Project faq created; pick it in the sidebar."
    assert at.sidebar.selectbox(key=state.PROJECT).options == [
        "demo · Demo: after-sales help centre (sample corpus)",
        "faq · FAQ search",
    ]


def _upload(at, monkeypatch, name: str, data: bytes) -> None:
    import streamlit as st
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    record = UploadedFile(UploadedFileRec("f1", name, "text/plain", data), None)
    monkeypatch.setattr(st, "file_uploader", lambda *args, **kwargs: record)
    at.run()


def test_an_import_preview_lists_line_numbered_problems(app_db, monkeypatch):
    at = app_as(app_db, "admin", "views/admin/admin_data.py")
    at.selectbox(key=state.IMPORT_KIND).select("run").run()
    _upload(at, monkeypatch, "bad.trec", b"q1 Q0 D1 1 0.9 x\nq1 Q0 D2 two 0.5\nq2 Q0 D3 1 nan x\n")
    assert plain(at.error[0].value).startswith("bad.trec: 2 problem(s); nothing can be imported.")
    lines = at.code[0].value.splitlines()
    assert lines[0].startswith("bad.trec:2: ") and lines[1].startswith("bad.trec:3: ")
    assert not [b for b in at.main.button if b.label == "Import"]


def test_a_valid_import_previews_then_imports_and_an_unknown_id_is_refused(app_db, monkeypatch):
    at = app_as(app_db, "admin", "views/admin/admin_data.py")
    at.selectbox(key=state.IMPORT_KIND).select("run").run()
    _upload(at, monkeypatch, "mine.trec", b"q1 Q0 D5 1 0.9 mine\nq2 Q0 D2 1 0.8 mine\n")
    assert plain(at.success[0].value) == "mine.trec: 2 rows; columns query_id, doc_id, score, rank."
    next(b for b in at.main.button if b.label == "Import").click().run()
    assert plain(at.success[0].value) == "Imported run mine: 2 added, 0 changed, 0 unchanged."
    _upload(at, monkeypatch, "ghost.trec", b"q1 Q0 D5 1 0.9 ghost\nq1 Q0 D99 2 0.8 ghost\n")
    next(b for b in at.main.button if b.label == "Import").click().run()
    assert plain(at.error[0].value) == "ghost.trec:2: unknown document 'D99': 'q1 Q0 D99 2 0.8 ghost'"


def test_pooling_and_pairs_by_hand(app_db):
    at = app_as(app_db, "admin", "views/admin/admin_data.py")
    _form_button(at, state.POOL_FORM, "Pool").click().run()
    assert plain(at.success[0].value) == (
        "pooled scheme_a, scheme_b at depth 10: 0 new pairs, 12 already in the pool, 0 over the budget."
    )
    for query, doc, action, reason in (
        ("q1", "D5", "add", "asked by a reviewer"),
        ("q1", "D1", "exclude", "duplicate document"),
    ):
        at.text_input(key=state.PAIR_QUERY).input(query)
        at.text_input(key=state.PAIR_DOC).input(doc)
        at.selectbox(key=state.PAIR_ACTION).select(action)
        at.text_input(key=state.PAIR_REASON).input(reason)
        _form_button(at, state.PAIR_FORM, "Apply").click().run()
        assert plain(at.success[0].value) == f"Pair {query} · {doc}: {action} done."
    pool = at.dataframe[-1].value
    assert len(pool) == 13
    assert pool.loc[(pool["query_id"] == "q1") & (pool["doc_id"] == "D1"), "excluded"].tolist() == [True]


def test_the_audit_log_shows_entries_and_filters(app_db):
    projects.update_settings(app_db, SYSTEM, "demo", threshold=0.65)
    at = app_as(app_db, "admin", "views/admin/audit.py")
    frame = at.dataframe[0].value
    assert {"project_created", "pooled", "settings_changed"} <= set(frame["action"])
    at.text_input(key=state.AUDIT_ACTION).input("settings_changed").run()
    assert at.dataframe[0].value["action"].tolist() == ["settings_changed"]
