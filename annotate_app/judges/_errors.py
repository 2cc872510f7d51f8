"""What an OpenAI-compatible server's error body says: its own message, a spent quota, a refused parameter.

The error body shapes read, with their servers: docs/modules.md and docs/judges.md (sources:
tests/fixtures/llm/SOURCES.md).
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

__all__ = ["Adaptation", "server_message", "is_quota", "refused_parameter"]

_MESSAGE_LIMIT = 500


class Adaptation(StrEnum):
    """A change to the requests a judge makes once its server refused a parameter (remembered per judge)."""

    MAX_COMPLETION_TOKENS = "max_completion_tokens"  # send max_completion_tokens instead of max_tokens
    NO_TEMPERATURE = "no_temperature"  # leave temperature out (the server's default applies)
    ONE_PER_SAMPLE = "one_per_sample"  # one request per sample instead of n > 1

    @property
    def description(self) -> str:
        """What the judge now does, in a phrase."""
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    Adaptation.MAX_COMPLETION_TOKENS: "sends max_completion_tokens instead of max_tokens",
    Adaptation.NO_TEMPERATURE: "leaves the temperature out (the server's default applies)",
    Adaptation.ONE_PER_SAMPLE: "sends one request per sample instead of n > 1",
}


def _error_object(body: bytes | str) -> Any:
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError, TypeError):
        return None
    if not isinstance(obj, dict):
        return None
    if "error" in obj:
        return obj["error"]
    return obj.get("detail") if "detail" in obj else None


def server_message(body: bytes | str) -> str:
    """The server's own message in an error body ("" when it has none): ``error.message`` (with OpenRouter's
    upstream ``metadata.raw`` after it), ``error`` when it is a string, or ``detail``.

    >>> server_message(b'{"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}')
    'Loading model'
    >>> server_message(b'{"error": "Model is overloaded"}'), server_message(b"<html>")
    ('Model is overloaded', '')
    """
    error = _error_object(body)
    if isinstance(error, str):
        return error[:_MESSAGE_LIMIT]
    if not isinstance(error, dict):
        return ""
    message = error.get("message")
    text = message if isinstance(message, str) else ""
    metadata = error.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    if isinstance(raw, str) and raw.strip():
        upstream = server_message(raw) or raw.strip()
        provider = metadata.get("provider_name") if isinstance(metadata, dict) else None
        where = f" ({provider})" if isinstance(provider, str) and provider else ""
        text = f"{text}: {upstream}{where}" if text else upstream
    return text[:_MESSAGE_LIMIT]


def is_quota(body: bytes | str) -> bool:
    """Whether an error body says the account's quota is spent (``insufficient_quota``, type or code).

    >>> is_quota(b'{"error": {"type": "insufficient_quota", "code": "insufficient_quota"}}')
    True
    """
    error = _error_object(body)
    return isinstance(error, dict) and "insufficient_quota" in (error.get("code"), error.get("type"))


def refused_parameter(body: bytes | str) -> Adaptation | None:
    """The adaptation an error body asks for, when it names a parameter the server refuses (see the module
    doc), else None.

    >>> refused_parameter(b'{"error": {"message": "Only one completion choice is allowed"}}')
    <Adaptation.ONE_PER_SAMPLE: 'one_per_sample'>
    """
    error = _error_object(body)
    if not isinstance(error, dict):
        return None
    param = error.get("param")
    said = error.get("message")
    message = said if isinstance(said, str) else ""
    if param == "max_tokens" or ("'max_tokens'" in message and "max_completion_tokens" in message):
        return Adaptation.MAX_COMPLETION_TOKENS
    if param == "temperature" or "'temperature'" in message:
        return Adaptation.NO_TEMPERATURE
    if param == "n" or "only one completion choice is allowed" in message.lower():
        return Adaptation.ONE_PER_SAMPLE
    return None
