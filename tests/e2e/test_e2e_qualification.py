"""End to end in Debian's Chromium: a new annotator's qualification on gold pairs (training feedback after
each), then a pause, then a reviewer's resume. Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import pytest
from app_helpers import sample_grades
from e2e_helpers import PAIR, idle, login, shot
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)

GOLD = [("q1", "D1"), ("q1", "D2"), ("q1", "D3"), ("q1", "D4")]  # the ordinary queue's first four pairs
PAUSED = (
    "You are paused: 0 of your last 2 gold pairs were right (0%), below the bar of 50%. You get no new "
    "pairs until a reviewer resumes you."
)


def _set_up(database) -> dict[tuple[str, str], int]:
    """Gold pairs with the sample grades; qualification (2 at 100%), pause (last 2 below 50%), feedback."""
    from annotate_app.services import gold, projects
    from annotate_app.services.auth import SYSTEM
    from annotate_app.store.db import Database

    truth = sample_grades()
    db = Database(f"sqlite:///{database}")
    try:
        for query_id, doc_id in GOLD:
            explanation = f"the sample qrels grade {query_id} {doc_id} {truth[(query_id, doc_id)]}"
            gold.add_gold(
                db, SYSTEM, "demo", query_id, doc_id, grade=truth[(query_id, doc_id)], explanation=explanation
            )
        projects.update_settings(
            db,
            SYSTEM,
            "demo",
            qualify_pairs=2,
            qualify_accuracy=1.0,
            pause_pairs=2,
            pause_accuracy=0.5,
            gold_feedback=True,
        )
    finally:
        db.dispose()
    return truth


def _new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    return context.new_page()


def _pair(page) -> tuple[str, str]:
    card = page.get_by_text(PAIR)
    expect(card.first).to_be_visible()
    found = PAIR.match(card.first.inner_text().strip())
    assert found is not None
    return found.group(1), found.group(2)


def _judge(page, grade: int, expected: int, reason: str) -> None:
    """Pick ``grade``, give a reason, submit; the training feedback then names the ``expected`` grade."""
    query_id, doc_id = _pair(page)
    idle(page)  # the card drawn and the app idle: a key pressed during a rerun is lost
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press(str(grade))
    expect(page.get_by_text(f"Chosen grade: {grade} · ")).to_be_visible()
    idle(page)
    box = page.get_by_label("Reason", exact=True)
    box.click()
    page.keyboard.type(reason)
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text(f"Saved {query_id} · {doc_id}: grade")).to_be_visible()
    feedback = page.get_by_text(f"Training feedback: that was a gold pair. Expected grade: {expected} · ")
    expect(feedback).to_be_visible()
    expect(page.get_by_text(f"the sample qrels grade {query_id} {doc_id} {expected}")).to_be_visible()
    idle(page)


def _standing(page, annotator: str):
    return page.get_by_test_id("stTable").locator("tr", has_text=annotator)


def test_qualification_then_pause_then_resume(browser, app_server, tmp_path):
    truth = _set_up(tmp_path / "qrelforge.db")
    rita, alice = _new_page(browser), _new_page(browser)
    login(rita, app_server.url, "rita")
    rita.get_by_test_id("stSidebar").get_by_role("link", name="Annotators", exact=True).click()
    idle(rita)
    expect(_standing(rita, "alice")).to_contain_text("qualifying")

    # qualification: alice's first claims are gold pairs; two right ones qualify her
    login(alice, app_server.url, "alice")
    for _ in range(2):
        pair = _pair(alice)
        assert pair in GOLD
        _judge(alice, truth[pair], truth[pair], f"alice judges {pair[0]} {pair[1]}")
    shot(alice, "qualification-01-feedback")
    rita.reload()
    idle(rita)
    expect(_standing(rita, "alice")).to_contain_text("qualified")
    expect(_standing(rita, "alice")).to_contain_text("100%")

    # pause: the next pairs (the queue's first ones, gold too) judged wrong twice
    for _ in range(2):
        pair = _pair(alice)
        assert pair in GOLD
        wrong = 0 if truth[pair] else 3
        _judge(alice, wrong, truth[pair], f"alice misjudges {pair[0]} {pair[1]}")
    expect(alice.get_by_text(PAUSED)).to_be_visible()
    expect(alice.get_by_text(PAIR)).to_have_count(0)
    shot(alice, "qualification-02-paused")

    # a reviewer resumes her
    rita.reload()
    idle(rita)
    expect(_standing(rita, "alice")).to_contain_text("paused")
    shot(rita, "qualification-03-standing")
    rita.get_by_role("button", name="Resume", exact=True).click()
    expect(rita.get_by_text("alice resumed: their gold window restarts now.")).to_be_visible()
    idle(rita)
    expect(_standing(rita, "alice")).to_contain_text("qualified")
    alice.get_by_role("button", name="Check again").click()
    idle(alice)
    expect(alice.get_by_text(PAIR).first).to_be_visible()
    expect(alice.get_by_text(PAUSED)).to_have_count(0)
