"""Reading a grade out of a model's reply, and the majority of several samples.

JSON objects (whole, fenced or amid prose) and ``final score: N`` lines are read. A grade is read only when
every grade found agrees: several are `FailureKind.AMBIGUOUS`, none or a non-integer `NO_GRADE`, one off the
scale `OUT_OF_SCALE`. Never a guess.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotate_app.judges._model import FailureKind, GradeScale

__all__ = ["Reply", "parse_reply", "Vote", "majority"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)\n?[ \t]*```", re.DOTALL)
_FINAL = re.compile(
    r"^[ \t>#*_]*final[ \t]+score[ \t*_]*:[ \t*_]*([+-]?\d+)[ \t*_.]*$", re.IGNORECASE | re.MULTILINE
)
_INT = re.compile(r"[+-]?\d+")
_MAX_OBJECTS = 20
_MAX_ASPECTS = 20


@dataclass(frozen=True)
class Reply:
    """One reply read: a grade, a reason and the aspects, or a failure kind and what is wrong."""

    grade: int | None
    reason: str = ""
    failure: FailureKind | None = None
    error: str = ""
    aspects: Mapping[str, Any] = field(default_factory=dict)


def parse_reply(text: str, scale: GradeScale) -> Reply:
    """The grade, reason and aspects of a reply (see the module doc).

    >>> scale = GradeScale.default()
    >>> parse_reply('{"grade": 2, "reason": "half of it"}', scale)
    Reply(grade=2, reason='half of it', failure=None, error='', aspects={})
    >>> parse_reply("It is on topic.\\nFinal score: 1", scale).grade
    1
    >>> parse_reply('{"grade": 7}', scale).error
    'grade 7 is not on the scale (0, 1, 2, 3)'
    >>> parse_reply('{"grade": 1}\\n##final score: 3', scale).error
    "the reply gives different grades: 1 (JSON), 3 ('final score' line)"
    """
    objects = [o for o in _json_objects(text) if "grade" in o]
    scores = _FINAL.findall(text)
    if not objects and not scores:
        what = (
            "a JSON object without 'grade'"
            if _json_objects(text)
            else "no JSON object and no 'final score:' line"
        )
        return Reply(grade=None, failure=FailureKind.NO_GRADE, error=f"no grade in the reply ({what})")
    found = [(o["grade"], "JSON") for o in objects] + [(s, "'final score' line") for s in scores]
    values = [_integer(v) for v, _ in found]
    if len({v if v is not None else repr(found[i][0]) for i, v in enumerate(values)}) > 1:
        shown = ", ".join(f"{v} ({where})" for v, where in found)
        return Reply(
            grade=None, failure=FailureKind.AMBIGUOUS, error=f"the reply gives different grades: {shown}"
        )
    if objects:
        first = objects[0]
        reason = first.get("reason", "")
        reason = reason if isinstance(reason, str) else json.dumps(reason)
        return _checked(first["grade"], reason, scale, _aspects(first))
    return _checked(scores[0], _FINAL.sub("", text).strip(), scale, {})


def _json_objects(text: str) -> list[dict[str, Any]]:
    """The reply's JSON objects: the whole reply, else those in fences and those embedded in prose."""
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):
        whole = None
    if isinstance(whole, dict):
        return [whole]
    out: list[dict[str, Any]] = []
    for candidate in _FENCE.findall(text):
        try:
            obj = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            out.append(obj)
    outside = _FENCE.sub("", text)
    decoder = json.JSONDecoder()
    at = outside.find("{")
    while at >= 0 and len(out) < _MAX_OBJECTS:
        try:
            obj, end = decoder.raw_decode(outside, at)
        except (ValueError, RecursionError):
            at = outside.find("{", at + 1)
            continue
        if isinstance(obj, dict):
            out.append(obj)
        at = outside.find("{", end)
    return out


def _aspects(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object's scalar fields besides the grade and reason (at most 20, strings cut at 500)."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if key in ("grade", "reason") or len(out) >= _MAX_ASPECTS:
            continue
        if isinstance(value, str):
            out[str(key)[:64]] = value[:500]
        elif value is None or isinstance(value, bool | int | float):
            out[str(key)[:64]] = value
    return out


def _integer(value: Any) -> int | None:
    if isinstance(value, str) and _INT.fullmatch(value.strip()):
        return int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _checked(value: Any, reason: str, scale: GradeScale, aspects: dict[str, Any]) -> Reply:
    grade = _integer(value)
    if grade is None:
        return Reply(grade=None, failure=FailureKind.NO_GRADE, error=f"grade is not an integer: {value!r}")
    if grade not in scale:
        return Reply(
            grade=None,
            reason=reason,
            failure=FailureKind.OUT_OF_SCALE,
            error=f"grade {grade} is not on the scale {scale.values}",
            aspects=aspects,
        )
    return Reply(grade=grade, reason=reason, aspects=aspects)


@dataclass(frozen=True)
class Vote:
    """The outcome of several samples: the majority grade (None if no sample had one) and its vote share."""

    grade: int | None
    confidence: float
    reason: str
    aspects: Mapping[str, Any] = field(default_factory=dict)


def majority(replies: Sequence[Reply]) -> Vote:
    """The most frequent grade among ``replies``; a tie goes to the lowest tied grade (the cautious choice).
    The confidence is the winner's share of all samples, unreadable ones included.

    >>> r = [Reply(grade=2, reason="a"), Reply(grade=3, reason="b"), Reply(grade=2, reason="c")]
    >>> majority(r)
    Vote(grade=2, confidence=0.6666666666666666, reason='a', aspects={})
    >>> majority([Reply(grade=1), Reply(grade=3), Reply(grade=None, failure=FailureKind.NO_GRADE)]).grade
    1
    """
    counts = Counter(r.grade for r in replies if r.grade is not None)
    if not counts:
        return Vote(grade=None, confidence=0.0, reason="")
    top = max(counts.values())
    grade = min(g for g, c in counts.items() if c == top)
    first = next(r for r in replies if r.grade == grade)
    return Vote(grade=grade, confidence=top / len(replies), reason=first.reason, aspects=first.aspects)
