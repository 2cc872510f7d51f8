"""Ensemble judges: three judges on a loopback OpenAI-compatible server, scripted per prompt, combined by
each rule; the ensemble is stored, cached and calibrated like any judge, keeps its members' answers, fails
a pair a member must be asked again about, and refuses bad members by name."""

from __future__ import annotations

import json

import pytest
from llm_server import LLMServer, error, prompt_of, reply
from sqlalchemy import select

from annotate_app.judges import Backend, combine_grades
from annotate_app.services import judges
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.store.models import JudgeLabel, MachineJudge

GRADES = {"A": 2, "B": 2, "C": 0}  # each member's grade of every pair, by the prompt's first line
DOWN: set[str] = set()  # members whose server answers 503


def script(body: dict, attempt: int):
    member = prompt_of(body).split("\n", 1)[0]
    if member in DOWN:
        return error(503)
    return reply(json.dumps({"grade": GRADES[member], "reason": f"member {member}"}))


@pytest.mark.parametrize(
    ("grades", "majority", "mean", "least"),
    [
        ([2, 2, 0], 2, 1, 0),  # mean 4/3 rounds to 1
        ([0, 1, 2, 3], 0, 2, 0),  # a tie goes to the lowest grade; mean 1.5 rounds half up
        ([3, 3], 3, 3, 3),
        ([1, 2], 1, 2, 1),
    ],
)
def test_combine_rules(grades, majority, mean, least):
    assert [combine_grades(grades, r) for r in ("majority", "mean", "min")] == [majority, mean, least]


@pytest.fixture
def members(db):
    from annotate_app.services.demo import load_demo

    load_demo(db, labelled=True)
    DOWN.clear()
    with LLMServer(script=script) as llm:
        for member in GRADES:
            prompt = f"{member}\n{{{{query}}}}\n=====\n{{{{document}}}}"
            judges.add_judge(
                db,
                SYSTEM,
                "demo-review",
                member,
                backend="openai",
                base_url=llm.url,
                model="m",
                prompt=prompt,
            )
        yield db, llm


def _labels(db, name: str) -> list[JudgeLabel]:
    with db.read() as s:
        judge_id = s.scalar(select(MachineJudge.id).where(MachineJudge.name == name))
        return list(
            s.scalars(select(JudgeLabel).where(JudgeLabel.judge_id == judge_id).order_by(JudgeLabel.id))
        )


@pytest.mark.parametrize(("combine", "grade"), [("majority", 2), ("mean", 1), ("min", 0)])
def test_an_ensemble_is_run_stored_cached_and_calibrated_like_any_judge(members, combine, grade):
    db, llm = members
    info = judges.add_judge(
        db, SYSTEM, "demo-review", "ens", backend="ensemble", members=["A", "B", "C"], combine=combine
    )
    assert (info.backend, info.model, dict(info.params)) == (
        Backend.ENSEMBLE,
        f"{combine} of A,B,C",
        {"members": ["A", "B", "C"], "combine": combine},
    )
    report = judges.run_judge(db, SYSTEM, "demo-review", "ens", pairs="all")
    assert (report.pairs, report.sent, report.failed) == (12, 12, 0)
    assert len(llm.prompts()) == 36  # each member asked once per pair
    stored = _labels(db, "ens")
    assert [x.grade for x in stored] == [grade] * 12
    provenance = json.loads(stored[0].raw_response)  # the members' answers
    assert [(m["judge"], m["grade"], m["reason"]) for m in provenance] == [
        ("A", 2, "member A"),
        ("B", 2, "member B"),
        ("C", 0, "member C"),
    ]
    assert list(stored[0].sample_grades) == [2, 2, 0] and stored[0].samples == 3
    assert stored[0].confidence == pytest.approx(sum(g == grade for g in (2, 2, 0)) / 3)
    again = judges.run_judge(db, SYSTEM, "demo-review", "ens", pairs="all")
    assert (again.sent, again.cached, len(llm.prompts())) == (0, 12, 36)  # cached: nothing is sent
    (cal,) = [c for c in judges.calibrate(db, SYSTEM, "demo-review") if c.name == "ens"]
    assert cal.n_pairs == 12
    assert judges.judge_qrels(db, SYSTEM, "demo-review", "ens").relevance.tolist() == [grade] * 12


def test_a_member_the_server_failed_fails_the_pair_until_asked_again(members):
    db, llm = members
    judges.add_judge(db, SYSTEM, "demo-review", "ens", backend="ensemble", members=["A", "C"])
    DOWN.add("C")
    report = judges.run_judge(db, SYSTEM, "demo-review", "ens", pairs="sample:2")
    assert report.failed == 2 and report.failures[0][2].startswith("member C: ")
    DOWN.clear()
    report = judges.run_judge(db, SYSTEM, "demo-review", "ens", pairs="all")
    assert (report.sent, report.failed) == (12, 0)  # the failed pairs were not cached
    assert {x.grade for x in _labels(db, "ens") if x.failure is None} == {0}  # majority of 2 and 0: a tie


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"members": ["A"]}, "an ensemble judge needs at least 2 distinct members; got ['A']"),
        ({"members": ["A", "A"]}, "an ensemble judge needs at least 2 distinct members; got ['A', 'A']"),
        ({"members": "A,B"}, "an ensemble judge needs members: a list of judge names; got 'A,B'"),
        ({"members": ["A", "Z"]}, "ensemble member 'Z' is no other judge of the project"),
        ({"members": ["A", "ens"]}, "ensemble member 'ens' is no other judge of the project"),
        (
            {"members": ["A", "copy"]},
            "ensemble member 'copy' has backend 'replay': members must be judges that run",
        ),
        (
            {"members": ["A", "B"], "combine": "max"},
            "combine must be one of 'majority', 'mean', 'min'; got 'max'",
        ),
    ],
)
def test_bad_members_are_refused_by_name(members, options, message):
    db, _ = members
    line = json.dumps({"query_id": "q1", "doc_id": "D1", "grade": 1}) + "\n"
    judges.import_labels(db, SYSTEM, "demo-review", "copy", line.encode(), filename="copy.jsonl")
    with pytest.raises(InvalidInput) as refused:
        judges.add_judge(db, SYSTEM, "demo-review", "ens", backend="ensemble", **options)
    assert str(refused.value) == message


def test_members_belong_to_ensembles_only_and_cannot_change(members):
    db, _ = members
    with pytest.raises(InvalidInput, match=r"^a lexical judge takes no members or combine; they are for"):
        judges.add_judge(db, SYSTEM, "demo-review", "lex", backend="lexical", members=["A", "B"])
    judges.add_judge(db, SYSTEM, "demo-review", "ens", backend="ensemble", members=["A", "B"])
    judges.add_judge(db, SYSTEM, "demo-review", "ens", backend="ensemble", members=["A", "B"])  # the same
    with pytest.raises(Conflict, match="already exists in project 'demo-review' with other settings"):
        judges.add_judge(db, SYSTEM, "demo-review", "ens", backend="ensemble", members=["A", "C"])


QUOTES = {"A": (0, 8), "B": (12, 20), "C": (30, 36)}  # each member's quote: these characters of the document
QUOTED: dict[str, tuple[str, tuple[int, int]]] = {}  # quote → (member, where it first occurs in the text)


def quoting(body: dict, attempt: int):
    """Each member grades as `GRADES` says and quotes the document's characters `QUOTES` names."""
    member, rest = prompt_of(body).split("\n", 1)
    text = rest.split("=====\n", 1)[1].split("\n\n", 1)[1]  # the document shown is its title, then its text
    start, end = QUOTES[member]
    quote = text[start:end]
    QUOTED[quote] = (member, (text.index(quote), text.index(quote) + len(quote)))
    answer = {"grade": GRADES[member], "reason": f"member {member}", "evidence": [quote]}
    return reply(json.dumps(answer, ensure_ascii=False))


@pytest.mark.parametrize(("combine", "agreeing"), [("majority", "AB"), ("min", "C"), ("mean", "")])
def test_an_ensemble_gives_the_evidence_of_the_members_that_agree_with_it(db, combine, agreeing):
    """Majority (2): A and B agree, their passages are the ensemble's, C's (grade 0) is left out; min (0): C
    alone; mean (1): no member agrees, no evidence. Every member's quote stays in the provenance."""
    from annotate_app.judges import merge_spans
    from annotate_app.services.demo import load_demo

    load_demo(db, labelled=True)
    QUOTED.clear()
    with LLMServer(script=quoting) as llm:
        prompt = "{{query}}\n=====\n{{document}}"
        for member in GRADES:
            judges.add_judge(
                db, SYSTEM, "demo-review", member, backend="openai", base_url=llm.url, model="m",
                prompt=f"{member}\n{prompt}",
            )  # fmt: skip
        judges.add_judge(
            db, SYSTEM, "demo-review", "ens", backend="ensemble", members=list(GRADES), combine=combine
        )
        report = judges.run_judge(db, SYSTEM, "demo-review", "ens", pairs="sample:3")
    assert report.failed == 0
    stored = _labels(db, "ens")
    assert len(stored) == 3
    for label in stored:
        quotes = label.evidence_quotes or []
        assert [QUOTED[q["quote"]][0] for q in quotes] == list(agreeing)  # whose quotes, in member order
        located = [QUOTED[q["quote"]][1] for q in quotes]
        assert [(q["start"], q["end"], q["method"]) for q in quotes] == [(*x, "exact") for x in located]
        assert [tuple(x) for x in label.evidence or []] == list(merge_spans(located))  # their union
        provenance = json.loads(label.raw_response)
        assert [QUOTED[m["evidence"][0]][0] for m in provenance] == ["A", "B", "C"]  # every quote kept
