"""Layout in Debian's Chromium at 800 and 1400 px (issue 12): no button, metric or widget label is cut on
Annotate, Agreement, Score, Release and Data (their screenshots go to docs/screenshots/, e.g.
annotate-800.png); the Score page keeps its tab after an action and loads in under 2 s; a deep link loads
without a single 404 (browser or server log)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from app_helpers import ROOT
from e2e_helpers import go, idle, login, start_server, stop_server
from playwright.sync_api import expect

from annotate_app.services import pooling
from annotate_app.services.auth import SYSTEM

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)

DOCS = ROOT / "docs" / "screenshots"
WIDTHS = (800, 1400)
# (user, URL path, heading, screenshot name)
PAGES = [
    ("alice", "annotate", "Annotate", "annotate"),
    ("rita", "agreement", "Agreement", "agreement"),
    ("rita", "score", "Score", "score"),
    ("rita", "release", "Release", "release"),
    ("admin", "admin_data", "Data", "data"),
]
# Every visible label that Streamlit would cut with an ellipsis: the text of buttons (downloads and tabs
# included), metric labels and deltas, widget labels. A cut label's box is narrower than its text.
CUT_LABELS = """() => {
  const boxes = document.querySelectorAll(
    'button, [role="tab"], [data-testid="stMetricLabel"], [data-testid="stMetricDelta"],'
    + ' [data-testid="stWidgetLabel"]');
  const cut = [];
  for (const box of boxes) {
    if (box.offsetParent === null) continue;
    for (const el of [box, ...box.querySelectorAll('*')]) {
      if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
        cut.push(box.innerText.trim() + ' (' + el.scrollWidth + ' > ' + el.clientWidth + ' px)');
        break;
      }
    }
  }
  return cut;
}"""


@pytest.fixture
def polish_server(servers, released_db, tmp_path):
    """The app on the released demo, with one new pair (q1 D5) for alice to judge."""
    pooling.add_pair(released_db, SYSTEM, "demo", "q1", "D5", note="a new pair for the screenshots")
    folder = tmp_path / "server"
    folder.mkdir()
    server = start_server(folder, tmp_path / "qrelforge.db")
    servers.append(server)
    yield server
    stop_server(server)


def _page(browser, width: int):
    context = browser.new_context(viewport={"width": width, "height": 1000})
    context.set_default_timeout(30_000)
    return context.new_page()


def _screenshot(page, name: str) -> None:
    """The whole page (Streamlit scrolls its main area, so the viewport grows to its height for the shot)."""
    width = page.viewport_size["width"]
    height = page.evaluate("() => Math.max(...[...document.querySelectorAll('*')].map(e => e.scrollHeight))")
    page.set_viewport_size({"width": width, "height": min(int(height) + 80, 4000)})
    page.wait_for_timeout(300)
    page.mouse.move(1, 1)
    DOCS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS / f"{name}-{width}.png"))
    page.set_viewport_size({"width": width, "height": 1000})


def _open(page, url: str, path: str, title: str) -> None:
    go(page, f"{url}/{path}")
    expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible()
    idle(page)
    if path == "release":  # the downloads of the newest release
        expect(page.get_by_role("button", name="TREC qrels").first).to_be_visible()
    idle(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_no_label_is_cut_at_800_and_1400_px(browser, polish_server, width):
    url, pages = polish_server.url, {}
    cut = {}
    for user, path, title, name in PAGES:
        if user not in pages:
            pages[user] = _page(browser, width)
            login(pages[user], url, user)
        page = pages[user]
        _open(page, url, path, title)
        expect(page.get_by_test_id("stException")).to_have_count(0)
        cut[name] = page.evaluate(CUT_LABELS)
        _screenshot(page, name)
    assert cut == {name: [] for *_, name in PAGES}


def test_the_score_tab_stays_open_after_an_action(browser, polish_server):
    page = _page(browser, 1400)
    login(page, polish_server.url, "rita")
    _open(page, polish_server.url, "score", "Score")
    page.get_by_role("tab", name="BM25 & fusion").click()
    idle(page)
    page.get_by_role("button", name="Build BM25 run").click()
    expect(page.get_by_text("Built bm25: ")).to_be_visible()
    idle(page)
    expect(page.get_by_role("tab", name="BM25 & fusion")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_role("button", name="Download bm25 (TREC)")).to_be_visible()


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _settle(pid: int, *, quiet: float = 0.02, timeout: float = 20.0) -> None:
    """Wait until process ``pid`` is idle (under ``quiet`` CPU seconds in 0.3 s): the landing page's work ends
    before the Score page's is counted."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = _cpu_seconds(pid)
        time.sleep(0.3)
        if _cpu_seconds(pid) - before < quiet:
            return


def test_the_score_page_loads_in_under_2_seconds(browser, polish_server):
    """The first Score page of a session: under 2 s of the server's CPU (its imports are lazy; it took 7.5 s),
    and under 2 s of wall time when the machine is not overloaded (at load 60 on 2 cores wall time says
    nothing about the page)."""
    page = _page(browser, 1400)
    login(page, polish_server.url, "rita")  # the landing page (Agreement) has loaded
    pid = polish_server.process.pid
    _settle(pid)
    cpu, started = _cpu_seconds(pid), time.perf_counter()
    page.goto(f"{polish_server.url}/score")
    expect(page.get_by_test_id("stTable").first).to_be_visible()
    idle(page)
    elapsed, cpu = time.perf_counter() - started, _cpu_seconds(pid) - cpu
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(0)  # the charts' tabs are closed
    assert cpu < 2.0, f"the Score page took {cpu:.2f} s of the server's CPU"
    if os.getloadavg()[0] <= 2 * (os.cpu_count() or 1):
        assert elapsed < 2.0, f"the Score page took {elapsed:.2f} s"


def test_a_deep_link_loads_without_a_404(browser, polish_server):
    page = _page(browser, 1400)
    failed: list[tuple[int, str]] = []
    page.on("response", lambda r: failed.append((r.status, r.url)) if r.status >= 400 else None)
    go(page, f"{polish_server.url}/agreement")  # logged out: the login form under the page's URL
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    login(page, polish_server.url, "rita")
    for path, title in (("score", "Score"), ("release", "Release"), ("agreement", "Agreement")):
        _open(page, polish_server.url, path, title)
    page.reload()
    idle(page)
    expect(page.get_by_role("heading", name="Agreement", exact=True)).to_be_visible()
    assert failed == []
    assert " 404" not in polish_server.log.read_text(errors="replace")
