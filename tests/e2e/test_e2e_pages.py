"""Every page in Debian's Chromium: the admin opens each one (no exception, a screenshot each); a wrong
password shows the service's message; a deep link survives a reload; log out ends the cookie login."""

from __future__ import annotations

import pytest
from e2e_helpers import go, idle, login, shot
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)

PAGES = [
    ("annotate", "Annotate"),
    ("my_labels", "My labels"),
    ("agreement", "Agreement"),
    ("adjudicate", "Adjudicate"),
    ("release", "Release"),
    ("score", "Score"),
    ("annotators", "Annotators"),
    ("admin_users", "Users"),
    ("admin_project", "Project"),
    ("admin_data", "Data"),
    ("audit", "Audit log"),
]


def _page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    return context.new_page()


def test_every_page_renders_for_the_admin_and_a_deep_link_survives_a_reload(browser, app_server):
    url = app_server.url
    page = _page(browser)
    go(page, url)
    page.get_by_label("Username", exact=True).fill("admin")
    page.get_by_label("Password", exact=True).fill("not-the-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text("invalid username or password")).to_be_visible()
    login(page, url, "admin")
    for path, title in PAGES:
        go(page, f"{url}/{path}")
        expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible()
        expect(page.get_by_test_id("stException")).to_have_count(0)
        shot(page, f"admin-{path}")
    page.reload()
    idle(page)
    expect(page.get_by_role("heading", name="Audit log", exact=True)).to_be_visible()
    expect(page.get_by_text("Logged in as admin")).to_be_visible()
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    idle(page)
    page.reload()
    idle(page)
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    assert not [c for c in page.context.cookies() if c["name"] == "qrelforge_login" and c["value"]]


def test_a_deep_link_as_the_servers_first_request_goes_through_the_login(browser, app_server):
    """A deep link as the very first request of a fresh server goes through the router (the login form): the
    page never runs on its own."""
    page = _page(browser)
    go(page, f"{app_server.url}/agreement")
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    expect(page.get_by_text("Not allowed")).to_have_count(0)
    login(page, app_server.url, "rita")
    go(page, f"{app_server.url}/agreement")
    expect(page.get_by_role("heading", name="Agreement", exact=True)).to_be_visible()
