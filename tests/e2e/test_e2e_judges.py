"""In Debian's Chromium, on the labelled demo (``demo-data --with-labels``): the Agreement page of
``demo-review`` shows the replayed lexical judge's Judges section — its kappa, confusion matrix and Kendall's
tau — under the human figures, which the judge leaves unchanged; the Score page's PPI tab shows its
intervals. Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import shutil

import pytest
from app_helpers import _fast_hasher
from e2e_helpers import go, idle, login, shot, start_server, stop_server
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)


@pytest.fixture(scope="module")
def review_template(tmp_path_factory):
    """A migrated SQLite file holding the labelled demo (cheap argon2 parameters)."""
    from annotate_app.services import auth
    from annotate_app.services.demo import load_demo
    from annotate_app.store.db import Database

    path = tmp_path_factory.mktemp("review-template") / "qrelforge.db"
    saved = auth._HASHER, auth._DUMMY_HASH
    auth._HASHER = _fast_hasher()
    auth._DUMMY_HASH = auth._HASHER.hash("timing")
    db = Database(f"sqlite:///{path}")
    try:
        load_demo(db, labelled=True)
    finally:
        auth._HASHER, auth._DUMMY_HASH = saved
        db.dispose()
    return path


@pytest.fixture
def review_server(servers, review_template, tmp_path):
    database = tmp_path / "qrelforge.db"
    shutil.copyfile(review_template, database)
    server = start_server(tmp_path, database)
    servers.append(server)
    yield server
    stop_server(server)


def _metric(page, label: str):
    return page.get_by_test_id("stMetric").filter(has=page.get_by_text(label, exact=True))


def test_the_judges_section_shows_the_demo_judges_kappa_confusion_and_tau(browser, review_server):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    url = review_server.url
    login(page, url, "rita")
    go(page, f"{url}/agreement?project=demo-review")
    expect(page.get_by_role("heading", name="Agreement", exact=True)).to_be_visible()
    # the human figures: demo-review's kappa 0.50, the judge's 0.755 never enters it
    expect(page.get_by_text("Gate not passed: Cohen's κ 0.500")).to_be_visible()
    expect(page.get_by_role("heading", name="Judges", exact=True)).to_be_visible()
    expect(page.get_by_text("Judge lexical", exact=True)).to_be_visible()
    expect(_metric(page, "Cohen's κ (binary, relevant ≥ 1)")).to_contain_text("0.755")
    expect(_metric(page, "Shared pairs")).to_contain_text("12")
    expect(_metric(page, "Kendall's τ (runs)")).to_contain_text("0.333")
    expect(_metric(page, "Kendall's τ (top 5 runs)")).to_contain_text("0.333")
    calibration = "Calibration not passed: κ 0.755 on 12 randomly sampled human pairs"
    expect(page.get_by_text(calibration)).to_be_visible()
    expect(page.get_by_text("Confusion: human grade × judge grade")).to_be_visible()
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(4)  # human ×3, the judge's confusion
    judge_chart = page.get_by_test_id("stVegaLiteChart").nth(3)
    judge_chart.scroll_into_view_if_needed()
    expect(judge_chart.locator("canvas, svg").first).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    shot(page, "judges-agreement")

    go(page, f"{url}/score?project=demo-review")
    page.get_by_role("tab", name="Machine judge (PPI)").click()
    idle(page)
    expect(page.get_by_text("with judge lexical: PPI = the judge's mean")).to_be_visible()
    expect(page.get_by_test_id("stDataFrame")).to_have_count(1)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    shot(page, "judges-score-ppi")
    context.close()
