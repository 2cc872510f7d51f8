"""AppTest: the project is part of the address (``?project=NAME``).

The resolution rules as a table (the URL names a visible, a hidden or an unknown project; one project; several
with or without a remembered choice; none), then what the app does with them: the session's project, the URL,
the refusal (no fallback to another project's data), the "choose" notice, the heading of every page, the
links that keep the project, the picker that updates the URL, and the confirm steps of writes that name the
target project.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from app_helpers import APP, PASSWORDS, plain

from annotate_app.services import projects, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.types import ProjectInfo, ProjectSettings
from annotate_app.ui import nav, state

KB2, KB2_TITLE = "kb2", "Help centre"
DEMO_LABEL = "demo (Demo: after-sales help centre (sample corpus))"
R = nav.Resolution


def _info(name: str) -> ProjectInfo:
    return ProjectInfo(
        id=1,
        name=name,
        title=name.upper(),
        settings=ProjectSettings(),
        guidelines_version=None,
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
    )


# (URL's project, remembered, visible) -> (resolution, name)
RULES = [
    ("b", None, ["a", "b"], R.CHOSEN, "b"),  # the URL names a visible project
    ("b", "a", ["a", "b"], R.CHOSEN, "b"),  # ... it wins over the remembered one
    ("c", "a", ["a", "b"], R.REFUSED, "c"),  # hidden or unknown: refused, never another project
    ("c", None, ["a"], R.REFUSED, "c"),  # ... even when the user has only one
    ("c", None, [], R.REFUSED, "c"),  # ... or none
    (None, None, ["a"], R.CHOSEN, "a"),  # one project: it
    (None, "zz", ["a"], R.CHOSEN, "a"),  # ... whatever was remembered
    (None, None, ["a", "b"], R.CHOOSE, None),  # several, none named: ask
    (None, "b", ["a", "b"], R.CHOSEN, "b"),  # ... unless chosen earlier in the session
    (None, "gone", ["a", "b"], R.CHOOSE, None),  # ... and still visible
    (None, None, [], R.NONE, None),  # no project at all
    (None, "a", [], R.NONE, None),
]


@pytest.mark.parametrize(("wanted", "remembered", "visible", "resolution", "name"), RULES)
def test_the_resolution_rules(wanted, remembered, visible, resolution, name):
    choice = nav.resolve_project(wanted=wanted, remembered=remembered, visible=[_info(n) for n in visible])
    assert (choice.resolution, choice.name) == (resolution, name)
    assert choice.label == (f"{name} ({name.upper()})" if resolution == R.CHOSEN else "")


# ---------------------------------------------------------------------------------------------- in the app
@pytest.fixture
def two_projects(app_db):
    """The demo plus project kb2 (alice is not a member) and nina, an annotator of no project."""
    projects.create_project(app_db, SYSTEM, KB2, title=KB2_TITLE)
    users.create_user(app_db, SYSTEM, "nina", "nina-password-1", role="annotator")
    return app_db


def _open(db, username: str, page: str, project: str | None = None, remembered: str | None = None):
    """An AppTest whose first request is ``page``'s URL with ``?project=`` (None: without it)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=30)
    password = PASSWORDS.get(username, "nina-password-1")
    at.session_state[state.ACTOR] = authenticate(db, username, password)
    if remembered is not None:
        at.session_state[state.PROJECT_LAST] = remembered
    if project is not None:
        at.query_params[nav.PROJECT_PARAM] = project
    return at.switch_page(page).run()


def _badges(at) -> list[str]:
    return [plain(m.value) for m in at.main.markdown if "-badge[" in m.value]


DATA = nav.ADMIN_DATA.path
ANNOTATE = nav.ANNOTATE.path
# who, page, URL's project, remembered -> (session's project, URL's project after the run, shown)
APP_RULES = [
    ("admin", DATA, KB2, None, KB2, KB2, "page"),  # visible
    ("admin", DATA, "nope", None, None, "nope", "refused"),  # unknown
    ("alice", ANNOTATE, KB2, None, None, KB2, "refused"),  # hidden: alice is no member of kb2
    ("alice", ANNOTATE, None, None, "demo", "demo", "page"),  # one project: chosen, put in the URL
    ("admin", DATA, None, None, None, None, "choose"),  # several, none named: the app asks
    ("admin", DATA, None, KB2, KB2, KB2, "page"),  # several, remembered from this session
    ("nina", ANNOTATE, None, None, None, None, "none"),  # no project at all
]


@pytest.mark.parametrize(("who", "page", "project", "remembered", "chosen", "url", "shown"), APP_RULES)
def test_the_app_resolves_the_project_from_the_url(
    two_projects, who, page, project, remembered, chosen, url, shown
):
    at = _open(two_projects, who, page, project, remembered)
    assert not at.exception
    assert at.session_state[state.PROJECT] == chosen
    assert at.query_params.get(nav.PROJECT_PARAM) == url
    errors = [plain(e.value) for e in at.error]
    infos = [plain(i.value) for i in at.info]
    if shown == "page":
        assert not errors
        assert [t.value for t in at.title] == [nav.ADMIN_DATA.title if page == DATA else nav.ANNOTATE.title]
    elif shown == "refused":
        assert errors == [
            f"Project {project} is not open to you: it does not exist, or you are not one of its members. "
            "Nothing is shown or changed in another project instead."
        ]
        assert not at.title and not at.dataframe and not at.main.button  # the page did not run
        links = at.main.get("page_link")
        mine = ["demo"] if who == "alice" else ["demo", KB2]
        assert [link.proto.query_string for link in links] == [f"project={p}" for p in mine]
    elif shown == "choose":
        assert infos == ["You work on several projects: choose the one this page acts on."]
        assert not at.title and not at.dataframe
        assert [link.proto.query_string for link in at.main.get("page_link")] == [
            "project=demo",
            "project=kb2",
        ]
    else:
        assert infos == ["No project to work on: ask an admin to create one and add you to it."]


def test_picking_a_project_puts_it_in_the_url_and_the_heading(two_projects):
    at = _open(two_projects, "admin", DATA)
    assert at.sidebar.selectbox(key=state.PROJECT).value is None
    at.sidebar.selectbox(key=state.PROJECT).select(KB2).run()
    assert at.query_params[nav.PROJECT_PARAM] == KB2
    assert [t.value for t in at.title] == ["Data"]
    assert _badges(at) == [f":blue-badge[:material/folder_open: {KB2} ({KB2_TITLE})]"]
    at.sidebar.selectbox(key=state.PROJECT).select("demo").run()
    assert at.query_params[nav.PROJECT_PARAM] == "demo"
    assert at.session_state[state.PROJECT] == "demo"


def test_a_refused_url_shows_nothing_of_another_project_and_an_escaped_name(two_projects):
    evil = "**x**[a](javascript:alert(1))"
    at = _open(two_projects, "alice", nav.MY_LABELS.path, evil)
    assert [e.value for e in at.error][0].startswith("Project \\*\\*x\\*\\*\\[a\\]\\(javascript\\:")
    assert at.session_state[state.PROJECT] is None
    assert at.sidebar.selectbox(key=state.PROJECT).value is None


@pytest.mark.parametrize("spec", nav.PAGES, ids=lambda s: s.url_path)
def test_every_page_heading_names_the_project(two_projects, spec):
    at = _open(two_projects, "admin", spec.path, KB2)
    assert not at.exception
    assert [t.value for t in at.title] == [spec.title]
    assert f":blue-badge[:material/folder_open: {KB2} ({KB2_TITLE})]" in _badges(at)


def test_every_link_keeps_the_project(two_projects):
    at = _open(two_projects, "admin", DATA, KB2)
    links = at.sidebar.get("page_link")
    assert len(links) == len(nav.PAGES)
    assert {link.proto.query_string for link in links} == {f"project={KB2}"}


def test_the_root_url_keeps_the_project_on_the_landing_page(two_projects):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=30)
    at.session_state[state.ACTOR] = authenticate(two_projects, "rita", PASSWORDS["rita"])
    at.query_params[nav.PROJECT_PARAM] = KB2
    at.run()
    assert [t.value for t in at.title] == ["Agreement"]
    assert at.query_params[nav.PROJECT_PARAM] == KB2
    assert at.session_state[state.PROJECT] == KB2


def _confirms(at) -> list[str]:
    return [plain(m.value) for m in at.main.markdown if m.value.startswith(":material/arrow_forward:")]


def test_the_writes_of_the_data_page_name_the_target_project(two_projects, monkeypatch):
    import streamlit as st
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    at = _open(two_projects, "admin", DATA, KB2)
    shown = _confirms(at)
    assert f":material/arrow_forward: Pool the runs of {KB2} into its judging queue." in shown
    assert f":material/arrow_forward: Add, exclude or include a pair of {KB2}." in shown
    data = b'{"doc_id": "x1", "title": "t", "text": "a"}\n{"doc_id": "x2", "title": "t", "text": "b"}\n'
    record = UploadedFile(UploadedFileRec("f1", "docs.jsonl", "application/jsonl", data), None)
    monkeypatch.setattr(st, "file_uploader", lambda *args, **kwargs: record)
    at.run()
    assert f":material/arrow_forward: Import 2 documents into {KB2}." in _confirms(at)


def test_the_writes_of_the_project_and_release_pages_name_the_target_project(two_projects):
    at = _open(two_projects, "admin", nav.ADMIN_PROJECT.path, KB2)
    shown = _confirms(at)
    assert f":material/arrow_forward: Save the settings of {KB2}." in shown
    assert f":material/arrow_forward: Save a new version of {KB2}'s guidelines." in shown
    assert f":material/arrow_forward: Assign the picked annotators to {KB2}." in shown
    at = _open(two_projects, "admin", nav.RELEASE.path, KB2)
    assert f":material/arrow_forward: Create a release of {KB2}." in _confirms(at)
