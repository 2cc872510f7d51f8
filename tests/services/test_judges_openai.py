"""The OpenAI-compatible judge against a real HTTP server on 127.0.0.1 (tests/helpers/llm_server.py), scripted
per request: every case ends in a recorded failure or a retried success, and the server saw exactly the
requests expected (nothing lost, nothing duplicated)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from llm_server import Answer, LLMServer, error, honour_n, prompt_of, reply

from annotate_app.judges import (
    FailureKind,
    JudgeClient,
    JudgeTask,
    OpenAIJudge,
    Pair,
    PromptTemplate,
    RetryPolicy,
)

FAST = RetryPolicy(max_attempts=3, backoff_s=0.01, max_backoff_s=0.02)
TASK = JudgeTask(guidelines="Judge for a customer of the help centre.")


@pytest.fixture
def llm():
    with LLMServer() as server:
        yield server


def pair(i: int | str, document: str = "") -> Pair:
    return Pair(query_id=f"q{i}", query=f"query {i}", doc_id=f"d{i}", document=document or f"document {i}")


def judge_for(server: LLMServer, **options: Any) -> OpenAIJudge:
    options.setdefault("retry", FAST)
    options.setdefault("timeout_s", 5.0)
    return OpenAIJudge(server.url, "test-model", api_key_env="QRELFORGE_TEST_NO_KEY", **options)


def test_one_pair_speaks_the_chat_completions_protocol(llm, monkeypatch):
    monkeypatch.setenv("QRELFORGE_TEST_KEY", "sk-secret")
    with OpenAIJudge(llm.url, "test-model", api_key_env="QRELFORGE_TEST_KEY", max_tokens=64) as judge:
        result = judge.judge(pair(1), TASK)
    assert len(llm.seen) == 1
    seen = llm.seen[0]
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["Authorization"] == "Bearer sk-secret"
    assert seen.body is not None
    assert seen.body["model"] == "test-model"
    assert seen.body["temperature"] == 0.0
    assert seen.body["max_tokens"] == 64
    assert "n" not in seen.body
    assert [m["role"] for m in seen.body["messages"]] == ["user"]
    prompt = seen.body["messages"][0]["content"]
    assert "query 1" in prompt and "document 1" in prompt and "help centre" in prompt
    assert "3 = Fully answers" in prompt
    assert (result.grade, result.reason, result.confidence, result.failure) == (2, "scripted", 1.0, None)
    assert (result.prompt_tokens, result.completion_tokens, result.requests, result.retries) == (11, 7, 1, 0)
    assert result.model == "test-model" and result.judge == "openai:test-model"
    assert result.raw_response == '{"grade": 2, "reason": "scripted"}'
    assert result.prompt_hash == judge.template.prompt_hash(TASK)
    assert result.sample_grades == (2,) and result.samples == 1
    assert "sk-secret" not in repr(judge) and "sk-secret" not in json.dumps(result.to_dict())


def test_no_key_no_authorization_header(llm, monkeypatch):
    monkeypatch.delenv("QRELFORGE_JUDGE_API_KEY", raising=False)
    with OpenAIJudge(llm.url, "m") as judge:
        assert judge.judge(pair(1), TASK).ok
    assert "Authorization" not in llm.seen[0].headers


@pytest.mark.parametrize(
    ("answer", "kind", "error", "raw"),
    [
        (
            Answer(raw=b'{"choices": [{"message": '),
            FailureKind.BAD_RESPONSE,
            "response body is not JSON",
            '{"choices": [{"message": ',
        ),
        (
            Answer(raw=b'{"id": "x", "choices": []}'),
            FailureKind.BAD_RESPONSE,
            "response has no choices",
            None,
        ),
        (reply("It looks relevant to me."), FailureKind.NO_GRADE, "no grade in the reply", None),
        (
            reply('{"grade": 5, "reason": "very"}'),
            FailureKind.OUT_OF_SCALE,
            "grade 5 is not on the scale (0, 1, 2, 3)",
            None,
        ),
        (
            error(400, body=b'{"error": "bad model"}'),
            FailureKind.HTTP_ERROR,
            "HTTP 400",
            '{"error": "bad model"}',
        ),
        (error(404), FailureKind.HTTP_ERROR, "HTTP 404", None),
    ],
    ids=["malformed-json-body", "no-choices", "no-grade", "out-of-scale", "http-400", "http-404"],
)
def test_a_bad_answer_is_one_recorded_failure_and_is_not_retried(llm, answer, kind, error, raw):
    llm.script = lambda body, attempt: answer
    with judge_for(llm) as judge:
        result = judge.judge(pair(1), TASK)
    assert len(llm.seen) == 1
    assert (result.grade, result.confidence, result.failure) == (None, None, kind)
    assert error in result.error
    expected_raw = (
        raw if raw is not None else (answer.contents[0] if answer.raw is None else answer.raw.decode())
    )
    assert result.raw_response == expected_raw
    assert (result.requests, result.retries) == (1, 0)


def test_429_waits_for_retry_after_then_succeeds(llm):
    llm.script = lambda body, attempt: (
        error(429, retry_after="1") if attempt == 1 else honour_n(body, attempt)
    )
    with judge_for(llm) as judge:
        result = judge.judge(pair(1), TASK)
    assert len(llm.seen) == 2
    assert llm.seen[1].at - llm.seen[0].at >= 0.95
    assert (result.grade, result.requests, result.retries, result.failure) == (2, 2, 1, None)
    assert result.latency_s >= 0.95


def test_500_then_success(llm):
    llm.script = lambda body, attempt: error(500) if attempt == 1 else honour_n(body, attempt)
    with judge_for(llm) as judge:
        result = judge.judge(pair(1), TASK)
    assert len(llm.seen) == 2
    assert (result.grade, result.requests, result.retries) == (2, 2, 1)


def test_500_forever_stops_after_the_last_attempt(llm):
    llm.script = lambda body, attempt: error(503, body=b"overloaded")
    with judge_for(llm) as judge:
        result = judge.judge(pair(1), TASK)
    assert len(llm.seen) == 3
    assert result.failure is FailureKind.HTTP_ERROR and result.grade is None
    assert result.error == "HTTP 503: 'overloaded' (after 3 attempts)"
    assert (result.raw_response, result.requests, result.retries) == ("overloaded", 3, 2)


def test_a_reply_slower_than_the_timeout_is_a_timeout_after_every_attempt(llm):
    llm.script = lambda body, attempt: Answer(delay_s=1.0)
    with judge_for(llm, timeout_s=0.2, retry=RetryPolicy(max_attempts=2, backoff_s=0.01)) as judge:
        result = judge.judge(pair(1), TASK)
    assert len(llm.seen) == 2
    assert result.failure is FailureKind.TIMEOUT
    assert result.error.startswith("timed out") and result.error.endswith("(after 2 attempts)")
    assert (result.requests, result.retries, result.grade) == (2, 1, None)


def test_a_slow_reply_then_a_fast_one_is_a_retried_success(llm):
    llm.script = lambda body, attempt: Answer(delay_s=1.0) if attempt == 1 else honour_n(body, attempt)
    with judge_for(llm, timeout_s=0.2) as judge:
        result = judge.judge(pair(1), TASK)
    assert len(llm.seen) == 2
    assert (result.grade, result.retries) == (2, 1)


def test_no_server_is_a_connection_error(llm):
    url = llm.url
    llm.stop()
    with OpenAIJudge(url, "m", retry=RetryPolicy(max_attempts=2, backoff_s=0.01), timeout_s=1) as judge:
        result = judge.judge(pair(1), TASK)
    assert result.failure is FailureKind.CONNECTION
    assert "ConnectionRefusedError" in result.error and result.requests == 2


def test_a_kept_alive_connection_the_server_closed_is_replaced_without_a_retry(llm):
    llm.script = lambda body, attempt: Answer(hang_up=True)
    with judge_for(llm) as judge:
        results = [judge.judge(pair(i), TASK) for i in range(3)]
    assert len(llm.seen) == 3
    assert [(r.grade, r.requests, r.retries) for r in results] == [(2, 1, 0)] * 3


def test_samples_in_one_request_when_the_server_honours_n(llm):
    grades = ('{"grade": 2}', '{"grade": 3, "reason": "all"}', "Final score: 2")
    llm.script = lambda body, attempt: reply(*grades[: body["n"]])
    with judge_for(llm, samples=3, temperature=0.7) as judge:
        result = judge.judge(pair(1), TASK)
    assert [s.body["n"] for s in llm.seen if s.body] == [3]
    assert (result.grade, result.confidence, result.sample_grades) == (2, 2 / 3, (2, 3, 2))
    assert (result.samples, result.prompt_tokens, result.completion_tokens) == (3, 11, 7)
    assert json.loads(result.raw_response) == list(grades)


def test_samples_by_repeated_requests_when_the_server_ignores_n(llm):
    answers = {1: "Final score: 1", 2: '{"grade": 3}', 3: '{"grade": 1, "reason": "related"}'}
    llm.script = lambda body, attempt: reply(answers[attempt])
    with judge_for(llm, samples=3) as judge:
        result = judge.judge(pair(1), TASK)
    assert [s.body.get("n") for s in llm.seen if s.body] == [3, 2, None]
    assert (result.grade, result.confidence, result.sample_grades, result.requests) == (
        1,
        2 / 3,
        (1, 3, 1),
        3,
    )
    assert (result.prompt_tokens, result.completion_tokens) == (33, 21)


def test_samples_without_a_grade_fail_and_keep_every_sample(llm):
    llm.script = lambda body, attempt: reply("no idea", '{"grade": 9}')
    with judge_for(llm, samples=2) as judge:
        result = judge.judge(pair(1), TASK)
    assert result.failure is FailureKind.OUT_OF_SCALE
    assert (
        result.error
        == "no sample has a grade on the scale; sample 2: grade 9 is not on the scale (0, 1, 2, 3)"
    )
    assert result.sample_grades == (None, None) and json.loads(result.raw_response) == [
        "no idea",
        '{"grade": 9}',
    ]


def test_long_documents_are_cut_and_the_prompt_says_so(llm):
    document = "a" * 150 + "TAIL-MARKER"
    with judge_for(llm, template=PromptTemplate(max_document_chars=150)) as judge:
        judge.judge(pair(1, document=document), TASK)
    prompt = llm.prompts()[0]
    assert "a" * 150 in prompt and "TAIL-MARKER" not in prompt
    assert "[The document was cut: only its first 150 of 161 characters are shown.]" in prompt


def test_a_custom_template_file_is_sent_as_written(llm, tmp_path):
    path = tmp_path / "prompt.txt"
    path.write_text(
        'Q={{query}}\nD={{document}}\nS={{scale}}\nG={{guidelines}}\n{"grade": N}', encoding="utf-8"
    )
    template = PromptTemplate.from_file(path)
    with judge_for(llm, template=template) as judge:
        result = judge.judge(pair(1), JudgeTask())
    scale = "3 = Fully answers: The document is about the query and gives a complete, direct answer to it."
    assert llm.prompts()[0].startswith(f"Q=query 1\nD=document 1\nS={scale}\n")
    assert llm.prompts()[0].endswith('G=(none)\n{"grade": N}')
    assert (
        result.prompt_hash == template.prompt_hash(JudgeTask()) != PromptTemplate().prompt_hash(JudgeTask())
    )


def test_dry_run_renders_one_prompt_and_sends_nothing(llm):
    with judge_for(llm, samples=2) as judge:
        shown = JudgeClient(judge, TASK).dry_run(pair(i) for i in range(5))
    assert llm.seen == []
    request = json.loads(shown.request)
    assert request["n"] == 2 and request["model"] == "test-model"
    assert request["messages"][0]["content"] == shown.text
    assert "query 0" in shown.text and "document 0" in shown.text


BEHAVIOURS = ["ok", "malformed", "no-grade", "429-then-ok", "500-then-ok", "500-forever", "slow-forever"]
EXPECTED = {  # behaviour -> (requests the server must see, failure kind of the result)
    "ok": (1, None),
    "malformed": (1, FailureKind.BAD_RESPONSE),
    "no-grade": (1, FailureKind.NO_GRADE),
    "429-then-ok": (2, None),
    "500-then-ok": (2, None),
    "500-forever": (3, FailureKind.HTTP_ERROR),
    "slow-forever": (3, FailureKind.TIMEOUT),
}


def _mixed(body: dict[str, Any], attempt: int) -> Answer:
    behaviour = next(b for b in BEHAVIOURS if f"[{b}]" in prompt_of(body))
    if behaviour == "malformed":
        return Answer(raw=b"<html>gateway</html>")
    if behaviour == "no-grade":
        return reply("Relevant, I suppose.")
    if behaviour == "429-then-ok" and attempt == 1:
        return error(429, retry_after="0.2")
    if behaviour == "500-then-ok" and attempt == 1 or behaviour == "500-forever":
        return error(500)
    if behaviour == "slow-forever":
        return Answer(delay_s=0.8)
    return honour_n(body, attempt)


def test_a_mixed_batch_loses_nothing_and_duplicates_nothing(llm):
    llm.script = _mixed
    pairs = [
        Pair(query_id=f"q{i}", query=f"query {i} [{b}]", doc_id=f"d{i}", document=f"text {i}")
        for i, b in enumerate(BEHAVIOURS * 6)
    ]
    with judge_for(llm, timeout_s=0.25) as judge:
        client = JudgeClient(judge, TASK, workers=6, max_in_flight=10)
        results = list(client.run(iter(pairs)))
    assert sorted(r.query_id for r in results) == sorted(p.query_id for p in pairs)
    behaviour = {p.query_id: p.query.split("[")[1].rstrip("]") for p in pairs}
    for r in results:
        want_requests, want_kind = EXPECTED[behaviour[r.query_id]]
        assert (r.failure, r.requests) == (want_kind, want_requests), r
        assert (r.grade is None) == (want_kind is not None)
    want = Counter({p.query: EXPECTED[behaviour[p.query_id]][0] for p in pairs})
    assert Counter(llm.prompts()) == Counter({judge.template.render(p, TASK): want[p.query] for p in pairs})
    counts = client.counts
    assert counts.done == len(pairs) and counts.judged == len(pairs) and counts.cached == 0
    assert counts.sent == len(llm.seen) == sum(want.values())
    assert counts.retries == sum(want.values()) - len(pairs)
    assert counts.failed == 6 * sum(1 for b in BEHAVIOURS if EXPECTED[b][1] is not None)
    assert counts.prompt_tokens == 11 * sum(1 for r in results if r.ok or r.failure is FailureKind.NO_GRADE)
