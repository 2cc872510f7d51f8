"""A reason stored past the services' limit (written straight into the database) is read cut in SQL by every
listing service — the disagreements, the caller's labels, a pair's history: at most `MAX_REASON` characters
with a note of its whole length, the rest never leaves the database."""

from __future__ import annotations

import pytest
from app_helpers import judge_all
from long_texts import store_reason
from sqlalchemy import text

from annotate_app.services import gate, labels
from annotate_app.services.auth import authenticate
from annotate_app.services.inputs import MAX_REASON
from annotate_app.store import annotation

LONG = 3 * MAX_REASON + 7  # characters of the stored reason
NOTE = f"… (cut: {LONG:,} characters)"

LISTINGS = [  # service → bob's label of the pair, as it lists it
    ("gate.disagreements", lambda db, who, pid: gate.disagreements(db, who["rita"], "demo")[0].labels),
    ("labels.my_labels", lambda db, who, pid: labels.my_labels(db, who["bob"], "demo")),
    ("labels.pair_history", lambda db, who, pid: labels.pair_history(db, who["rita"], "demo", pid)),
]


@pytest.fixture
def long_reason(demo) -> tuple:
    """bob's label of the worst disagreement has a reason of `LONG` characters; (database, actors, pair)."""
    judge_all(demo)
    who = {name: authenticate(demo, name, f"{name}-demo") for name in ("rita", "bob")}
    pair_id = gate.disagreements(demo, who["rita"], "demo", limit=1)[0].pair_id
    store_reason(demo, "bob", pair_id, "r" * (LONG - 1) + "!")
    return demo, who, pair_id


@pytest.mark.parametrize(("listing", "call"), LISTINGS, ids=[x[0] for x in LISTINGS])
def test_a_stored_long_reason_is_listed_cut_with_its_length(long_reason, listing, call):
    db, who, pair_id = long_reason
    reasons = [x.reason for x in call(db, who, pair_id) if x.reason.startswith("rrr")]
    assert [len(r) for r in reasons] == [MAX_REASON]
    assert reasons[0].endswith(f"r{NOTE}")


@pytest.mark.parametrize(("chars", "read"), [(None, LONG), (MAX_REASON, MAX_REASON), (5, 5)])
def test_label_rows_reads_only_the_characters_asked(long_reason, chars, read):
    db, _, pair_id = long_reason
    with db.read() as s:
        project_id = s.scalar(text("SELECT id FROM projects WHERE name = 'demo'"))
        rows = annotation.label_rows(
            s, project_id=project_id, pair_id=pair_id, current_only=True, reason_chars=chars
        )
    long = [r for r in rows if r["reason"].startswith("rrr")]
    assert [(len(r["reason"]), r["reason_length"]) for r in long] == [(read, LONG)]
