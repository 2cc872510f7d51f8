"""Server-side sessions in Debian's Chromium: a copy of the login cookie taken before log out opens nothing
after it, and a password reset by an admin ends a second browser's session at its next action (in the
database too, not only in the page).
"""

from __future__ import annotations

import pytest
from app_helpers import PASSWORDS
from e2e_helpers import go, login
from playwright.sync_api import expect

from annotate_app.services.auth import SessionState, authenticate, check_session
from annotate_app.ui import auth

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)
NO_COOKIE = f"() => !/(^|; ){auth.COOKIE}=[^;]/.test(document.cookie)"


@pytest.fixture
def new_page(browser):
    """``new_page()``: a page in a new browser context (its own cookies), closed after the test."""
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(30_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def _cookie(page) -> dict:
    return next(c for c in page.context.cookies() if c["name"] == auth.COOKIE and c["value"])


def _database(app_server):
    from annotate_app.store.db import Database

    return Database(f"sqlite:///{app_server.log.parent / 'qrelforge.db'}")


def test_a_cookie_copied_before_log_out_gets_the_login_page(new_page, app_server):
    url = app_server.url
    first = new_page()
    login(first, url, "alice")
    copied = _cookie(first)
    first.get_by_test_id("stSidebar").get_by_role("button", name="Log out").click()
    expect(first.get_by_role("button", name="Log in")).to_be_visible()
    first.wait_for_function(NO_COOKIE)

    thief = new_page()
    thief.context.add_cookies([copied])
    go(thief, f"{url}/my_labels")
    expect(thief.get_by_role("button", name="Log in")).to_be_visible()
    expect(thief.get_by_text(auth.ENDED)).to_be_visible()
    expect(thief.get_by_text("Logged in as alice")).to_have_count(0)
    db = _database(app_server)
    assert check_session(db, copied["value"]).state == SessionState.ENDED
    db.dispose()


def test_a_password_reset_by_an_admin_ends_another_browsers_session(new_page, app_server, fast_hashing):
    from annotate_app.services import users

    url = app_server.url
    alice = new_page()
    login(alice, url, "alice")
    token = _cookie(alice)["value"]
    db = _database(app_server)
    assert check_session(db, token).state == SessionState.LIVE
    admin = authenticate(db, "admin", PASSWORDS["admin"])
    users.reset_password(db, admin, "alice", "alice-new-password")
    assert check_session(db, token).state == SessionState.ENDED  # revoked in the database
    db.dispose()

    alice.get_by_test_id("stSidebar").get_by_role("link", name="My labels", exact=True).click()
    expect(alice.get_by_text(auth.ENDED)).to_be_visible()  # at its next action
    expect(alice.get_by_role("button", name="Log in")).to_be_visible()
    alice.wait_for_function(NO_COOKIE)
    expect(alice.get_by_text("Logged in as alice")).to_have_count(0)
