"""Judges compared on the same random human sample: three prompts on a loopback OpenAI-compatible server,
each scripted to a known accuracy, are ranked as scripted; two prompts of the same accuracy show no
significant difference; the cost and failure figures are the stored labels'; the CLI prints it all."""

from __future__ import annotations

import json
import re
import zlib

import pytest
from llm_server import LLMServer, prompt_of, reply
from store_fixtures import synthetic_project

from annotate_app.services import judges, labels, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput

ERRORS = {"good": 5, "mid": 35, "mid2": 35}  # each prompt's scripted share of wrong grades, in percent


def truth(query: int, doc: int) -> int:
    return (query + doc) % 4


def script(body: dict, attempt: int):
    """Grade as the humans did, except for ERRORS[prompt] percent of the pairs (drawn by a hash), graded
    two grades off."""
    prompt, rest = prompt_of(body).split("\n", 1)
    query = int(re.search(r"query (\d+)", rest).group(1))
    doc = int(re.search(r"text (\d+)", rest).group(1))
    grade = truth(query, doc)
    if zlib.crc32(f"{prompt}|{query}|{doc}".encode()) % 100 < ERRORS[prompt]:
        grade = (grade + 2) % 4
    return reply(json.dumps({"grade": grade, "reason": prompt}), prompt_tokens=100, completion_tokens=10)


@pytest.fixture
def three(db):
    """'cmp': 10 queries x 12 documents labelled by one annotator (the truth), and three judges run on all."""
    (person,) = synthetic_project(db, "cmp", queries=10, docs=12, n=1, annotators=1)
    while (view := queue.next_pair(db, person, "cmp")) is not None:
        grade = truth(int(view.query_id[1:]), int(view.doc_id[1:]))
        labels.save_label(db, person, "cmp", view.pair_id, grade=grade, reason="truth")
    with LLMServer(script=script) as llm:
        for name in ERRORS:
            prompt = f"{name}\n{{{{query}}}}\n=====\n{{{{document}}}}"
            judges.add_judge(
                db, SYSTEM, "cmp", name, backend="openai", base_url=llm.url, model="m", prompt=prompt
            )
            judges.run_judge(db, SYSTEM, "cmp", name, pairs="all")
    return db


def test_three_prompts_ranked_as_scripted(three):
    report = judges.compare_judges(three, SYSTEM, "cmp", ["mid", "good", "mid2"])
    result = report.comparison
    assert (report.n_sample, result.n_pairs) == (120, 120)
    kappa = {f.judge: f.kappa for f in result.judges}
    assert kappa["good"] > max(kappa["mid"], kappa["mid2"])
    assert result.best == "good"
    by_pair = {(d.first, d.second): d for d in result.differences}
    assert by_pair[("mid", "good")].significant and by_pair[("good", "mid2")].significant
    assert not by_pair[("mid", "mid2")].significant and by_pair[("mid", "mid2")].p_value > 0.05
    assert (
        report.message
        == "best: good, its kappa significantly above every other judge's (paired bootstrap, 95%)"
    )
    for f in result.judges:
        assert f.kappa_ci[0] <= f.kappa <= f.kappa_ci[1]
    costs = {c.judge: c for c in report.costs}
    assert [c.judge for c in report.costs] == ["mid", "good", "mid2"]
    assert (
        costs["good"].tokens == 120 * 110 and costs["good"].failure_rate == 0.0 and costs["good"].seconds > 0
    )


def test_two_prompts_of_the_same_accuracy_show_no_significant_difference(three):
    report = judges.compare_judges(three, SYSTEM, "cmp", ["mid", "mid2"])
    assert report.comparison.best is None
    assert report.message == "no significant difference between mid and mid2 (paired bootstrap, 95%)"


def test_the_cli_prints_the_table_the_tests_and_the_verdict(three, db_url, monkeypatch, capsys):
    from annotate_app.cli import main

    monkeypatch.setenv("QRELFORGE_DATABASE_URL", db_url)
    assert main(["judge", "compare", "-p", "cmp", "good", "mid", "mid2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["judge", "kappa", "95%", "CI"]
    good = next(line for line in out if line.startswith("good "))
    assert re.match(r"good +\d\.\d{3} \* ", good)  # the best, marked
    assert "120 pairs every judge graded, of 120 randomly sampled human pairs" in out
    assert any(line.startswith("  mid - mid2: kappa ") and line.endswith("not significant") for line in out)
    assert out[-1].startswith("best: good")
    assert main(["judge", "compare", "-p", "cmp", "good", "mid", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["comparison"]["best"] == "good" and data["costs"][0]["judge"] == "good"


def test_bad_requests_are_refused_by_name(three):
    with pytest.raises(InvalidInput, match=r"^compare at least 2 distinct judges; got \['good'\]$"):
        judges.compare_judges(three, SYSTEM, "cmp", ["good"])
    with pytest.raises(InvalidInput, match=r"^compare at least 2 distinct judges; got \['good', 'good'\]$"):
        judges.compare_judges(three, SYSTEM, "cmp", ["good", "good"])
