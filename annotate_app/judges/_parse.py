"""Reading a grade out of a model's reply, and the majority of several samples.

Accepted, in this order:

1. the whole reply as a JSON object, or the JSON object inside a Markdown fence (```` ```json ... ``` ````
   or a bare ```` ``` ```` fence): its ``grade`` (a JSON integer, or a string of one) and ``reason``;
2. otherwise a line ``final score: N`` (any case; Markdown emphasis ``*``/``_`` and a heading or quote mark
   around it are ignored); the rest of the reply is the reason. Several such lines must agree.

Anything else, a grade that is not an integer, or one not on the scale, is a failure with the reason why:
never a guess.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from annotate_app.judges._model import FailureKind, GradeScale

__all__ = ["Reply", "parse_reply", "Vote", "majority"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)\n?[ \t]*```", re.DOTALL)
_FINAL = re.compile(
    r"^[ \t>#*_]*final[ \t]+score[ \t*_]*:[ \t*_]*([+-]?\d+)[ \t*_.]*$", re.IGNORECASE | re.MULTILINE
)
_INT = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class Reply:
    """One reply read: a grade and a reason, or a failure kind and what is wrong."""

    grade: int | None
    reason: str = ""
    failure: FailureKind | None = None
    error: str = ""


def parse_reply(text: str, scale: GradeScale) -> Reply:
    """The grade and reason of a reply (see the module doc).

    >>> scale = GradeScale.default()
    >>> parse_reply('{"grade": 2, "reason": "half of it"}', scale)
    Reply(grade=2, reason='half of it', failure=None, error='')
    >>> parse_reply("It is on topic.\\nFinal score: 1", scale).grade
    1
    >>> parse_reply('{"grade": 7}', scale).error
    'grade 7 is not on the scale (0, 1, 2, 3)'
    """
    obj = _json_object(text)
    if obj is not None and "grade" in obj:
        reason = obj.get("reason", "")
        return _checked(obj["grade"], reason if isinstance(reason, str) else json.dumps(reason), scale)
    scores = _FINAL.findall(text)
    if not scores:
        what = (
            "a JSON object without 'grade'"
            if obj is not None
            else "no JSON object and no 'final score:' line"
        )
        return Reply(grade=None, failure=FailureKind.NO_GRADE, error=f"no grade in the reply ({what})")
    if len({int(s) for s in scores}) > 1:
        return Reply(
            grade=None,
            failure=FailureKind.NO_GRADE,
            error=f"the 'final score:' lines disagree: {', '.join(scores)}",
        )
    return _checked(scores[0], _FINAL.sub("", text).strip(), scale)


def _json_object(text: str) -> dict[str, Any] | None:
    """The reply's JSON object (whole reply, else the first fence that holds one), or None."""
    for candidate in (text, *_FENCE.findall(text)):
        try:
            obj = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            return obj
    return None


def _checked(value: Any, reason: str, scale: GradeScale) -> Reply:
    if isinstance(value, str) and _INT.fullmatch(value.strip()):
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool):
        return Reply(grade=None, failure=FailureKind.NO_GRADE, error=f"grade is not an integer: {value!r}")
    if value not in scale:
        return Reply(
            grade=None,
            reason=reason,
            failure=FailureKind.OUT_OF_SCALE,
            error=f"grade {value} is not on the scale {scale.values}",
        )
    return Reply(grade=value, reason=reason)


@dataclass(frozen=True)
class Vote:
    """The outcome of several samples: the majority grade (None if no sample had one) and its vote share."""

    grade: int | None
    confidence: float
    reason: str


def majority(replies: Sequence[Reply]) -> Vote:
    """The most frequent grade among ``replies``; a tie goes to the lowest tied grade (the cautious choice).
    The confidence is the winner's share of all samples, unreadable ones included.

    >>> r = [Reply(grade=2, reason="a"), Reply(grade=3, reason="b"), Reply(grade=2, reason="c")]
    >>> majority(r)
    Vote(grade=2, confidence=0.6666666666666666, reason='a')
    >>> majority([Reply(grade=1), Reply(grade=3), Reply(grade=None, failure=FailureKind.NO_GRADE)]).grade
    1
    """
    counts = Counter(r.grade for r in replies if r.grade is not None)
    if not counts:
        return Vote(grade=None, confidence=0.0, reason="")
    top = max(counts.values())
    grade = min(g for g, c in counts.items() if c == top)
    reason = next(r.reason for r in replies if r.grade == grade)
    return Vote(grade=grade, confidence=top / len(replies), reason=reason)
