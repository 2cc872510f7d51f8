"""Attacks on the real app in Debian's Chromium: hostile text renders inert, page URLs obey the roles, and a
changed password ends a cookie login in another browser.

- Injection: project ``attack`` (`ui_attack_helpers.build_attack_project`) holds ``<script>``,
  ``<img onerror>``, ``<svg onload>``, a ``javascript:`` Markdown link, an HTML comment, a Streamlit directive
  and LaTeX in its document titles and texts, query, reasons, guidelines, release justification and run names.
  Each page that shows them (Annotate as alice, Adjudicate, Release and Score as rita) must open no dialog,
  leave ``window.__pwned`` undefined, put no script, event handler attribute, ``javascript:`` link,
  ``<img src=x>`` or frame in the DOM, and show the text literally (the guidelines are Markdown by design:
  there raw HTML shows literally and the link's target is defused).
- Page URLs opened directly (a fresh load, the login from the cookie), as `ui_attack_helpers.ALLOWED` (the
  table the AppTest suite runs whole) says: the annotator every page URL, the reviewer the admin pages, the
  admin one, a logged-out visitor two (then logging in on the second): the page, "Not allowed" and nothing
  else, or the login form; never "Page not found" or another URL.
- A password reset while alice is logged in in two browsers (the second one holding a copy of her cookie): the
  cookie no longer logs in, and the open tab is logged out at its next run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from app_helpers import PASSWORDS
from e2e_helpers import go, idle, login, start_server, stop_server
from playwright.sync_api import expect
from ui_attack_helpers import (
    ALLOWED,
    COMMENT,
    EVIL_DOC,
    EVIL_DOC2,
    EVIL_QUERY,
    EVIL_RUN,
    HOSTILE,
    HOSTILE_TEXT,
    IMG,
    SCRIPT,
    SVG,
    A,
    D,
    R,
    build_attack_project,
    login_token,
)

from annotate_app.ui import auth, nav

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)

# What the DOM of a page holds that a payload could have put there.
TRACES = """() => ({
  pwned: typeof window.__pwned,
  scripts: [...document.scripts].filter(s => s.textContent.includes('__pwned')).map(s => s.outerHTML),
  handlers: [...document.querySelectorAll('*')]
    .filter(e => [...e.attributes].some(a => a.name.toLowerCase().startsWith('on')))
    .map(e => e.outerHTML.slice(0, 200)),
  javascript_links: [...document.querySelectorAll('[href], [src], [action], [formaction]')]
    .filter(e => ['href', 'src', 'action', 'formaction'].some(
      n => /^\\s*javascript:/i.test(e.getAttribute(n) || '')))
    .map(e => e.outerHTML),
  payload_images: [...document.querySelectorAll('img')].filter(i => i.getAttribute('src') === 'x').length,
  frames: document.querySelectorAll('iframe, object, embed').length,
})"""
CLEAN = {
    "pwned": "undefined",
    "scripts": [],
    "handlers": [],
    "javascript_links": [],
    "payload_images": 0,
    "frames": 0,
}
NO_COOKIE = f"() => !/(^|; ){auth.COOKIE}=[^;]/.test(document.cookie)"  # no login cookie, or an empty one
TITLES = {spec.path: spec.title for spec in nav.PAGES}
USERS = {A: "alice", R: "rita", D: "admin"}


@pytest.fixture
def new_page(browser):
    """``new_page()``: a page in a new browser context (its own cookies), closed after the test; every dialog
    any of them opens is recorded in ``new_page.dialogs`` (and dismissed)."""
    contexts, dialogs = [], []

    def make():
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(30_000)
        contexts.append(context)
        page = context.new_page()
        page.on(
            "dialog", lambda dialog: (dialogs.append(f"{dialog.type}: {dialog.message}"), dialog.dismiss())
        )
        return page

    make.dialogs = dialogs
    yield make
    for context in contexts:
        context.close()


def _inert(page, where: str) -> str:
    """The main area's text, once the page is idle and nothing from a payload is in the DOM."""
    idle(page)
    page.wait_for_timeout(200)  # time for an injected handler (an image's onerror) to fire
    assert [frame.url for frame in page.frames] == [page.main_frame.url], where
    assert page.evaluate(TRACES) == CLEAN, where
    return page.get_by_test_id("stMain").inner_text()


def _sidebar_to(page, title: str) -> None:
    page.get_by_test_id("stSidebar").get_by_role("link", name=title, exact=True).click()
    expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible()
    idle(page)


# ------------------------------------------------------------------------------------------------ injection
@pytest.fixture
def attack_server(servers, demo_template, tmp_path):
    """The app on the demo plus project ``attack`` (the tests name it in the URL: ``?project=attack``)."""
    from annotate_app.store.db import Database

    database = tmp_path / "qrelforge.db"
    shutil.copyfile(demo_template, database)
    db = Database(f"sqlite:///{database}")
    build_attack_project(db)
    db.dispose()
    server = start_server(tmp_path, database)
    servers.append(server)
    yield server
    stop_server(server)


def test_hostile_text_renders_as_inert_text(new_page, attack_server):
    url = attack_server.url
    alice = new_page()
    login(alice, f"{url}/?project=attack", "alice")
    expect(alice.get_by_role("heading", name="Annotate", exact=True)).to_be_visible()
    guidelines = alice.get_by_test_id("stExpander")
    guidelines.get_by_text("Guidelines (version 1)").click()
    expect(guidelines.get_by_role("link", name="click").first).to_be_visible()
    text = _inert(alice, "annotate")
    assert f"Query {EVIL_QUERY} · document {EVIL_DOC2}" in text
    assert f"Query: click x {HOSTILE}" in text
    assert f"Second {HOSTILE}" in text and f"Second text {HOSTILE_TEXT}" in text  # the card's title and text
    rules = guidelines.inner_text()  # Markdown by design: raw HTML shows as typed, links are defused
    assert all(payload in rules for payload in (SCRIPT, IMG, SVG, COMMENT))
    assert {link.get_attribute("href") for link in guidelines.get_by_role("link", name="click").all()} == {
        "#"
    }

    rita = new_page()
    login(rita, f"{url}/?project=attack", "rita")
    _sidebar_to(rita, "Adjudicate")
    text = _inert(rita, "adjudicate")
    assert f"document {EVIL_DOC}" in text and f"Title {HOSTILE}" in text and HOSTILE_TEXT in text
    assert f"alice says {HOSTILE_TEXT}" in text and f"bob changed his mind {HOSTILE_TEXT}" in text  # reasons
    _sidebar_to(rita, "Release")
    assert f"Because {HOSTILE_TEXT}" in _inert(rita, "release")  # the justification, in a table
    _sidebar_to(rita, "Score")
    text = _inert(rita, "score")
    assert f"{EVIL_RUN}: 1 query," in text  # the run name in the table's caption (and its index)
    rita.get_by_role("tab", name="Compare").click()
    expect(rita.get_by_text(f"than the baseline {EVIL_RUN}:")).to_be_visible()
    _inert(rita, "score, compare")
    assert new_page.dialogs == []


# ------------------------------------------------------------------------------------------------ page URLs
# caller → the page URLs it opens here (the AppTest suite runs the whole table; each load costs about a
# second)
BROWSER_CASES = {
    A: list(ALLOWED),
    R: [view for view in ALLOWED if R not in ALLOWED[view]],
    D: ["views/admin/audit.py"],
    None: [
        "views/admin/admin_users.py",
        "views/review/score.py",
    ],  # then rita logs in on /score and gets the Score page
}


def _expect_outcome(page, role: str | None, view: str) -> None:
    main, heading = page.get_by_test_id("stMain"), page.get_by_role("heading", name=TITLES[view], exact=True)
    if role is None:  # logged out: any page URL shows the login form, and nothing of the page
        expect(page.get_by_role("button", name="Log in")).to_be_visible()
        expect(heading).to_have_count(0)
        expect(page.get_by_test_id("stSidebar").get_by_role("link")).to_have_count(0)
    elif role in ALLOWED[view]:
        expect(heading).to_be_visible()
        expect(page.get_by_text("Not allowed")).to_have_count(0)
    else:
        need = "admin" if ALLOWED[view] == {D} else "reviewer"
        expect(main).to_have_text(f"Not allowed: this page needs the {need} role; {USERS[role]} is {role}.")
    expect(page.get_by_text("Page not found")).to_have_count(0)
    assert page.url.split("?")[0].endswith("/" + Path(view).stem)  # the URL asked for: never routed elsewhere


def test_every_page_url_obeys_the_role(new_page, app_server):
    """Each caller opens page URLs directly (a fresh load: the login comes from the cookie); a logged-out
    visitor who then logs in gets the page the URL named."""
    from annotate_app.store.db import Database

    url = app_server.url
    db = Database(f"sqlite:///{app_server.log.parent / 'qrelforge.db'}")
    for role, views in BROWSER_CASES.items():
        page = new_page()
        if role is not None:
            page.context.add_cookies(
                [{"name": auth.COOKIE, "value": login_token(db, USERS[role]), "url": url}]
            )
        for view in views:
            go(page, f"{url}/{Path(view).stem}")
            _expect_outcome(page, role, view)
    db.dispose()
    page.get_by_label("Username", exact=True).fill("rita")  # still on /score, logged out
    page.get_by_label("Password", exact=True).fill(PASSWORDS["rita"])
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Score", exact=True)).to_be_visible()
    assert page.url == f"{url}/score?project=demo"  # the only project, put in the URL
    assert new_page.dialogs == []


# ----------------------------------------------------------------------------------------------- sessions
def test_a_password_reset_ends_the_cookie_login_in_every_browser(new_page, app_server, fast_hashing):
    from annotate_app.services import users
    from annotate_app.services.auth import SYSTEM
    from annotate_app.store.db import Database

    url = app_server.url
    first = new_page()
    login(first, url, "alice")  # returns once the login cookie is written
    second = new_page()
    second.context.add_cookies([c for c in first.context.cookies() if c["name"] == auth.COOKIE])
    go(second, f"{url}/my_labels")
    expect(second.get_by_text("Logged in as alice")).to_be_visible()  # the copied cookie logs in
    db = Database(f"sqlite:///{app_server.log.parent / 'qrelforge.db'}")
    users.reset_password(db, SYSTEM, "alice", "alice-new-password")
    db.dispose()

    go(second, f"{url}/my_labels")
    expect(second.get_by_role("button", name="Log in")).to_be_visible()
    expect(second.get_by_text(auth.ENDED)).to_be_visible()
    expect(second.get_by_text("Logged in as alice")).to_have_count(0)
    first.get_by_test_id("stSidebar").get_by_role("link", name="My labels", exact=True).click()
    expect(first.get_by_text(auth.ENDED)).to_be_visible()  # the open tab, at its next run
    expect(first.get_by_role("button", name="Log in")).to_be_visible()
    for page in (first, second):  # the refused cookie is expired in each browser
        page.wait_for_function(NO_COOKIE)
        assert not [c for c in page.context.cookies() if c["name"] == auth.COOKIE and c["value"]]
    second.get_by_label("Username", exact=True).fill("alice")
    second.get_by_label("Password", exact=True).fill(PASSWORDS["alice"])
    second.get_by_role("button", name="Log in").click()
    expect(second.get_by_text("invalid username or password")).to_be_visible()
    assert new_page.dialogs == []
