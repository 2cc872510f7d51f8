"""Importing labels a judge made elsewhere, as a ``replay`` judge of the project."""

from __future__ import annotations

import io
import os
from typing import Any

from annotate_app.judges import (
    JudgeTask,
    ReplayJudge,
    read_machine_labels,
)
from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services._judge_runs import (
    JudgeRunReport,
)
from annotate_app.services._judge_state import (
    task_of,
)
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.services.inputs import MAX_REASON, check_text
from annotate_app.services.judges._common import audit_run, check_name, judge_pairs
from annotate_app.store import judges as judges_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction, JudgeBackend
from annotate_app.store.models import MachineJudge, Project
from metrics.errors import FormatError
from metrics.passages import SpanError, check_spans

__all__ = ["import_labels"]


def import_labels(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    name: str,
    source: bytes | str | os.PathLike[str],
    *,
    filename: str = "machine-labels.jsonl",
) -> JudgeRunReport:
    """Import machine labels made elsewhere (admin), JSONL as `annotate_app.judges.read_machine_labels`
    reads it, as judge ``name`` (a ``replay`` judge, added if new). Every line must name a pair of the
    project; its ``evidence`` spans must be valid in the text of the pair's current document version, as a
    human's are (its quotes are located there); importing the same file again adds nothing."""
    name, filename = check_name(name), check_text(filename, "filename")
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import machine labels")
        task = task_of(s, proj)
        inputs = {(p["query_id"], p["doc_id"]): p for p in judges_store.pair_inputs(s, proj.id)}
    labels = _read_labels(source, filename, task)
    for x in labels:
        if len(x.reason) > MAX_REASON:
            raise InvalidInput(
                f"{filename}:{x.line}: reason must have at most {MAX_REASON} characters; got {len(x.reason)}"
            )
    unknown = [(x.query_id, x.doc_id, x.line) for x in labels if (x.query_id, x.doc_id) not in inputs]
    if unknown:
        qid, did, line = unknown[0]
        raise InvalidInput(
            f"{filename}:{line}: query {qid!r}, document {did!r} is not a pair of project {proj.name!r}"
            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
        )
    _check_spans(labels, inputs, filename)
    row = _replay_judge(db, actor, proj, name)
    judge = ReplayJudge(labels, name=name)
    chosen = [inputs[(x.query_id, x.doc_id)] for x in labels]
    report = judge_pairs(db, row, judge, task, chosen, prompt_id=None, workers=1)
    audit_run(db, actor, proj, AuditAction.JUDGE_IMPORTED, report, filename)
    return report


def _check_spans(labels: list, inputs: dict, filename: str) -> None:
    """Refuse the file (InvalidInput naming the line, the span and the document length) when a label's
    evidence spans are not valid in its document's current text."""
    for x in labels:
        if not x.evidence_spans:
            continue
        try:
            check_spans(list(x.evidence_spans), length=len(inputs[(x.query_id, x.doc_id)]["text"]))
        except SpanError as exc:
            raise InvalidInput(f"{filename}:{x.line}: evidence: {exc}") from None


def _read_labels(source: Any, filename: str, task: JudgeTask) -> list:
    if isinstance(source, bytes):
        stream: Any = io.BytesIO(source)
        stream.name = filename
    elif isinstance(source, str | os.PathLike):
        text = check_text(os.fspath(source), "source")
        stream = text
    else:
        raise InvalidInput(f"source must be bytes or a path; got {type(source).__name__}")
    try:
        return read_machine_labels(stream, scale=task.scale)
    except FormatError as exc:
        raise InvalidInput(str(exc).splitlines()[0], exc.problems) from None
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{filename}: cannot be read: {exc}") from None


def _replay_judge(db: Database, actor: Actor, proj: Project, name: str) -> MachineJudge:
    with db.write() as s:
        row = judges_store.find_judge(s, proj.id, name)
        if row is None:
            row = judges_store.insert_judge(
                s,
                project_id=proj.id,
                name=name,
                backend=JudgeBackend.REPLAY.value,
                base_url="",
                model="",
                model_version="",
                temperature=0.0,
                samples=1,
                params={},
                created_by=actor.user_id,
            )
            audit(
                s,
                actor,
                AuditAction.JUDGE_ADDED,
                project_id=proj.id,
                target=name,
                details={"backend": "replay"},
            )
        elif row.backend != JudgeBackend.REPLAY:
            raise Conflict(
                f"judge {name!r} has backend {row.backend!r}: labels are imported into replay judges"
            )
        s.expunge(row)
        return row
