"""A judge's request parameters, adaptations, reasoning, aspects and failures in the services, on SQLite and
PostgreSQL, against the loopback server replaying real reply shapes (tests/fixtures/llm/SOURCES.md)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from llm_server import LLMServer, fixture, honour_n, prompt_of, replay, with_texts
from sqlalchemy import text

from annotate_app.judges import ASPECTS_TEMPLATE
from annotate_app.services import judges
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import Conflict, InvalidInput

MAX_TOKENS_REFUSED = fixture("openai_max_tokens_unsupported.json")  # ai_automation_suggester #38


def _add(db, url: str, name: str = "gpt", **options: Any):
    return judges.add_judge(db, SYSTEM, "demo", name, backend="openai", base_url=url, model="m", **options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_tokens": 0}, "max_tokens must be an int in [1, 1000000]; got '0'"),
        ({"timeout_s": 0}, "timeout_s must be a number in (0, 3600]; got '0'"),
        ({"seed": 1.5}, "seed must be an int or None; got '1.5'"),
        (
            {"extra_body": {"n": 2}},
            "extra_body may not set 'n' (the judge sets it from its own parameters); ",
        ),
        ({"extra_body": "think"}, "extra_body must be a JSON object; got str 'think'"),
    ],
)
def test_request_parameters_are_checked(demo, options, message):
    with pytest.raises(InvalidInput) as caught:
        _add(demo, "http://127.0.0.1:9/v1", **options)
    assert str(caught.value).startswith(message)


def test_request_parameters_are_stored_and_part_of_the_judge(demo):
    extra = {"chat_template_kwargs": {"enable_thinking": False}}
    info = _add(demo, "http://127.0.0.1:9/v1", max_tokens=1024, timeout_s=30, seed=3, extra_body=extra)
    want = {"max_tokens": 1024, "timeout_s": 30.0, "seed": 3, "extra_body": extra}
    assert dict(info.params) == want and dict(info.adapted) == {}
    again = _add(demo, "http://127.0.0.1:9/v1", max_tokens=1024, timeout_s=30, seed=3, extra_body=extra)
    assert dict(again.params) == want  # the same settings: nothing changes
    with pytest.raises(Conflict, match="^judge 'gpt' already exists in project 'demo' with other settings$"):
        _add(demo, "http://127.0.0.1:9/v1", max_tokens=512, timeout_s=30, seed=3, extra_body=extra)
    with pytest.raises(InvalidInput, match="^a lexical judge sends no request"):
        judges.add_judge(demo, SYSTEM, "demo", "lex", backend="lexical", max_tokens=9)
    lexical = judges.add_judge(demo, SYSTEM, "demo", "lex", backend="lexical")
    assert dict(lexical.params) == {}


def test_reasoning_answer_field_and_aspects_are_stored_with_the_label(demo):
    # vllm-project/vllm #19839: the answer in reasoning_content; vllm #21130: <think> in content
    think = fixture("vllm_think_in_content.json")
    block = think["choices"][0]["message"]["content"].split("</think>")[0] + "</think>"
    calls = itertools.count()

    def script(body: dict, attempt: int):
        answer = '{"intent": 3, "trust": 1, "reason": "steps, no source", "grade": 2}'
        if next(calls) % 2:
            return replay(with_texts(think, content=block + "\n\n" + answer))
        return replay(with_texts(fixture("vllm_answer_in_reasoning_content.json"), reasoning_content=answer))

    with LLMServer(script=script) as llm:
        _add(demo, llm.url, prompt=ASPECTS_TEMPLATE)
        report = judges.run_judge(demo, SYSTEM, "demo", "gpt", pairs="all", concurrency=1)
    assert (report.sent, report.failed) == (12, 0)
    assert "Intent:" in prompt_of(llm.seen[0].body)
    with demo.read() as s:
        rows = s.execute(text("SELECT answer_field, reasoning, aspects, grade FROM judge_labels")).all()
    fields = sorted(r[0] for r in rows)
    assert fields == ["content"] * 6 + ["reasoning_content"] * 6
    for field, reasoning, aspects, grade in rows:
        assert grade == 2 and (
            aspects if isinstance(aspects, dict) else __import__("json").loads(aspects)
        ) == {
            "intent": 3,
            "trust": 1,
        }
        assert reasoning == (
            "" if field == "reasoning_content" else block[len("<think>") : -len("</think>")].strip()
        )


def test_an_adaptation_is_remembered_with_the_judge(demo):
    accepted = itertools.count()

    def script(body: dict, attempt: int):
        if "max_tokens" in body:
            return replay(MAX_TOKENS_REFUSED, 400)
        if next(accepted) < 2:  # two pairs filtered (BerriAI/litellm #8953), for the rerun to ask again
            return replay(fixture("azure_content_filter.json"))
        return honour_n(body, attempt)

    with LLMServer(script=script) as llm:
        _add(demo, llm.url)
        first = judges.run_judge(demo, SYSTEM, "demo", "gpt", pairs="all", concurrency=1)
        assert first.adapted == (("max_completion_tokens", MAX_TOKENS_REFUSED["error"]["message"]),)
        assert "adapted: sends max_completion_tokens instead of max_tokens" in first.message
        assert (first.failed, len(llm.seen)) == (2, 13)  # one refused request, then one a pair
        (info,) = [j for j in judges.list_judges(demo, SYSTEM, "demo") if j.name == "gpt"]
        assert dict(info.adapted) == {"max_completion_tokens": MAX_TOKENS_REFUSED["error"]["message"]}
        seen = len(llm.seen)
        second = judges.run_judge(demo, SYSTEM, "demo", "gpt", pairs="all", concurrency=1)
    assert (second.adapted, second.sent, second.failed) == ((), 2, 0)
    assert len(llm.seen) - seen == 2  # one request a pair: adapted from the start
    assert all("max_completion_tokens" in s.body and "max_tokens" not in s.body for s in llm.seen[seen:])


def test_failures_are_counted_listed_and_retried_by_a_rerun(demo):
    # BerriAI/litellm #8953 (content filter) and a llama.cpp-served model's finish_reason "length"
    bad = {
        "filter": replay(fixture("azure_content_filter.json")),
        "cut": replay(fixture("llamacpp_finish_length.json")),
    }
    calls = itertools.count()

    def script(body: dict, attempt: int):
        n = next(calls)
        return bad["filter"] if n in (0, 1) else bad["cut"] if n == 2 else honour_n(body, attempt)

    with LLMServer(script=script) as llm:
        _add(demo, llm.url)
        report = judges.run_judge(demo, SYSTEM, "demo", "gpt", pairs="all", concurrency=1)
        assert report.failures == (
            ("truncated", 1, "cut at max_tokens=256 (finish_reason 'length'); raise --max-tokens"),
            (
                "content_filter",
                2,
                "the server's content filter withheld the reply (finish_reason 'content_filter')",
            ),
        )
        assert judges.failure_counts(demo, SYSTEM, "demo") == {"gpt": {"truncated": 1, "content_filter": 2}}
        listed = judges.judge_failures(demo, SYSTEM, "demo", "gpt", kind="content_filter")
        assert [f.kind.value for f in listed] == ["content_filter"] * 2
        assert listed[0].excerpt.startswith('{"id": "chatcmpl-B6yR7yHGU7YYj2CYEt5GurtH7q7oE"')
        before = len(llm.seen)
        again = judges.run_judge(demo, SYSTEM, "demo", "gpt", pairs="all", concurrency=1)
    assert (again.sent, again.cached, again.failed, len(llm.seen) - before) == (3, 9, 0, 3)
    assert judges.failure_counts(demo, SYSTEM, "demo") == {}  # the latest label of every pair is a grade
    with pytest.raises(InvalidInput, match="^kind must be one of no_grade, out_of_scale, ambiguous, "):
        judges.judge_failures(demo, SYSTEM, "demo", "gpt", kind="nope")


def test_a_spent_quota_stops_the_run_and_says_so(demo):
    quota = fixture("openai_insufficient_quota.json")  # ChatGPTNextWeb/NextChat #4101
    calls = itertools.count()

    def script(body: dict, attempt: int):
        return honour_n(body, attempt) if next(calls) < 2 else replay(quota, 429)

    with LLMServer(script=script) as llm:
        _add(demo, llm.url)
        report = judges.run_judge(demo, SYSTEM, "demo", "gpt", pairs="all", concurrency=1)
    assert report.stopped.startswith("quota: HTTP 429: " + quota["error"]["message"])
    assert "; add credit or raise the quota, then run again; " in report.stopped
    assert report.pairs == 12 and report.sent < 12 and len(llm.seen) == report.sent
