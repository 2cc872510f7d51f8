"""Replay: machine labels made elsewhere, read from JSONL (``query_id``, ``doc_id``, ``grade``, and optional
``reason``, ``confidence``, ``model``, ``prompt``, ``evidence``).

``evidence`` is a list of spans ``[[start, end], ...]`` (code-point offsets into the text of the document
version judged; checked against it when imported, as a human's spans are) or a list of quotes ``["...",
...]`` (located in the text as a judge's quotes are), not both.

Each bad line is reported as ``file:line: reason: 'line'``, and nothing is returned if any line is bad. A
pair may appear once.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from annotate_app.judges._model import (
    Backend,
    FailureKind,
    GradeScale,
    JudgeResult,
    JudgeTask,
    Pair,
    RenderedPrompt,
    sha256_text,
)
from metrics.errors import FormatError, Problem

__all__ = ["MachineLabel", "read_machine_labels", "ReplayJudge"]

MAX_PROBLEMS = 1000
_BAD_ID = re.compile(r"\s")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_OPTIONAL_STRINGS = ("reason", "model", "prompt")


@dataclass(frozen=True)
class MachineLabel:
    """One line of a replay file, checked."""

    query_id: str
    doc_id: str
    grade: int
    reason: str
    confidence: float | None
    model: str
    prompt_hash: str
    line: int
    text: str
    evidence: tuple[str, ...] = ()
    evidence_spans: tuple[tuple[int, int], ...] = ()


def read_machine_labels(source: str | os.PathLike[str] | IO[Any], *, scale: GradeScale) -> list[MachineLabel]:
    """Every label of a replay file, or `FormatError` listing every bad line (see the module doc).

    >>> rows = read_machine_labels(io.StringIO('{"query_id": "q1", "doc_id": "d1", "grade": 2}\\n'),
    ...                            scale=GradeScale.default())
    >>> rows[0].grade, rows[0].confidence
    (2, None)
    """
    name, lines = _lines(source)
    problems: list[Problem] = []
    seen: dict[tuple[str, str], int] = {}
    labels: list[MachineLabel] = []
    for number, text, undecodable in lines:
        label = undecodable or _label(number, text, scale)
        if isinstance(label, str):
            problems.append(Problem(source=name, line=number, text=text, reason=label))
        elif (first := seen.setdefault((label.query_id, label.doc_id), number)) != number:
            reason = (
                f"duplicate pair (query {label.query_id!r}, document {label.doc_id!r}), first on line {first}"
            )
            problems.append(Problem(source=name, line=number, text=text, reason=reason))
        else:
            labels.append(label)
        if len(problems) >= MAX_PROBLEMS:
            break
    if problems:
        raise FormatError(problems)
    return labels


def _lines(source: str | os.PathLike[str] | IO[Any]) -> tuple[str, Iterator[tuple[int, str, str | None]]]:
    """The source's name and the (line number, text) of every non-blank line."""
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise FormatError(Problem(source=str(path), line=None, text=str(path), reason="no such file"))
        return str(path), _numbered(path.read_bytes())
    if hasattr(source, "read"):
        content = source.read()
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        name = str(getattr(source, "name", "<stream>"))
        return name, _numbered(data)
    raise FormatError(
        Problem(source="<input>", line=None, text=repr(source), reason="expected a path or a file")
    )


def _numbered(data: bytes) -> Iterator[tuple[int, str, str | None]]:
    """(line number, text, why it cannot be decoded or None) of every non-blank line."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    for number, raw in enumerate(io.BytesIO(data), 1):
        raw = raw.rstrip(b"\n").rstrip(b"\r")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield number, raw.decode("utf-8", "replace"), f"not valid UTF-8 (byte {exc.start + 1})"
            continue
        if text.strip():
            yield number, text, None


def _label(number: int, text: str, scale: GradeScale) -> MachineLabel | str:
    """The checked label of one line, or the reason it is bad."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"invalid JSON ({exc.msg} at column {exc.colno})"
    except (ValueError, RecursionError):
        return "invalid JSON (too deeply nested or a number too long)"
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    problem = _id_problem(obj, "query_id") or _id_problem(obj, "doc_id") or _grade_problem(obj, scale)
    problem = problem or _confidence_problem(obj.get("confidence")) or _strings_problem(obj)
    if problem:
        return problem
    evidence = _evidence(obj.get("evidence"))
    if isinstance(evidence, str):
        return evidence
    quotes, spans = evidence
    prompt = obj.get("prompt") or ""
    return MachineLabel(
        query_id=obj["query_id"],
        doc_id=obj["doc_id"],
        grade=obj["grade"],
        reason=obj.get("reason") or "",
        confidence=None if obj.get("confidence") is None else float(obj["confidence"]),
        model=obj.get("model") or "",
        prompt_hash=prompt if _HEX64.fullmatch(prompt) else (sha256_text(prompt) if prompt else ""),
        line=number,
        text=text,
        evidence=quotes,
        evidence_spans=spans,
    )


def _id_problem(obj: dict[str, Any], key: str) -> str | None:
    if key not in obj:
        return f"missing {key}"
    value = obj[key]
    if not isinstance(value, str) or not value or _BAD_ID.search(value):
        return f"{key} must be a non-empty string without whitespace; got {value!r}"
    return None


def _grade_problem(obj: dict[str, Any], scale: GradeScale) -> str | None:
    if "grade" not in obj:
        return "missing grade"
    grade = obj["grade"]
    if not isinstance(grade, int) or isinstance(grade, bool):
        return f"grade must be an integer; got {grade!r}"
    if grade not in scale:
        return f"grade {grade} is not on the scale {scale.values}"
    return None


def _confidence_problem(value: Any) -> str | None:
    if value is None:
        return None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not 0 <= value <= 1 or not math.isfinite(value):  # range first: no float overflow
        return f"confidence must be a number in [0, 1] or null; got {value!r}"
    return None


def _strings_problem(obj: dict[str, Any]) -> str | None:
    for key in _OPTIONAL_STRINGS:
        if obj.get(key) is not None and not isinstance(obj[key], str):
            return f"{key} must be a string; got {type(obj[key]).__name__} {obj[key]!r:.60}"
    return None


def _evidence(value: Any) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...]] | str:
    """(quotes, spans) of an ``evidence`` field, or why it is bad."""
    if value is None:
        return (), ()
    if not isinstance(value, list):
        what = f"{type(value).__name__} {value!r:.60}"
        return f"evidence must be a list of [start, end] spans or of quotes; got {what}"
    if all(isinstance(q, str) for q in value):
        blank = next((q for q in value if not q.strip()), None)
        if blank is not None:
            return f"evidence quotes must not be blank; got {blank!r}"
        return tuple(value), ()
    spans = []
    for span in value:
        ints = isinstance(span, list) and len(span) == 2
        if not ints or not all(isinstance(x, int) and not isinstance(x, bool) for x in span):
            return f"evidence must be a list of [start, end] spans or of quotes; got the item {span!r:.60}"
        spans.append((span[0], span[1]))
    return (), tuple(spans)


class ReplayJudge:
    """A judge that answers from machine labels read from a replay file (`read_machine_labels`).

    A pair the file does not hold is a `FailureKind.NOT_FOUND` result; a grade off the task's scale (when the
    file was read with another scale) is `FailureKind.OUT_OF_SCALE`.
    """

    def __init__(self, labels: list[MachineLabel], *, name: str = "replay"):
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name must be a non-empty string; got {name!r}")
        self._name = name
        self._labels = {(x.query_id, x.doc_id): x for x in labels}
        digest = sha256_text("\n".join(sorted(x.text for x in labels)))
        self._fingerprint = sha256_text(f"replay\n{digest}")

    @classmethod
    def from_file(
        cls, source: str | os.PathLike[str] | IO[Any], *, scale: GradeScale, name: str | None = None
    ) -> ReplayJudge:
        labels = read_machine_labels(source, scale=scale)
        default = f"replay:{Path(str(getattr(source, 'name', source))).name}"
        return cls(labels, name=name or default)

    def __len__(self) -> int:
        return len(self._labels)

    @property
    def name(self) -> str:
        return self._name

    @property
    def backend(self) -> Backend:
        return Backend.REPLAY

    def fingerprint(self, task: JudgeTask) -> str:
        return sha256_text(f"{self._fingerprint}\n{task.as_json()}")

    def render(self, pair: Pair, task: JudgeTask) -> RenderedPrompt:
        label = self._labels.get((pair.query_id, pair.doc_id))
        text = label.text if label else "(no label in the replay file)"
        return RenderedPrompt(judge=self._name, prompt_hash=label.prompt_hash if label else "", text=text)

    def judge(self, pair: Pair, task: JudgeTask) -> JudgeResult:
        label = self._labels.get((pair.query_id, pair.doc_id))
        if label is None:
            return JudgeResult(
                query_id=pair.query_id,
                doc_id=pair.doc_id,
                judge=self._name,
                backend=self.backend,
                model="",
                grade=None,
                failure=FailureKind.NOT_FOUND,
                error=f"the replay file has no label for query {pair.query_id!r}, document {pair.doc_id!r}",
                samples=0,
            )
        on_scale = label.grade in task.scale
        return JudgeResult(
            query_id=pair.query_id,
            doc_id=pair.doc_id,
            judge=self._name,
            backend=self.backend,
            model=label.model,
            grade=label.grade if on_scale else None,
            reason=label.reason,
            confidence=label.confidence if on_scale else None,
            failure=None if on_scale else FailureKind.OUT_OF_SCALE,
            error="" if on_scale else f"grade {label.grade} is not on the scale {task.scale.values}",
            prompt_hash=label.prompt_hash,
            raw_response=label.text,
            sample_grades=(label.grade,),
            evidence=label.evidence if on_scale else (),
            evidence_spans=label.evidence_spans if on_scale else (),
        )
