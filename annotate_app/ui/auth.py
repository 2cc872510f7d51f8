"""Login, logout and the current user, with a signed cookie so that a login survives a page reload.

- Password login: `services.auth.authenticate` (argon2, throttled in the database). On success the app signs
  ``{"uid", "sv", "iat"}`` (user id, session version, issued at) with itsdangerous' URLSafeTimedSerializer,
  salt ``"qrelforge-login"``, and a tiny script (`cookie_script`) stores it in the cookie ``qrelforge_login``
  (``Path=/; SameSite=Strict``, ``Secure`` on HTTPS, expiring with the session lifetime). The script holds
  only the token, never user text.
- A new session (a reload, a new tab) reads ``st.context.cookies``, checks the signature and age, then asks
  `services.auth.resolve_actor`, so a password reset, a role change or a deactivation ends the login at once.
  A refused cookie is expired in the browser and the login page says why (`EXPIRED`, `ENDED`, `INVALID`).
- Every full run re-checks the stored Actor the same way (`current_actor`), and a password login or a cookie
  login ends when its lifetime (``QRELFORGE_SESSION_HOURS``, counted from the password login) has passed,
  even in a tab that stays open.
- Log out clears the session state, expires the cookie and ignores the old cookie for the rest of the session.
- Optional single sign-on: with an ``[auth]`` section in ``.streamlit/secrets.toml``, `st.login` signs the
  user in with OpenID Connect and `services.sso` maps the verified e-mail to an existing active user (section
  ``[qrelforge_sso]``: ``users = {"alice@example.com" = "alice"}`` and/or ``domain = "example.com"``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from email.utils import formatdate

import streamlit as st
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from annotate_app.services import auth as service
from annotate_app.services import sso
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import PermissionDenied
from annotate_app.ui import cache, settings, state

__all__ = [
    "COOKIE",
    "SALT",
    "current_actor",
    "login",
    "logout",
    "require",
    "cookie_script",
    "sign",
    "verify",
    "sso_configured",
    "sso_login",
    "EXPIRED",
    "ENDED",
    "INVALID",
]

COOKIE = "qrelforge_login"
SALT = "qrelforge-login"
_TOKEN = re.compile(r"[A-Za-z0-9_.\-]{10,2000}")
EXPIRED = "Your session expired; please log in again."
ENDED = "Your session ended (your password, role or account changed); please log in again."
INVALID = "Your login cookie is not valid here (signed with another secret, or damaged); please log in again."


# ------------------------------------------------------------------------------------------------ tokens
def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.cookie_secret(), salt=SALT)


def sign(actor: Actor, *, now: float | None = None) -> str:
    """The signed login token of ``actor``."""
    issued = int(now if now is not None else time.time())
    return _serializer().dumps({"uid": actor.user_id, "sv": actor.session_version, "iat": issued})


def verify(token: str, max_age: int) -> tuple[int, int, int] | None:
    """(user id, session version, signing time) of a valid token at most ``max_age`` seconds old, else
    None."""
    found = _check(token, max_age)
    return found if isinstance(found, tuple) else None


def _check(token: str, max_age: int) -> tuple[int, int, int] | str:
    """The token's (user id, session version, signing time), or why it is refused (`EXPIRED` or `INVALID`).
    The signing time is the signature's own timestamp (the one ``max_age`` is checked against)."""
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        return INVALID
    try:
        data, signed = _serializer().loads(token, max_age=max_age, return_timestamp=True)
    except SignatureExpired:
        return EXPIRED
    except BadSignature:
        return INVALID
    ok = isinstance(data, dict) and all(
        isinstance(data.get(k), int) and not isinstance(data.get(k), bool) for k in ("uid", "sv", "iat")
    )
    return (data["uid"], data["sv"], int(signed.timestamp())) if ok else INVALID


# ---------------------------------------------------------------------------------------------- sessions
def request_cookies() -> Mapping[str, str]:
    """The cookies of the session's initial request (read-only)."""
    return st.context.cookies


def _start(actor: Actor, token: str | None, issued: int | None, method: str) -> Actor:
    ss = st.session_state
    ss[state.ACTOR] = actor
    ss[state.LOGIN_METHOD] = method
    ss.pop(state.EXPIRE_COOKIE, None)
    ss.pop(state.LOGOUT_NOTICE, None)
    if token is not None and issued is not None:
        ss[state.LOGIN_TOKEN] = (token, issued + settings.app_settings().session_seconds)
    return actor


def login(username: str, password: str) -> Actor:
    """Check a password login (raises PermissionDenied with the service's message) and start the session."""
    actor = service.authenticate(cache.database(), username, password)
    now = int(time.time())
    return _start(actor, sign(actor, now=now), now, "password")


def _from_cookie() -> Actor | None:
    ss = st.session_state
    token = request_cookies().get(COOKIE)
    if not isinstance(token, str) or not token or token == ss.get(state.IGNORED_TOKEN):
        return None
    found = _check(token, settings.app_settings().session_seconds)
    try:
        if isinstance(found, str):
            raise PermissionDenied(found)
        actor = service.resolve_actor(cache.database(), found[0], found[1])
    except PermissionDenied:
        ss[state.IGNORED_TOKEN] = token
        ss[state.EXPIRE_COOKIE] = True
        ss[state.LOGOUT_NOTICE] = found if isinstance(found, str) else ENDED
        return None
    return _start(actor, token, found[2], "cookie")


def _expired(ss) -> bool:
    """True when the session's login (password or cookie) is older than the session lifetime."""
    item = ss.get(state.LOGIN_TOKEN)
    return item is not None and time.time() >= item[1]


def current_actor() -> Actor | None:
    """The logged-in Actor, re-checked against the database (a changed user is logged out), or None."""
    ss = st.session_state
    actor = ss.get(state.ACTOR)
    if actor is None:
        return _from_cookie() or sso_login()
    if _expired(ss):
        logout(EXPIRED)
        return None
    try:
        fresh = service.resolve_actor(cache.database(), actor.user_id, actor.session_version)
    except PermissionDenied:
        logout(ENDED)
        return None
    ss[state.ACTOR] = fresh
    return fresh


def logout(notice: str | None = None) -> None:
    """End the session: forget everything, expire the cookie, ignore this session's initial cookie."""
    ss = st.session_state
    method = ss.get(state.LOGIN_METHOD)
    token = request_cookies().get(COOKIE)
    ss.clear()
    if token:
        ss[state.IGNORED_TOKEN] = token
    ss[state.EXPIRE_COOKIE] = True
    if notice:
        ss[state.LOGOUT_NOTICE] = notice
    if method == "sso":
        st.logout()


def require(minimum: Role = Role.ANNOTATOR) -> Actor:
    """The page guard: the Actor if it has at least role ``minimum``; else "Not allowed" and stop the page
    before it loads any data (the services check the role again)."""
    actor = st.session_state.get(state.ACTOR)
    if actor is None:
        st.error("Not allowed: please log in first.")
        st.stop()
    if not actor.at_least(minimum):
        st.error(
            f"Not allowed: this page needs the {Role(minimum).value} role; {actor.username} is "
            f"{actor.role.value}."
        )
        st.stop()
    return actor


def cookie_script() -> None:
    """Write (or expire) the login cookie in the browser, with a script that holds only the signed token."""
    ss = st.session_state
    item = ss.get(state.LOGIN_TOKEN)
    if item and _TOKEN.fullmatch(item[0]):
        value, expires = item[0], formatdate(item[1], usegmt=True)
    elif ss.get(state.EXPIRE_COOKIE):
        value, expires = "", formatdate(0, usegmt=True)
    else:
        return
    st.html(
        f'<script>(function(){{var s=location.protocol==="https:"?"; Secure":"";document.cookie='
        f'"{COOKIE}={value}; Path=/; Expires={expires}; SameSite=Strict"+s;}})();</script>',
        unsafe_allow_javascript=True,
        width="content",
    )


# ------------------------------------------------------------------------------------------ single sign-on
def sso_configured() -> bool:
    return settings.secret_value("auth") is not None


def sso_login() -> Actor | None:
    """The Actor of an OpenID Connect login mapped to an active user, when single sign-on is configured."""
    if not sso_configured() or not st.user.is_logged_in:
        return None
    email = st.user.get("email")
    mapping = settings.secret_value("qrelforge_sso") or {}
    name = sso.username_for(
        email,
        users=mapping.get("users"),
        domain=mapping.get("domain"),
        verified=st.user.get("email_verified"),
    )
    if name is None:
        st.session_state[state.LOGOUT_NOTICE] = f"{email or 'This account'} has no QrelForge user."
        return None
    try:
        actor = sso.sso_actor(cache.database(), name, identity=str(email))
    except PermissionDenied as exc:
        st.session_state[state.LOGOUT_NOTICE] = str(exc)
        return None
    return _start(actor, None, None, "sso")
