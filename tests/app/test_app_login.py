"""AppTest: logging in and out, throttling, the session cookie, and the role-aware sidebar."""

from __future__ import annotations

import pytest
from app_helpers import APP, COOKIE_SECRET, app_as, plain, texts

from annotate_app.ui import auth, state


def _login(at, username: str, password: str):
    at.text_input(key=state.LOGIN_USERNAME).input(username)
    at.text_input(key=state.LOGIN_PASSWORD).input(password)
    return at.button(key=f"FormSubmitter:{state.LOGIN_FORM}-Log in").click().run()


def _links(at) -> list[str]:
    return [link.label for link in at.sidebar.get("page_link")]


def test_logged_out_sees_only_the_login_form(app_db):
    at = app_as(app_db)
    assert [t.value for t in at.title] == ["QrelForge"]
    assert [b.label for b in at.button] == ["Log in"]
    assert not at.sidebar.get("page_link")


@pytest.mark.parametrize(
    ("user", "landing", "links"),
    [
        ("alice", "Annotate", ["Annotate", "My labels"]),
        (
            "rita",
            "Agreement",
            ["Annotate", "My labels", "Agreement", "Adjudicate", "Release", "Score", "Annotators"],
        ),
        (
            "admin",
            "Agreement",
            [
                "Annotate",
                "My labels",
                "Agreement",
                "Adjudicate",
                "Release",
                "Score",
                "Annotators",
                "Users",
                "Project",
                "Data",
                "Audit log",
            ],
        ),
    ],
)
def test_login_lands_on_the_role_page_with_its_links(app_db, user, landing, links):
    at = _login(app_as(app_db), user, f"{user}-demo")
    assert not at.exception
    assert [t.value for t in at.title] == [landing]
    assert _links(at) == links
    assert f"Logged in as **{user}**" in at.sidebar.caption[-1].value
    assert at.session_state[state.ACTOR].username == user
    assert state.LOGIN_PASSWORD not in at.session_state


@pytest.mark.parametrize(
    ("username", "password"), [("alice", "wrong-password"), ("nobody", "alice-demo"), ("", "")]
)
def test_a_wrong_login_shows_the_service_message(app_db, username, password):
    at = _login(app_as(app_db), username, password)
    assert texts(at.error) == ["invalid username or password"]
    assert state.ACTOR not in at.session_state


def test_repeated_failures_are_throttled(app_db):
    at = app_as(app_db)
    for _ in range(5):
        at = _login(at, "bob", "not-his-password")
    at = _login(at, "bob", "bob-demo")
    assert len(at.error) == 1
    assert plain(at.error[0].value).startswith("too many failed logins for 'bob'; try again in ")
    assert state.ACTOR not in at.session_state


def test_log_out_clears_the_session_and_expires_the_cookie(app_db):
    at = _login(app_as(app_db), "alice", "alice-demo")
    token = at.session_state[state.LOGIN_TOKEN][0]
    assert auth.COOKIE in at.html[0].value and token in at.html[0].value
    at.sidebar.button(key=state.LOGOUT_BUTTON).click().run()
    assert [t.value for t in at.title] == ["QrelForge"]
    assert state.ACTOR not in at.session_state
    assert "Expires=Thu, 01 Jan 1970 00:00:00 GMT" in at.html[0].value


def _with_cookie(monkeypatch, token: str | None) -> None:
    monkeypatch.setattr(auth, "request_cookies", lambda: {auth.COOKIE: token} if token else {})


def _token(db, username: str, *, issued: float | None = None, secret: str = COOKIE_SECRET) -> str:
    """A login cookie as the app writes it: the id of a session opened at ``issued`` (a past time) for the
    session lifetime; for another ``secret`` (another deployment), an id this database never issued."""
    import secrets
    from datetime import UTC, datetime

    from annotate_app.services.auth import authenticate, open_session
    from annotate_app.ui import settings

    if secret != COOKIE_SECRET:
        return secrets.token_urlsafe(32)
    actor = authenticate(db, username, f"{username}-demo")
    now = datetime.fromtimestamp(issued, UTC) if issued is not None else None
    return open_session(db, actor, hours=settings.app_settings().session_seconds / 3600, now=now)


def test_a_valid_cookie_logs_in_a_new_session(app_db, monkeypatch):
    _with_cookie(monkeypatch, _token(app_db, "rita"))
    at = app_as(app_db)
    assert [t.value for t in at.title] == ["Agreement"]
    assert at.session_state[state.LOGIN_METHOD] == "cookie"


@pytest.mark.parametrize("kind", ["other secret", "expired", "garbage"])
def test_a_bad_cookie_is_ignored_and_expired(app_db, monkeypatch, kind):
    import time

    token = {
        "other secret": lambda: _token(app_db, "rita", secret="another-secret-0123456789abcdef"),
        "expired": lambda: _token(app_db, "rita", issued=time.time() - 13 * 3600),
        "garbage": lambda: "not.a.token",
    }[kind]()
    _with_cookie(monkeypatch, token)
    at = app_as(app_db)
    assert [t.value for t in at.title] == ["QrelForge"]
    assert at.session_state[state.IGNORED_TOKEN] == token
    assert "Expires=Thu, 01 Jan 1970" in at.html[0].value


def test_a_password_reset_ends_cookie_and_open_sessions(app_db, monkeypatch):
    from annotate_app.services import users
    from annotate_app.services.auth import SYSTEM

    token = _token(app_db, "alice")
    _with_cookie(monkeypatch, token)
    at = app_as(app_db)
    assert [t.value for t in at.title] == ["Annotate"]
    users.reset_password(app_db, SYSTEM, "alice", "a-new-password")
    at.run()
    assert [t.value for t in at.title] == ["QrelForge"]
    assert "Your session ended" in plain(at.info[0].value)
    assert app_as(app_db).title[0].value == "QrelForge"  # the old cookie no longer works either


def test_the_cookie_holds_only_a_session_id(app_db):
    from annotate_app.services.auth import SessionState, authenticate, check_session, resolve_session

    actor = authenticate(app_db, "bob", "bob-demo")
    token = _token(app_db, "bob")
    assert resolve_session(app_db, token) == actor
    assert check_session(app_db, token + "x").state == SessionState.UNKNOWN
    assert check_session(app_db, "<script>").state == SessionState.UNKNOWN


def test_the_cookie_secret_file_is_created_once_with_0600(app_db, monkeypatch, tmp_path):
    import stat

    from annotate_app.ui import settings

    monkeypatch.delenv("QRELFORGE_COOKIE_SECRET")
    first = settings.cookie_secret()
    path = tmp_path / settings.SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    settings._file_secret.clear()
    assert settings.cookie_secret() == first == path.read_text().strip()


AUTH = {
    "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
    "cookie_secret": "x" * 32,
    "client_id": "qf",
    "client_secret": "s",
    "server_metadata_url": "https://idp.example.com/.well-known/openid-configuration",
}


def _sso_app(user: dict | None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=30)
    at.secrets["auth"] = AUTH
    at.secrets["qrelforge_sso"] = {"users": {"rita@example.com": "rita"}, "domain": "example.org"}
    at.user = user or {"is_logged_in": False}
    return at.run()


def test_single_sign_on_offers_its_button_when_configured(app_db):
    at = _sso_app(None)
    assert [b.label for b in at.button] == ["Log in", "Log in with single sign-on"]


@pytest.mark.parametrize(
    ("email", "user", "landing"),
    [
        ("rita@example.com", "rita", "Agreement"),
        ("alice@example.org", "alice", "Annotate"),
    ],
)
def test_single_sign_on_maps_a_verified_email_to_its_user(app_db, email, user, landing):
    at = _sso_app({"is_logged_in": True, "email": email, "email_verified": True})
    assert [t.value for t in at.title] == [landing]
    assert at.session_state[state.ACTOR].username == user
    assert at.session_state[state.LOGIN_METHOD] == "sso"


@pytest.mark.parametrize(
    ("claims", "notice"),
    [
        ({"email": "mallory@evil.example"}, "mallory@evil.example has no QrelForge user."),
        ({"email": "alice@example.org", "email_verified": False}, "alice@example.org has no QrelForge user."),
        (
            {"email": "ghost@example.org"},
            "ghost@example.org has no active QrelForge account; ask an admin to create user 'ghost'",
        ),
    ],
)
def test_single_sign_on_never_creates_or_guesses_users(app_db, claims, notice):
    at = _sso_app({"is_logged_in": True, **claims})
    assert [t.value for t in at.title] == ["QrelForge"]
    assert texts(at.info) == [notice]
    assert state.ACTOR not in at.session_state


def test_single_sign_on_log_out_ends_the_provider_session_too(app_db):
    at = _sso_app({"is_logged_in": True, "email": "rita@example.com", "email_verified": True})
    at.sidebar.button(key=state.LOGOUT_BUTTON).click().run()
    assert not at.exception
    assert [t.value for t in at.title] == ["QrelForge"]
    assert state.ACTOR not in at.session_state
