"""An ensemble judge: several judges grade each pair and one rule combines their grades.

`Combine` is the one list of rules: ``majority`` (the most frequent grade; a tie goes to the lowest tied
grade), ``mean`` (the mean grade rounded half up), ``min`` (the lowest grade). The result keeps every
member's answer as provenance (``sample_grades``, and ``raw_response``: each member's name, grade, reason,
prompt hash, failure and evidence). Its evidence is that of the members whose grade equals the combined
grade. A member failure a rerun retries fails the pair too; a member reply without a grade is left out.
The rules in full: docs/modules.md.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from annotate_app.judges._evidence import merge_spans
from annotate_app.judges._model import (
    Backend,
    FailureKind,
    Judge,
    JudgeResult,
    JudgeTask,
    Pair,
    RenderedPrompt,
    sha256_text,
)

__all__ = ["Combine", "EnsembleJudge", "combine_grades"]


class Combine(StrEnum):
    """How an ensemble combines its members' grades (`combine_grades`)."""

    MAJORITY = "majority"
    MEAN = "mean"
    MIN = "min"


def combine_grades(grades: Sequence[int], rule: Combine | str) -> int:
    """The members' grades combined by ``rule``.

    Raises:
        ValueError: no grade, or an unknown rule.

    >>> [combine_grades([0, 2, 2, 3], r) for r in Combine]
    [2, 2, 0]
    >>> combine_grades([1, 2], "mean"), combine_grades([1, 3], "majority")
    (2, 1)
    """
    if not grades:
        raise ValueError("no grade to combine")
    chosen = Combine(rule)
    if chosen is Combine.MIN:
        return min(grades)
    if chosen is Combine.MEAN:
        return math.floor(sum(grades) / len(grades) + 0.5)
    counts = Counter(grades)
    top = max(counts.values())
    return min(g for g, c in counts.items() if c == top)


class EnsembleJudge:
    """A judge whose grade combines its members' grades (see the module doc)."""

    def __init__(self, name: str, members: Sequence[Judge], combine: Combine | str):
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name must be a non-empty string; got {name!r}")
        if len(members) < 2:
            raise ValueError(f"an ensemble needs at least 2 members; got {len(members)}")
        self._name, self._members, self._combine = name, tuple(members), Combine(combine)

    @property
    def name(self) -> str:
        return self._name

    @property
    def backend(self) -> Backend:
        return Backend.ENSEMBLE

    @property
    def members(self) -> tuple[Judge, ...]:
        return self._members

    def fingerprint(self, task: JudgeTask) -> str:
        parts = [f"ensemble:{self._combine}", *(f"{m.name}={m.fingerprint(task)}" for m in self._members)]
        return sha256_text("\n".join(parts))

    def _prompt_hash(self, hashes: Sequence[str]) -> str:
        return sha256_text("\n".join([f"ensemble:{self._combine}", *hashes]))

    def render(self, pair: Pair, task: JudgeTask) -> RenderedPrompt:
        shown = [m.render(pair, task) for m in self._members]
        text = "\n\n".join(f"--- member {r.judge}\n{r.text}" for r in shown)
        return RenderedPrompt(
            judge=self._name, prompt_hash=self._prompt_hash([r.prompt_hash for r in shown]), text=text
        )

    def judge(self, pair: Pair, task: JudgeTask) -> JudgeResult:
        results = [m.judge(pair, task) for m in self._members]
        provenance = json.dumps(
            [
                {
                    "judge": r.judge,
                    "grade": r.grade,
                    "reason": r.reason,
                    "prompt_hash": r.prompt_hash,
                    "failure": None if r.failure is None else str(r.failure),
                    "evidence": list(r.evidence),
                    "evidence_spans": [list(span) for span in r.evidence_spans],
                }
                for r in results
            ],
            ensure_ascii=False,
        )
        graded = [r.grade for r in results if r.grade is not None]
        retried = next((r for r in results if r.failure is not None and r.failure.retried), None)
        failed = retried or (None if graded else results[0])
        common: dict[str, Any] = {
            "query_id": pair.query_id,
            "doc_id": pair.doc_id,
            "judge": self._name,
            "backend": self.backend,
            "model": "+".join(r.model or r.judge for r in results)[:255],
            "prompt_hash": self._prompt_hash([r.prompt_hash for r in results]),
            "raw_response": provenance,
            "latency_s": max((r.latency_s for r in results), default=0.0),
            "prompt_tokens": sum(r.prompt_tokens for r in results),
            "completion_tokens": sum(r.completion_tokens for r in results),
            "samples": len(results),
            "sample_grades": tuple(r.grade for r in results),
            "requests": sum(r.requests for r in results),
            "retries": sum(r.retries for r in results),
        }
        if failed is not None:
            kind = failed.failure or FailureKind.NO_GRADE
            error = f"member {failed.judge}: {failed.error}"
            return JudgeResult(
                grade=None, failure=kind, error=error, retry_after_s=failed.retry_after_s, **common
            )
        grade = combine_grades(graded, self._combine)
        reasons = "; ".join(f"{r.judge}: {r.grade}" for r in results)
        agreeing = [r for r in results if r.grade == grade]
        return JudgeResult(
            grade=grade,
            reason=f"{self._combine} of {reasons}",
            confidence=sum(g == grade for g in graded) / len(results),
            evidence=tuple(dict.fromkeys(q for r in agreeing for q in r.evidence)),
            evidence_spans=merge_spans(span for r in agreeing for span in r.evidence_spans),
            **common,
        )

    def close(self) -> None:
        """Close the members that hold connections."""
        for member in self._members:
            close = getattr(member, "close", None)
            if callable(close):
                close()
