"""Running a judge over a project's pairs, and the pairs whose latest judgment failed."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from annotate_app.judges import (
    FailureKind,
    JudgeClient,
)
from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services._judge_runs import (
    JudgeFailure,
    JudgeRunReport,
    counts_by_kind,
    failure_of,
)
from annotate_app.services._judge_state import (
    build_judge,
    task_of,
)
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import InvalidInput
from annotate_app.services.inputs import check_int, check_text
from annotate_app.services.judges._common import (
    MAX_CONCURRENCY,
    audit_run,
    check_name,
    close_judge,
    judge_of,
    judge_pairs,
    pair_of,
)
from annotate_app.store import judges as judges_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction

__all__ = ["PAIR_SELECTIONS", "run_judge", "judge_failures", "failure_counts"]


PAIR_SELECTIONS = ("all", "unlabelled", "sample:N")


def _selection(pairs: Any) -> tuple[str, int | None]:
    text = check_text(pairs, "pairs")
    if text in ("all", "unlabelled"):
        return text, None
    match = re.fullmatch(r"sample:(\d{1,9})", text)
    if match is None or int(match.group(1)) < 1:
        raise InvalidInput(f"pairs must be 'all', 'unlabelled' or 'sample:N' (N >= 1); got {text[:60]!r}")
    return "sample", int(match.group(1))


def _selected(inputs: list[dict], how: str, n: int | None, seed: int) -> list[dict]:
    """``all``: every pair not excluded; ``unlabelled``: those no human judged; ``sample:N``: N drawn
    uniformly at random (``seed``) among those humans judged (the calibration sample)."""
    live = [p for p in inputs if not p["excluded"]]
    if how == "all":
        return live
    if how == "unlabelled":
        return [p for p in live if p["n_human"] == 0]
    judged = [p for p in live if p["n_human"] > 0]
    picks = np.random.default_rng(seed).permutation(len(judged))[: n or 0]
    return [judged[i] for i in sorted(picks.tolist())]


def run_judge(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    name: str,
    *,
    pairs: str = "unlabelled",
    concurrency: int = 4,
    dry_run: bool = False,
    seed: int = 0,
    progress: Callable[[Any], Any] | None = None,
) -> JudgeRunReport:
    """Run a judge over the project's pairs (admin): ``pairs`` is ``"all"``, ``"unlabelled"`` (no human
    label yet) or ``"sample:N"`` (N human-judged pairs drawn uniformly at random with ``seed``: the
    calibration sample). Answers already stored are not asked again; a dry run sends and stores nothing."""
    name, (how, n) = check_name(name), _selection(pairs)
    check_int(concurrency, "concurrency", 1, MAX_CONCURRENCY)
    check_int(seed, "seed", 0)
    if not isinstance(dry_run, bool):
        raise InvalidInput(f"dry_run must be True or False; got {dry_run!r:.40}")
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "run judges")
        row = judge_of(s, proj, name)
        task, judge = task_of(s, proj), build_judge(s, proj, row)
        prompt = judges_store.latest_prompt(s, row.id)
        chosen = _selected(judges_store.pair_inputs(s, proj.id), how, n, seed)
    try:
        if dry_run:
            first = JudgeClient(judge, task).dry_run(pair_of(chosen[0])) if chosen else None
            text = "" if first is None else (first.request or first.text)
            return JudgeRunReport(
                judge=name, pairs=len(chosen), sent=0, cached=0, failed=0, dry_run=True, prompt=text
            )
        report = judge_pairs(
            db,
            row,
            judge,
            task,
            chosen,
            prompt_id=prompt.id if prompt else None,
            workers=concurrency,
            progress=progress,
        )
    finally:
        close_judge(judge)
    audit_run(db, actor, proj, AuditAction.JUDGE_RUN, report, pairs)
    return report


def judge_failures(
    db: Database, actor: Actor, project: ProjectRef, name: str, *, kind: str | None = None
) -> list[JudgeFailure]:
    """The pairs whose latest label of judge ``name`` is a failure (reviewer), by query and document: the
    kind, the message and an excerpt of the raw reply. ``kind``: only that `FailureKind`."""
    name = check_name(name)
    wanted = None if kind is None else _check_kind(kind)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see judge failures")
        row = judge_of(s, proj, name)
        rows = judges_store.current_failures(s, proj.id, [row.id], None if wanted is None else str(wanted))
    return [failure_of(r) for r in rows]


def failure_counts(db: Database, actor: Actor, project: ProjectRef) -> dict[str, dict[str, int]]:
    """judge name → failure kind → pairs whose latest label of that judge is a failure of that kind
    (reviewer); judges without a failure are absent, kinds in `FailureKind` order."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see judge failures")
        return counts_by_kind(judges_store.current_failures(s, proj.id))


def _check_kind(kind: Any) -> FailureKind:
    try:
        return FailureKind(kind)
    except ValueError:
        choices = ", ".join(k.value for k in FailureKind)
        raise InvalidInput(f"kind must be one of {choices}; got {str(kind)[:60]!r}") from None
