"""Login, logout and the current user, with a server-side session so that a login survives a page reload.

The browser's cookie holds only a random session id; every run re-checks the session
(`services.auth.check_session`), so a logout, password reset, role change or deactivation ends it at once.
Optional OpenID Connect login maps to existing users only (`services.sso`). Details: docs/app.md.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from email.utils import formatdate

import streamlit as st

from annotate_app.services import auth as service
from annotate_app.services import sso
from annotate_app.services.auth import Actor, LoginMethod, Role, SessionState
from annotate_app.services.errors import PermissionDenied
from annotate_app.ui import cache, settings, state

__all__ = [
    "COOKIE",
    "current_actor",
    "login",
    "logout",
    "require",
    "cookie_script",
    "sso_configured",
    "sso_login",
    "EXPIRED",
    "ENDED",
    "INVALID",
]

COOKIE = "qrelforge_login"
_TOKEN = re.compile(r"[A-Za-z0-9_\-]{32,128}")
EXPIRED = "Your session expired; please log in again."
ENDED = "Your session ended (logged out, or your password, role or account changed); please log in again."
INVALID = "Your login cookie is not valid here (unknown or damaged); please log in again."
_NOTICES = {SessionState.EXPIRED: EXPIRED, SessionState.ENDED: ENDED, SessionState.UNKNOWN: INVALID}


# ---------------------------------------------------------------------------------------------- sessions
def request_cookies() -> Mapping[str, str]:
    """The cookies of the session's initial request (read-only)."""
    return st.context.cookies


def _user_agent() -> str:
    return str(st.context.headers.get("User-Agent") or "")


def _start(actor: Actor, token: str, expires: float, method: str) -> Actor:
    ss = st.session_state
    ss[state.ACTOR] = actor
    ss[state.LOGIN_METHOD] = method
    ss.pop(state.EXPIRE_COOKIE, None)
    ss.pop(state.LOGOUT_NOTICE, None)
    ss[state.LOGIN_TOKEN] = (token, expires)
    return actor


def _open(actor: Actor, method: LoginMethod) -> tuple[str, float]:
    """A new server-side session of ``actor``: (its token, when it expires)."""
    seconds = settings.app_settings().session_seconds
    token = service.open_session(
        cache.database(), actor, hours=seconds / 3600, method=method, user_agent=_user_agent()
    )
    return token, time.time() + seconds


def login(username: str, password: str) -> Actor:
    """Check a password login (raises PermissionDenied with the service's message) and start the session."""
    actor = service.authenticate(cache.database(), username, password)
    token, expires = _open(actor, LoginMethod.PASSWORD)
    return _start(actor, token, expires, "password")


def _from_cookie() -> Actor | None:
    ss = st.session_state
    token = request_cookies().get(COOKIE)
    if not isinstance(token, str) or not token or token == ss.get(state.IGNORED_TOKEN):
        return None
    found = service.check_session(cache.database(), token) if _TOKEN.fullmatch(token) else None
    if found is None or found.actor is None or found.expires_at is None:
        ss[state.IGNORED_TOKEN] = token
        ss[state.EXPIRE_COOKIE] = True
        ss[state.LOGOUT_NOTICE] = INVALID if found is None else _NOTICES[found.state]
        return None
    return _start(found.actor, token, found.expires_at.timestamp(), "cookie")


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
    item = ss.get(state.LOGIN_TOKEN)
    fresh = _recheck(actor, item[0] if item else None)
    if fresh is None:
        return None
    ss[state.ACTOR] = fresh
    return fresh


def _recheck(actor: Actor, token: str | None) -> Actor | None:
    """The fresh Actor of the session's login (logged out, with the reason, when it has ended). An Actor kept
    without a session id (put in the session state by code that opened none, e.g. a test) is re-checked by
    its session version alone."""
    if token is None:
        try:
            return service.resolve_actor(cache.database(), actor.user_id or 0, actor.session_version)
        except PermissionDenied:
            logout(ENDED)
            return None
    found = service.check_session(cache.database(), token)
    if found.actor is None:
        logout(EXPIRED if found.state == SessionState.EXPIRED else ENDED)
    return found.actor


def logout(notice: str | None = None) -> None:
    """End the session: revoke it in the database, forget everything, expire the cookie, ignore this session's
    initial cookie."""
    ss = st.session_state
    method = ss.get(state.LOGIN_METHOD)
    item = ss.get(state.LOGIN_TOKEN)
    token = request_cookies().get(COOKIE)
    for ended in {item[0] if item else None, token if isinstance(token, str) else None} - {None}:
        service.close_session(cache.database(), ended)
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
    """Write (or expire) the login cookie in the browser, with a script that holds only the session id (none
    for a single sign-on: Streamlit's own cookie carries it)."""
    ss = st.session_state
    item = ss.get(state.LOGIN_TOKEN)
    if item and _TOKEN.fullmatch(item[0]) and ss.get(state.LOGIN_METHOD) != "sso":
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
    claim = st.user.get("email_verified")
    verified = claim if isinstance(claim, bool) else None
    name = sso.username_for(
        email, users=mapping.get("users"), domain=mapping.get("domain"), verified=verified
    )
    if name is None:
        st.session_state[state.LOGOUT_NOTICE] = f"{email or 'This account'} has no QrelForge user."
        return None
    try:
        actor = sso.sso_actor(cache.database(), name, identity=str(email), verified=verified)
        token, expires = _open(actor, LoginMethod.SSO)
    except PermissionDenied as exc:
        st.session_state[state.LOGOUT_NOTICE] = str(exc)
        return None
    return _start(actor, token, expires, "sso")
