"""One limit for every reason or note the app stores, `services.inputs.MAX_REASON` (10 000 characters): a
label saved or imported, a skip, an adjudication, a machine judge's label imported, a pair's exclusion
reason, a pool note, a release's note and justification — each refused over it with one line naming the
length (and the file's line for an import), nothing written. A model's reply is not refused: its reason is
stored cut to the limit with a note of its length, and the raw reply keeps it whole."""

from __future__ import annotations

import json

import pytest
from import_load import count
from service_table import fingerprint
from sqlalchemy import text

from annotate_app.services import adjudication, imports, judges, labels, pooling, queue, releases, scoring
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput
from annotate_app.services.inputs import MAX_REASON

LONG = "x" * (MAX_REASON + 1)


def _label_line(reason: str) -> bytes:
    return (
        json.dumps({"query_id": "q1", "doc_id": "D1", "annotator": "ext", "grade": 2, "reason": reason})
        + "\n"
    ).encode()


def _machine_line(reason: str) -> bytes:
    return (json.dumps({"query_id": "q1", "doc_id": "D1", "grade": 2, "reason": reason}) + "\n").encode()


WRITES = [
    (
        "save_label",
        lambda db, a: labels.save_label(db, a["alice"], "demo", 1, grade=2, reason=LONG),
        "reason must have at most 10000 characters; got 10001",
    ),
    (
        "skip",
        lambda db, a: queue.skip(db, a["alice"], "demo", 1, reason=LONG),
        "skip reason must have at most 10000 characters; got 10001",
    ),
    (
        "adjudicate",
        lambda db, a: adjudication.adjudicate(db, a["rita"], "demo", 1, grade=2, reason=LONG),
        "reason must have at most 10000 characters; got 10001",
    ),
    (
        "import_labels",
        lambda db, a: imports.import_labels(
            db, SYSTEM, "demo", _label_line(LONG), fmt="jsonl", filename="labels.jsonl"
        ),
        "labels.jsonl:1: reason must have at most 10000 characters; got 10001: 'q1 D1 ext 2'",
    ),
    (
        "judges.import_labels",
        lambda db, a: judges.import_labels(
            db, SYSTEM, "demo", "elsewhere", _machine_line(LONG), filename="m.jsonl"
        ),
        "m.jsonl:1: reason must have at most 10000 characters; got 10001",
    ),
]


@pytest.mark.parametrize(("write", "call", "message"), WRITES, ids=[w[0] for w in WRITES])
def test_every_write_path_refuses_a_reason_over_the_limit(demo, actors, write, call, message):
    before = [count(demo, f"SELECT count(*) FROM {t}") for t in ("labels", "adjudications", "judge_labels")]
    with pytest.raises(InvalidInput) as info:
        call(demo, actors)
    assert str(info.value) == message
    assert [
        count(demo, f"SELECT count(*) FROM {t}") for t in ("labels", "adjudications", "judge_labels")
    ] == before


NOTES = [  # the other free texts a person writes
    (
        "exclude_pair",
        lambda db: pooling.exclude_pair(db, SYSTEM, "demo", "q1", "D1", reason=LONG),
        "reason must have at most 10000 characters; got 10001",
    ),
    (
        "exclude_pair (spaces around)",
        lambda db: pooling.exclude_pair(db, SYSTEM, "demo", "q1", "D1", reason=f"  {LONG}  "),
        "reason must have at most 10000 characters; got 10001",
    ),
    (
        "add_pair",
        lambda db: pooling.add_pair(db, SYSTEM, "demo", "q1", "D6", note=LONG),
        "note must have at most 10000 characters; got 10001",
    ),
    (
        "queue_pairs",
        lambda db: scoring.queue_pairs(db, SYSTEM, "demo", [("q1", "D6")], note=LONG),
        "note must have at most 10000 characters; got 10001",
    ),
    (
        "create_release note",
        lambda db: releases.create_release(db, SYSTEM, "demo", note=LONG),
        "note must have at most 10000 characters; got 10001",
    ),
    (
        "create_release justification",
        lambda db: releases.create_release(db, SYSTEM, "demo", justification=LONG),
        "justification must have at most 10000 characters; got 10001",
    ),
]


@pytest.mark.parametrize(("write", "call", "message"), NOTES, ids=[w[0] for w in NOTES])
def test_every_note_and_exclusion_reason_over_the_limit_is_refused(demo, write, call, message):
    before = fingerprint(demo)
    with pytest.raises(InvalidInput) as info:
        call(demo)
    assert str(info.value) == message
    assert fingerprint(demo) == before


def test_a_pool_note_of_exactly_the_limit_is_stored_whole(demo):
    pooling.add_pair(demo, SYSTEM, "demo", "q1", "D6", note="n" * MAX_REASON)
    scoring.queue_pairs(demo, SYSTEM, "demo", [("q2", "D5")], note="m" * MAX_REASON)
    assert count(demo, f"SELECT count(*) FROM pairs WHERE length(note) = {MAX_REASON}") == 2


def test_a_reason_of_exactly_the_limit_is_stored_whole(demo, actors):
    alice = actors["alice"]
    view = queue.next_pair(demo, alice, "demo")
    saved = labels.save_label(demo, alice, "demo", view.pair_id, grade=2, reason="y" * MAX_REASON)
    assert len(saved.reason) == MAX_REASON
    report = imports.import_labels(demo, SYSTEM, "demo", _label_line("z" * MAX_REASON), fmt="jsonl")
    assert report.added == 1
    assert count(demo, f"SELECT count(*) FROM labels WHERE length(reason) = {MAX_REASON}") == 2


def test_a_model_reply_with_a_longer_reason_is_stored_cut_and_its_raw_reply_whole(demo):
    from llm_server import LLMServer, reply

    answer = json.dumps({"grade": 2, "reason": "because " * 2_000})  # 16 000 characters of reason
    with LLMServer(script=lambda body, attempt: reply(answer)) as llm:
        judges.add_judge(demo, SYSTEM, "demo", "gpt", backend="openai", base_url=llm.url, model="m")
        report = judges.run_judge(demo, SYSTEM, "demo", "gpt", pairs="all", concurrency=1)
    assert report.failed == 0 and report.sent > 0
    with demo.read() as s:
        rows = s.execute(text("SELECT reason, raw_response FROM judge_labels")).all()
    assert {len(reason) for reason, _ in rows} == {MAX_REASON}
    assert all(r.startswith("because because") and r.endswith("… (cut: 16,000 characters)") for r, _ in rows)
    assert all(answer in raw for _, raw in rows)
