"""The OpenAI-compatible judge against the reply shapes and failures real servers send (vLLM, llama.cpp,
SGLang, OpenRouter, Groq, OpenAI, Azure), replayed by a real HTTP server on 127.0.0.1 with their own status
codes and headers. Each body is a fixture in tests/fixtures/llm/ whose source SOURCES.md names; the source is
cited again beside each case."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from llm_server import Answer, LLMServer, fixture, honour_n, prompt_of, replay, reply, with_texts

from annotate_app.judges import (
    Adaptation,
    FailureKind,
    JudgeClient,
    JudgeTask,
    MemoryCache,
    OpenAIJudge,
    Pair,
    RetryPolicy,
)

FAST = RetryPolicy(max_attempts=3, backoff_s=0.01, max_backoff_s=0.02)
TASK = JudgeTask()
THINK = fixture("vllm_think_in_content.json")["choices"][0]["message"]["content"]
THINK_BLOCK = THINK[: THINK.index("</think>") + len("</think>")]
DRAFTED = THINK_BLOCK.replace("Alright,", 'Draft: {"grade": 3}. Alright,')
ONLY_CLOSE = fixture("contents_only_close_think.json")
CHUNK = fixture("openrouter_reasoning_chunk.json")


@pytest.fixture
def llm():
    with LLMServer() as server:
        yield server


def judge_for(server: LLMServer, **options: Any) -> OpenAIJudge:
    options.setdefault("retry", FAST)
    options.setdefault("timeout_s", 5.0)
    return OpenAIJudge(server.url, "m", api_key_env="QRELFORGE_TEST_NO_KEY", **options)


def pair(i: int | str = 1) -> Pair:
    return Pair(query_id=f"q{i}", query=f"query {i}", doc_id=f"d{i}", document=f"document {i}")


def openrouter_reply(**texts: str) -> dict[str, Any]:
    """The OpenRouter chunk (spring-ai #5265) as a non-streamed reply: its delta is the message."""
    body = json.loads(json.dumps(CHUNK))
    choice = body["choices"][0]
    choice["message"] = choice.pop("delta")
    choice["finish_reason"] = "stop"
    return with_texts(body, **texts)


def envelope(message: dict[str, Any], **choice: Any) -> dict[str, Any]:
    """A chat completion around one message (the envelope of vllm #19839's body)."""
    body = fixture("vllm_answer_in_reasoning_content.json")
    body["choices"][0] = {"index": 0, "message": message, "logprobs": None, "finish_reason": "stop", **choice}
    return body


# ------------------------------------------------------------------------------------------ reasoning shapes
REASONING_CASES = {
    # vllm-project/vllm #19839: Qwen3 behind the reasoning parser with enable_thinking false puts the whole
    # reply in reasoning_content, content null: the answer is read from there.
    "vllm-answer-in-reasoning-content": (
        with_texts(
            fixture("vllm_answer_in_reasoning_content.json"),
            reasoning_content='{"grade": 2, "reason": "names the fee"}',
        ),
        (2, "reasoning_content", ""),
    ),
    # vllm-project/vllm #21130: no parser, <think>…</think> inside content; the draft grade inside the
    # reasoning is never read.
    "vllm-think-in-content": (
        with_texts(
            fixture("vllm_think_in_content.json"),
            content=DRAFTED + '\n\n{"grade": 1, "reason": "topic only"}',
        ),
        (1, "content", DRAFTED[len("<think>") : -len("</think>")].strip()),
    ),
    # tonyd2wild/...DGX-Spark #16 (DeepSeek V4) and sgl-project/sglang #8363 (Qwen3-Thinking): the chat
    # template opened <think>, only </think> arrives; everything before it is reasoning.
    "only-close-think-deepseek": (
        envelope(
            {
                "role": "assistant",
                "content": ONLY_CLOSE["deepseek_v4_raw_completion"].replace("391", '{"grade": 0}'),
            }
        ),
        (0, "content", ONLY_CLOSE["deepseek_v4_raw_completion"].split("</think>")[0]),
    ),
    "only-close-think-sglang": (
        envelope(
            {"role": "assistant", "content": ONLY_CLOSE["sglang_qwen3_thinking_format"].replace("42", "2")}
        ),
        (None, "content", "I need to think about this..."),
    ),
    # spring-projects/spring-ai #5265 (OpenRouter): reasoning in a separate "reasoning" field, answer in
    # content; the reasoning's own draft is never read.
    "openrouter-reasoning-field": (
        openrouter_reply(
            content="Final score: 3", reasoning='I first thought {"grade": 1}, but it answers fully.'
        ),
        (3, "content", 'I first thought {"grade": 1}, but it answers fully.'),
    ),
    # OpenRouterTeam/ai-sdk-provider #426: the whole answer arrives in "reasoning", content empty.
    "openrouter-answer-in-reasoning": (
        openrouter_reply(content="", reasoning='```json\n{"grade": 2}\n```'),
        (2, "reasoning", ""),
    ),
}


@pytest.mark.parametrize("case", list(REASONING_CASES))
def test_the_grade_comes_from_the_answer_and_the_reasoning_is_kept(llm, case):
    body, (grade, field, reasoning) = REASONING_CASES[case]
    llm.script = lambda request, attempt: replay(body)
    with judge_for(llm) as judge:
        result = judge.judge(pair(), TASK)
    if grade is None:  # "The answer is 2.": no JSON and no final score line, so no grade, and no guess
        assert result.failure is FailureKind.NO_GRADE and result.grade is None
    else:
        assert (result.grade, result.failure) == (grade, None)
    assert result.answer_field == field
    assert result.reasoning == reasoning
    assert len(llm.seen) == 1


def test_an_unclosed_think_block_is_no_answer_not_its_draft(llm):
    # vllm-project/vllm #21130's content cut before </think>: reasoning with a draft grade, no answer.
    content = THINK_BLOCK[: -len("</think>")] + ' So {"grade": 3}?'
    llm.script = lambda request, attempt: replay(
        with_texts(fixture("vllm_think_in_content.json"), content=content)
    )
    with judge_for(llm) as judge:
        result = judge.judge(pair(), TASK)
    assert (result.grade, result.failure) == (None, FailureKind.NO_GRADE)
    assert result.error == "the reply holds reasoning but no answer (the reasoning block was never closed)"
    assert result.reasoning.endswith('So {"grade": 3}?') and result.raw_response == ""


# ------------------------------------------------------------------------------------------------ failures
QUOTA_BODY = fixture("openai_insufficient_quota.json")
FAILURES = {
    # a llama.cpp-served model with max_tokens=10 (parameter report, SOURCES.md): finish_reason "length"
    "length": (
        replay(fixture("llamacpp_finish_length.json")),
        FailureKind.TRUNCATED,
        "cut at max_tokens=256 (finish_reason 'length'); raise --max-tokens",
        1,
    ),
    # BerriAI/litellm #8953 (Azure): finish_reason "content_filter", content null
    "content-filter": (
        replay(fixture("azure_content_filter.json")),
        FailureKind.CONTENT_FILTER,
        "the server's content filter withheld the reply (finish_reason 'content_filter')",
        1,
    ),
    # spring-projects/spring-ai #1178 (OpenAI's refusal field), the refusal text of OpenRouter's SDK docs
    "refusal": (
        replay(
            with_texts(
                fixture("openai_message_refusal_field.json"),
                content=None,
                refusal="I'm sorry, I cannot assist with that request",
            )
        ),
        FailureKind.REFUSAL,
        "the model refused: I'm sorry, I cannot assist with that request",
        1,
    ),
    # OpenRouter's documented finish_reason "error" (openrouter.ai errors-and-debugging; koog docs)
    "finish-error": (
        replay(
            {
                **fixture("vllm_answer_in_reasoning_content.json"),
                "choices": [fixture("openrouter_finish_error_choice.json")],
            }
        ),
        FailureKind.FINISH_ERROR,
        "the server ended the reply with an error: Provider returned error",
        1,
    ),
    # reVrost/go-openrouter #21: an error object in an HTTP 200 body, the provider's own error in metadata.raw
    "error-in-200": (
        replay(fixture("openrouter_provider_error.json"), 200),
        FailureKind.PROVIDER_ERROR,
        "error in an HTTP 200 body: Provider returned error: Response input messages must contain the word "
        "'json' in some form to use 'text.format' of type 'json_object'. (OpenAI)",
        1,
    ),
    # ChatGPTNextWeb/NextChat #4101: 429 insufficient_quota is never retried
    "insufficient-quota": (
        replay(QUOTA_BODY, 429),
        FailureKind.QUOTA,
        "HTTP 429: " + QUOTA_BODY["error"]["message"],
        1,
    ),
    # continuedev/continue #11580 (Groq, tokens per day): a Retry-After far over the cap stops at once
    "daily-rate-limit": (
        replay(fixture("groq_rate_limit_tpd.json"), 429, {"Retry-After": "1439"}),
        FailureKind.RATE_LIMITED,
        "HTTP 429 (Retry-After 1439 s): " + fixture("groq_rate_limit_tpd.json")["error"]["message"],
        1,
    ),
    # mostlygeek/llama-swap #146: llama-server still loading, retried with backoff until the bound
    "loading-forever": (
        replay(fixture("llamacpp_loading_model.json"), 503),
        FailureKind.HTTP_ERROR,
        "HTTP 503: Loading model (after 3 attempts)",
        3,
    ),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_each_failure_is_a_kind_of_its_own_with_the_servers_message(llm, case):
    answer, kind, error, requests = FAILURES[case]
    llm.script = lambda request, attempt: answer
    with judge_for(llm) as judge:
        result = judge.judge(pair(), TASK)
    assert (result.grade, result.failure, result.error) == (None, kind, error)
    assert result.failure.retried  # none of these is an answer: a rerun asks again
    assert result.raw_response == answer.raw.decode()  # the raw body is kept
    assert (len(llm.seen), result.requests) == (requests, requests)
    assert result.retry_after_s == (1439.0 if kind is FailureKind.RATE_LIMITED else None)


def test_a_cut_below_max_tokens_says_the_servers_own_limit_cut_it(llm):
    body = {
        **fixture("llamacpp_finish_length.json"),
        "usage": {"prompt_tokens": 900, "completion_tokens": 10},
    }
    llm.script = lambda request, attempt: replay(body)
    with judge_for(llm, max_tokens=512) as judge:
        result = judge.judge(pair(), TASK)
    assert result.failure is FailureKind.TRUNCATED
    assert result.error.startswith("cut after 10 completion tokens, below max_tokens=512")


def test_a_model_still_loading_is_retried_then_answers(llm):
    # mostlygeek/llama-swap #146's 503 twice, then the model has loaded
    loading = replay(fixture("llamacpp_loading_model.json"), 503)
    llm.script = lambda request, attempt: loading if attempt < 3 else honour_n(request, attempt)
    with judge_for(llm) as judge:
        result = judge.judge(pair(), TASK)
    assert (result.grade, result.requests, result.retries) == (2, 3, 2)


# --------------------------------------------------------------------------------------------- adaptation
def refusing(key: str, name: str, status: int) -> Any:
    """A server that answers ``name`` (a fixture) whenever the request carries ``key``."""

    def script(request: dict[str, Any], attempt: int) -> Answer:
        if key in request:
            return replay(fixture(name), status)
        return honour_n(request, attempt)

    return script


@pytest.mark.parametrize(
    ("key", "name", "status", "adaptation"),
    [
        # ITSpecialist111/ai_automation_suggester #38
        ("max_tokens", "openai_max_tokens_unsupported.json", 400, Adaptation.MAX_COMPLETION_TOKENS),
        # gabrii/Cursor-Azure-GPT-5 #33
        ("temperature", "openai_temperature_unsupported.json", 400, Adaptation.NO_TEMPERATURE),
    ],
    ids=["max_tokens", "temperature"],
)
def test_a_refused_parameter_is_adapted_once_and_remembered(llm, key, name, status, adaptation):
    llm.script = refusing(key, name, status)
    with judge_for(llm) as judge:
        first = judge.judge(pair(1), TASK)
        second = judge.judge(pair(2), TASK)
        assert judge.adaptations == (adaptation,)
        assert judge.adaptation_notes == {adaptation: fixture(name)["error"]["message"]}
    assert (first.grade, first.requests, second.grade, second.requests) == (2, 2, 2, 1)
    sent = [s.body for s in llm.seen if s.body]
    assert key in sent[0] and all(key not in body for body in sent[1:])
    if adaptation is Adaptation.MAX_COMPLETION_TOKENS:
        assert [b.get("max_completion_tokens") for b in sent[1:]] == [256, 256]


def test_n_refused_by_llama_server_becomes_one_request_per_sample(llm):
    # llama.cpp answers n > 1 with HTTP 500 "Only one completion choice is allowed": not retried as a 500
    llm.script = refusing("n", "llamacpp_n_unsupported.json", 500)
    with judge_for(llm, samples=3, temperature=0.7) as judge:
        result = judge.judge(pair(), TASK)
        assert judge.adaptations == (Adaptation.ONE_PER_SAMPLE,)
    assert [s.body.get("n") for s in llm.seen if s.body] == [3, None, None, None]
    assert (result.grade, result.sample_grades, result.requests) == (2, (2, 2, 2), 4)


def test_adaptations_passed_back_in_shape_the_first_request(llm):
    llm.script = refusing("max_tokens", "openai_max_tokens_unsupported.json", 400)
    with judge_for(llm, adaptations=["max_completion_tokens"]) as judge:
        assert judge.judge(pair(), TASK).requests == 1
        assert judge.adaptation_notes == {}  # nothing new to remember


def test_a_parameter_refused_again_after_adapting_is_a_failure_not_a_loop(llm):
    # the server refuses max_tokens and, after the switch, still answers 400 for the same parameter
    llm.script = lambda request, attempt: replay(fixture("openai_max_tokens_unsupported.json"), 400)
    with judge_for(llm) as judge:
        result = judge.judge(pair(), TASK)
    assert result.failure is FailureKind.HTTP_ERROR and len(llm.seen) == 2
    assert result.error.startswith("HTTP 400: Unsupported parameter: 'max_tokens'")


def test_extra_body_is_merged_into_every_request_and_the_fingerprint(llm):
    extra = {"chat_template_kwargs": {"enable_thinking": False}}
    with judge_for(llm, extra_body=extra, seed=7) as judge, judge_for(llm) as plain:
        assert judge.judge(pair(), TASK).grade == 2
        assert judge.fingerprint(TASK) != plain.fingerprint(TASK)
    request = llm.seen[0].body
    assert request["chat_template_kwargs"] == {"enable_thinking": False} and request["seed"] == 7


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ({"model": "x"}, "extra_body may not set 'model'"),
        ({"max_tokens": 5}, "extra_body may not set 'max_tokens'"),
        (["think"], "extra_body must be a JSON object; got list"),
    ],
)
def test_extra_body_rejects_what_the_judge_sets_itself(extra, error):
    with pytest.raises(ValueError, match="^" + error.replace("(", r"\(")):
        OpenAIJudge("http://127.0.0.1:9/v1", "m", extra_body=extra)


# -------------------------------------------------------------------------------------------- the client
def _mixed(request: dict[str, Any], attempt: int) -> Answer:
    text = prompt_of(request)
    if "[cut]" in text:
        return replay(fixture("llamacpp_finish_length.json"))
    if "[filtered]" in text:
        return replay(fixture("azure_content_filter.json"))
    if "[prose]" in text:
        return reply("It is on topic but never says how.")
    return honour_n(request, attempt)


def test_a_rerun_retries_the_failed_pairs_and_only_them(llm):
    llm.script = _mixed
    tags = ["ok", "cut", "filtered", "prose"] * 3
    pairs = [
        Pair(query_id=f"q{i}", query=f"query {i} [{t}]", doc_id=f"d{i}", document="text")
        for i, t in enumerate(tags)
    ]
    cache = MemoryCache()
    with judge_for(llm) as judge:
        client = JudgeClient(judge, TASK, cache=cache, workers=3)
        first = {r.query_id: r.failure for r in client.run(pairs)}
        assert len(llm.seen) == 12 and len(cache) == 6  # the grades and the unreadable replies are answers
        again = list(client.run(pairs))
    retried = sorted(re.search(r"query \d+ \[(\w{3})", prompt_of(s.body))[1] for s in llm.seen[12:] if s.body)
    assert retried == ["cut"] * 3 + ["fil"] * 3
    assert first["q1"] is FailureKind.TRUNCATED and first["q2"] is FailureKind.CONTENT_FILTER
    assert first["q3"] is FailureKind.NO_GRADE
    assert client.counts.cached == 6 and client.counts.judged == 6 and len(again) == 12


def test_a_daily_rate_limit_stops_the_run_at_once(llm):
    # continuedev/continue #11580: Groq's tokens-per-day limit, "try again in 23m58.56s"
    limited = replay(fixture("groq_rate_limit_tpd.json"), 429, {"Retry-After": "1439"})
    llm.script = lambda request, attempt: limited if "query 5" in prompt_of(request) else honour_n(request, 1)
    pairs = [pair(i) for i in range(40)]
    with judge_for(llm) as judge:
        client = JudgeClient(judge, TASK, workers=2, max_in_flight=2)
        results = list(client.run(iter(pairs)))
    assert client.stopped is not None and client.stopped.failure is FailureKind.RATE_LIMITED
    assert client.stopped.retry_after_s == 1439.0
    assert len(results) < 10 and len(llm.seen) == len(results)  # nothing sent after the stop
