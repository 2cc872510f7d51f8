"""AppTest: every page URL × every kind of caller, sessions that expire or end, and login throttling.

The access table (`ui_attack_helpers.ALLOWED`, shared with the browser test) is written out from the issue's
rules (annotators judge; reviewers also see agreement, adjudicate, release and score; only admins administer),
not read from ``nav.PAGES``, and a test checks that it covers every page module in ``views/``. A refused page
shows one "Not allowed" error and no data; a caller without a valid login only ever gets the login form (the
router registers no other page for them).
"""

from __future__ import annotations

import shutil
import time
import types
from datetime import timedelta
from pathlib import Path

import pytest
from app_helpers import (
    APP,
    PASSWORDS,
    app_as,
    app_database,
    judge_all,
    plain,
    sample_grades,
)
from ui_attack_helpers import ALLOWED, A, D, R, login_token

from annotate_app.services import users
from annotate_app.services.auth import MAX_FAILED_LOGINS, SYSTEM, authenticate
from annotate_app.ui import auth, nav, state

VIEWS = Path(nav.__file__).resolve().parents[1] / "views"
TITLES = {spec.path: spec.title for spec in nav.PAGES}
USERS = {A: "alice", R: "rita", D: "admin"}
# callers: (user logged in in the session, what happened to the user since they logged in)
CALLERS = {
    "logged out": (None, None),
    "annotator": ("alice", None),
    "reviewer": ("rita", None),
    "admin": ("admin", None),
    "deactivated": ("admin", "deactivate"),
    "password changed": ("admin", "reset password"),
}
DATA = (
    "dataframe",
    "table",
    "metric",
    "vega_lite_chart",
    "arrow_vega_lite_chart",
    "text_area",
    "download_button",
    "markdown",
    "progress",
    "selectbox",
    "number_input",
    "tabs",
    "expander",
)


@pytest.fixture(scope="module")
def released_file(tmp_path_factory, demo_template) -> Path:
    """The demo judged by alice and bob, adjudicated and released (one file per worker, copied per test)."""
    from annotate_app.services import adjudication, gate, releases
    from annotate_app.store.db import Database

    path = tmp_path_factory.mktemp("released") / "qrelforge.db"
    shutil.copyfile(demo_template, path)
    db = Database(f"sqlite:///{path}")
    judge_all(db)
    rita = authenticate(db, "rita", PASSWORDS["rita"])
    truth = sample_grades()
    for item in gate.disagreements(db, rita, "demo"):
        adjudication.adjudicate(
            db,
            rita,
            "demo",
            item.pair_id,
            grade=truth[(item.query_id, item.doc_id)],
            reason="as the sample says",
        )
    releases.create_release(db, rita, "demo", justification="kappa below 0.7 on a 12-pair corpus")
    db.dispose()
    return path


@pytest.fixture
def released(released_file, tmp_path, monkeypatch, fast_hashing):
    """A fresh copy of the released demo, configured for the app."""
    yield from app_database(released_file, tmp_path, monkeypatch)


def _kinds(block) -> list[str]:
    """The element types in ``block``, depth first."""
    out = []
    for child in getattr(block, "children", {}).values():
        out.append(child.type)
        out.extend(_kinds(child))
    return out


def _expected(caller: str, view: str) -> str:
    if caller not in USERS:
        return "login"
    return "page" if caller in ALLOWED[view] else "refused"


def open_url(db, username: str | None, view: str, change: str | None = None):
    """An AppTest session (logged in as ``username``; None: logged out) whose first request is the URL of
    ``view``: before the first run `AppTest.switch_page` requests the page by its URL path, as a deep link
    does.
    ``change`` ("deactivate" or "reset password") happens to the user after the login, before the request."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=30)
    if username is not None:
        at.session_state[state.ACTOR] = authenticate(db, username, PASSWORDS[username])
    if change == "deactivate":
        users.deactivate(db, SYSTEM, username)
    elif change == "reset password":
        users.reset_password(db, SYSTEM, username, "a-brand-new-password")
    return at.switch_page(view).run()


def test_the_access_table_covers_every_page_module():
    modules = {
        f"views/{p.relative_to(VIEWS).as_posix()}" for p in VIEWS.rglob("*.py") if p.name != "__init__.py"
    }
    assert modules == set(ALLOWED) | {nav.LOGIN.path}
    assert set(TITLES) == set(ALLOWED)


@pytest.mark.parametrize("view", list(ALLOWED))
@pytest.mark.parametrize("caller", list(CALLERS))
def test_who_sees_which_page(released, caller, view):
    user, change = CALLERS[caller]
    at = open_url(released, user, view, change)
    assert not at.exception
    titles = [t.value for t in at.title]
    outcome = _expected(caller, view)
    if outcome == "page":
        assert titles == [TITLES[view]]
        assert not [e for e in at.error if plain(e.value).startswith("Not allowed")]
    elif outcome == "refused":
        assert titles == []
        need = "admin" if ALLOWED[view] == {D} else "reviewer"
        assert [plain(e.value) for e in at.error] == [
            f"Not allowed: this page needs the {need} role; {user} is {caller}."
        ]
        assert _kinds(at.main) == ["error"]  # nothing else: no data, no widget
    else:
        assert titles == ["QrelForge"] and [b.label for b in at.button] == ["Log in"]
        assert state.ACTOR not in at.session_state
        assert not [k for k in _kinds(at.main) if k in DATA]
        assert not at.sidebar.get("page_link")
        assert [plain(i.value) for i in at.info] == ([auth.ENDED] if change else [])


@pytest.mark.parametrize(
    ("user", "view", "title"),
    [
        ("rita", "views/review/release.py", "Release"),
        ("admin", "views/admin/audit.py", "Audit log"),
        ("alice", "views/annotate/my_labels.py", "My labels"),
        ("alice", "views/review/release.py", None),
    ],
)
def test_a_deep_link_shows_the_login_form_then_its_page(released, user, view, title):
    """Logged out, a page's URL shows the login form (not "Page not found") and keeps its URL: after the login
    the same URL opens that page, or says "Not allowed" (never the content)."""
    at = open_url(released, None, view)
    assert [t.value for t in at.title] == ["QrelForge"]
    at = _login(at, user, PASSWORDS[user])
    assert [t.value for t in at.title] == ([title] if title else [])
    if title is None:
        assert [plain(e.value) for e in at.error] == [
            "Not allowed: this page needs the reviewer role; alice is annotator."
        ]
        assert _kinds(at.main) == ["error"]


# --------------------------------------------------------------------------------------------- sessions
def _cookie(monkeypatch, token: str | None) -> None:
    monkeypatch.setattr(auth, "request_cookies", lambda: {auth.COOKIE: token} if token else {})


@pytest.mark.parametrize(("age", "logged_in"), [(0, True), (300, True), (400, False), (13 * 3600, False)])
def test_a_cookie_older_than_the_session_lifetime_is_refused(released, monkeypatch, age, logged_in):
    # 360 seconds: a minute's margin for the page run on a loaded machine (36 s once expired a 30 s cookie)
    monkeypatch.setenv("QRELFORGE_SESSION_HOURS", "0.1")
    token = login_token(released, "rita", age=age)
    _cookie(monkeypatch, token)
    at = app_as(released)
    assert [t.value for t in at.title] == (["Agreement"] if logged_in else ["QrelForge"])
    if not logged_in:
        assert [plain(i.value) for i in at.info] == [auth.EXPIRED]
        assert at.session_state[state.IGNORED_TOKEN] == token
        assert "Expires=Thu, 01 Jan 1970 00:00:00 GMT" in at.html[0].value


def test_the_cookie_expires_with_the_session(released, monkeypatch):
    from email.utils import parsedate_to_datetime

    monkeypatch.setenv("QRELFORGE_SESSION_HOURS", "0.25")
    at = app_as(released)
    at.text_input(key=state.LOGIN_USERNAME).input("alice")
    at.text_input(key=state.LOGIN_PASSWORD).input(PASSWORDS["alice"])
    at.button(key=f"FormSubmitter:{state.LOGIN_FORM}-Log in").click().run()
    script = at.html[0].value
    expires = parsedate_to_datetime(script.split("Expires=")[1].split(";")[0]).timestamp()
    assert abs(expires - (time.time() + 900)) < 5


def test_an_open_session_ends_when_its_lifetime_has_passed(released, monkeypatch):
    monkeypatch.setenv("QRELFORGE_SESSION_HOURS", "0.01")
    _cookie(monkeypatch, login_token(released, "rita"))
    at = app_as(released, page="views/review/release.py")
    assert [t.value for t in at.title] == ["Release"]
    later = time.time() + 37
    monkeypatch.setattr(auth, "time", types.SimpleNamespace(time=lambda: later))
    at.run()
    assert [t.value for t in at.title] == ["QrelForge"]
    assert [plain(i.value) for i in at.info] == [auth.EXPIRED]
    assert not at.get("table")


@pytest.mark.parametrize("change", ["reset password", "deactivate", "change role", "own password"])
def test_a_changed_user_loses_the_old_cookie(released, monkeypatch, change):
    token = login_token(released, "rita")
    if change == "reset password":
        users.reset_password(released, SYSTEM, "rita", "another-password")
    elif change == "deactivate":
        users.deactivate(released, SYSTEM, "rita")
    elif change == "change role":
        users.set_role(released, SYSTEM, "rita", "annotator")
    else:
        rita = authenticate(released, "rita", PASSWORDS["rita"])
        users.change_password(released, rita, PASSWORDS["rita"], "rita-new-password")
    _cookie(monkeypatch, token)
    at = app_as(released)
    assert [t.value for t in at.title] == ["QrelForge"]
    assert [plain(i.value) for i in at.info] == [auth.ENDED]
    at.run()  # the notice is shown once; the cookie stays ignored
    assert [t.value for t in at.title] == ["QrelForge"] and not at.info


@pytest.mark.parametrize("token", ["garbage-token-value", "x" * 3000, "<script>alert(1)</script>"])
def test_a_forged_cookie_is_refused(released, monkeypatch, token):
    _cookie(monkeypatch, token)
    at = app_as(released)
    assert [t.value for t in at.title] == ["QrelForge"]
    assert [plain(i.value) for i in at.info] == [auth.INVALID]
    assert "<script>alert" not in at.html[0].value  # the expiring script never echoes the cookie


# ------------------------------------------------------------------------------------------- throttling
def _login(at, username: str, password: str):
    at.text_input(key=state.LOGIN_USERNAME).input(username)
    at.text_input(key=state.LOGIN_PASSWORD).input(password)
    return at.button(key=f"FormSubmitter:{state.LOGIN_FORM}-Log in").click().run()


def test_login_is_locked_after_failures_until_the_lock_expires(released, monkeypatch):
    """Five wrong passwords lock the account for 30 s: the message says how long to wait and the right
    password is refused; once the clock passes the lock (the service's clock, moved), it works."""
    from annotate_app.services import auth as service

    at = app_as(released)
    for attempt in range(1, MAX_FAILED_LOGINS + 1):
        at = _login(at, "bob", f"wrong-{attempt}")
        assert [plain(e.value) for e in at.error] == ["invalid username or password"]
    at = _login(at, "bob", PASSWORDS["bob"])
    [message] = [plain(e.value) for e in at.error]
    assert message in {f"too many failed logins for 'bob'; try again in {s} s" for s in (29, 30)}
    assert state.ACTOR not in at.session_state
    until = users.get_user(released, SYSTEM, "bob").locked_until
    monkeypatch.setattr(service, "utcnow", lambda: until - timedelta(seconds=5))
    at = _login(at, "bob", PASSWORDS["bob"])
    assert [plain(e.value) for e in at.error] == ["too many failed logins for 'bob'; try again in 5 s"]
    monkeypatch.setattr(service, "utcnow", lambda: until + timedelta(seconds=1))
    at = _login(at, "bob", PASSWORDS["bob"])
    assert not at.error
    assert [t.value for t in at.title] == ["Annotate"]
    assert at.session_state[state.ACTOR].username == "bob"
