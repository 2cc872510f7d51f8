"""Reading a grade out of a model's reply, and the majority of several samples.

JSON objects (whole, fenced or amid prose) and ``final score: N`` lines are read. A grade is read only when
every grade found agrees: several are `FailureKind.AMBIGUOUS`, none or a non-integer `NO_GRADE`, one off the
scale `OUT_OF_SCALE`. Never a guess. The object's ``evidence`` (a list of quotes from the document, or one
quote) is read beside the grade; a reply without it still gives its grade.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotate_app.judges._model import FailureKind, GradeScale

__all__ = ["Reply", "parse_reply", "Vote", "majority", "MAX_QUOTES", "MAX_QUOTE_CHARS"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)\n?[ \t]*```", re.DOTALL)
_FINAL = re.compile(
    r"^[ \t>#*_]*final[ \t]+score[ \t*_]*:[ \t*_]*([+-]?\d+)[ \t*_.]*$", re.IGNORECASE | re.MULTILINE
)
_INT = re.compile(r"[+-]?\d+")
_MAX_OBJECTS = 20
_MAX_ASPECTS = 20
MAX_QUOTES = 20
"""At most this many quotes of a reply's ``evidence`` are kept (the first ones)."""
MAX_QUOTE_CHARS = 2000
"""A quote longer than this is cut to it."""
_NOT_ASPECTS = ("grade", "reason", "evidence")


@dataclass(frozen=True)
class Reply:
    """One reply read: a grade, a reason, the aspects and the quoted evidence, or a failure kind and what is
    wrong."""

    grade: int | None
    reason: str = ""
    failure: FailureKind | None = None
    error: str = ""
    aspects: Mapping[str, Any] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()


def parse_reply(text: str, scale: GradeScale) -> Reply:
    """The grade, reason, aspects and evidence quotes of a reply (see the module doc).

    >>> scale = GradeScale.default()
    >>> parse_reply('{"grade": 2, "reason": "half of it"}', scale)
    Reply(grade=2, reason='half of it', failure=None, error='', aspects={}, evidence=())
    >>> parse_reply('{"grade": 3, "evidence": ["Hold the button for 10 s.", 7, " "]}', scale).evidence
    ('Hold the button for 10 s.',)
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
        return _checked(first["grade"], reason, scale, _aspects(first), _quotes(first.get("evidence")))
    return _checked(scores[0], _FINAL.sub("", text).strip(), scale, {}, ())


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
        if key in _NOT_ASPECTS or len(out) >= _MAX_ASPECTS:
            continue
        if isinstance(value, str):
            out[str(key)[:64]] = value[:500]
        elif value is None or isinstance(value, bool | int | float):
            out[str(key)[:64]] = value
    return out


def _quotes(value: Any) -> tuple[str, ...]:
    """The quotes of an ``evidence`` field: a string or a list of them; blank and non-string items are
    skipped, the first `MAX_QUOTES` kept, each cut at `MAX_QUOTE_CHARS` characters."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    quotes = [q.strip()[:MAX_QUOTE_CHARS] for q in items if isinstance(q, str) and q.strip()]
    return tuple(quotes[:MAX_QUOTES])


def _integer(value: Any) -> int | None:
    if isinstance(value, str) and _INT.fullmatch(value.strip()):
        return int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _checked(
    value: Any, reason: str, scale: GradeScale, aspects: dict[str, Any], evidence: tuple[str, ...]
) -> Reply:
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
    return Reply(grade=grade, reason=reason, aspects=aspects, evidence=evidence)


@dataclass(frozen=True)
class Vote:
    """The outcome of several samples: the majority grade (None if no sample had one), its vote share, and
    the reason, aspects and evidence of the first sample that gave it."""

    grade: int | None
    confidence: float
    reason: str
    aspects: Mapping[str, Any] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()


def majority(replies: Sequence[Reply]) -> Vote:
    """The most frequent grade among ``replies``; a tie goes to the lowest tied grade (the cautious choice).
    The confidence is the winner's share of all samples, unreadable ones included.

    >>> r = [Reply(grade=2, reason="a"), Reply(grade=3, reason="b"), Reply(grade=2, reason="c")]
    >>> majority(r)
    Vote(grade=2, confidence=0.6666666666666666, reason='a', aspects={}, evidence=())
    >>> majority([Reply(grade=1), Reply(grade=3), Reply(grade=None, failure=FailureKind.NO_GRADE)]).grade
    1
    """
    counts = Counter(r.grade for r in replies if r.grade is not None)
    if not counts:
        return Vote(grade=None, confidence=0.0, reason="")
    top = max(counts.values())
    grade = min(g for g, c in counts.items() if c == top)
    first = next(r for r in replies if r.grade == grade)
    return Vote(
        grade=grade,
        confidence=top / len(replies),
        reason=first.reason,
        aspects=first.aspects,
        evidence=first.evidence,
    )
