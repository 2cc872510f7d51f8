"""What the judge services share: a judge's name checked and looked up, its client over the store's
cache, the loop that judges pairs and stores each answer, and the audit record of a run."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy.orm import Session

from annotate_app.judges import (
    FailureKind,
    Judge,
    JudgeClient,
    JudgeResult,
    JudgeTask,
    Pair,
)
from annotate_app.services._judge_runs import (
    JudgeRunReport,
    remember_adaptations,
    stopped_message,
)
from annotate_app.services.auth import Actor, audit
from annotate_app.services.errors import InvalidInput, NotFound
from annotate_app.services.inputs import check_text
from annotate_app.services.judges.cache import StoreCache
from annotate_app.store import judges as judges_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction
from annotate_app.store.models import MachineJudge, Project

MAX_CONCURRENCY = 64


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


def check_name(name: Any) -> str:
    text = check_text(name, "judge name")
    if not _NAME.fullmatch(text):
        raise InvalidInput(
            "judge name must be 1-64 letters, digits, '.', '_', ':' or '-', starting with a letter or "
            f"digit; got {text[:80]!r}"
        )
    return text


def judge_of(s: Session, project: Project, name: str) -> MachineJudge:
    row = judges_store.find_judge(s, project.id, name)
    if row is None:
        raise NotFound(f"judge {name!r} does not exist in project {project.name!r}")
    return row


def pair_of(item: dict, *, document: str | None = None, version: str | None = None) -> Pair:
    return Pair(
        query_id=item["query_id"],
        query=item["query_text"],
        doc_id=item["doc_id"],
        document=item["doc_text"] if document is None else document,
        doc_version=str(item["doc_version"]) if version is None else version,
    )


def client_of(
    judge: Judge, task: JudgeTask, cache: StoreCache, concurrency: int, progress: Any
) -> JudgeClient:
    return JudgeClient(judge, task, cache=cache, workers=concurrency, progress=progress)


def close_judge(judge: Judge) -> None:
    close = getattr(judge, "close", None)
    if callable(close):
        close()


def audit_run(db: Database, actor: Actor, proj: Project, action: AuditAction, report: Any, what: str) -> None:
    with db.write() as s:
        details = {
            k: v for k, v in vars(report).items() if isinstance(v, int | float | str) and k != "prompt"
        }
        audit(
            s, actor, action, project_id=proj.id, target=report.judge, details={**details, "what": what[:200]}
        )


def judge_pairs(
    db: Database,
    row: MachineJudge,
    judge: Judge,
    task: JudgeTask,
    chosen: list[dict],
    *,
    prompt_id: int | None,
    workers: int,
    progress: Any = None,
) -> JudgeRunReport:
    mapping = {(p["query_id"], p["doc_id"]): (p["pair_id"], p["doc_version"]) for p in chosen}
    cache = StoreCache(db, row, mapping, prompt_id=prompt_id, texts={p["pair_id"]: p["text"] for p in chosen})
    client = client_of(judge, task, cache, workers, progress)
    seen: dict[FailureKind, list[Any]] = {}

    def sink(result: JudgeResult) -> None:
        cache.record(result)
        if result.failure is not None:
            entry = seen.setdefault(result.failure, [0, result.error])
            entry[0] += 1

    try:
        counts = client.run_into((pair_of(p) for p in chosen), sink)
    except ValueError as exc:
        raise InvalidInput(f"judge {row.name!r} cannot judge this project: {exc}") from None
    adapted = remember_adaptations(db, row, judge)
    return JudgeRunReport(
        judge=row.name,
        pairs=len(chosen),
        sent=counts.judged,
        cached=counts.cached,
        failed=counts.failed,
        requests=counts.sent,
        failures=tuple((str(k), seen[k][0], seen[k][1]) for k in FailureKind if k in seen),
        adapted=adapted,
        stopped=stopped_message(client.stopped, counts.done, counts.failed, len(chosen)),
    )
