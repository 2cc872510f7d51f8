"""AppTest: marking evidence on the annotate card (sentence keys, a selection, removing a passage) and the
passages a save stores; off projects show no marking controls."""

from __future__ import annotations

import json

import pytest
from app_helpers import app_as, plain

from annotate_app.services import labels, projects
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.ui import state
from annotate_app.ui.components import evidence, evidence_text, keyboard


def _view(at):
    return at.session_state[state.CURRENT_PAIR]


def _button(at, name: str):
    view = _view(at)
    return at.button(key=f"q_ev_{name}_{view.pair_id}")


def _marks(at) -> list[tuple[int, int]]:
    key = state.evidence(_view(at).pair_id)
    return list(at.session_state[key]) if key in at.session_state else []


@pytest.fixture
def optional(app_db):
    projects.update_settings(app_db, SYSTEM, "demo", evidence="optional")
    return app_db


def _sentence(at, k: int) -> tuple[int, int]:
    return evidence_text.sentences(_view(at).doc_text)[k]


def test_an_off_project_shows_no_marking_controls(app_db):
    at = app_as(app_db, "alice")
    assert not at.exception
    assert "E Mark sentence" not in [b.label for b in at.button]


def test_keys_move_through_the_sentences_and_toggle_one(optional):
    at = app_as(optional, "alice")
    assert not at.exception
    assert at.session_state[state.evidence_cursor(_view(at).pair_id)] == 0  # the first query-term match
    _button(at, "next").click().run()
    _button(at, "toggle").click().run()
    assert _marks(at) == [_sentence(at, 1)]
    assert _button(at, "toggle").label == "E Unmark sentence"
    assert any(":violet-background[" in m.value for m in at.markdown)  # marked and under the cursor
    _button(at, "toggle").click().run()
    assert _marks(at) == []
    _button(at, "prev").click().run()
    _button(at, "prev").click().run()  # stays on the first sentence
    _button(at, "toggle").click().run()
    assert _marks(at) == [_sentence(at, 0)]


def test_a_selection_is_marked_and_can_be_removed(optional):
    at = app_as(optional, "alice")
    text = _view(at).doc_text
    word = text[5:12]  # the demo's documents are Chinese: no spaces
    sent = json.dumps({"text": word, "before": 5})
    at.text_input(key=state.evidence_selection(_view(at).pair_id)).input(sent).run()
    start = text.index(word)
    assert _marks(at) == [(start, start + len(word))]
    assert any(":green-background[" in m.value for m in at.markdown)
    at.button(key=f"q_ev_remove_{_view(at).pair_id}_{start}_{start + len(word)}").click().run()
    assert _marks(at) == []


def test_a_selection_not_in_the_text_is_reported(optional):
    at = app_as(optional, "alice")
    sent = json.dumps({"text": "no such words here", "before": 0})
    at.text_input(key=state.evidence_selection(_view(at).pair_id)).input(sent).run()
    assert "The selection is not in the document's text." in [plain(c.value) for c in at.caption]
    assert _marks(at) == []


def test_the_save_stores_the_passages(optional):
    at = app_as(optional, "alice")
    view = _view(at)
    _button(at, "toggle").click().run()
    at.button(key=state.grade_button(view.pair_id, 2)).click().run()
    at.text_area(key=state.reason(view.pair_id)).input("the first sentence says so")
    at.button(key=state.submit(view.pair_id)).click().run()
    assert not at.error
    alice = authenticate(optional, "alice", "alice-demo")
    (saved,) = labels.my_labels(optional, alice, "demo")
    assert saved.evidence == (evidence_text.sentences(view.doc_text)[0],)


def test_a_required_passage_missing_is_refused_on_the_card(app_db):
    projects.update_settings(app_db, SYSTEM, "demo", evidence="required")
    at = app_as(app_db, "alice")
    view = _view(at)
    at.button(key=state.grade_button(view.pair_id, 2)).click().run()
    at.text_area(key=state.reason(view.pair_id)).input("the first sentence says so")
    at.button(key=state.submit(view.pair_id)).click().run()
    assert [plain(e.value) for e in at.error] == [
        "grade 2 needs evidence: mark at least one passage (required for grades >= 1)"
    ]


def test_the_agreement_page_shows_passage_agreement_beside_the_kappa(app_db):
    from app_helpers import judge_with_evidence

    judge_with_evidence(app_db, {"alice": [(0, 5)], "bob": [(3, 9)]})
    at = app_as(app_db, "rita", "views/review/agreement.py")
    assert not at.exception
    assert "Evidence passages" in [h.value for h in at.subheader]
    figures = {m.label: m.value for m in at.metric}
    assert figures["Mean character-overlap F1"] == "0.364"  # 2·2 / (5 + 6)
    assert figures["Passages"] == "2"
    assert figures["Unitizing α (αu)"] != "undefined"


def test_the_agreement_page_of_an_off_project_has_no_passage_section(app_db):
    from app_helpers import judge_all

    judge_all(app_db)
    at = app_as(app_db, "rita", "views/review/agreement.py")
    assert "Evidence passages" not in [h.value for h in at.subheader]


def test_the_reviewer_adjudicates_a_passage_disagreement(app_db):
    from app_helpers import judge_with_evidence

    from annotate_app.services import passage_adjudication

    pair_id = judge_with_evidence(app_db, {"alice": [(0, 5)], "bob": [(3, 9)]})
    at = app_as(app_db, "rita", "views/review/adjudicate.py")
    assert not at.exception
    assert "Passage disagreements (1 of 1 not adjudicated)" in [h.value for h in at.subheader]
    legend = "Passages: :red-background[alice] :blue-background[bob] :violet-background[two or more]"
    markdown = [m.value for m in at.markdown]
    assert legend in markdown
    overlay = next(m for m in markdown if m.startswith(":red-background["))  # alice's alone, then both, bob's
    assert (
        overlay.index(":red-background[") < overlay.index(":violet-background[") < overlay.index(":blue-back")
    )
    at.radio(key=state.per_item("padj_how", pair_id)).set_value("intersection").run()
    at.text_area(key=state.per_item("padj_reason", pair_id)).input("only the shared words answer")
    at.button(key=state.per_item("padj_save", pair_id)).click().run()
    assert [plain(s.value) for s in at.success][:1] == ["Final passages of q1 · D1 saved: [3, 5)."]
    rita = authenticate(app_db, "rita", "rita-demo")
    (item,) = passage_adjudication.passage_disagreements(app_db, rita, "demo")
    assert item.adjudicated == ((3, 5),)


LONG = "The battery lasts ten hours. " * 6000  # 174,000 characters, 6,000 sentences


def test_a_long_document_shows_in_a_window_that_follows_the_cursor(app_db):
    from annotate_app.services import imports
    from annotate_app.ui.components import evidence

    projects.update_settings(app_db, SYSTEM, "demo", evidence="optional")
    line = json.dumps({"doc_id": "D1", "title": "long", "text": LONG}) + "\n"
    imports.import_documents(app_db, SYSTEM, "demo", line.encode(), filename="long.jsonl")
    at = app_as(app_db, "alice")
    assert not at.exception
    assert "Characters 0–20,000 of 174,000: the window follows the sentence cursor (J/K)." in [
        plain(c.value) for c in at.caption
    ]
    pid = _view(at).pair_id
    at.session_state[state.evidence_cursor(pid)] = 5000  # sentence 5000 starts at 145,000
    at.run()
    assert "Characters 140,000–160,000 of 174,000: the window follows the sentence cursor (J/K)." in [
        plain(c.value) for c in at.caption
    ]
    assert max(len(m.value) for m in at.markdown) < evidence.WINDOW * 2  # never the whole document
    _button(at, "toggle").click().run()
    assert _marks(at) == [(145_000, 145_028)]
    sent = json.dumps({"text": "lasts ten", "before": 0})  # the first one in the window, from 140,000
    at.text_input(key=state.evidence_selection(pid)).input(sent).run()
    first = LONG.index("lasts ten", 140_000)
    assert _marks(at) == [(first, first + 9), (145_000, 145_028)]


def test_a_chunk_level_run_opens_the_card_at_the_retrieved_chunk(optional):
    """The pair came from a chunk-level run: the sentence cursor starts in the chunk (not at the first query
    term), which is named and shaded."""
    from app_helpers import chunk_run

    spans = chunk_run(optional)
    at = app_as(optional, "alice")
    assert not at.exception
    view = _view(at)
    start, end = spans[view.doc_id]
    assert (view.retrieved.chunk_id, view.retrieved.start, view.retrieved.end) == (
        f"{view.doc_id}#1",
        start,
        end,
    )
    assert at.session_state[state.evidence_cursor(view.pair_id)] == 1  # the chunk is the second sentence
    rank = view.retrieved.rank
    caption = f"Retrieved chunk {view.doc_id}#1 `[{start}, {end})` (run chunks, document rank {rank}), shaded"
    assert any(plain(c.value).startswith(caption) for c in at.caption)
    assert any(f":{evidence_text.CHUNK}[" in m.value for m in at.markdown) is False  # the cursor covers it
    _button(at, "prev").click().run()  # the cursor leaves the chunk: it shows shaded
    assert any(f":{evidence_text.CHUNK}[" in m.value for m in at.markdown)


def test_an_off_project_shades_the_retrieved_chunk_too(app_db):
    from app_helpers import chunk_run

    spans = chunk_run(app_db)
    at = app_as(app_db, "alice")
    view = _view(at)
    start, end = spans[view.doc_id]
    assert any(
        plain(c.value).startswith(f"Retrieved chunk {view.doc_id}#1 `[{start}, {end})`") for c in at.caption
    )
    assert any(f":{evidence_text.CHUNK}[" in m.value for m in at.markdown)


def test_without_a_chunk_level_run_the_card_names_no_chunk(optional):
    at = app_as(optional, "alice")
    assert _view(at).retrieved is None
    assert not any("Retrieved chunk" in c.value for c in at.caption)


def _opened(at) -> str:
    """The card's `keyboard.open_at` marker: ``<card>_<non-space characters before the place>``."""

    def walk(block):
        for child in getattr(block, "children", {}).values():
            proto = getattr(child, "proto", None)
            if child.type == "flex_container" and f"-{keyboard.OPEN}_" in proto.id:
                yield proto.id.split(f"-{keyboard.OPEN}_", 1)[1]
            yield from walk(child)

    (found,) = walk(at.main)
    return found


def _before(text: str, offset: int) -> int:
    return sum(1 for c in text[:offset] if not c.isspace())


@pytest.mark.parametrize("mode", ["off", "optional"])
def test_the_card_opens_at_a_retrieved_chunk_far_down(app_db, mode):
    """D1 is long, its query terms at the very start, the chunk a chunk-level run retrieved 6,000 characters
    in: with evidence off as on, the document box is told to open at the chunk, not at the top."""
    from app_helpers import far_chunk_run

    projects.update_settings(app_db, SYSTEM, "demo", evidence=mode)
    text, (start, _) = far_chunk_run(app_db)
    at = app_as(app_db, "alice")
    assert not at.exception
    view = _view(at)
    assert (view.query_id, view.doc_id, view.retrieved.chunk_id) == ("q1", "D1", "D1#far")
    assert _opened(at) == f"q_{view.pair_id}_{_before(text, start)}"
    assert start > 5_000


def test_without_a_chunk_run_the_card_opens_at_the_first_query_term(app_db):
    from annotate_app.services import imports

    filler = "".join(f"Line {i} is about something else.\n" for i in range(80))
    text = filler + "先更换电池。\n" + filler
    line = json.dumps({"doc_id": "D1", "title": "long", "text": text}) + "\n"
    imports.import_documents(app_db, SYSTEM, "demo", line.encode(), filename="long.jsonl")
    at = app_as(app_db, "alice")
    view = _view(at)
    assert (view.doc_id, view.retrieved) == ("D1", None)
    assert _opened(at) == f"q_{view.pair_id}_{_before(text, text.index('更换'))}"


def test_a_document_without_a_query_term_opens_at_the_top(app_db):
    from annotate_app.services import imports

    line = json.dumps({"doc_id": "D1", "title": "t", "text": "Nothing matches here.\n" * 100}) + "\n"
    imports.import_documents(app_db, SYSTEM, "demo", line.encode(), filename="plain.jsonl")
    at = app_as(app_db, "alice")
    assert _opened(at) == f"q_{_view(at).pair_id}_0"


def test_a_long_document_opens_at_the_window_holding_the_chunk(optional):
    """174,000 characters, the chunk 87,000 in: the window shown is the one holding it, and the marker counts
    from the window's start."""
    from app_helpers import far_chunk_run

    text, (start, _) = far_chunk_run(optional, 1500)
    at = app_as(optional, "alice")
    assert not at.exception
    low = start // (evidence.WINDOW // 2) * (evidence.WINDOW // 2)
    shown = f"Characters {low:,}–{low + evidence.WINDOW:,} of {len(text):,}: the window follows the"
    assert any(plain(c.value).startswith(shown) for c in at.caption)
    assert _opened(at) == f"q_{_view(at).pair_id}_{_before(text[low:], start - low)}"


def _huge_chunk_run(db) -> tuple[str, int]:
    """D1 rewritten as exactly 200,000 characters, the query terms only at its start, and a chunk-level run
    retrieving the chunk at character 95,000 (`app_helpers.FAR_CHUNK`); returns (the text, the chunk's
    start)."""
    from app_helpers import FAR_CHUNK

    from annotate_app.services import imports

    filler = "This part of the manual is about something else entirely.\n" * 4000
    head = ("更换电池 first.\n" + filler)[:95_000]
    text = (head + FAR_CHUNK + "\n" + filler)[:200_000]
    line = json.dumps({"doc_id": "D1", "title": "A huge manual", "text": text}) + "\n"
    imports.import_documents(db, SYSTEM, "demo", line.encode(), filename="huge.jsonl")
    chunk = {"chunk_id": "D1#far", "doc_id": "D1", "start": 95_000, "end": 95_000 + len(FAR_CHUNK)}
    imports.import_chunk_map(db, SYSTEM, "demo", (json.dumps(chunk) + "\n").encode(), filename="far.jsonl")
    imports.import_run(db, SYSTEM, "demo", b"q1 Q0 D1#far 1 9 far\n", filename="far.trec", chunks=True)
    return text, 95_000


def _window_caption(at) -> str:
    (found,) = [plain(c.value) for c in at.caption if plain(c.value).startswith("Characters ")]
    return found


def test_evidence_off_a_huge_document_shows_in_windows_opening_at_the_chunk(app_db):
    """Evidence off, 200,000 characters: one window of 20,000 goes to the page, the one holding the retrieved
    chunk (opened at the chunk), and K Earlier / J Later move a window at a time, within the document."""
    text, start = _huge_chunk_run(app_db)
    at = app_as(app_db, "alice")
    assert not at.exception
    pid = _view(at).pair_id
    assert _window_caption(at) == (
        "Characters 90,000–110,000 of 200,000: K/J (Earlier/Later) show the window before or after."
    )
    assert max(len(m.value) for m in at.markdown) < evidence.WINDOW * 2  # never the whole document
    assert any(f":{evidence_text.CHUNK}[" in m.value for m in at.markdown)
    assert _opened(at) == f"q_{pid}_90000_{_before(text[90_000:], start - 90_000)}"
    at.button(key=f"q_win_next_{pid}").click().run()
    assert _window_caption(at).startswith("Characters 110,000–130,000 of 200,000")
    assert _opened(at) == f"q_{pid}_110000_0"  # a moved window opens at its top
    assert not any(f":{evidence_text.CHUNK}[" in m.value for m in at.markdown)
    at.button(key=f"q_win_prev_{pid}").click().run()
    at.button(key=f"q_win_prev_{pid}").click().run()
    assert _window_caption(at).startswith("Characters 70,000–90,000 of 200,000")
    for _ in range(4):  # 50,000, 30,000, 10,000, then the start
        at.button(key=f"q_win_prev_{pid}").click().run()
    assert _window_caption(at).startswith("Characters 0–20,000 of 200,000")
    assert at.button(key=f"q_win_prev_{pid}").disabled
    at.session_state[state.window_at(pid)] = 195_000
    at.run()
    assert _window_caption(at).startswith("Characters 180,000–200,000 of 200,000")
    assert at.button(key=f"q_win_next_{pid}").disabled
    assert not at.exception


def test_evidence_off_a_huge_document_without_a_chunk_opens_at_the_first_query_term(app_db):
    from annotate_app.services import imports

    text = ("This part of the manual is about something else entirely.\n" * 4000)[:150_000]
    text = text[:120_000] + "先更换电池。\n" + text[120_000:]
    line = json.dumps({"doc_id": "D1", "title": "long", "text": text}) + "\n"
    imports.import_documents(app_db, SYSTEM, "demo", line.encode(), filename="long.jsonl")
    at = app_as(app_db, "alice")
    assert not at.exception
    assert _view(at).doc_id == "D1"
    assert _window_caption(at).startswith(f"Characters 120,000–140,000 of {len(text):,}")
    assert _opened(at) == f"q_{_view(at).pair_id}_120000_{_before(text[120_000:], 1)}"


def test_evidence_off_a_short_document_shows_no_window_controls(app_db):
    at = app_as(app_db, "alice")
    assert not at.exception
    assert not [c for c in at.caption if plain(c.value).startswith("Characters ")]
    assert "J Later" not in [b.label for b in at.button]
