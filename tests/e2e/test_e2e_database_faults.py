"""In Debian's Chromium: the app with its database locked, then unreachable, shows one clear message and no
traceback, and the next click after the fault works (issue 16 item 5, issue 14 item 7).

SQLite: another connection holds the write lock (``BEGIN IMMEDIATE``) while alice submits a label: after
SQLite's 5 s busy timeout the card says "the database is busy, try again"; the lock gone, the same Submit
saves. PostgreSQL: the app reaches the server through a TCP proxy the test cuts: a visitor who is not logged
in (on Log in), and alice on her card (on Submit), see "the database is unreachable, try again later"; the
proxy back, the next click works.
"""

from __future__ import annotations

import re

import pytest
from app_helpers import PASSWORDS
from e2e_helpers import go, idle, login, shot, start_server, stop_server
from fault_helpers import TcpProxy, locked
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)
BUSY = "the database is busy, try again"
UNREACHABLE = "the database is unreachable, try again later"
TRACES = ("Traceback", "OperationalError", "sqlalchemy", '.py", line')


@pytest.fixture
def new_page(browser):
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(30_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def _no_traceback(page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)
    body = page.inner_text("body")
    assert not [t for t in TRACES if t in body], body[:2000]


def _log_in(page, username: str) -> None:
    page.get_by_label("Username", exact=True).fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORDS[username])
    page.get_by_role("button", name="Log in").click()


def _grade_and_reason(page, grade: int, reason: str) -> None:
    idle(page)
    page.get_by_role("button", name=re.compile(f"^{grade} · ")).click()
    expect(page.get_by_text(f"Chosen grade: {grade} · ")).to_be_visible()
    idle(page)
    page.get_by_label("Reason", exact=True).fill(reason)


def test_a_locked_sqlite_database_says_busy_and_the_next_click_saves(new_page, app_server):
    page = new_page()
    login(page, app_server.url, "alice")
    _grade_and_reason(page, 2, "answers the question")
    with locked(f"sqlite:///{app_server.log.parent / 'qrelforge.db'}"):
        page.get_by_role("button", name="Submit").click()
        expect(page.get_by_text(BUSY, exact=True)).to_be_visible()
        idle(page)
        _no_traceback(page)
        shot(page, "database-busy")
    page.get_by_role("button", name="Submit").click()  # the form kept the grade and the reason
    expect(page.get_by_text("Saved q1 · D1: grade 2")).to_be_visible()
    _no_traceback(page)


@pytest.fixture
def pg_demo(pg_session_url, fast_hashing):
    """The demo on this session's PostgreSQL database (emptied first)."""
    from store_fixtures import _truncate

    from annotate_app.services.demo import load_demo
    from annotate_app.store.db import Database

    _truncate(pg_session_url)
    db = Database(pg_session_url)
    load_demo(db)
    db.dispose()
    return pg_session_url


def test_an_unreachable_postgresql_says_so_to_everyone_and_the_next_click_works(
    new_page, servers, pg_demo, tmp_path
):
    from sqlalchemy import make_url

    target = make_url(pg_demo)
    proxy = TcpProxy((target.host or "127.0.0.1", target.port or 5432)).up()
    server = start_server(tmp_path, database_url=proxy.url(pg_demo))
    servers.append(server)
    try:
        alice = new_page()
        login(alice, server.url, "alice")
        expect(alice.get_by_text("Query q1 · document D1")).to_be_visible()
        _grade_and_reason(alice, 2, "answers the question")
        proxy.down()
        visitor = new_page()  # not logged in: the login form, then its message
        go(visitor, server.url)
        _log_in(visitor, "bob")
        expect(visitor.get_by_text(UNREACHABLE, exact=True)).to_be_visible()
        _no_traceback(visitor)
        shot(visitor, "database-unreachable-login")
        alice.get_by_role("button", name="Submit").click()
        expect(alice.get_by_text(UNREACHABLE, exact=True)).to_be_visible()
        idle(alice)
        expect(alice.get_by_text(UNREACHABLE, exact=True)).to_have_count(1)  # once, not again by the card
        _no_traceback(alice)
        shot(alice, "database-unreachable-submit")

        proxy.up()  # the next click works
        alice.get_by_test_id("stSidebar").get_by_role("link", name="Annotate", exact=True).click()
        expect(alice.get_by_text("Query q1 · document D1")).to_be_visible()
        _grade_and_reason(alice, 2, "answers the question")
        alice.get_by_role("button", name="Submit").click()
        expect(alice.get_by_text("Saved q1 · D1: grade 2")).to_be_visible()
        _no_traceback(alice)
        _log_in(visitor, "bob")
        expect(visitor.get_by_text("Logged in as bob")).to_be_visible()
    finally:
        proxy.down()
        stop_server(server)
