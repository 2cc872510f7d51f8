"""Machine judge runs, what they report and the failures they leave: the run report (counts, failures by
kind, adaptations, why a run stopped), the adaptations remembered with a judge, and the failed pairs.

Private to `annotate_app.services`: `judges` re-exports `JudgeRunReport` and `JudgeFailure`; these helpers
take a database or stored rows, the role checks are the callers'.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from annotate_app.judges import Adaptation, FailureKind, Judge, JudgeResult
from annotate_app.services._judge_state import adapted_of
from annotate_app.store import judges
from annotate_app.store.db import Database
from annotate_app.store.models import MachineJudge

__all__ = [
    "JudgeRunReport",
    "JudgeFailure",
    "remember_adaptations",
    "stopped_message",
    "failure_of",
    "counts_by_kind",
]

EXCERPT_CHARS = 200


@dataclass(frozen=True)
class JudgeRunReport:
    """What a run (or an import) did: ``pairs`` selected; ``sent`` asked of the judge, ``cached`` answered
    from the store, ``failed`` without a grade; ``requests`` HTTP requests (retries included). A dry run
    sends and stores nothing: ``prompt`` is what the first pair would send.

    ``failures``: (failure kind, count, the first message of that kind) per kind, in `FailureKind` order;
    ``adapted``: the adaptations to the server made in this run, each with the server's message; ``stopped``:
    why the run stopped before every pair was sent ("" when it ran to the end)."""

    judge: str
    pairs: int
    sent: int
    cached: int
    failed: int
    requests: int = 0
    dry_run: bool = False
    prompt: str = ""
    failures: tuple[tuple[str, int, str], ...] = ()
    adapted: tuple[tuple[str, str], ...] = ()
    stopped: str = ""

    @property
    def message(self) -> str:
        """The run's summary: one line, then one per failure kind (its count and first message), one per
        adaptation, and why it stopped early."""
        if self.dry_run:
            return f"judge {self.judge}: dry run over {self.pairs} pairs, nothing sent"
        lines = [
            f"judge {self.judge}: {self.pairs} pairs, {self.sent} sent, {self.cached} cached, "
            f"{self.failed} failed"
        ]
        lines += [f"  {kind}: {count} (first: {first})" for kind, count, first in self.failures]
        lines += [
            f"  adapted: {Adaptation(a).description} (the server said: {said or 'no message'})"
            for a, said in self.adapted
        ]
        if self.stopped:
            lines.append(f"stopped early: {self.stopped}")
        return "\n".join(lines)


@dataclass(frozen=True)
class JudgeFailure:
    """A pair whose latest label of a judge is a failure: its kind, message and an excerpt of the reply."""

    judge: str
    query_id: str
    doc_id: str
    kind: FailureKind
    message: str
    excerpt: str
    created_at: datetime


def failure_of(row: dict[str, Any]) -> JudgeFailure:
    """A `JudgeFailure` from a row of `annotate_app.store.judges.current_failures`."""
    return JudgeFailure(
        judge=row["judge"],
        query_id=row["query_id"],
        doc_id=row["doc_id"],
        kind=FailureKind(row["failure"]),
        message=row["error"],
        excerpt=" ".join((row["raw_response"] or "").split())[:EXCERPT_CHARS],
        created_at=row["created_at"],
    )


def counts_by_kind(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """judge → failure kind → count of rows of `annotate_app.store.judges.current_failures`, kinds in
    `FailureKind` order."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        kinds = out.setdefault(r["judge"], {})
        kinds[r["failure"]] = kinds.get(r["failure"], 0) + 1
    order = {str(k): i for i, k in enumerate(FailureKind)}
    return {j: dict(sorted(k.items(), key=lambda kv: order.get(kv[0], len(order)))) for j, k in out.items()}


def remember_adaptations(db: Database, row: MachineJudge, judge: Judge) -> tuple[tuple[str, str], ...]:
    """Store the adaptations the judge made in this run with its row (so later runs start adapted)."""
    notes = getattr(judge, "adaptation_notes", None)
    if not notes:
        return ()
    made = tuple((str(a), str(m)) for a, m in notes.items())
    with db.write() as s:
        current = judges.find_judge(s, row.project_id, row.name)
        if current is not None:
            params = dict(current.params or {})
            params["adapted"] = {**adapted_of(params), **dict(made)}
            judges.set_judge_params(s, current.id, params)
    return made


def stopped_message(result: JudgeResult | None, done: int, failed: int, pairs: int) -> str:
    """Why a run stopped before sending every pair, with when to try again ("" when it did not stop)."""
    if result is None:
        return ""
    when = ""
    if result.retry_after_s is not None:
        at = datetime.now(UTC) + timedelta(seconds=result.retry_after_s)
        when = (
            f"; the server asks to wait {result.retry_after_s:.0f} s: run again after {at:%Y-%m-%d %H:%M} UTC"
        )
    elif result.failure is FailureKind.QUOTA:
        when = "; add credit or raise the quota, then run again"
    return (
        f"{result.failure}: {result.error}{when}; {done} of {pairs} pairs judged ({failed} failed), "
        f"{pairs - done} not sent (a rerun asks only the pairs without an answer)"
    )
