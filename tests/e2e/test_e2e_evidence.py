"""In Debian's Chromium: marking evidence passages on the annotate card, with the keyboard (J/K move through
the sentences, E toggles one) and with the mouse (select text, press "M Mark selection"); the save stores
the passages marked. A release made on the Release page offers its passages for download."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from app_helpers import FAR_CHUNK, PASSWORDS, chunk_run, far_chunk_run, judge_with_evidence
from e2e_helpers import current_pair, go, idle, login, shot, start_server, stop_server
from playwright.sync_api import expect

from annotate_app.services import labels, projects
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.store.db import Database
from annotate_app.ui.components import evidence, evidence_text, keyboard

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)

# select characters [2, 8) of the document's first text node long enough; returns them
SELECT = """(box) => {
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  let node = walker.nextNode();
  while (node && node.data.length < 10) node = walker.nextNode();
  const range = document.createRange();
  range.setStart(node, 2);
  range.setEnd(node, 8);
  const sel = document.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  return range.toString();
}"""


def _server(servers, demo_template, tmp_path, prepare):
    """The app on a copy of the demo that ``prepare(db)`` changed first; returns (server, database path)."""
    path = tmp_path / "qrelforge.db"
    shutil.copyfile(demo_template, path)
    db = Database(f"sqlite:///{path}")
    prepare(db)
    db.dispose()
    server = start_server(tmp_path, path)
    servers.append(server)
    return server, path


@pytest.fixture
def evidence_server(servers, demo_template, tmp_path):
    """The demo with evidence optional; returns (server, database path)."""
    server, path = _server(
        servers,
        demo_template,
        tmp_path,
        lambda db: projects.update_settings(db, SYSTEM, "demo", evidence="optional"),
    )
    yield server, path
    stop_server(server)


@pytest.fixture
def chunk_server(servers, demo_template, tmp_path):
    """The demo with evidence optional and a chunk-level run (`app_helpers.chunk_run`); returns (server,
    database path, doc_id → the retrieved chunk's span)."""
    spans: dict = {}

    def prepare(db):
        projects.update_settings(db, SYSTEM, "demo", evidence="optional")
        spans.update(chunk_run(db))

    server, path = _server(servers, demo_template, tmp_path, prepare)
    yield server, path, spans
    stop_server(server)


@pytest.fixture(params=[("off", 100), ("optional", 100), ("off", 1500), ("optional", 1500)])
def far_chunk_server(request, servers, demo_template, tmp_path):
    """The demo, evidence ``off`` or ``optional``, D1 long with its retrieved chunk far down
    (`app_helpers.far_chunk_run`): 5,600 characters into 11,000, or 86,000 into 172,000 (a window of the
    text); returns (server, mode, lines)."""
    mode, lines = request.param

    def prepare(db):
        projects.update_settings(db, SYSTEM, "demo", evidence=mode)
        far_chunk_run(db, lines)

    server, _ = _server(servers, demo_template, tmp_path, prepare)
    yield server, mode, lines
    stop_server(server)


@pytest.fixture
def passages_server(servers, demo_template, tmp_path):
    """The demo labelled without disagreement, alice's and bob's labels of q1 · D1 with passages."""
    server, path = _server(
        servers,
        demo_template,
        tmp_path,
        lambda db: judge_with_evidence(db, {"alice": [(0, 5)], "bob": [(3, 9)]}),
    )
    yield server, path
    stop_server(server)


def _saved(path) -> list:
    db = Database(f"sqlite:///{path}")
    try:
        return labels.my_labels(db, authenticate(db, "alice", PASSWORDS["alice"]), "demo")
    finally:
        db.dispose()


def _submit(page, pair, grade: int) -> None:
    page.keyboard.press(str(grade))
    expect(page.get_by_text(f"Chosen grade: {grade} · ")).to_be_visible()
    idle(page)
    expect(page.get_by_label("Reason", exact=True)).to_be_focused()
    page.keyboard.type("the marked passage answers")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text(f"Saved {pair[0]} · {pair[1]}: grade {grade} · ")).to_be_visible()
    idle(page)


def test_a_sentence_is_marked_with_the_keyboard_only(page, evidence_server):
    server, path = evidence_server
    login(page, server.url, "alice")
    pair = current_pair(page)
    idle(page)
    expect(page.get_by_text("No passage marked.")).to_be_visible()
    page.keyboard.press("j")
    idle(page)
    page.keyboard.press("e")
    expect(page.get_by_role("button", name="E Unmark sentence")).to_be_visible()
    idle(page)
    page.keyboard.press("k")
    expect(page.get_by_role("button", name="E Mark sentence")).to_be_visible()
    idle(page)
    shot(page, "evidence-keyboard")
    _submit(page, pair, 2)
    (label,) = _saved(path)
    text = label_text(path, pair)
    assert label.evidence == (evidence_text.sentences(text)[1],)


def test_a_selection_is_marked_with_the_mouse(page, evidence_server):
    server, path = evidence_server
    login(page, server.url, "alice")
    pair = current_pair(page)
    idle(page)
    box = page.locator(f".st-key-{evidence.DOC_TEXT}")
    selected = box.evaluate(SELECT)
    page.get_by_role("button", name="M Mark selection").click()
    expect(page.get_by_role("button", name="Remove")).to_have_count(1)
    idle(page)
    shot(page, "evidence-mouse")
    _submit(page, pair, 3)
    (label,) = _saved(path)
    text = label_text(path, pair)
    ((start, end),) = label.evidence
    assert text[start:end] == selected


def label_text(path, pair) -> str:
    """The current text of the pair's document."""
    from annotate_app.services import queue

    db = Database(f"sqlite:///{path}")
    try:
        alice = authenticate(db, "alice", PASSWORDS["alice"])
        (label,) = [x for x in labels.my_labels(db, alice, "demo") if (x.query_id, x.doc_id) == pair]
        return queue.get_pair(db, alice, "demo", label.pair_id).doc_text
    finally:
        db.dispose()


def test_a_release_made_on_the_page_offers_its_passages(page, passages_server):
    server, _ = passages_server
    login(page, server.url, "rita")
    go(page, f"{server.url}/release")
    expect(page.get_by_text("Nothing blocks a release.")).to_be_visible()
    box = page.get_by_label(re.compile("^Justification"))
    box.fill("every pair unanimous: nothing to justify")
    box.press("Control+Enter")
    idle(page)
    page.get_by_role("button", name="Create release").click()
    button = page.get_by_role("button", name="Evidence passages (JSONL)")
    expect(button).to_be_visible()
    idle(page)
    with page.expect_download() as caught:
        button.click()
    download = caught.value
    assert download.suggested_filename == "demo-v1.passages.jsonl"
    lines = Path(download.path()).read_text(encoding="utf-8").splitlines()
    passage = {"query_id": "q1", "doc_id": "D1", "doc_version": 1, "start": 0, "end": 9, "grade": 2}
    assert [{k: v for k, v in json.loads(x).items() if k != "text"} for x in lines] == [passage]
    shot(page, "evidence-release")


def test_a_reviewer_adjudicates_the_passages_in_the_browser(page, passages_server):
    from annotate_app.services import passage_adjudication

    server, path = passages_server
    login(page, server.url, "rita")
    go(page, f"{server.url}/adjudicate")
    expect(page.get_by_text("Passage disagreements (1 of 1 not adjudicated)")).to_be_visible()
    page.get_by_text("Intersection", exact=True).click()
    idle(page)
    page.get_by_label("Reason for the final passages").fill("only the shared words answer")
    page.get_by_role("button", name="Save final passages").click()
    expect(page.get_by_text("Final passages of q1 · D1 saved: [3, 5).")).to_be_visible()
    idle(page)
    shot(page, "evidence-adjudicate")
    db = Database(f"sqlite:///{path}")
    try:
        rita = authenticate(db, "rita", PASSWORDS["rita"])
        (item,) = passage_adjudication.passage_disagreements(db, rita, "demo")
    finally:
        db.dispose()
    assert item.adjudicated == ((3, 5),)


def test_the_card_opens_at_the_retrieved_chunk_and_marks_it_with_e(page, chunk_server):
    """The pair came from a chunk-level run: the card names the chunk, the cursor starts on it (blue), and E
    marks exactly the chunk's sentence, without any J/K move."""
    server, path, spans = chunk_server
    login(page, server.url, "alice")
    pair = current_pair(page)
    start, end = spans[pair[1]]
    expect(
        page.get_by_text(f"Retrieved chunk {pair[1]}#1 [{start}, {end}) (run chunks, document rank")
    ).to_be_visible()
    idle(page)
    page.keyboard.press("e")
    expect(page.get_by_role("button", name="E Unmark sentence")).to_be_visible()
    idle(page)
    shot(page, "evidence-retrieved-chunk")
    _submit(page, pair, 2)
    (label,) = _saved(path)
    assert label.evidence == ((start, end),)


def test_the_card_opens_with_a_far_retrieved_chunk_in_view(page, far_chunk_server):
    """D1's retrieved chunk lies some 6,000 (or 86,000) characters into the document: on open, with no
    scrolling by the user, the document box shows it (evidence off as on), and the page itself is not
    scrolled. The page holds at most one window of the text; with evidence off, J shows the next window,
    from its top."""
    server, mode, lines = far_chunk_server
    login(page, server.url, "alice")
    assert current_pair(page) == ("q1", "D1")
    idle(page)
    box = page.locator(f".st-key-{keyboard.DOCUMENT}")
    chunk = box.get_by_text(FAR_CHUNK)
    expect(chunk).to_be_in_viewport()
    assert box.evaluate("e => e.scrollTop") > 1_000
    inside = chunk.evaluate(
        """(e) => {
          const box = e.closest('.st-key-@BOX@').getBoundingClientRect(), at = e.getBoundingClientRect();
          return at.top >= box.top && at.bottom <= box.bottom;
        }""".replace("@BOX@", keyboard.DOCUMENT)
    )
    assert inside
    assert page.evaluate("() => window.scrollY") == 0
    filler = " of the manual is about something else entirely."  # one per line of some 58 characters
    assert page.content().count(filler) <= min(2 * lines, evidence.WINDOW // 55)
    shot(page, f"evidence-far-chunk-{mode}-{lines}")
    if mode == "off" and lines == 1500:
        caption = page.get_by_text(re.compile("^Characters 80,000–100,000 of "))
        expect(caption).to_be_visible()
        page.keyboard.press("j")
        expect(page.get_by_text(re.compile("^Characters 100,000–120,000 of "))).to_be_visible()
        expect(box.get_by_text(FAR_CHUNK)).to_have_count(0)
        idle(page)
        assert box.evaluate("e => e.scrollTop") == 0
