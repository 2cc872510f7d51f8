"""AppTest: a stored text of any size (here a 15 MB reason, written straight into the database, past the
services' limit) reaches the pages cut: the Adjudicate page shows the reason's first `SHOWN_TEXT` characters
and its length, My labels a table cell of `SHOWN_CELL`, the edit card a reason box of at most `MAX_REASON` —
so no page sends the browser megabytes in one message."""

from __future__ import annotations

import pytest
from app_helpers import app_as, plain
from long_texts import HUGE, store_reason

from annotate_app.services import gate
from annotate_app.services.auth import authenticate
from annotate_app.services.inputs import MAX_REASON
from annotate_app.ui import state
from annotate_app.ui.components import widgets

NOTE = f"… (cut: {HUGE:,} characters)"


@pytest.fixture
def huge_reason(labelled_db) -> tuple:
    """bob's label of the first disagreement now has a 15 MB reason; (database, pair id)."""
    rita = authenticate(labelled_db, "rita", "rita-demo")
    pair_id = gate.disagreements(labelled_db, rita, "demo", limit=1)[0].pair_id
    store_reason(labelled_db, "bob", pair_id, "w" * HUGE)
    return labelled_db, pair_id


def _sizes(at) -> int:
    """The characters of every text the page shows (Markdown, captions, cells, text boxes)."""
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    texts += [str(a.value) for a in at.text_area]
    for frame in at.dataframe:
        texts += [str(v) for v in frame.value.to_numpy().ravel()]
    return sum(len(t) for t in texts)


def test_adjudicate_shows_a_huge_reason_cut(huge_reason):
    db, pair_id = huge_reason
    at = app_as(db, "rita", "views/review/adjudicate.py")
    assert not at.exception
    reasons = [plain(m.value) for m in at.markdown if plain(m.value).startswith("www")]
    assert [len(r) for r in reasons] == [widgets.SHOWN_TEXT]
    assert reasons[0].endswith(f"w{NOTE}")
    assert _sizes(at) < 100_000


def test_my_labels_and_the_edit_card_show_it_cut(huge_reason):
    db, pair_id = huge_reason
    at = app_as(db, "bob", "views/annotate/my_labels.py")
    assert not at.exception
    cells = [v for v in at.dataframe[0].value["reason"] if v.startswith("www")]
    assert [len(c) for c in cells] == [widgets.SHOWN_CELL] and cells[0].endswith(NOTE)
    picker = at.selectbox(key=state.EDIT_CHOICE)
    at = picker.select(pair_id).run()
    box = at.text_area(key=state.reason(pair_id, "e")).value
    assert len(box) == MAX_REASON and box.endswith(NOTE)
    assert _sizes(at) < 100_000
