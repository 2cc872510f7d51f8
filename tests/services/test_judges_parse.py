"""The reply parser, the majority of samples, the prompt template and the interface's checks: exact tables."""

from __future__ import annotations

import json

import pytest

from annotate_app.judges import (
    ASPECTS_TEMPLATE,
    DEFAULT_TEMPLATE,
    Backend,
    FailureKind,
    Grade,
    GradeScale,
    JudgeResult,
    JudgeTask,
    Pair,
    PromptTemplate,
    Reply,
    RetryPolicy,
    majority,
    parse_reply,
)
from annotate_app.judges._parse import MAX_QUOTE_CHARS, MAX_QUOTES

SCALE = GradeScale.default()
NO = FailureKind.NO_GRADE
OUT = FailureKind.OUT_OF_SCALE
AMB = FailureKind.AMBIGUOUS
NOTHING = "no grade in the reply (no JSON object and no 'final score:' line)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"grade": 2, "reason": "half of it"}', Reply(grade=2, reason="half of it")),
        ('  {"grade": 0}\n', Reply(grade=0)),
        ('{"reason": "first", "grade": 3}', Reply(grade=3, reason="first")),
        ('{"grade": "1", "reason": "quoted"}', Reply(grade=1, reason="quoted")),
        ('{"grade": 1, "reason": ["a", "b"]}', Reply(grade=1, reason='["a", "b"]')),
        ('```json\n{"grade": 3, "reason": "exact"}\n```', Reply(grade=3, reason="exact")),
        ('Sure.\n```\n{"grade": 1, "reason": "topic"}\n```\nHope it helps.', Reply(grade=1, reason="topic")),
        ('```JSON\n{"grade": 2}```', Reply(grade=2)),
        ("Final score: 2", Reply(grade=2)),
        ("On topic, no answer.\nFINAL SCORE: 1", Reply(grade=1, reason="On topic, no answer.")),
        ("final score:3", Reply(grade=3)),
        ("**Final score:** 3", Reply(grade=3)),
        ("## Final Score: 0.", Reply(grade=0)),
        ("Final score: 2\nfinal score: 2", Reply(grade=2)),
        ('{"relevance": 2}\nFinal score: 1', Reply(grade=1, reason='{"relevance": 2}')),
        (
            "Final score: 1\nFinal score: 3",
            Reply(
                grade=None,
                failure=AMB,
                error="the reply gives different grades: 1 ('final score' line), 3 ('final score' line)",
            ),
        ),
        # JSON after a paragraph of prose (a reasoning model's answer once its <think> block is removed)
        (
            'The document names the fee but not the steps.\n\n{"grade": 2, "reason": "partly"}',
            Reply(grade=2, reason="partly"),
        ),
        ('{"grade": 2} and that is all', Reply(grade=2)),
        ('Draft: {"grade": 1}. On reflection: {"grade": 1, "reason": "same"}', Reply(grade=1)),
        (
            'Draft: {"grade": 1}. On reflection: {"grade": 3, "reason": "full"}',
            Reply(grade=None, failure=AMB, error="the reply gives different grades: 1 (JSON), 3 (JSON)"),
        ),
        (
            '```json\n{"grade": 2}\n```\n##final score: 3',
            Reply(
                grade=None,
                failure=AMB,
                error="the reply gives different grades: 2 (JSON), 3 ('final score' line)",
            ),
        ),
        ('{"grade": 2}\n##final score: 2', Reply(grade=2)),
        # UMBRELA's answer format (castorini/umbrela: the prompt ends with "##final score:")
        ("##final score: 2", Reply(grade=2)),
        # the aspects prompt's reply: the aspects are kept with the grade
        (
            '{"intent": 3, "trust": 1, "reason": "exact steps, unsourced", "grade": 2}',
            Reply(grade=2, reason="exact steps, unsourced", aspects={"intent": 3, "trust": 1}),
        ),
        (
            '{"grade": 7, "reason": "great"}',
            Reply(grade=None, reason="great", failure=OUT, error="grade 7 is not on the scale (0, 1, 2, 3)"),
        ),
        (
            "Final score: -1",
            Reply(grade=None, failure=OUT, error="grade -1 is not on the scale (0, 1, 2, 3)"),
        ),
        ('{"grade": 2.5}', Reply(grade=None, failure=NO, error="grade is not an integer: 2.5")),
        ('{"grade": 2.0}', Reply(grade=None, failure=NO, error="grade is not an integer: 2.0")),
        ('{"grade": true}', Reply(grade=None, failure=NO, error="grade is not an integer: True")),
        ('{"grade": null}', Reply(grade=None, failure=NO, error="grade is not an integer: None")),
        ('{"grade": "two"}', Reply(grade=None, failure=NO, error="grade is not an integer: 'two'")),
        (
            '{"relevance": 2}',
            Reply(grade=None, failure=NO, error="no grade in the reply (a JSON object without 'grade')"),
        ),
        ("I would say 2.", Reply(grade=None, failure=NO, error=NOTHING)),
        ("Final score: 2/3", Reply(grade=None, failure=NO, error=NOTHING)),
        ("The final score: 2 is my view", Reply(grade=None, failure=NO, error=NOTHING)),
        ("[2]", Reply(grade=None, failure=NO, error=NOTHING)),
        ("", Reply(grade=None, failure=NO, error=NOTHING)),
    ],
)
def test_parse_reply(text, expected):
    assert parse_reply(text, SCALE) == expected


def test_parse_reply_uses_the_scale_given():
    binary = GradeScale.from_labels([(0, "no"), (1, "yes")])
    assert parse_reply('{"grade": 2}', binary).error == "grade 2 is not on the scale (0, 1)"
    assert parse_reply('{"grade": 1}', binary).grade == 1


@pytest.mark.parametrize(
    ("grades", "grade", "confidence", "reason"),
    [
        ([2], 2, 1.0, "r0"),
        ([2, 3, 2], 2, 2 / 3, "r0"),
        ([3, 1, 1, 3, 2], 1, 0.4, "r1"),  # a tie goes to the lowest tied grade
        ([None, 3, None, None], 3, 0.25, "r1"),  # unreadable samples count in the share
        ([None, None], None, 0.0, ""),
    ],
)
def test_majority(grades, grade, confidence, reason):
    replies = [
        Reply(grade=g, reason=f"r{i}") if g is not None else Reply(grade=None, failure=NO)
        for i, g in enumerate(grades)
    ]
    vote = majority(replies)
    assert (vote.grade, vote.confidence, vote.reason) == (grade, confidence, reason)


def test_default_prompt_holds_the_pair_the_scale_and_the_guidelines():
    task = JudgeTask(guidelines="  Only the help centre counts.  ")
    text = PromptTemplate().render(
        Pair(query_id="q", query="换电池", doc_id="d", document="先关机 {{query}}"), task
    )
    assert "<query>\n换电池\n</query>" in text
    assert "<document>\n先关机 {{query}}\n</document>" in text  # substituted once, never re-expanded
    assert "Only the help centre counts." in text
    assert SCALE.describe() in text
    assert '{"grade": <one of the grade numbers above>' in text
    assert "(none)" in PromptTemplate().render(
        Pair(query_id="q", query="x", doc_id="d", document="y"), JudgeTask()
    )


def test_prompt_hash_changes_with_each_instruction_but_not_with_the_pair():
    t, task = PromptTemplate(), JudgeTask()
    base = t.prompt_hash(task)
    assert base == PromptTemplate().prompt_hash(JudgeTask())
    assert base != PromptTemplate(text=t.text + " ").prompt_hash(task)
    assert base != PromptTemplate(max_document_chars=100).prompt_hash(task)
    assert base != t.prompt_hash(JudgeTask(guidelines="g"))
    other = GradeScale.from_labels([(0, "Not relevant"), (1, "Relevant")])
    assert base != t.prompt_hash(JudgeTask(scale=other))
    assert len(base) == 64 and t.sha256 != base


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{{document}}", "template must contain {{query}}; got '{{document}}'"),
        ("{{query}}", "template must contain {{document}}; got '{{query}}'"),
        (
            "{{query}} {{document}} {{doc}}",
            "template has an unknown placeholder {{doc}}; known: {{query}}, {{document}}, {{scale}}, "
            "{{guidelines}}",
        ),
    ],
)
def test_bad_templates_are_refused(text, message):
    with pytest.raises(ValueError) as info:
        PromptTemplate(text=text)
    assert str(info.value) == message


def test_template_file_errors_name_the_path(tmp_path):
    with pytest.raises(ValueError, match="template file '.*missing.txt' cannot be read"):
        PromptTemplate.from_file(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match=r"max_document_chars must be an int >= 1; got 0"):
        PromptTemplate(max_document_chars=0)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Grade(value=True, label="x"), "grade value must be an int; got True"),
        (lambda: Grade(value=1, label=" "), "grade label must be a non-empty string; got ' '"),
        (lambda: GradeScale.from_labels([(0, "a")]), "grades must hold at least 2 grades; got 1"),
        (
            lambda: GradeScale.from_labels([(1, "a"), (0, "b")]),
            "grades must have distinct values in increasing order; got [1, 0]",
        ),
        (
            lambda: Pair(query_id="", query="q", doc_id="d", document=""),
            "query_id must be a non-empty string; got ''",
        ),
        (
            lambda: Pair(query_id="q", query=None, doc_id="d", document=""),  # type: ignore[arg-type]
            "query must be a string; got NoneType None",
        ),
        (lambda: RetryPolicy(max_attempts=0), "max_attempts must be an int >= 1; got 0"),
        (lambda: RetryPolicy(backoff_s=float("nan")), "backoff_s must be a finite number >= 0; got nan"),
    ],
)
def test_interface_checks_name_the_parameter_and_the_value(build, message):
    with pytest.raises(ValueError) as info:
        build()
    assert str(info.value) == message


def test_a_result_has_a_grade_or_a_failure_and_round_trips():
    with pytest.raises(ValueError, match="a result has a grade or a failure"):
        JudgeResult(query_id="q", doc_id="d", judge="j", backend=Backend.OPENAI, model="m", grade=None)
    result = JudgeResult(
        query_id="q",
        doc_id="d",
        judge="j",
        backend=Backend.OPENAI,
        model="m",
        grade=None,
        failure=FailureKind.TIMEOUT,
        error="timed out",
        sample_grades=(None, 2),
    )
    assert JudgeResult.from_dict(result.to_dict()) == result
    assert result.to_dict()["failure"] == "timeout"


QUOTE = "Hold the power button for ten seconds."


@pytest.mark.parametrize(
    ("text", "evidence"),
    [
        (json.dumps({"grade": 3, "evidence": [QUOTE, "Then release it."]}), (QUOTE, "Then release it.")),
        ("```json\n" + json.dumps({"grade": 3, "evidence": [QUOTE]}) + "\n```", (QUOTE,)),
        ("It answers.\n" + json.dumps({"grade": 3, "evidence": [QUOTE]}) + "\nDone.", (QUOTE,)),
        (json.dumps({"grade": 3, "evidence": QUOTE}), (QUOTE,)),  # one quote as a string
        (json.dumps({"grade": 3, "evidence": [f"  {QUOTE}\n", "", 7, None, ["x"]]}), (QUOTE,)),
        (json.dumps({"grade": 3, "evidence": {"q": QUOTE}}), ()),  # not a list: no evidence, still a grade
        (json.dumps({"grade": 3, "evidence": []}), ()),
        ('{"grade": 3}', ()),
        ("Final score: 3", ()),
    ],
)
def test_evidence_is_read_from_every_answer_shape_and_never_costs_the_grade(text, evidence):
    reply = parse_reply(text, SCALE)
    assert (reply.grade, reply.evidence, reply.failure) == (3, evidence, None)
    assert "evidence" not in reply.aspects


def test_evidence_is_capped_and_the_majority_keeps_the_winners():
    many = parse_reply(
        json.dumps({"grade": 1, "evidence": [f"q{i}" for i in range(30)] + ["x" * 3000]}), SCALE
    )
    assert many.evidence == tuple(f"q{i}" for i in range(MAX_QUOTES))
    long = parse_reply(json.dumps({"grade": 1, "evidence": ["x" * 3000]}), SCALE)
    assert long.evidence == ("x" * MAX_QUOTE_CHARS,)
    vote = majority([Reply(grade=1, evidence=("a",)), Reply(grade=2, evidence=("b",)), Reply(grade=2)])
    assert (vote.grade, vote.evidence) == (2, ("b",))


def test_both_built_in_prompts_ask_for_the_evidence():
    pair = Pair(query_id="q", query="reset", doc_id="d", document="Hold it.")
    for template in (DEFAULT_TEMPLATE, ASPECTS_TEMPLATE):
        text = PromptTemplate(text=template).render(pair, JudgeTask())
        assert (
            'copy into "evidence" the passages of the document that answer the query, word for word' in text
        )
        assert '"evidence": ["<a passage copied from the document>", ...]' in text


def test_a_result_with_evidence_round_trips():
    result = JudgeResult(
        query_id="q",
        doc_id="d",
        judge="j",
        backend=Backend.REPLAY,
        model="m",
        grade=2,
        evidence=("a quote",),
        evidence_spans=((0, 4), (9, 12)),
    )
    assert JudgeResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
