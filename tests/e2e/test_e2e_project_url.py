"""In Debian's Chromium: the project is part of the address. The admin creates and picks a second project; on
the Data page a reload (F5) and the same URL in a new tab keep it (heading, picker, URL); an annotator who
opens a URL naming a project they are not a member of gets a refusal naming it, and nothing of another
project."""

from __future__ import annotations

import re

import pytest
from e2e_helpers import go, idle, login
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)

HEADING = ".st-key-page_heading"  # ui.state.PAGE_HEADING: the page's title and its project badge


def _new_page(context):
    page = context.new_page()
    page.set_default_timeout(30_000)
    return page


def _nav(page, name: str) -> None:
    page.get_by_test_id("stSidebar").get_by_role("link", name=name, exact=True).click()
    idle(page)


def _pick_project(page, label: str) -> None:
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").click()
    page.get_by_role("option", name=label).click()
    idle(page)


def _expect_data_page_of_kb2(page) -> None:
    heading = page.locator(HEADING)
    expect(heading.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    expect(heading).to_contain_text("kb2 (Help centre)")
    picker = page.get_by_test_id("stSidebar").get_by_role("combobox", name="Project")
    expect(picker).to_have_value("kb2 · Help centre")
    expect(page.get_by_text("Pool the runs of kb2 into its judging queue.")).to_be_visible()
    assert re.search(r"[?&]project=kb2(&|$)", page.url), page.url


def test_the_project_survives_a_reload_and_a_new_tab_and_a_hidden_one_is_refused(browser, app_server):
    url = app_server.url
    admin_context = browser.new_context(viewport={"width": 1400, "height": 1000})
    admin = _new_page(admin_context)
    login(admin, url, "admin")
    expect(admin).to_have_url(re.compile(r"[?&]project=demo(&|$)"))  # one project: chosen, in the URL

    _nav(admin, "Project")
    admin.get_by_text("Create a project").click()
    admin.get_by_label("Name (a-z, 0-9, _ and -)").fill("kb2")
    admin.get_by_label("Title", exact=True).fill("Help centre")
    admin.get_by_role("button", name="Create project").click()
    expect(admin.get_by_text("Project kb2 created; pick it in the sidebar.")).to_be_visible()
    idle(admin)
    _pick_project(admin, "kb2 · Help centre")
    expect(admin.locator(HEADING)).to_contain_text("kb2 (Help centre)")
    _nav(admin, "Data")
    _expect_data_page_of_kb2(admin)

    admin.reload()  # F5
    idle(admin)
    _expect_data_page_of_kb2(admin)

    tab = _new_page(admin_context)  # the same URL in a new tab (same cookies, a new session)
    go(tab, admin.url)
    _expect_data_page_of_kb2(tab)

    alice_context = browser.new_context(viewport={"width": 1400, "height": 1000})
    alice = _new_page(alice_context)
    login(alice, url, "alice")
    go(alice, f"{url}/annotate?project=kb2")
    main = alice.get_by_test_id("stMain")
    expect(main.get_by_text("Project kb2 is not open to you")).to_be_visible()
    expect(
        main.get_by_role("link", name="demo (Demo: after-sales help centre (sample corpus))")
    ).to_be_visible()
    expect(main.get_by_role("heading", name="Annotate", exact=True)).to_have_count(0)
    expect(main.get_by_text(re.compile(r"^Query \S+ · document \S+$"))).to_have_count(0)
    expect(main.get_by_text("judged")).to_have_count(0)
    assert "project=kb2" in alice.url
    admin_context.close()
    alice_context.close()
