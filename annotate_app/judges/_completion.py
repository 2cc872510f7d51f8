"""Reading a chat completion body: each choice's answer and reasoning, or why the reply failed.

Reasoning (a ``reasoning_content`` or ``reasoning`` field, or a ``<think>`` block) is kept apart, and the
grade is read from the answer only. A body-level ``error``, a refusal, or a ``content_filter``, ``error`` or
``length`` finish is a failure of its own kind, with the server's words. Servers' shapes: docs/judges.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from annotate_app.judges._errors import server_message
from annotate_app.judges._model import FailureKind

__all__ = ["Choice", "Completion", "Problem", "read_completion", "split_think"]

REASONING_FIELDS = ("reasoning_content", "reasoning")
_OPEN, _CLOSE = "<think>", "</think>"


@dataclass(frozen=True)
class Choice:
    """One choice read: the answer text, the reasoning beside it and the field the answer came from."""

    answer: str
    reasoning: str = ""
    answer_field: str = "content"


@dataclass(frozen=True)
class Completion:
    """A completion read: its choices and token usage."""

    choices: tuple[Choice, ...]
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Problem:
    """Why a completion gives no answer: a failure kind and what the server said."""

    kind: FailureKind
    error: str


def split_think(text: str) -> tuple[str, str]:
    """(reasoning, answer) of a content that may hold a ``<think>`` block (see the module doc).

    >>> split_think("<think>\\nLet me see.\\n</think>\\n\\n{\\"grade\\": 2}")
    ('Let me see.', '{"grade": 2}')
    >>> split_think("The user asks for...</think>391")
    ('The user asks for...', '391')
    >>> split_think("<think>still thinking"), split_think("no tags")
    (('still thinking', ''), ('', 'no tags'))
    """
    end = text.rfind(_CLOSE)
    if end >= 0:
        head, answer = text[:end].strip(), text[end + len(_CLOSE) :].strip()
        return (head[len(_OPEN) :] if head.startswith(_OPEN) else head).strip(), answer
    stripped = text.lstrip()
    if stripped.startswith(_OPEN):
        return stripped[len(_OPEN) :].strip(), ""
    return "", text


def read_completion(body: bytes, limit: tuple[str, int]) -> Completion | Problem:
    """The choices of a chat completion body, or the `Problem` of the first choice that failed. ``limit`` is
    the token-limit parameter sent and its value (for the message of a cut reply)."""
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError) as exc:
        return Problem(FailureKind.BAD_RESPONSE, f"response body is not JSON ({exc})")
    if not isinstance(obj, dict):
        return Problem(FailureKind.BAD_RESPONSE, "response body is not a JSON object")
    if obj.get("error") not in (None, "", {}):
        said = server_message(body) or json.dumps(obj["error"])[:300]
        return Problem(FailureKind.PROVIDER_ERROR, f"error in an HTTP 200 body: {said}")
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices:
        return Problem(FailureKind.BAD_RESPONSE, "response has no choices")
    found = obj.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    completion_tokens = _count(usage.get("completion_tokens"))
    read: list[Choice] = []
    for choice in choices:
        item = _choice(choice if isinstance(choice, dict) else {}, limit, completion_tokens, len(choices))
        if isinstance(item, Problem):
            return item
        read.append(item)
    return Completion(tuple(read), _count(usage.get("prompt_tokens")), completion_tokens)


def _choice(choice: dict[str, Any], limit: tuple[str, int], used: int, n: int) -> Choice | Problem:
    found = choice.get("message")
    message: dict[str, Any] = found if isinstance(found, dict) else {}
    content, refusal = _content(message.get("content"))
    said = message.get("refusal")
    refusal = refusal or (said if isinstance(said, str) else "")
    finish = choice.get("finish_reason")
    if refusal.strip():
        return Problem(FailureKind.REFUSAL, f"the model refused: {refusal.strip()[:500]}")
    if finish == "content_filter":
        return Problem(FailureKind.CONTENT_FILTER, _filtered(choice))
    if finish == "error":
        said = server_message(json.dumps({"error": choice.get("error")})) or str(
            choice.get("native_finish_reason") or "no message"
        )
        return Problem(FailureKind.FINISH_ERROR, f"the server ended the reply with an error: {said}")
    if finish == "length":
        return Problem(FailureKind.TRUNCATED, _cut(limit, used, n))
    reasoning, answer = split_think(content)
    fields = [(f, message[f]) for f in REASONING_FIELDS if isinstance(message.get(f), str) and message[f]]
    if answer.strip() or not fields or reasoning:
        return Choice(answer=answer, reasoning=reasoning or (fields[0][1] if fields else ""))
    name, text = fields[0]  # content empty, the reply finished: the answer is in the reasoning field
    inner_reasoning, inner_answer = split_think(text)
    return Choice(answer=inner_answer, reasoning=inner_reasoning, answer_field=name)


def _content(value: Any) -> tuple[str, str]:
    """(text, refusal) of a message's content: a string, null, or a list of text and refusal parts."""
    if isinstance(value, str):
        return value, ""
    if not isinstance(value, list):
        return "", ""
    texts = [p.get("text", "") for p in value if isinstance(p, dict) and p.get("type") == "text"]
    refusals = [p.get("refusal", "") for p in value if isinstance(p, dict) and p.get("type") == "refusal"]
    return "".join(t for t in texts if isinstance(t, str)), "".join(r for r in refusals if isinstance(r, str))


def _filtered(choice: dict[str, Any]) -> str:
    results = choice.get("content_filter_results")
    hits = []
    if isinstance(results, dict):
        for category, verdict in results.items():
            if isinstance(verdict, dict) and verdict.get("filtered"):
                severity = verdict.get("severity")
                hits.append(f"{category} ({severity})" if isinstance(severity, str) else str(category))
    what = f"; filtered: {', '.join(hits)}" if hits else ""
    return f"the server's content filter withheld the reply (finish_reason 'content_filter'{what})"


def _cut(limit: tuple[str, int], used: int, n: int) -> str:
    name, value = limit
    if n == 1 and 0 < used < value:
        return (
            f"cut after {used} completion tokens, below {name}={value} (finish_reason 'length'): the "
            "server's own limit cut it (its context size or generation cap); raise it on the server"
        )
    return f"cut at {name}={value} (finish_reason 'length'); raise --max-tokens"


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
