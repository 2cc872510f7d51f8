"""Machine judges give evidence, on SQLite and PostgreSQL: the quotes of an OpenAI-compatible judge (the
loopback server replaying real reply shapes, tests/fixtures/llm/SOURCES.md) located in the document's text
(exactly, after normalizing whitespace and case, fuzzily, or not at all) and stored with the label; the
replay import's evidence (spans or quotes; bad spans refuse the file); and the span F1 of calibration, by
hand on a tiny project."""

from __future__ import annotations

import json

import pytest
from llm_server import LLMServer, fixture, prompt_of, replay, with_texts
from sqlalchemy import inspect, select, text

from annotate_app.judges import ASPECTS_TEMPLATE
from annotate_app.services import imports, judges, labels, pooling, projects, queue, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import InvalidInput
from annotate_app.store.models import JudgeLabel

TEXTS = {
    "D0": "The battery lasts ten hours. Charge it overnight. The screen is bright.",  # 71 characters
    "D1": "Hold the power button for ten seconds to reset the phone. Then release it.",  # 74
    "D2": "Our store opens at nine. Returns are accepted within thirty days.",  # 65
}
#        0         1         2         3         4         5         6         7
#        01234567890123456789012345678901234567890123456789012345678901234567890123

# vllm-project/vllm #21130: <think>…</think> inside content; vllm #19839: the answer in reasoning_content
THINK = fixture("vllm_think_in_content.json")
BLOCK = THINK["choices"][0]["message"]["content"].split("</think>")[0] + "</think>"
IN_REASONING = fixture("vllm_answer_in_reasoning_content.json")


@pytest.fixture
def ev(db):
    """Project ``ev``: evidence optional, one query, documents D0-D2 (`TEXTS`, each with a title), all three
    pooled; annotator ``ann`` (one annotator per pair). Returns (db, ann's actor)."""
    projects.create_project(db, SYSTEM, "ev", annotators_per_pair=1, evidence="optional")
    docs = "".join(
        json.dumps({"doc_id": d, "title": f"title {d}", "text": t}) + "\n" for d, t in TEXTS.items()
    )
    imports.import_documents(db, SYSTEM, "ev", docs.encode(), filename="docs.jsonl")
    imports.import_queries(
        db, SYSTEM, "ev", b'{"query_id": "q0", "text": "phone help"}\n', filename="q.jsonl"
    )
    run = "".join(f"q0 Q0 {d} {i + 1} {3 - i} sys\n" for i, d in enumerate(TEXTS))
    imports.import_run(db, SYSTEM, "ev", run.encode(), filename="run.trec")
    pooling.pool(db, SYSTEM, "ev", depth=3)
    users.create_user(db, SYSTEM, "ann", "ann-password-1")
    projects.assign(db, SYSTEM, "ev", ["ann"])
    return db, authenticate(db, "ann", "ann-password-1")


def _stored(db) -> dict[str, JudgeLabel]:
    """doc_id → the latest machine label of the pair (the project has one query)."""
    from annotate_app.store.models import Document, Pair

    with db.read() as s:
        stmt = (
            select(Document.external_id, JudgeLabel)
            .join(Pair, Pair.id == JudgeLabel.pair_id)
            .join(Document, Document.id == Pair.document_id)
            .order_by(JudgeLabel.id)
        )
        out = {}
        for doc_id, label in s.execute(stmt):
            s.expunge(label)
            out[doc_id] = label
    return out


def _doc_of(prompt: str) -> str:
    return next(d for d, t in TEXTS.items() if t in prompt)


def _run(db, answers: dict[str, dict], *, prompt: str | None = None) -> list[str]:
    """Run an openai judge ``gpt`` over every pair, the server answering each document's prompt with the
    reply body ``answers[doc]``; returns the prompts it received."""

    def script(body: dict, attempt: int):
        return replay(answers[_doc_of(prompt_of(body))])

    with LLMServer(script=script) as llm:
        options = {} if prompt is None else {"prompt": prompt}
        judges.add_judge(db, SYSTEM, "ev", "gpt", backend="openai", base_url=llm.url, model="m", **options)
        report = judges.run_judge(db, SYSTEM, "ev", "gpt", pairs="all", concurrency=1)
        assert (report.sent, report.failed) == (3, 0)
        return llm.prompts()


def _quotes(label: JudgeLabel) -> list[tuple]:
    return [(q["quote"], q["start"], q["end"], q["method"]) for q in label.evidence_quotes]


def test_exact_quotes_are_located_and_overlapping_ones_merged(ev):
    db, _ = ev
    d0 = {
        "grade": 3,
        "reason": "says it",
        "evidence": ["The battery lasts ten hours.", "lasts ten hours. Charge"],
    }
    d1 = {"grade": 2, "reason": "the reset", "evidence": ["Hold the power button for ten seconds"]}
    answers = {
        "D0": with_texts(THINK, content=BLOCK + "\n\n" + json.dumps(d0)),  # JSON after a think block
        "D1": with_texts(IN_REASONING, reasoning_content=json.dumps(d1)),  # the answer in reasoning_content
        "D2": with_texts(THINK, content=BLOCK + '\n\n{"grade": 0, "reason": "a shop"}'),  # no evidence
    }
    prompts = _run(db, answers)
    assert all('"evidence": ["<a passage copied from the document>", ...]' in p for p in prompts)
    stored = _stored(db)
    assert stored["D0"].evidence == [[0, 35]]  # [0, 28) and [12, 35) overlap: one passage
    assert _quotes(stored["D0"]) == [
        ("The battery lasts ten hours.", 0, 28, "exact"),
        ("lasts ten hours. Charge", 12, 35, "exact"),
    ]
    assert [q["score"] for q in stored["D0"].evidence_quotes] == [100.0, 100.0]
    assert TEXTS["D1"][0:37] == "Hold the power button for ten seconds"
    assert (stored["D1"].evidence, stored["D1"].grade) == ([[0, 37]], 2)
    assert (stored["D2"].grade, stored["D2"].evidence, stored["D2"].evidence_quotes) == (0, [], [])


def test_quotes_with_other_whitespace_and_case_are_located_normalized(ev):
    db, _ = ev
    fenced = "```json\n" + json.dumps({"grade": 3, "evidence": ["the BATTERY   lasts\nten hours."]}) + "\n```"
    prose = "The document answers it.\n" + json.dumps({"grade": 2, "evidence": "hold THE power button"})
    answers = {
        "D0": with_texts(THINK, content=BLOCK + "\n\n" + fenced),  # fenced JSON
        "D1": with_texts(IN_REASONING, reasoning_content=prose),  # JSON after prose; one quote as a string
        "D2": with_texts(IN_REASONING, reasoning_content='{"grade": 0, "evidence": []}'),
    }
    _run(db, answers, prompt=ASPECTS_TEMPLATE)
    stored = _stored(db)
    assert _quotes(stored["D0"]) == [("the BATTERY   lasts\nten hours.", 0, 28, "normalized")]
    assert (stored["D0"].evidence, stored["D0"].evidence_quotes[0]["score"]) == ([[0, 28]], 100.0)
    assert _quotes(stored["D1"]) == [("hold THE power button", 0, 21, "normalized")]
    assert stored["D2"].evidence == [] and stored["D2"].grade == 0


def test_fuzzy_quotes_keep_their_score_and_paraphrases_are_not_located(ev):
    db, _ = ev
    d0 = {"grade": 3, "evidence": ["Charge it over night.", "You should plug it in before bed."]}
    d1 = {"grade": 1, "evidence": ["Press and hold power for 10 s."]}
    answers = {
        "D0": with_texts(THINK, content=BLOCK + "\n\nMy verdict:\n" + json.dumps(d0) + "\nThat is all."),
        "D1": with_texts(IN_REASONING, reasoning_content=json.dumps(d1)),
        "D2": with_texts(IN_REASONING, reasoning_content='{"grade": 0}'),
    }
    _run(db, answers)
    stored = _stored(db)
    fuzzy, paraphrase = stored["D0"].evidence_quotes
    assert (fuzzy["start"], fuzzy["end"], fuzzy["method"]) == (29, 49, "fuzzy")
    assert TEXTS["D0"][29:49] == "Charge it overnight."
    assert 90 <= fuzzy["score"] < 100
    assert paraphrase["quote"] == "You should plug it in before bed."
    assert (paraphrase["start"], paraphrase["end"], paraphrase["method"]) == (None, None, "not_found")
    assert paraphrase["score"] < 90
    assert stored["D0"].evidence == [[29, 49]]  # the paraphrase gives no span
    (only,) = stored["D1"].evidence_quotes
    assert (only["method"], only["start"], stored["D1"].evidence) == ("not_found", None, [])
    assert stored["D1"].grade == 1  # a quote not found takes nothing from the grade


# ------------------------------------------------------------------------------------------- replay import
def _jsonl(*rows: dict) -> bytes:
    return "".join(json.dumps({"query_id": "q0", **r}) + "\n" for r in rows).encode()


def test_replay_import_takes_evidence_spans_or_quotes(ev):
    db, _ = ev
    data = _jsonl(
        {"doc_id": "D0", "grade": 3, "evidence": [[29, 49], [0, 28]]},
        {"doc_id": "D1", "grade": 2, "evidence": ["hold the POWER button", "not in the text at all, no"]},
        {"doc_id": "D2", "grade": 0},
    )
    report = judges.import_labels(db, SYSTEM, "ev", "elsewhere", data, filename="m.jsonl")
    assert (report.pairs, report.sent) == (3, 3)
    stored = _stored(db)
    assert stored["D0"].evidence == [[0, 28], [29, 49]]
    assert [q["method"] for q in stored["D0"].evidence_quotes] == ["given", "given"]
    assert stored["D1"].evidence == [[0, 21]]
    assert [(q["method"], q["start"]) for q in stored["D1"].evidence_quotes] == [
        ("normalized", 0),
        ("not_found", None),
    ]
    assert stored["D2"].evidence == []
    again = judges.import_labels(db, SYSTEM, "ev", "elsewhere", data, filename="m.jsonl")
    assert (again.sent, again.cached) == (0, 3)


BAD_EVIDENCE = [
    ([[60, 80]], "m.jsonl:2: evidence: span [60, 80) is out of range (document length 71)"),
    ([[0, 10], [5, 20]], "m.jsonl:2: evidence: spans [0, 10) and [5, 20) overlap (document length 71)"),
    ([[5, 5]], "m.jsonl:2: evidence: span [5, 5) is empty (document length 71)"),
    (
        [[0, 3], "a quote"],
        "m.jsonl:2: evidence must be a list of [start, end] spans or of quotes; got the item",
    ),
    ("0-5", "m.jsonl:2: evidence must be a list of [start, end] spans or of quotes; got str '0-5'"),
    ([" "], "m.jsonl:2: evidence quotes must not be blank; got ' '"),
]


@pytest.mark.parametrize(("evidence", "message"), BAD_EVIDENCE)
def test_bad_replay_evidence_refuses_the_file(ev, evidence, message):
    db, _ = ev
    data = _jsonl({"doc_id": "D1", "grade": 2}, {"doc_id": "D0", "grade": 3, "evidence": evidence})
    with pytest.raises(InvalidInput) as caught:
        judges.import_labels(db, SYSTEM, "ev", "elsewhere", data, filename="m.jsonl")
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert _stored(db) == {}  # nothing imported, not even the good line


# ---------------------------------------------------------------------------------------------- calibration
def test_calibration_span_f1_by_hand(ev, cli):
    db, ann = ev
    human = {"D0": (3, [(0, 28)]), "D1": (2, [(0, 10)]), "D2": (0, None)}
    while (view := queue.next_pair(db, ann, "ev")) is not None:
        grade, spans = human[view.doc_id]
        labels.save_label(db, ann, "ev", view.pair_id, grade=grade, reason="read it", evidence=spans)
    data = _jsonl(
        {"doc_id": "D0", "grade": 3, "evidence": [[4, 27]]},  # inside the human's [0, 28)
        {"doc_id": "D1", "grade": 2},  # no evidence where the human marked [0, 10)
        {"doc_id": "D2", "grade": 0, "evidence": []},  # neither marked anything: left out, counted
    )
    judges.import_labels(db, SYSTEM, "ev", "elsewhere", data, filename="m.jsonl")
    (cal,) = judges.calibrate(db, SYSTEM, "ev")
    # A = [0, 28) + [0, 10) = 38 characters, B = [4, 27) = 23, A ∩ B = 23: F1 = 2·23 / (38 + 23) = 46/61
    assert cal.span_f1 == pytest.approx(46 / 61)
    assert (cal.n_span_pairs, cal.n_span_without_evidence, cal.n_pairs) == (2, 1, 3)
    code, out, _ = cli("judge", "calibrate", "-p", "ev", "--format", "json")
    (figures,) = json.loads(out)["judges"]
    assert code == 0 and figures["span_f1"] == pytest.approx(46 / 61)
    assert (figures["n_span_pairs"], figures["n_span_without_evidence"]) == (2, 1)
    code, out, _ = cli("judge", "calibrate", "-p", "ev")
    header, row, note, *_ = out.splitlines()
    assert code == 0 and header.split()[-1] == "span_f1" and row.split()[-1] == "0.754"
    assert note == (
        "judge elsewhere: evidence span F1 0.754 on 2 (pair, human) items; 1 where neither marked a passage "
        "left out"
    )


def test_calibration_span_f1_is_undefined_without_any_evidence(ev):
    db, ann = ev
    while (view := queue.next_pair(db, ann, "ev")) is not None:
        labels.save_label(db, ann, "ev", view.pair_id, grade=1, reason="read it")
    judges.import_labels(db, SYSTEM, "ev", "elsewhere", _jsonl({"doc_id": "D0", "grade": 1}), filename="m")
    (cal,) = judges.calibrate(db, SYSTEM, "ev")
    assert (cal.span_f1, cal.n_span_pairs, cal.n_span_without_evidence) == (None, 0, 1)


def test_migration_0015_downgrades_and_upgrades_with_machine_labels_in_place(ev, db_url):
    from alembic import command

    from annotate_app.store import migrate

    db, _ = ev
    data = _jsonl({"doc_id": "D0", "grade": 3, "evidence": [[0, 28]]}, {"doc_id": "D1", "grade": 1})
    judges.import_labels(db, SYSTEM, "ev", "elsewhere", data, filename="m.jsonl")
    db.dispose()
    migrate._run(db_url, lambda cfg: command.downgrade(cfg, "0013_run_models"))
    try:
        with db.read() as s:
            columns = {c["name"] for c in inspect(s.connection()).get_columns("judge_labels")}
            assert "evidence" not in columns and "evidence_quotes" not in columns
            assert s.execute(text("SELECT count(*) FROM judge_labels")).scalar() == 2
    finally:
        db.dispose()
        assert migrate.upgrade(db_url) == migrate.head_revision()
    stored = _stored(db)
    assert (stored["D0"].evidence, stored["D0"].evidence_quotes, stored["D0"].grade) == ([], [], 3)


def test_the_cli_refuses_a_bad_span_in_one_line_and_imports_nothing(ev, cli, tmp_path):
    db, _ = ev
    path = tmp_path / "labels.jsonl"
    path.write_bytes(
        _jsonl({"doc_id": "D1", "grade": 2}, {"doc_id": "D0", "grade": 3, "evidence": [[60, 80]]})
    )
    code, out, err = cli("judge", "import", "-p", "ev", "elsewhere", path)
    assert (code, out) == (2, "")
    assert (
        err
        == "qrelforge: error: labels.jsonl:2: evidence: span [60, 80) is out of range (document length 71)\n"
    )
    assert _stored(db) == {}
    path.write_bytes(_jsonl({"doc_id": "D0", "grade": 3, "evidence": [[60, 71]]}))
    assert cli("judge", "import", "-p", "ev", "elsewhere", path)[:2] == (
        0,
        "judge elsewhere: 1 labels read, 1 new, 0 known\n",
    )
    assert _stored(db)["D0"].evidence == [[60, 71]]
