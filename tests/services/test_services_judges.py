"""Machine judges in the services, on SQLite and PostgreSQL: role checks, append-only labels, the
store-backed cache (a rerun sends nothing, an interrupted run continues), machine labels never in the gate,
filling only while calibrated, release counts and export sources, and calibration figures against hand and
sklearn computation on a small hand-made project."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

import pytest
from llm_server import LLMServer, fixture, prompt_of, replay, with_texts
from sklearn.metrics import cohen_kappa_score
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, IntegrityError
from store_fixtures import synthetic_project

from annotate_app.judges import ASPECTS_TEMPLATE
from annotate_app.services import (
    adjudication,
    export,
    gate,
    judges,
    labels,
    pooling,
    projects,
    queue,
    releases,
)
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import Conflict, InvalidInput, NotFound, PermissionDenied

# the hand-made project: 2 queries x 4 documents, two annotators; grades by (query, document)
A00 = {("q0", "D0"): 0, ("q0", "D1"): 2, ("q0", "D2"): 3, ("q0", "D3"): 0}
A00 |= {("q1", "D0"): 1, ("q1", "D1"): 0, ("q1", "D2"): 2, ("q1", "D3"): 3}
A01 = dict(A00) | {("q0", "D3"): 1, ("q1", "D0"): 0}
MACHINE = {("q0", "D0"): 0, ("q0", "D1"): 3, ("q0", "D2"): 3, ("q0", "D3"): 1}
MACHINE |= {("q1", "D0"): 0, ("q1", "D1"): 1, ("q1", "D2"): 2, ("q1", "D3"): 2}
SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
NEW = {("q0", "D4"): 2, ("q1", "D4"): 0}  # pairs no human judged


def _jsonl(grades: dict) -> bytes:
    lines = (
        json.dumps({"query_id": q, "doc_id": d, "grade": g, "reason": "made elsewhere"})
        for (q, d), g in grades.items()
    )
    return ("\n".join(lines) + "\n").encode()


def _label_all(db, people, grades_of) -> None:
    for person, grades in zip(people, grades_of, strict=True):
        while (view := queue.next_pair(db, person, "hand")) is not None:
            grade = grades[(view.query_id, view.doc_id)]
            labels.save_label(db, person, "hand", view.pair_id, grade=grade, reason="as planned")


@pytest.fixture
def hand(db):
    """The hand-made project, fully labelled by a00 and a01, with two more pairs (D4) no human judged."""
    people = synthetic_project(db, "hand", queries=2, docs=4, n=2, annotators=2)
    _label_all(db, people, [A00, A01])
    from annotate_app.services import imports

    doc = json.dumps({"doc_id": "D4", "title": "t4", "text": "text 4"}) + "\n"
    imports.import_documents(db, SYSTEM, "hand", doc.encode(), filename="more.jsonl")
    for q, d in NEW:
        pooling.add_pair(db, SYSTEM, "hand", q, d, note="no human judged it")
    return db, people


# --------------------------------------------------------------------------------------------- roles
def test_roles(demo, actors):
    with pytest.raises(
        PermissionDenied, match=r"^rita \(reviewer\) may not add judges: admin role required$"
    ):
        judges.add_judge(demo, actors["rita"], "demo", "lex", backend="lexical")
    judges.add_judge(demo, actors["admin"], "demo", "lex", backend="lexical")
    with pytest.raises(
        PermissionDenied, match=r"^alice \(annotator\) may not run judges: admin role required$"
    ):
        judges.run_judge(demo, actors["alice"], "demo", "lex")
    with pytest.raises(PermissionDenied, match=r"may not calibrate judges: reviewer role required$"):
        judges.calibrate(demo, actors["alice"], "demo")
    assert [c.name for c in judges.calibrate(demo, actors["rita"], "demo")] == ["lex"]
    assert [j.name for j in judges.list_judges(demo, actors["rita"], "demo")] == ["lex"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"backend": "gpt"}, "backend must be one of 'openai', 'replay', 'lexical', 'ensemble'; got 'gpt'"),
        ({"backend": "openai", "model": "m"}, "base_url must be an http:// or https:// URL; got ''"),
        (
            {"backend": "openai", "base_url": "http://x/v1"},
            "model must be a non-empty name of at most 255 characters; got ''",
        ),
        ({"backend": "lexical", "samples": 0}, "samples must be an int in [1, 20]; got 0"),
        ({"backend": "lexical", "temperature": 3}, "temperature must be a number in [0, 2]; got '3'"),
        (
            {"backend": "openai", "base_url": "http://x/v1", "model": "m", "prompt": "no placeholders"},
            "prompt: template must contain {{query}}; got 'no placeholders'",
        ),
    ],
)
def test_add_judge_refuses_bad_settings(demo, kwargs, message):
    with pytest.raises(InvalidInput) as caught:
        judges.add_judge(demo, SYSTEM, "demo", "j", **kwargs)
    assert str(caught.value) == message


def test_a_judge_name_is_checked_and_unique_per_settings(demo):
    with pytest.raises(InvalidInput, match=r"^judge name must be 1-64 letters"):
        judges.add_judge(demo, SYSTEM, "demo", "bad name", backend="lexical")
    judges.add_judge(demo, SYSTEM, "demo", "j", backend="openai", base_url="http://x/v1", model="m")
    again = judges.add_judge(demo, SYSTEM, "demo", "j", backend="openai", base_url="http://x/v1", model="m")
    assert again.prompt_version == 1
    newer = judges.add_judge(
        demo,
        SYSTEM,
        "demo",
        "j",
        backend="openai",
        base_url="http://x/v1",
        model="m",
        prompt="Q {{query}} D {{document}}",
    )
    assert newer.prompt_version == 2 and newer.prompt_sha256 != again.prompt_sha256
    with pytest.raises(Conflict, match=r"^judge 'j' already exists in project 'demo' with other settings$"):
        judges.add_judge(demo, SYSTEM, "demo", "j", backend="openai", base_url="http://x/v1", model="other")
    with pytest.raises(NotFound, match=r"^judge 'nobody' does not exist in project 'demo'$"):
        judges.run_judge(demo, SYSTEM, "demo", "nobody")


# --------------------------------------------------------------------------------------- cache, append
def test_a_rerun_sends_nothing_and_labels_are_append_only(demo):
    judges.add_judge(demo, SYSTEM, "demo", "lex", backend="lexical")
    first = judges.run_judge(demo, SYSTEM, "demo", "lex", pairs="all")
    assert (first.pairs, first.sent, first.cached, first.failed) == (12, 12, 0, 0)
    again = judges.run_judge(demo, SYSTEM, "demo", "lex", pairs="all")
    assert (again.sent, again.cached) == (0, 12)
    with demo.read() as s:
        assert s.execute(text("SELECT count(*) FROM judge_labels")).scalar() == 12
    for statement in ("UPDATE judge_labels SET grade = 0", "DELETE FROM judge_labels"):
        with pytest.raises((IntegrityError, DBAPIError), match="immutable"), demo.write() as s:
            s.execute(text(statement))


def test_an_interrupted_run_continues_where_it_stopped(demo):
    judges.add_judge(demo, SYSTEM, "demo", "lex", backend="lexical")

    def stop_after_five(counts):
        if counts.done == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        judges.run_judge(demo, SYSTEM, "demo", "lex", pairs="all", concurrency=1, progress=stop_after_five)
    with demo.read() as s:
        stored = s.execute(text("SELECT count(*) FROM judge_labels")).scalar()
    assert 5 <= stored < 12
    rest = judges.run_judge(demo, SYSTEM, "demo", "lex", pairs="all")
    assert (rest.cached, rest.sent) == (stored, 12 - stored)


def test_a_dry_run_sends_and_stores_nothing(demo):
    judges.add_judge(demo, SYSTEM, "demo", "j", backend="openai", base_url="http://127.0.0.1:9/v1", model="m")
    report = judges.run_judge(demo, SYSTEM, "demo", "j", pairs="all", dry_run=True)
    assert report.dry_run and report.pairs == 12 and '"model": "m"' in report.prompt
    with demo.read() as s:
        assert s.execute(text("SELECT count(*) FROM judge_labels")).scalar() == 0


@pytest.mark.parametrize("pairs", ["some", "sample:0", "sample:x", 3])
def test_pair_selections_are_checked(demo, pairs):
    judges.add_judge(demo, SYSTEM, "demo", "lex", backend="lexical")
    with pytest.raises(InvalidInput, match=r"^pairs must"):
        judges.run_judge(demo, SYSTEM, "demo", "lex", pairs=pairs)


# ------------------------------------------------------------------------------------------- the gate
def test_machine_labels_never_enter_the_gate(hand):
    db, _ = hand
    before = gate.agreement(db, SYSTEM, "hand")
    blockers = gate.blockers(db, SYSTEM, "hand")
    judges.import_labels(db, SYSTEM, "hand", "machine", _jsonl(MACHINE | NEW))
    judges.add_judge(db, SYSTEM, "hand", "lex", backend="lexical")
    judges.run_judge(db, SYSTEM, "hand", "lex", pairs="all")
    after = gate.agreement(db, SYSTEM, "hand")
    assert (after.value, after.n_labels, after.n_annotators) == (
        before.value,
        before.n_labels,
        before.n_annotators,
    )
    assert after.pairwise.equals(before.pairwise)
    assert gate.blockers(db, SYSTEM, "hand") == blockers
    assert blockers.missing_labels == 2


# ----------------------------------------------------------------------------------------------- fill
def _adjudicate(db) -> None:
    """The two disagreements of the hand-made project, ((q0, D3) and (q1, D0)), adjudicated 0."""
    for item in gate.disagreements(db, SYSTEM, "hand"):
        adjudication.adjudicate(db, SYSTEM, "hand", item.pair_id, grade=0, reason="read it twice")


def test_a_judge_fills_unjudged_pairs_only_while_calibrated(hand):
    db, _ = hand
    _adjudicate(db)
    agreeing = dict(A00) | NEW  # agrees with a00 everywhere, with a01 on all but two pairs
    judges.import_labels(db, SYSTEM, "hand", "machine", _jsonl(agreeing))
    with pytest.raises(Conflict, match=r"^release blocked: 2 pairs lack their labels"):  # needs a human
        releases.create_release(db, SYSTEM, "hand", justification="x" * 30)
    judges.update_judge_settings(db, SYSTEM, "hand", fill_judge="machine", min_calibration_pairs=9)
    (cal,) = judges.calibrate(db, SYSTEM, "hand")
    assert cal.n_pairs == 8 and not cal.passed  # too few shared pairs
    with pytest.raises(Conflict, match=r"^release blocked: 2 pairs lack their labels"):
        releases.create_release(db, SYSTEM, "hand", justification="x" * 30)
    judges.update_judge_settings(db, SYSTEM, "hand", min_calibration_pairs=8)
    assert judges.calibrate(db, SYSTEM, "hand")[0].passed
    info = releases.create_release(db, SYSTEM, "hand", justification="x" * 30)
    assert info.n_qrels == 10 and info.sources == {"human": 8, "judge:machine": 2}
    assert info.counts == {"unanimous": 6, "majority": 0, "adjudicated": 2, "excluded": 0}
    qrels = releases.release_qrels(db, SYSTEM, "hand")
    released = dict(
        zip(
            zip(qrels.query_id.to_pylist(), qrels.doc_id.to_pylist(), strict=True),
            qrels.relevance.tolist(),
            strict=True,
        )
    )
    assert released == {**A00, ("q0", "D3"): 0, ("q1", "D0"): 0, **NEW}
    jsonl = export.export_release(db, SYSTEM, "hand", format="jsonl").decode()
    by_pair = {(r["query_id"], r["doc_id"]): r for r in map(json.loads, jsonl.splitlines())}
    filled, human = by_pair[("q0", "D4")], by_pair[("q0", "D0")]
    assert (filled["source"], filled["kind"], filled["labels"]) == ("judge:machine", "judge", [])
    assert filled["judge_label"]["grade"] == 2 and filled["judge_label"]["judge"] == "machine"
    assert (human["source"], human["judge_label"]) == ("human", None)
    assert {x["source"] for x in human["labels"]} == {"human:a00", "human:a01"}


def test_the_jsonl_export_carries_a_filling_judges_reasoning_and_aspects(hand):
    # the reply: vLLM with <think> in content (vllm-project/vllm #21130, tests/fixtures/llm/SOURCES.md)
    db, _ = hand
    _adjudicate(db)
    agreeing = dict(A00) | NEW
    think = fixture("vllm_think_in_content.json")
    block = think["choices"][0]["message"]["content"].split("</think>")[0] + "</think>"
    thought = block[len("<think>") : -len("</think>")].strip()

    def script(body: dict, attempt: int):
        pair = re.search(r"query (\d+).*text (\d+)", prompt_of(body), re.S)
        assert pair is not None
        grade = agreeing[(f"q{pair[1]}", f"D{pair[2]}")]
        answer = json.dumps({"intent": 3, "trust": 1, "reason": "steps, no source", "grade": grade})
        return replay(with_texts(think, content=block + "\n\n" + answer))

    with LLMServer(script=script) as llm:
        judges.add_judge(
            db, SYSTEM, "hand", "gpt", backend="openai", base_url=llm.url, model="m", prompt=ASPECTS_TEMPLATE
        )
        assert judges.run_judge(db, SYSTEM, "hand", "gpt", pairs="all", concurrency=1).failed == 0
    judges.update_judge_settings(db, SYSTEM, "hand", fill_judge="gpt", min_calibration_pairs=8)
    assert judges.calibrate(db, SYSTEM, "hand")[0].passed
    releases.create_release(db, SYSTEM, "hand", justification="x" * 30)
    jsonl = export.export_release(db, SYSTEM, "hand", format="jsonl").decode()
    by_pair = {(r["query_id"], r["doc_id"]): r for r in map(json.loads, jsonl.splitlines())}
    filled, human = by_pair[("q0", "D4")]["judge_label"], by_pair[("q0", "D0")]
    assert (filled["judge"], filled["grade"], filled["reason"]) == ("gpt", 2, "steps, no source")
    assert (filled["aspects"], filled["reasoning"]) == ({"intent": 3, "trust": 1}, thought)
    assert thought.startswith("Okay, the user is asking") and human["judge_label"] is None


def test_a_judge_does_not_fill_once_it_fails_calibration(hand):
    db, _ = hand
    contrary = {k: 3 - g for k, g in A00.items()} | NEW
    judges.import_labels(db, SYSTEM, "hand", "contrary", _jsonl(contrary))
    judges.update_judge_settings(db, SYSTEM, "hand", fill_judge="contrary", min_calibration_pairs=1)
    assert not judges.calibrate(db, SYSTEM, "hand")[0].passed
    _adjudicate(db)
    with pytest.raises(Conflict) as blocked:
        releases.create_release(db, SYSTEM, "hand", justification="x" * 30)
    assert str(blocked.value) == (
        "release blocked: 2 pairs lack their labels (label them or exclude them); no judge fills them: judge "
        "contrary has kappa -0.429 on 8 randomly sampled human pairs; it needs kappa >= 0.700"
    )


def test_labels_csv_carries_every_source(hand):
    db, _ = hand
    judges.import_labels(db, SYSTEM, "hand", "machine", _jsonl(MACHINE))
    rows = list(csv.DictReader(io.StringIO(export.export_labels_csv(db, SYSTEM, "hand").decode())))
    sources = [r["source"] for r in rows]
    assert sources.count("human:a00") == 8 and sources.count("human:a01") == 8
    assert sources.count("judge:machine") == 8 and sources[-1] == "judge:machine"


def test_importing_again_adds_nothing_and_unknown_pairs_are_refused(hand):
    db, _ = hand
    first = judges.import_labels(db, SYSTEM, "hand", "machine", _jsonl(MACHINE))
    again = judges.import_labels(db, SYSTEM, "hand", "machine", _jsonl(MACHINE))
    assert (first.sent, again.sent, again.cached) == (8, 0, 8)
    with pytest.raises(InvalidInput, match=r"^labels.jsonl:1: query 'q9', document 'D0' is not a pair of"):
        judges.import_labels(
            db, SYSTEM, "hand", "machine", _jsonl({("q9", "D0"): 1}), filename="labels.jsonl"
        )
    with pytest.raises(InvalidInput, match=r"grade 7 is not on the scale"):
        judges.import_labels(db, SYSTEM, "hand", "machine", _jsonl({("q0", "D0"): 7}))


# ---------------------------------------------------------------------------------------- calibration
def test_calibration_equals_hand_computation_and_sklearn(hand):
    db, _ = hand
    judges.import_labels(db, SYSTEM, "hand", "machine", _jsonl(MACHINE | NEW))
    keys = sorted(A00)
    j = [MACHINE[k] for k in keys]
    binary = [
        cohen_kappa_score([int(g >= 1) for g in j], [int(h[k] >= 1) for k in keys], labels=[0, 1])
        for h in (A00, A01)
    ]
    linear = [
        cohen_kappa_score(j, [h[k] for k in keys], labels=[0, 1, 2, 3], weights="linear") for h in (A00, A01)
    ]
    (cal,) = judges.calibrate(db, SYSTEM, "hand")
    assert cal.n_pairs == 8
    assert cal.kappa == pytest.approx(sum(binary) / 2)
    assert cal.weighted_kappa == pytest.approx(sum(linear) / 2)
    differences = [MACHINE[k] - h[k] for h in (A00, A01) for k in keys]
    assert cal.leniency == pytest.approx(sum(differences) / 16)
    assert cal.leniency == pytest.approx((1 + 1) / 16)  # by hand: +1 +1 +1 -1 -1 against each annotator
    assert cal.confusion["0"] == {"0": 3, "1": 3, "2": 0, "3": 0}  # the humans' six 0s: 0 0 0 1 1 1
    assert sum(sum(row.values()) for row in cal.confusion.values()) == 16
    assert cal.tau is None and cal.tau_top5 is None  # one stored run
    projects.update_settings(db, SYSTEM, "hand", agreement_mode="weighted")
    graded = [cohen_kappa_score(j, [h[k] for k in keys], labels=[0, 1, 2, 3]) for h in (A00, A01)]
    assert judges.calibrate(db, SYSTEM, "hand")[0].kappa == pytest.approx(sum(graded) / 2)


def test_probe_on_pairs_humans_judged_non_relevant(hand):
    db, _ = hand
    judges.add_judge(db, SYSTEM, "hand", "lex", backend="lexical")
    report = judges.probe(db, SYSTEM, "hand", "lex", sample=10)
    assert report.n_pairs == 2  # (q0, D0) and (q1, D1): both annotators gave 0
    assert report.n_raised + report.n_lowered + report.n_unchanged == 2 and report.failed == 0
    assert judges.calibrate(db, SYSTEM, "hand")[0].n_pairs == 2  # probes are not labels; the originals are
    assert math.isfinite(report.mean_rise)


def test_judge_settings_are_checked(demo):
    with pytest.raises(
        InvalidInput, match=r"^queue_order must be one of 'default', 'uncertainty', 'run_weight'"
    ):
        judges.update_judge_settings(demo, SYSTEM, "demo", queue_order="fast")
    with pytest.raises(InvalidInput, match=r"^calibration_share must be a number in \[0, 1\]; got '2'$"):
        judges.update_judge_settings(demo, SYSTEM, "demo", calibration_share=2)
    with pytest.raises(NotFound, match=r"^judge 'ghost' does not exist in project 'demo'$"):
        judges.update_judge_settings(demo, SYSTEM, "demo", fill_judge="ghost")
    info = judges.update_judge_settings(demo, SYSTEM, "demo", queue_order="uncertainty", human_budget=100)
    assert (info.queue_order, info.human_budget, info.fill_judge) == ("uncertainty", 100, None)
    assert judges.judge_settings(demo, SYSTEM, "demo") == info


# ------------------------------------------------------------------------------------------------ queue
def _first_claims(db, project: str, person, k: int) -> list[tuple[str, str]]:
    out = []
    for _ in range(k):
        view = queue.next_pair(db, person, project)
        out.append((view.query_id, view.doc_id))
        labels.save_label(db, person, project, view.pair_id, grade=0, reason="as planned")
    return out


def test_the_queue_puts_the_judges_least_certain_pairs_first(db):
    (person,) = synthetic_project(db, "order", queries=2, docs=3, n=1, annotators=1)
    sure = {(f"q{j}", f"D{i}"): 1.0 for j in range(2) for i in range(3)}
    unsure = sure | {("q1", "D2"): 0.2, ("q1", "D0"): 0.5}
    lines = (
        json.dumps({"query_id": q, "doc_id": d, "grade": 1, "confidence": c}) for (q, d), c in unsure.items()
    )
    judges.import_labels(db, SYSTEM, "order", "machine", ("\n".join(lines) + "\n").encode())
    judges.update_judge_settings(db, SYSTEM, "order", queue_order="uncertainty", calibration_share=0.0)
    assert _first_claims(db, "order", person, 3) == [("q1", "D2"), ("q1", "D0"), ("q0", "D0")]


def test_the_queue_by_run_weight_and_the_human_budget(db):
    from annotate_app.services import imports

    (person,) = synthetic_project(db, "weight", queries=1, docs=3, n=1, annotators=1)
    imports.import_run(db, SYSTEM, "weight", b"q0 Q0 D2 1 9 other\n", filename="other.trec")
    pooling.pool(db, SYSTEM, "weight", depth=3)  # D2 is now in the top k of two runs
    judges.update_judge_settings(db, SYSTEM, "weight", queue_order="run_weight", calibration_share=0.0)
    judges.update_judge_settings(db, SYSTEM, "weight", human_budget=2)
    assert _first_claims(db, "weight", person, 2) == [("q0", "D2"), ("q0", "D0")]
    assert queue.next_pair(db, person, "weight") is None  # the budget is spent
    judges.update_judge_settings(db, SYSTEM, "weight", human_budget=None)
    assert queue.next_pair(db, person, "weight") is not None


def test_a_calibration_share_of_one_shuffles_the_queue(db):
    (person,) = synthetic_project(db, "shuffle", queries=4, docs=5, n=1, annotators=1)
    judges.update_judge_settings(db, SYSTEM, "shuffle", calibration_share=1.0)
    claims = _first_claims(db, "shuffle", person, 10)
    # sorted by query and document otherwise; 10 random draws come out sorted with odds 1 in 10!
    assert claims != sorted(claims)


# ------------------------------------------------------------------------------------------------ probe
def _review(db):
    from annotate_app.services.demo import load_demo

    load_demo(db, labelled=True)
    return "demo-review"


def test_the_lexical_judge_is_fooled_by_stuffing(db):
    project = _review(db)
    judges.add_judge(db, SYSTEM, project, "lex", backend="lexical")
    report = judges.probe(db, SYSTEM, project, "lex", sample=20)
    assert report.n_pairs > 0 and report.failed == 0
    assert report.n_raised > 0 and report.share_raised > 0 and report.mean_rise > 0


def test_the_openai_judge_is_sent_the_stuffed_text(db):
    from llm_server import LLMServer, reply

    from metrics.stats.probe import stuff_query_terms

    project = _review(db)
    with LLMServer(script=lambda body, attempt: reply('{"grade": 0, "reason": "fake"}')) as llm:
        prompt = "{{query}}\n=====\n{{document}}"
        judges.add_judge(
            db, SYSTEM, project, "gpt", backend="openai", base_url=llm.url, model="m", prompt=prompt
        )
        report = judges.probe(db, SYSTEM, project, "gpt", sample=3, seed=5)
        sent = [tuple(p.split("\n=====\n")) for p in llm.prompts()]
    texts = {d["doc_id"]: d for d in map(json.loads, (SAMPLE / "docs.jsonl").read_text().splitlines())}
    originals = {f"{d['title']}\n\n{d['text']}" for d in texts.values()}
    plain = [(q, doc) for q, doc in sent if doc in originals]
    stuffed = {(q, stuff_query_terms(doc, q, seed=5)) for q, doc in plain}
    assert (report.n_pairs, len(sent), len(plain)) == (3, 6, 3)
    assert set(sent) - set(plain) == stuffed


# ----------------------------------------------------------------------------------- the fill-in gate
MIX = {f"D{i}": g for i, g in enumerate((0, 2, 0, 3, 0))}  # grade by document, for both queries


def _steered_then_random(db) -> dict:
    """'mix': 2 queries x 5 documents, one annotator; the judge ``machine`` grades as the annotator does. The
    first 3 claims come in the uncertainty order (steered), the next 5 are uniformly random draws; 2 pairs
    stay unjudged. Of the 7 pairs left after the first 3, four are graded 0: any 5 hold both classes."""
    (person,) = synthetic_project(db, "mix", queries=2, docs=5, n=1, annotators=1)
    grades = {(f"q{j}", d): g for j in range(2) for d, g in MIX.items()}
    judges.import_labels(db, SYSTEM, "mix", "machine", _jsonl(grades))
    judges.update_judge_settings(
        db, SYSTEM, "mix", queue_order="uncertainty", fill_judge="machine", min_calibration_pairs=6
    )
    for share, k in ((0.0, 3), (1.0, 5)):
        judges.update_judge_settings(db, SYSTEM, "mix", calibration_share=share)
        for _ in range(k):
            view = queue.next_pair(db, person, "mix")
            grade = grades[(view.query_id, view.doc_id)]
            labels.save_label(db, person, "mix", view.pair_id, grade=grade, reason="as planned")
    return grades


def _draws(db, project: str) -> dict:
    with db.read() as s:
        rows = s.execute(
            text(
                "SELECT a.draw, count(*) FROM assignments a JOIN projects p ON p.id = a.project_id "
                "WHERE p.name = :p GROUP BY a.draw"
            ),
            {"p": project},
        )
        return dict(rows.all())


def test_the_gate_counts_only_randomly_drawn_human_pairs_once_the_queue_is_steered(db):
    _steered_then_random(db)
    assert _draws(db, "mix") == {"uncertainty": 3, "random": 5}
    (cal,) = judges.calibrate(db, SYSTEM, "mix")
    assert (cal.n_pairs, cal.kappa, cal.n_random_pairs, cal.random_kappa) == (8, 1.0, 5, 1.0)
    assert cal.steered and not cal.passed
    message = "judge machine has kappa 1.000 on 5 randomly sampled human pairs; it needs >= 6"
    assert cal.gate_message == message
    assert cal.to_dict()["n_random_pairs"] == 5 and cal.to_dict()["random_kappa"] == 1.0
    with pytest.raises(Conflict) as blocked:
        releases.create_release(db, SYSTEM, "mix", justification="x" * 30)
    assert str(blocked.value) == (
        "release blocked: 2 pairs lack their labels (label them or exclude them); no judge fills them: "
        + message
    )
    judges.update_judge_settings(db, SYSTEM, "mix", min_calibration_pairs=5)
    (cal,) = judges.calibrate(db, SYSTEM, "mix")
    assert cal.passed and cal.gate_message == ""
    info = releases.create_release(db, SYSTEM, "mix", justification="x" * 30)
    assert info.sources == {"human": 8, "judge:machine": 2}


def test_a_never_steered_queue_counts_every_shared_pair(hand):
    db, _ = hand
    assert _draws(db, "hand") == {"default": 16}  # no judge settings while a00 and a01 labelled
    judges.import_labels(db, SYSTEM, "hand", "machine", _jsonl(MACHINE | NEW))
    (cal,) = judges.calibrate(db, SYSTEM, "hand")
    assert (cal.n_random_pairs, cal.random_kappa, cal.steered) == (cal.n_pairs, cal.kappa, False)
    assert cal.n_pairs == 8


@pytest.mark.parametrize(
    ("n_random", "kappa", "message"),
    [
        (12, 0.71, "judge gpt has kappa 0.710 on 12 randomly sampled human pairs; it needs >= 30"),
        (40, 0.55, "judge gpt has kappa 0.550 on 40 randomly sampled human pairs; it needs kappa >= 0.700"),
        (
            3,
            None,
            "judge gpt has kappa undefined on 3 randomly sampled human pairs; "
            "it needs >= 30 and kappa >= 0.700",
        ),
        (30, 0.70, ""),
    ],
)
def test_the_gate_message_says_what_is_short(n_random, kappa, message):
    from annotate_app.services._judge_state import JudgeCalibrationInfo

    passed = n_random >= 30 and kappa is not None and kappa >= 0.7
    info = JudgeCalibrationInfo(
        name="gpt",
        n_pairs=50,
        kappa=0.9,
        weighted_kappa=None,
        alpha_ordinal=None,
        leniency=None,
        tau=None,
        tau_top5=None,
        passed=passed,
        threshold=0.7,
        min_pairs=30,
        n_random_pairs=n_random,
        random_kappa=kappa,
        steered=True,
    )
    assert info.gate_message == message


def test_migration_0007_marks_the_old_claims_of_steered_projects_as_steered(db, db_url):
    from alembic import command

    from annotate_app.store import migrate

    for project, order, prefix in (("steer", "uncertainty", "s"), ("plain", "default", "p")):
        (person,) = synthetic_project(db, project, queries=1, docs=2, n=1, annotators=1, prefix=prefix)
        judges.update_judge_settings(db, SYSTEM, project, queue_order=order, calibration_share=0.0)
        assert queue.next_pair(db, person, project) is not None
    db.dispose()
    migrate._run(db_url, lambda cfg: command.downgrade(cfg, "0006_queue_exhausted"))
    try:
        assert migrate.upgrade(db_url, "0007_claim_draw") == "0007_claim_draw"
        assert (_draws(db, "steer"), _draws(db, "plain")) == ({"uncertainty": 1}, {None: 1})
    finally:
        migrate.upgrade(db_url)  # the PostgreSQL database is the worker's, shared with later tests


def test_a_filled_qrel_carries_its_judges_evidence_into_the_release(hand):
    """The judge's labels of the two pairs it fills keep evidence spans; the release keeps them as those
    qrels' passages, its content hash covers them, and the passages export marks them
    ``source: judge:machine``."""
    db, _ = hand
    _adjudicate(db)
    spans = {("q0", "D4"): [[0, 4]], ("q1", "D4"): [[5, 6]]}  # in "text 4": "text" and "4"
    lines = [
        json.dumps({"query_id": q, "doc_id": d, "grade": g, "evidence": spans.get((q, d), [])})
        for (q, d), g in (dict(A00) | NEW).items()
    ]
    judges.import_labels(db, SYSTEM, "hand", "machine", ("\n".join(lines) + "\n").encode())
    judges.update_judge_settings(db, SYSTEM, "hand", fill_judge="machine", min_calibration_pairs=8)
    info = releases.create_release(db, SYSTEM, "hand", justification="x" * 30)
    assert info.sources == {"human": 8, "judge:machine": 2}
    exported = export.export_release(db, SYSTEM, "hand", format="passages").decode()
    assert [json.loads(x) for x in exported.splitlines()] == [
        {"query_id": "q0", "doc_id": "D4", "doc_version": 1, "start": 0, "end": 4, "grade": 2, "text": "text",
         "source": "judge:machine"},
        {"query_id": "q1", "doc_id": "D4", "doc_version": 1, "start": 5, "end": 6, "grade": 0, "text": "4",
         "source": "judge:machine"},
    ]  # fmt: skip
    trec = export.export_release(db, SYSTEM, "hand", format="trec").decode()  # checks the hash itself
    covered = trec + "q0\tD4\t1\t0\t4\t2\nq1\tD4\t1\t5\t6\t0\n"
    assert releases.sha256_text(covered) == info.content_hash
