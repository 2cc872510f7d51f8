"""AppTest: a busy or unreachable database shows one clear message and no traceback (issue 16 item 5) — to a
visitor who is not logged in, on the login form, on the annotator's Submit and on every page."""

from __future__ import annotations

import pytest
from app_helpers import APP, PASSWORDS, app_as, texts
from fault_helpers import closed_port, locked

from annotate_app.store import db as db_module
from annotate_app.ui import state

BUSY = "the database is busy, try again"
UNREACHABLE = "the database is unreachable, try again later"
DOWN = f"postgresql+psycopg://postgres@127.0.0.1:{closed_port()}/qrelforge"


@pytest.fixture
def quick_busy(monkeypatch):
    monkeypatch.setattr(db_module, "SQLITE_BUSY_TIMEOUT_MS", 300)


def _db_path(app_db) -> str:
    return str(app_db.url)


def _clean(at) -> None:
    assert not at.exception, [e.message for e in at.exception]


def test_a_visitor_not_logged_in_sees_the_message_when_the_database_is_unreachable(app_db, monkeypatch):
    monkeypatch.setenv("QRELFORGE_DATABASE_URL", DOWN)
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=30).run()
    _clean(at)
    assert texts(at.error) == [UNREACHABLE]
    assert not at.button  # no login form: it could not work


def test_logging_in_on_a_locked_database_says_busy_then_works(app_db, quick_busy):
    at = app_as(app_db)
    with locked(_db_path(app_db)):
        at.text_input(key=state.LOGIN_USERNAME).input("alice")
        at.text_input(key=state.LOGIN_PASSWORD).input(PASSWORDS["alice"])
        at.button(key=f"FormSubmitter:{state.LOGIN_FORM}-Log in").click().run()
        _clean(at)
        assert texts(at.error) == [BUSY]
    at.button(key=f"FormSubmitter:{state.LOGIN_FORM}-Log in").click().run()
    _clean(at)
    assert at.session_state[state.ACTOR].username == "alice"


def test_submit_on_a_locked_database_says_busy_and_keeps_the_form(app_db, quick_busy):
    at = app_as(app_db, "alice")
    view = at.session_state[state.CURRENT_PAIR]
    at.button(key=state.grade_button(view.pair_id, 2, "q")).click().run()
    at.text_area(key=state.reason(view.pair_id, "q")).input("answers the question")
    with locked(_db_path(app_db)):
        at.button(key=state.submit(view.pair_id, "q")).click().run()
        _clean(at)
        assert texts(at.error) == [BUSY]
    assert at.text_area(key=state.reason(view.pair_id, "q")).value == "answers the question"
    at.button(key=state.submit(view.pair_id, "q")).click().run()  # the lock gone: the same click saves
    _clean(at)
    assert [s.value.startswith("Saved") for s in at.success] == [True]


@pytest.mark.parametrize("user", ["alice", "admin"])
def test_every_page_shows_the_message_when_the_database_goes_away(app_db, monkeypatch, user):
    at = app_as(app_db, user)
    _clean(at)
    monkeypatch.setenv("QRELFORGE_DATABASE_URL", DOWN)
    for path in nav_paths(user):
        at.switch_page(path).run()
        _clean(at)
        assert texts(at.error) == [UNREACHABLE], path


def nav_paths(user: str) -> list[str]:
    common = ["views/annotate/annotate.py", "views/annotate/my_labels.py"]
    admin = [
        "views/review/agreement.py",
        "views/review/adjudicate.py",
        "views/review/release.py",
        "views/review/score.py",
        "views/admin/admin_users.py",
        "views/admin/admin_project.py",
        "views/admin/admin_data.py",
        "views/admin/audit.py",
    ]
    return common + (admin if user == "admin" else [])
