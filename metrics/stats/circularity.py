"""Circularity of a leaderboard judged by a machine: runs made by the judge's own model family.

`model_family` names the family of a model from its name; `same_family` tells whether two models share one.
"""

from __future__ import annotations

import re

__all__ = ["model_family", "same_family"]

_ORG = re.compile(r"^.*/")
_FAMILY = re.compile(r"[a-z]+")


def model_family(model: str) -> str:
    """The family of a model: its name without the organisation (before the last ``/``), lowercased, up to
    the first character that is not a letter ("" for an empty or unnamed model).

    Args:
        model: a model name as a run or a judge records it (``"Qwen/Qwen2.5-7B-Instruct"``, ``"qwen3:8b"``).

    Returns:
        The family, lowercased; "" when none can be read (also for a non-string).

    >>> [model_family(m) for m in ("Qwen/Qwen2.5-7B-Instruct", "qwen3:8b", "gpt-4o-mini", "", "4o")]
    ['qwen', 'qwen', 'gpt', '', '']
    """
    if not isinstance(model, str):
        return ""
    found = _FAMILY.match(_ORG.sub("", model.strip()).lower())
    return found.group(0) if found else ""


def same_family(first: str, second: str) -> bool:
    """Whether two models are of one known family (`model_family`; an unknown family matches nothing).

    Args:
        first: a model name.
        second: another model name.

    Returns:
        True when both have the same non-empty family.

    >>> same_family("Qwen/Qwen3-8B", "qwen2.5:7b"), same_family("gpt-4o", "llama3"), same_family("", "")
    (True, False, False)
    """
    family = model_family(first)
    return bool(family) and family == model_family(second)
