"""A label records the document version its annotator was shown (issue 16 item 2), on SQLite and PostgreSQL.

The scenario of the issue: alice is shown version 1 of D1, an admin re-imports D1 as version 2, alice saves
grade 3. Before the fix the label was stored as ``doc_version=2``, not stale, and she was never asked again.
Now the save (given ``doc_version=``, as the app always does) is refused and stores nothing, her open claim
is flagged, and the next view shows version 2 with ``doc_changed``; saving that stores ``doc_version=2``.
Machine judges record the version whose text they were sent.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from annotate_app.services import imports, judges, labels, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import DocumentChanged, InvalidInput

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
CHANGED = "^this document changed while you read it; please judge it again$"


def _reimport(db, doc_ids: tuple[str, ...] = ("D1",), suffix: str = " (updated)"):
    """Re-import the sample documents with ``doc_ids``' text changed (each gets a new version)."""
    docs = [json.loads(line) for line in (SAMPLE / "docs.jsonl").read_text().splitlines()]
    lines = "".join(
        json.dumps(dict(d, text=d["text"] + suffix) if d["doc_id"] in doc_ids else d) + "\n" for d in docs
    )
    return imports.import_documents(db, SYSTEM, "demo", lines.encode(), filename="docs-v2.jsonl")


def _labels(db) -> list[tuple]:
    with db.read() as s:
        return [
            tuple(r) for r in s.execute(text("SELECT version, grade, doc_version FROM labels ORDER BY id"))
        ]


def test_a_save_of_a_version_replaced_meanwhile_is_refused_then_the_new_one_is_judged(actors, demo):
    alice = actors["alice"]
    shown = queue.next_pair(demo, alice, "demo")
    assert (shown.doc_id, shown.doc_version, shown.doc_changed) == ("D1", 1, False)
    report = _reimport(demo)
    assert (report.changed, report.stale_labels) == (1, 0)  # an open claim is not a label
    with pytest.raises(DocumentChanged, match=CHANGED):
        labels.save_label(
            demo, alice, "demo", shown.pair_id, grade=3, reason="fully answers", doc_version=shown.doc_version
        )
    assert _labels(demo) == []  # never stored as version 2, nor as anything else
    again = queue.next_pair(demo, alice, "demo")  # the same claim, now at version 2, with the warning
    assert (again.pair_id, again.doc_version, again.doc_changed, again.current) == (
        shown.pair_id,
        2,
        True,
        None,
    )
    assert again.doc_text.endswith("(updated)")
    saved = labels.save_label(
        demo, alice, "demo", again.pair_id, grade=3, reason="fully answers", doc_version=again.doc_version
    )
    assert (saved.version, saved.grade, saved.doc_version, saved.stale) == (1, 3, 2, False)
    assert _labels(demo) == [(1, 3, 2)]
    assert not queue.get_pair(demo, alice, "demo", shown.pair_id).doc_changed  # the save cleared the flag
    assert queue.next_pair(demo, alice, "demo").pair_id != shown.pair_id


def test_only_open_claims_on_the_changed_document_are_flagged(actors, demo):
    alice, bob = actors["alice"], actors["bob"]
    held = queue.next_pair(demo, alice, "demo")
    other = queue.next_pair(demo, bob, "demo")
    assert (held.doc_id, other.doc_id) == ("D1", "D2")
    _reimport(demo, ("D1",))
    assert queue.next_pair(demo, alice, "demo").doc_changed
    assert not queue.next_pair(demo, bob, "demo").doc_changed
    saved = labels.save_label(demo, bob, "demo", other.pair_id, grade=1, reason="related", doc_version=1)
    assert (saved.doc_version, saved.stale) == (1, False)


def test_an_edit_of_a_version_replaced_meanwhile_is_refused(actors, demo):
    alice = actors["alice"]
    view = queue.next_pair(demo, alice, "demo")
    labels.save_label(demo, alice, "demo", view.pair_id, grade=2, reason="partly answers", doc_version=1)
    editing = queue.get_pair(demo, alice, "demo", view.pair_id)  # the My labels card, at version 1
    _reimport(demo)
    with pytest.raises(DocumentChanged, match=CHANGED):
        labels.save_label(
            demo, alice, "demo", view.pair_id, grade=3, reason="fully", expected_version=1, doc_version=1
        )
    assert _labels(demo) == [(1, 2, 1)]
    fresh = queue.get_pair(demo, alice, "demo", view.pair_id)
    assert (fresh.doc_version, fresh.stale, fresh.doc_changed) == (
        2,
        True,
        False,
    )  # a stale label, not a claim
    assert editing.doc_version == 1
    saved = labels.save_label(
        demo, alice, "demo", view.pair_id, grade=3, reason="fully", expected_version=1, doc_version=2
    )
    assert (saved.version, saved.doc_version, saved.stale) == (2, 2, False)


def test_without_doc_version_a_script_records_the_current_version(actors, demo):
    alice = actors["alice"]
    view = queue.next_pair(demo, alice, "demo")
    _reimport(demo)
    saved = labels.save_label(demo, alice, "demo", view.pair_id, grade=3, reason="fully answers")
    assert (saved.doc_version, saved.stale) == (2, False)


def test_a_retry_finds_the_label_its_first_attempt_stored_before_the_document_changed(actors, demo):
    alice = actors["alice"]
    view = queue.next_pair(demo, alice, "demo")
    args = {"grade": 3, "reason": "fully answers", "doc_version": 1, "request_id": "save-1"}
    first = labels.save_label(demo, alice, "demo", view.pair_id, **args)
    _reimport(demo)
    retry = labels.save_label(demo, alice, "demo", view.pair_id, **args)  # its reply was lost: retried
    assert (retry.label_id, retry.doc_version, retry.stale) == (first.label_id, 1, True)
    assert _labels(demo) == [(1, 3, 1)]
    back = queue.next_pair(demo, alice, "demo")  # a stale label: asked again, at version 2
    assert (back.pair_id, back.doc_version, back.stale) == (view.pair_id, 2, True)


@pytest.mark.parametrize(
    ("doc_version", "error", "message"),
    [
        (0, InvalidInput, "doc_version must be an int in [1, 2147483647] or None; got 0"),
        (True, InvalidInput, "doc_version must be an int in [1, 2147483647] or None; got True"),
        ("1", InvalidInput, "doc_version must be an int in [1, 2147483647] or None; got '1'"),
        (3, InvalidInput, "doc_version must be a version of the document of pair {pair} (at most 2); got 3"),
        (1, DocumentChanged, "this document changed while you read it; please judge it again"),
    ],
)
def test_doc_version_is_checked(actors, demo, doc_version, error, message):
    view = queue.next_pair(demo, actors["alice"], "demo")
    _reimport(demo)
    with pytest.raises(error, match="^" + re.escape(message.format(pair=view.pair_id)) + "$"):
        labels.save_label(
            demo, actors["alice"], "demo", view.pair_id, grade=1, reason="related", doc_version=doc_version
        )
    assert _labels(demo) == []


def test_a_save_racing_a_reimport_on_postgresql_never_records_the_old_version_as_fresh(actors, demo):
    """The re-import's transaction has updated D1 but not committed when alice saves what she was shown
    (version 1): her save waits for it (a share lock on the document), then is refused."""
    if demo.is_sqlite:
        pytest.skip("SQLite serialises every write transaction: there is no interleaving to race")
    alice = actors["alice"]
    view = queue.next_pair(demo, alice, "demo")
    with demo.write() as s:  # the import's first step, held open
        s.execute(text("UPDATE documents SET version = 2 WHERE external_id = 'D1'"))
        s.execute(
            text(
                "INSERT INTO document_versions (document_id, version, title, text, meta, content_sha256, "
                "source, created_at) SELECT document_id, 2, title, text || ' (updated)', meta, "
                "'changed', source, created_at FROM document_versions WHERE version = 1 AND document_id = "
                "(SELECT id FROM documents WHERE external_id = 'D1')"
            )
        )
        outcome: list = []
        saver = threading.Thread(
            target=lambda: outcome.append(_attempt(demo, alice, view.pair_id)), name="alice-saves"
        )
        saver.start()
        _wait_for_a_lock_wait(demo, saver)
        assert saver.is_alive()  # waiting for the import
        from annotate_app.store import corpus

        corpus.mark_claims_changed(s, [_doc_id(s, "D1")])
    saver.join(timeout=60)
    assert outcome == ["DocumentChanged"]
    assert _labels(demo) == []


def _wait_for_a_lock_wait(db, thread: threading.Thread) -> None:
    """Until another backend waits for a lock (the saver, on the document row), or ``thread`` ends."""
    deadline = time.monotonic() + 60
    while thread.is_alive() and time.monotonic() < deadline:
        with db.read() as s:
            waiting = s.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            ).scalar()
        if waiting:
            return
        time.sleep(0.05)


def _attempt(db, actor, pair_id: int) -> str:
    try:
        labels.save_label(db, actor, "demo", pair_id, grade=3, reason="fully answers", doc_version=1)
    except DocumentChanged:
        return "DocumentChanged"
    return "saved"


def _doc_id(s, external_id: str) -> int:
    return s.execute(text("SELECT id FROM documents WHERE external_id = :d"), {"d": external_id}).scalar()


# ------------------------------------------------------------------------------------------ machine judges
def test_a_judge_records_the_version_whose_text_it_was_sent(demo):
    """D1 is re-imported after the judge's first answer: every answer of the run records version 1 (the text
    read when the run started), so none counts as current for D1, and a new run records version 2."""
    judges.add_judge(demo, SYSTEM, "demo", "lex", backend="lexical")

    def reimport_after_the_first(counts):
        if counts.done == 1:
            _reimport(demo, ("D1",))

    first = judges.run_judge(
        demo, SYSTEM, "demo", "lex", pairs="all", concurrency=1, progress=reimport_after_the_first
    )
    assert (first.pairs, first.sent) == (12, 12)
    with demo.read() as s:
        rows = s.execute(
            text(
                "SELECT d.external_id, j.doc_version FROM judge_labels j JOIN pairs p ON p.id = j.pair_id "
                "JOIN documents d ON d.id = p.document_id"
            )
        ).all()
    assert {v for _, v in rows} == {1} and len(rows) == 12
    d1_pairs = sum(1 for d, _ in rows if d == "D1")
    current = judges.judge_qrels(demo, SYSTEM, "demo", "lex")
    assert len(current) == 12 - d1_pairs and "D1" not in set(current.doc_id)
    assert judges.run_judge(demo, SYSTEM, "demo", "lex", pairs="all").sent == 12  # its corpus index changed
    with demo.read() as s:
        latest = s.execute(
            text(
                "SELECT j.doc_version FROM judge_labels j JOIN pairs p ON p.id = j.pair_id JOIN documents d "
                "ON d.id = p.document_id WHERE d.external_id = 'D1' ORDER BY j.id DESC LIMIT 1"
            )
        ).scalar()
    assert latest == 2
    assert len(judges.judge_qrels(demo, SYSTEM, "demo", "lex")) == 12
