"""End to end in Debian's Chromium, as a newcomer would: alice and bob judge the sample corpus at the same
time with the keyboard, rita adjudicates, releases and scores schemes A and B; an annotator is refused a
reviewer page; a reload keeps the login. Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import re

import pytest
from app_helpers import BOB_FLIPS, sample_grades
from e2e_helpers import current_pair, go, idle, login, shot
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)


def _new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    return context.new_page()


def _nav(page, name: str) -> None:
    page.get_by_test_id("stSidebar").get_by_role("link", name=name, exact=True).click()


def _press_grade(page, grade: int, label: str) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press(str(grade))
    expect(page.get_by_text(f"{label}: {grade} · ")).to_be_visible()
    idle(page)


def _type_reason_and_submit(page, reason: str) -> None:
    box = page.get_by_label("Reason", exact=True)
    box.click()
    page.keyboard.type(reason)
    page.keyboard.press("Control+Enter")


def _judge(pages: dict, grades: dict) -> dict[str, list]:
    """Both annotators judge at once: each round presses a grade key, types a reason and Ctrl+Enter on every
    page, then waits for every card to move on."""
    seen: dict[str, list] = {name: [] for name in pages}
    current = {name: current_pair(page) for name, page in pages.items()}
    while any(current.values()):
        busy = {name: pair for name, pair in current.items() if pair}
        for name, pair in busy.items():
            _press_grade(pages[name], grades[name][pair], "Chosen grade")
        for name, pair in busy.items():
            _type_reason_and_submit(pages[name], f"{name}: grade for {pair[0]} {pair[1]}")
        for name, pair in busy.items():
            expect(pages[name].get_by_text(f"Saved {pair[0]} · {pair[1]}: grade")).to_be_visible()
            idle(pages[name])
            seen[name].append(pair)
            current[name] = current_pair(pages[name])
    return seen


def test_newcomer_flow(browser, app_server):
    url = app_server.url
    truth = sample_grades()
    alice, bob, rita = _new_page(browser), _new_page(browser), _new_page(browser)
    go(alice, url)
    shot(alice, "01-login")
    login(alice, url, "alice")
    login(bob, url, "bob")

    # a reload keeps the login (signed cookie), and the guidelines panel opens
    alice.reload()
    idle(alice)
    expect(alice.get_by_text("Logged in as alice")).to_be_visible()
    expect(alice.get_by_role("heading", name="Annotate")).to_be_visible()
    alice.get_by_text("Guidelines (version 1)").click()
    expect(alice.get_by_text("Judging guidelines (demo)")).to_be_visible()
    alice.get_by_text("Guidelines (version 1)").click()
    expect(alice.get_by_text("Judging guidelines (demo)")).to_be_hidden()
    expect(alice.get_by_text("0 / 12 judged")).to_be_visible()
    _press_grade(alice, truth[current_pair(alice)], "Chosen grade")
    alice.get_by_label("Reason", exact=True).fill("Says to power off first, but not how to replace it")
    shot(alice, "02-annotate")

    # 1. alice and bob judge every pair at once, with the keyboard; bob disagrees on three pairs
    grades = {"alice": truth, "bob": {**truth, **BOB_FLIPS}}
    seen = _judge({"alice": alice, "bob": bob}, grades)
    assert sorted(seen["alice"]) == sorted(seen["bob"]) == sorted(truth)
    expect(alice.get_by_text("12 / 12 judged")).to_be_visible()
    shot(bob, "03-annotate-done")

    # 5. an annotator opening a reviewer page's URL is refused and sees no data
    go(alice, f"{url}/agreement")
    refused = "Not allowed: this page needs the reviewer role; alice is annotator."
    expect(alice.get_by_text(refused)).to_be_visible()
    expect(alice.get_by_test_id("stMetric")).to_have_count(0)
    expect(alice.get_by_test_id("stVegaLiteChart")).to_have_count(0)
    shot(alice, "04-annotator-refused")
    go(alice, f"{url}/my_labels")
    expect(alice.get_by_role("heading", name="My labels")).to_be_visible()
    shot(alice, "05-my-labels")

    # 2. rita sees a kappa below the threshold, then adjudicates every disagreement to the sample grades
    login(rita, url, "rita")
    expect(
        rita.get_by_text("Gate not passed: Cohen's κ 0.657 (substantial) is below the threshold 0.700")
    ).to_be_visible()
    expect(rita.get_by_test_id("stVegaLiteChart")).to_have_count(3)
    shot(rita, "06-agreement")
    _nav(rita, "Adjudicate")
    expect(rita.get_by_text("3 left of 3 disagreements")).to_be_visible()
    idle(rita)
    shot(rita, "07-adjudicate")
    adjudicated = []
    while (pair := current_pair(rita)) is not None:
        _press_grade(rita, truth[pair], "Final grade")
        _type_reason_and_submit(rita, f"the document decides it for {pair[0]}")
        expect(rita.get_by_text(f"Final grade {truth[pair]} · ").first).to_be_visible()
        idle(rita)
        adjudicated.append(pair)
    assert sorted(adjudicated) == sorted(BOB_FLIPS)

    # 3. rita releases, with a justification because the agreement is below the threshold
    _nav(rita, "Release")
    low = "cohen 0.657 is below the threshold 0.700: a release needs a written justification"
    expect(rita.get_by_text(low)).to_be_visible()
    rita.get_by_label(re.compile("^Justification")).fill(
        "12-pair demo corpus; two of the three disagreements were clear annotator slips"
    )
    rita.get_by_role("button", name="Create release").click()
    expect(rita.get_by_text(re.compile(r"^Release 1 created: 12 qrels"))).to_be_visible()
    idle(rita)
    expect(rita.get_by_role("button", name="TREC qrels")).to_be_visible()
    shot(rita, "08-release")

    # 4. rita scores schemes A and B at k = 3: P@3 0.333 and 0.556
    _nav(rita, "Score")
    idle(rita)
    k = rita.get_by_label("k (cut-off)")
    k.fill("3")
    k.press("Enter")
    table = rita.get_by_test_id("stTable").first
    expect(table.get_by_text("P@3", exact=True)).to_be_visible()
    idle(rita)
    expect(table.locator("tr", has_text="scheme_a").locator("td").first).to_have_text("0.333")
    expect(table.locator("tr", has_text="scheme_b").locator("td").first).to_have_text("0.556")
    shot(rita, "09-score")
    rita.get_by_role("tab", name="Compare").click()
    expect(rita.get_by_role("button", name="Report (HTML)")).to_be_visible()
    shot(rita, "10-score-compare")
