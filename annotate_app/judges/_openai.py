"""A judge behind an OpenAI-compatible chat completions endpoint (vLLM, llama.cpp, Ollama, OpenAI, ...).

Each pair is one user message with the judge's request parameters; ``samples`` > 1 always yields that many
replies or a failure, graded by `majority`. A parameter the server refuses by name is adapted once and kept
(`adaptations`, not part of the fingerprint). A spent quota is never retried. The API key never appears in a
result, repr or error.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from annotate_app.judges._completion import Choice, Problem, read_completion
from annotate_app.judges._errors import Adaptation, is_quota, refused_parameter, server_message
from annotate_app.judges._http import HttpOutcome, HttpPool, RetryPolicy
from annotate_app.judges._model import (
    Backend,
    FailureKind,
    JudgeResult,
    JudgeSetup,
    JudgeTask,
    Pair,
    RenderedPrompt,
    sha256_text,
)
from annotate_app.judges._parse import Reply, majority, parse_reply
from annotate_app.judges._prompt import PromptTemplate

__all__ = ["OpenAIJudge", "DEFAULT_API_KEY_ENV", "RESERVED_BODY_KEYS"]

DEFAULT_API_KEY_ENV = "QRELFORGE_JUDGE_API_KEY"
RESERVED_BODY_KEYS = frozenset(
    {"model", "messages", "n", "stream", "max_tokens", "max_completion_tokens", "temperature", "seed"}
)
"""Request keys ``extra_body`` may not set: the judge sets them from its own parameters."""
_PATH = "/chat/completions"
_RAW_LIMIT = 20_000
_PARAMETER_STATUSES = (400, 422, 500)  # llama.cpp answers a refused n with HTTP 500


@dataclass
class _Tally:
    """What the requests of one pair cost so far, and what its replies said."""

    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    texts: list[str] = field(default_factory=list)
    reasonings: list[str] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)

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
        extra_body: Mapping[str, Any] | None = None,
        adaptations: Iterable[Adaptation | str] = (),
        jitter_seed: int | None = None,
    ):
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty string; got {model!r}")
        _check_int(samples, "samples", 1)
        _check_int(max_tokens, "max_tokens", 1)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ValueError(f"seed must be an int or None; got {seed!r}")
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
        self.temperature, self.use_n, self.seed = float(temperature), use_n, seed
        self.extra_body = check_extra_body(extra_body)
        self.template = template or PromptTemplate()
        self._name = name or f"openai:{model}"
        self._adapted: dict[Adaptation, str] = {}
        for item in adaptations:
            try:
                self._adapted[Adaptation(item)] = ""
            except ValueError:
                raise ValueError(
                    f"adaptations must be among {[a.value for a in Adaptation]}; got {item!r}"
                ) from None
        self._known = frozenset(self._adapted)
        self._lock = threading.Lock()
        key = os.environ.get(api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._pool = HttpPool(
            base_url, timeout_s=timeout_s, retry=retry or RetryPolicy(), headers=headers, seed=jitter_seed
        )
        self.base_url = base_url

    @classmethod
    def from_setup(cls, setup: JudgeSetup) -> OpenAIJudge:
        """The judge a stored setup describes: its prompt (None: the default), request parameters (absent:
        the defaults) and the adaptations made in earlier runs that this client knows."""
        known = {a.value for a in Adaptation}
        request = {
            k: setup.params[k] for k in ("max_tokens", "timeout_s", "seed", "extra_body") if k in setup.params
        }
        return cls(
            setup.base_url,
            setup.model,
            name=setup.name,
            template=PromptTemplate(text=setup.prompt) if setup.prompt is not None else PromptTemplate(),
            temperature=setup.temperature,
            samples=setup.samples,
            adaptations=[a for a in setup.adapted if a in known],
            **request,
        )

    def __repr__(self) -> str:
        return f"OpenAIJudge({self.base_url!r}, {self.model!r}, name={self._name!r}, samples={self.samples})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def backend(self) -> Backend:
        return Backend.OPENAI

    @property
    def adaptations(self) -> tuple[Adaptation, ...]:
        """Every adaptation in force (those passed in and those made since), in the enum's order."""
        with self._lock:
            return tuple(a for a in Adaptation if a in self._adapted)

    @property
    def adaptation_notes(self) -> dict[Adaptation, str]:
        """The adaptations made by this judge object (not passed in), each with the server's message."""
        with self._lock:
            return {a: m for a, m in self._adapted.items() if a not in self._known}

    def fingerprint(self, task: JudgeTask) -> str:
        settings: dict[str, Any] = {
            "backend": str(self.backend),
            "model": self.model,
            "prompt": self.template.prompt_hash(task),
            "temperature": self.temperature,
            "samples": self.samples,
            "max_tokens": self.max_tokens,
        }
        if self.seed is not None:
            settings["seed"] = self.seed
        if self.extra_body:
            settings["extra_body"] = self.extra_body
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
        tally = _Tally()
        while len(tally.replies) < self.samples:
            want = self.samples - len(tally.replies)
            outcome = self._post(text, want, tally)
            read = self._read(outcome)
            if isinstance(read, Problem):
                raw = outcome.body[:_RAW_LIMIT].decode("utf-8", "replace")
                return self._result(pair, task, start, tally, raw=raw, problem=read, outcome=outcome)
            tally.prompt_tokens += read.prompt_tokens
            tally.completion_tokens += read.completion_tokens
            for choice in read.choices[:want]:
                self._add(choice, task, tally)
        raw = tally.texts[0] if self.samples == 1 else json.dumps(tally.texts, ensure_ascii=False)
        return self._result(pair, task, start, tally, raw=raw)

    def _read(self, outcome: HttpOutcome) -> Any:
        if outcome.failure is not None:
            return Problem(outcome.failure, outcome.error)
        return read_completion(outcome.body, self._limit())

    def _add(self, choice: Choice, task: JudgeTask, tally: _Tally) -> None:
        tally.texts.append(choice.answer)
        tally.reasonings.append(choice.reasoning)
        tally.fields.append(choice.answer_field)
        if not choice.answer.strip() and choice.reasoning:
            error = "the reply holds reasoning but no answer (the reasoning block was never closed)"
            tally.replies.append(Reply(grade=None, failure=FailureKind.NO_GRADE, error=error))
        else:
            tally.replies.append(parse_reply(choice.answer, task.scale))

    def _post(self, text: str, want: int, tally: _Tally) -> HttpOutcome:
        """One exchange for ``want`` replies: a request, and once per refused parameter an adapted resend."""
        while True:
            body = self._body(text, want)
            outcome = self._pool.post(_PATH, body, final=self._final)
            tally.add(outcome)
            if outcome.status not in _PARAMETER_STATUSES or not self._adapt(outcome, body):
                return outcome

    def _final(self, status: int, body: bytes) -> FailureKind | None:
        """The failure kind of an error answer not to retry: a spent quota, a refused parameter."""
        if is_quota(body):
            return FailureKind.QUOTA
        if status in _PARAMETER_STATUSES and refused_parameter(body) is not None:
            return FailureKind.HTTP_ERROR
        return None

    def _adapt(self, outcome: HttpOutcome, sent: bytes) -> bool:
        """Adapt to a parameter the server refused, if the request did send it and the judge has not adapted
        to it yet; whether to resend."""
        adaptation = refused_parameter(outcome.body)
        if adaptation is None:
            return False
        request = json.loads(sent)
        needed = {
            Adaptation.MAX_COMPLETION_TOKENS: "max_tokens",
            Adaptation.NO_TEMPERATURE: "temperature",
            Adaptation.ONE_PER_SAMPLE: "n",
        }[adaptation]
        if needed not in request:
            return False
        with self._lock:
            if adaptation not in self._adapted:
                self._adapted[adaptation] = server_message(outcome.body)
        return True

    def _limit(self) -> tuple[str, int]:
        with self._lock:
            adapted = Adaptation.MAX_COMPLETION_TOKENS in self._adapted
        return ("max_completion_tokens" if adapted else "max_tokens"), self.max_tokens

    def _result(
        self,
        pair: Pair,
        task: JudgeTask,
        start: float,
        tally: _Tally,
        *,
        raw: str,
        problem: Problem | None = None,
        outcome: HttpOutcome | None = None,
    ) -> JudgeResult:
        kind, error = (problem.kind, problem.error) if problem is not None else (None, "")
        vote = majority(tally.replies) if kind is None else None
        if vote is not None and vote.grade is None:
            kind, error = _no_vote(tally.replies)
        reasonings = [r for r in tally.reasonings if r]
        reasoning = (
            ""
            if not reasonings
            else tally.reasonings[0]
            if self.samples == 1
            else json.dumps(tally.reasonings, ensure_ascii=False)
        )
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
            sample_grades=tuple(r.grade for r in tally.replies),
            requests=tally.requests,
            retries=tally.retries,
            reasoning=reasoning,
            answer_field=tally.fields[0] if tally.fields else "content",
            aspects=dict(vote.aspects) if vote and vote.grade is not None else {},
            evidence=vote.evidence if vote and vote.grade is not None else (),
            retry_after_s=outcome.retry_after_s
            if outcome is not None and kind is FailureKind.RATE_LIMITED
            else None,
        )

    def _body(self, text: str, n: int) -> bytes:
        with self._lock:
            adapted = set(self._adapted)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": text}],
            "stream": False,
        }
        if Adaptation.NO_TEMPERATURE not in adapted:
            body["temperature"] = self.temperature
        limit = "max_completion_tokens" if Adaptation.MAX_COMPLETION_TOKENS in adapted else "max_tokens"
        body[limit] = self.max_tokens
        if self.seed is not None:
            body["seed"] = self.seed
        if n > 1 and self.use_n and Adaptation.ONE_PER_SAMPLE not in adapted:
            body["n"] = n
        body.update(self.extra_body)
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> OpenAIJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_extra_body(value: Mapping[str, Any] | None) -> dict[str, Any]:
    """``extra_body`` checked: a JSON object (None: empty) that sets none of `RESERVED_BODY_KEYS`.

    >>> check_extra_body({"chat_template_kwargs": {"enable_thinking": False}})
    {'chat_template_kwargs': {'enable_thinking': False}}
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"extra_body must be a JSON object; got {type(value).__name__} {value!r:.80}")
    reserved = sorted(set(value) & RESERVED_BODY_KEYS)
    if reserved:
        raise ValueError(
            f"extra_body may not set {reserved[0]!r} (the judge sets it from its own parameters); "
            f"got {json.dumps(dict(value))[:120]}"
        )
    try:
        return json.loads(json.dumps(dict(value), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"extra_body must be plain JSON; got {value!r:.80} ({exc})") from None


def _check_int(value: Any, name: str, low: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int >= {low}; got {value!r}")


def _no_vote(replies: list[Reply]) -> tuple[FailureKind, str]:
    """The failure of a pair whose samples all lack a grade: out of scale if one was, else ambiguous if one
    was, else no grade."""
    order = (FailureKind.OUT_OF_SCALE, FailureKind.AMBIGUOUS, FailureKind.NO_GRADE)
    kind = next((k for k in order if any(r.failure is k for r in replies)), FailureKind.NO_GRADE)
    first = next((r for r in replies if r.failure is kind), replies[0])
    if len(replies) == 1:
        return kind, first.error
    return kind, f"no sample has a grade on the scale; sample {replies.index(first) + 1}: {first.error}"
