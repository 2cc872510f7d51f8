"""A judge behind an OpenAI-compatible chat completions endpoint (vLLM, llama.cpp, Ollama, hosted APIs).

Each pair is one user message (the rendered `PromptTemplate`), POSTed to ``{base_url}/chat/completions``.
With ``samples`` > 1 the request asks for ``n`` choices; a server that returns fewer (llama.cpp and Ollama
ignore ``n``) is asked again for the rest, so the pair always gets ``samples`` replies, or a failure. The
grade is the samples' majority (`majority`), the confidence its vote share (1.0 for a single sample: then it
says nothing). The API key, if any, is read once from the environment variable named by ``api_key_env``
and sent as a Bearer token; it never appears in a result, a repr or an error.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

from annotate_app.judges._http import HttpOutcome, HttpPool, RetryPolicy
from annotate_app.judges._model import (
    Backend,
    FailureKind,
    JudgeResult,
    JudgeTask,
    Pair,
    RenderedPrompt,
    sha256_text,
)
from annotate_app.judges._parse import Reply, majority, parse_reply
from annotate_app.judges._prompt import PromptTemplate

__all__ = ["OpenAIJudge", "DEFAULT_API_KEY_ENV"]

DEFAULT_API_KEY_ENV = "QRELFORGE_JUDGE_API_KEY"
_PATH = "/chat/completions"
_RAW_LIMIT = 20_000


@dataclass
class _Tally:
    """What the requests of one pair cost so far."""

    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, outcome: HttpOutcome) -> None:
        self.requests += outcome.requests
        self.retries += outcome.retries


class OpenAIJudge:
    """An LLM judge over HTTP. Use it as a context manager (or call `close`) to close its connections.

    >>> judge = OpenAIJudge("http://127.0.0.1:8000/v1", "qwen2.5-7b-instruct", api_key_env="NO_SUCH_VARIABLE")
    >>> judge.name, judge.backend
    ('openai:qwen2.5-7b-instruct', <Backend.OPENAI: 'openai'>)
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        name: str | None = None,
        template: PromptTemplate | None = None,
        temperature: float = 0.0,
        samples: int = 1,
        max_tokens: int = 256,
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        use_n: bool = True,
        seed: int | None = None,
    ):
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty string; got {model!r}")
        _check_int(samples, "samples", 1)
        _check_int(max_tokens, "max_tokens", 1)
        if (
            not isinstance(temperature, int | float)
            or isinstance(temperature, bool)
            or not 0 <= temperature <= 2
        ):
            raise ValueError(f"temperature must be a number in [0, 2]; got {temperature!r}")
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ValueError(f"api_key_env must be the name of an environment variable; got {api_key_env!r}")
        if template is not None and not isinstance(template, PromptTemplate):
            raise ValueError(f"template must be a PromptTemplate; got {type(template).__name__}")
        self.model, self.samples, self.max_tokens = model, samples, max_tokens
        self.temperature, self.use_n = float(temperature), use_n
        self.template = template or PromptTemplate()
        self._name = name or f"openai:{model}"
        key = os.environ.get(api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._pool = HttpPool(
            base_url, timeout_s=timeout_s, retry=retry or RetryPolicy(), headers=headers, seed=seed
        )
        self.base_url = base_url

    def __repr__(self) -> str:
        return f"OpenAIJudge({self.base_url!r}, {self.model!r}, name={self._name!r}, samples={self.samples})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def backend(self) -> Backend:
        return Backend.OPENAI

    def fingerprint(self, task: JudgeTask) -> str:
        settings = {
            "backend": str(self.backend),
            "model": self.model,
            "prompt": self.template.prompt_hash(task),
            "temperature": self.temperature,
            "samples": self.samples,
            "max_tokens": self.max_tokens,
        }
        return sha256_text(json.dumps(settings, sort_keys=True))

    def render(self, pair: Pair, task: JudgeTask) -> RenderedPrompt:
        text = self.template.render(pair, task)
        return RenderedPrompt(
            judge=self._name,
            prompt_hash=self.template.prompt_hash(task),
            text=text,
            request=self._body(text, self.samples).decode("utf-8"),
        )

    def judge(self, pair: Pair, task: JudgeTask) -> JudgeResult:
        start = time.perf_counter()
        text = self.template.render(pair, task)
        replies: list[Reply] = []
        texts: list[str] = []
        tally = _Tally()
        while len(replies) < self.samples:
            want = self.samples - len(replies)
            outcome = self._pool.post(_PATH, self._body(text, want))
            tally.add(outcome)
            contents, problem = _read_completion(outcome, tally)
            if problem is not None:
                kind, error = problem
                raw = outcome.body[:_RAW_LIMIT].decode("utf-8", "replace")
                return self._result(pair, task, start, tally, replies, kind=kind, error=error, raw=raw)
            for content in contents[:want]:
                texts.append(content)
                replies.append(parse_reply(content, task.scale))
        raw = texts[0] if self.samples == 1 else json.dumps(texts, ensure_ascii=False)
        return self._result(pair, task, start, tally, replies, raw=raw)

    def _result(
        self,
        pair: Pair,
        task: JudgeTask,
        start: float,
        tally: _Tally,
        replies: list[Reply],
        *,
        raw: str,
        kind: FailureKind | None = None,
        error: str = "",
    ) -> JudgeResult:
        vote = majority(replies) if kind is None else None
        if vote is not None and vote.grade is None:
            kind, error = _no_vote(replies)
        return JudgeResult(
            query_id=pair.query_id,
            doc_id=pair.doc_id,
            judge=self._name,
            backend=self.backend,
            model=self.model,
            grade=vote.grade if vote else None,
            reason=vote.reason if vote else "",
            confidence=vote.confidence if vote and vote.grade is not None else None,
            failure=kind,
            error=error,
            prompt_hash=self.template.prompt_hash(task),
            raw_response=raw,
            latency_s=time.perf_counter() - start,
            prompt_tokens=tally.prompt_tokens,
            completion_tokens=tally.completion_tokens,
            samples=self.samples,
            sample_grades=tuple(r.grade for r in replies),
            requests=tally.requests,
            retries=tally.retries,
        )

    def _body(self, text: str, n: int) -> bytes:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": text}],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stream": False,
        }
        if n > 1 and self.use_n:
            body["n"] = n
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> OpenAIJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_int(value: Any, name: str, low: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int >= {low}; got {value!r}")


def _no_vote(replies: list[Reply]) -> tuple[FailureKind, str]:
    """The failure of a pair whose samples all lack a grade: out of scale if one was, else no grade."""
    kind = next((r.failure for r in replies if r.failure is FailureKind.OUT_OF_SCALE), FailureKind.NO_GRADE)
    first = next(r for r in replies if r.failure is kind)
    if len(replies) == 1:
        return kind, first.error
    return kind, f"no sample has a grade on the scale; sample {replies.index(first) + 1}: {first.error}"


def _read_completion(outcome: HttpOutcome, tally: _Tally) -> tuple[list[str], tuple[FailureKind, str] | None]:
    """The reply texts of a chat completion (and its token usage, added to ``tally``), or why not."""
    if outcome.failure is not None:
        return [], (outcome.failure, outcome.error)
    try:
        obj = json.loads(outcome.body)
    except (ValueError, RecursionError) as exc:
        return [], (FailureKind.BAD_RESPONSE, f"response body is not JSON ({exc})")
    choices = obj.get("choices") if isinstance(obj, dict) else None
    if not isinstance(choices, list) or not choices:
        return [], (FailureKind.BAD_RESPONSE, "response has no choices")
    usage = obj.get("usage")
    if isinstance(usage, dict):
        tally.prompt_tokens += _count(usage.get("prompt_tokens"))
        tally.completion_tokens += _count(usage.get("completion_tokens"))
    return [_content(c) for c in choices], None


def _content(choice: Any) -> str:
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
