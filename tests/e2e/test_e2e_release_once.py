"""In Debian's Chromium: a double click on Create release makes one release (issue 12, item 2). The button is
disabled afterwards and the justification box is empty; the page says nothing more is to be released."""

from __future__ import annotations

import re
import shutil

import pytest
from app_helpers import judge_all
from e2e_helpers import go, idle, login, shot, start_server, stop_server
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)


@pytest.fixture
def labelled_server(servers, demo_template, tmp_path):
    """The app on a copy of the demo where alice and bob agree on every pair (nothing blocks a release)."""
    from annotate_app.store.db import Database

    database = tmp_path / "qrelforge.db"
    shutil.copyfile(demo_template, database)
    db = Database(f"sqlite:///{database}")
    judge_all(db, flips={})
    db.dispose()
    server = start_server(tmp_path, database)
    servers.append(server)
    yield server, database
    stop_server(server)


def _releases(database) -> list[tuple[int, str]]:
    import sqlite3

    with sqlite3.connect(database) as conn:
        return conn.execute("SELECT version, content_hash FROM releases ORDER BY version").fetchall()


def test_a_double_click_on_create_release_makes_one_release(browser, labelled_server):
    server, database = labelled_server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    login(page, server.url, "rita")
    go(page, f"{server.url}/release")
    expect(page.get_by_text("Nothing blocks a release.")).to_be_visible()
    box = page.get_by_label(re.compile("^Justification"))
    box.fill("every pair unanimous: nothing to justify")
    box.press("Control+Enter")
    idle(page)
    button = page.get_by_role("button", name="Create release")
    button.dblclick()
    # and a third click, while the page redraws: on a fast server the button is disabled already (the release
    # exists), and a disabled button takes the click and does nothing, as it would for a user
    button.click(force=True)
    page.wait_for_timeout(1500)  # every click's request has reached the server by now
    idle(page)
    assert [v for v, _ in _releases(database)] == [1]
    # the flash is "Release 1 created" or, when a later click's callback ran last, "identical to v1"
    expect(page.get_by_text("v1 holds the current qrels: nothing new to release.")).to_be_visible()
    expect(page.get_by_role("button", name="Create release")).to_be_disabled()
    expect(page.get_by_role("button", name="TREC qrels")).to_be_visible()  # v1 listed under Past releases
    expect(page.get_by_label(re.compile("^Justification"))).to_have_value("")
    shot(page, "release-once")
    context.close()
