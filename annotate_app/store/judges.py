"""Queries on machine judges, their prompt versions, their labels (append-only) and the judge settings.

Machine labels live in ``judge_labels`` only, never in ``assignments`` or ``labels``: nothing here is read by
the agreement gate. Every function reads or writes in the caller's transaction and returns ORM rows of these
tables or plain tuples and dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, func, insert, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from annotate_app.store.bulk import fetch_rows
from annotate_app.store.enums import AssignmentStatus, ClaimDraw, QueueOrder
from annotate_app.store.exhausted import queue_changed
from annotate_app.store.models import (
    AuditEntry,
    Document,
    JudgeLabel,
    JudgePrompt,
    JudgeSettings,
    MachineJudge,
    Pair,
    PairSource,
    Query,
    ReleaseQrel,
    utcnow,
)
from annotate_app.store.qualification import counted_sql

__all__ = [
    "find_judge",
    "judges_of",
    "insert_judge",
    "latest_prompt",
    "insert_prompt",
    "cached_label",
    "insert_label",
    "pair_inputs",
    "current_grades",
    "human_labels",
    "human_label_count",
    "calibration_draws",
    "settings_row",
    "upsert_settings",
    "qrel_sources",
    "judge_labels_by_id",
    "judge_label_rows",
    "candidate_order",
    "probe_entries",
    "judge_costs",
    "set_judge_params",
    "current_failures",
    "judge_evidence",
]


# ------------------------------------------------------------------------------------------------ judges
def find_judge(s: Session, project_id: int, name: str) -> MachineJudge | None:
    stmt = select(MachineJudge).where(MachineJudge.project_id == project_id, MachineJudge.name == name)
    return s.scalar(stmt)


def judges_of(s: Session, project_id: int) -> list[MachineJudge]:
    stmt = select(MachineJudge).where(MachineJudge.project_id == project_id).order_by(MachineJudge.name)
    return list(s.scalars(stmt))


def insert_judge(s: Session, **fields: Any) -> MachineJudge:
    row = MachineJudge(created_at=utcnow(), **fields)
    s.add(row)
    s.flush()
    return row


def latest_prompt(s: Session, judge_id: int) -> JudgePrompt | None:
    stmt = (
        select(JudgePrompt)
        .where(JudgePrompt.judge_id == judge_id)
        .order_by(JudgePrompt.version.desc())
        .limit(1)
    )
    return s.scalar(stmt)


def insert_prompt(s: Session, judge_id: int, text: str, sha256: str, created_by: int | None) -> JudgePrompt:
    latest = latest_prompt(s, judge_id)
    row = JudgePrompt(
        judge_id=judge_id,
        version=(latest.version if latest else 0) + 1,
        text=text,
        sha256=sha256,
        created_by=created_by,
        created_at=utcnow(),
    )
    s.add(row)
    s.flush()
    return row


def set_judge_params(s: Session, judge_id: int, params: dict[str, Any]) -> None:
    """Replace a judge's ``params`` (request parameters and adaptations)."""
    row = s.get(MachineJudge, judge_id)
    if row is not None:
        row.params = dict(params)
        s.flush()


# ------------------------------------------------------------------------------------------------ labels
def cached_label(s: Session, judge_id: int, cache_key: str) -> JudgeLabel | None:
    stmt = select(JudgeLabel).where(JudgeLabel.judge_id == judge_id, JudgeLabel.cache_key == cache_key)
    return s.scalar(stmt)


def insert_label(s: Session, **fields: Any) -> int:
    stmt = insert(JudgeLabel).values(created_at=utcnow(), **fields).returning(JudgeLabel.id)
    return int(s.execute(stmt).scalar_one())


def pair_inputs(s: Session, project_id: int) -> list[dict[str, Any]]:
    """Every pair of the project with what a judge reads: ``pair_id``, ``query_id``, ``query_text``,
    ``doc_id``, ``doc_text`` (title and text of the current version), ``text`` (its text alone: what
    evidence offsets index), ``doc_version``, ``excluded`` and ``n_human`` (current human labels), by query
    then document ID."""
    sql = (
        "SELECT p.id, q.external_id, q.text, d.external_id, v.title, v.text, d.version, p.excluded, "
        "(SELECT count(*) FROM assignments a WHERE a.pair_id = p.id "
        f"AND a.status = '{AssignmentStatus.DONE}') "
        "FROM pairs p JOIN queries q ON q.id = p.query_id JOIN documents d ON d.id = p.document_id "
        "JOIN document_versions v ON v.document_id = d.id AND v.version = d.version "
        "WHERE p.project_id = %s ORDER BY q.external_id, d.external_id"
    )
    keys = (
        "pair_id",
        "query_id",
        "query_text",
        "doc_id",
        "title",
        "text",
        "doc_version",
        "excluded",
        "n_human",
    )
    out = []
    for row in fetch_rows(s, sql, project_id):
        item = dict(zip(keys, row, strict=True))
        title, text = item.pop("title") or "", item.pop("text") or ""
        item["doc_text"] = f"{title}\n\n{text}" if title else text
        item["text"] = text
        item["excluded"] = bool(item["excluded"])
        out.append(item)
    return out


def _latest(project_id: int, judge_ids: Sequence[int] | None, *conditions: ColumnElement[bool]) -> Any:
    """The id of the latest label of each (judge, pair) of the project meeting ``conditions`` (probes and
    excluded pairs left out), as a subquery with one column ``id``."""
    latest = (
        select(func.max(JudgeLabel.id).label("id"))
        .join(Pair, Pair.id == JudgeLabel.pair_id)
        .join(Document, Document.id == Pair.document_id)
        .where(Pair.project_id == project_id, ~Pair.excluded, ~JudgeLabel.probe, *conditions)
        .group_by(JudgeLabel.judge_id, JudgeLabel.pair_id)
    )
    if judge_ids is not None:
        latest = latest.where(JudgeLabel.judge_id.in_(list(judge_ids)))
    return latest.subquery()


def _with_pair(stmt: Any) -> Any:
    """``stmt`` joined to the label's judge, pair, query and document, by judge name, query and document."""
    return (
        stmt.join(MachineJudge, MachineJudge.id == JudgeLabel.judge_id)
        .join(Pair, Pair.id == JudgeLabel.pair_id)
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .order_by(MachineJudge.name, Query.external_id, Document.external_id)
    )


def current_grades(s: Session, project_id: int, judge_ids: Sequence[int] | None = None) -> list[dict]:
    """The current machine grade of each (judge, pair): its latest graded label (probes left out) made on the
    pair's current document version, for the pairs not excluded. Dicts with ``judge_id``, ``judge``,
    ``pair_id``, ``query_id``, ``doc_id``, ``grade``, ``confidence``, ``sample_grades``, ``label_id``."""
    graded = (JudgeLabel.grade.is_not(None), JudgeLabel.doc_version == Document.version)
    ids = _latest(project_id, judge_ids, *graded)
    stmt = select(
        JudgeLabel.judge_id,
        MachineJudge.name,
        JudgeLabel.pair_id,
        Query.external_id,
        Document.external_id,
        JudgeLabel.grade,
        JudgeLabel.confidence,
        JudgeLabel.sample_grades,
        JudgeLabel.id,
    ).join(ids, ids.c.id == JudgeLabel.id)
    keys = ("judge_id", "judge", "pair_id", "query_id", "doc_id", "grade", "confidence", "sample_grades")
    return [dict(zip((*keys, "label_id"), row, strict=True)) for row in s.execute(_with_pair(stmt))]


def judge_evidence(s: Session, label_ids: Sequence[int]) -> dict[int, tuple[tuple[int, int], ...]]:
    """label id → its located evidence passages (sorted, disjoint), for the machine labels that have some
    (chunks of 5000 IDs)."""
    out: dict[int, tuple[tuple[int, int], ...]] = {}
    ids = sorted(set(label_ids))
    for first in range(0, len(ids), 5000):
        stmt = select(JudgeLabel.id, JudgeLabel.evidence).where(JudgeLabel.id.in_(ids[first : first + 5000]))
        for label_id, spans in s.execute(stmt):
            if spans:
                out[int(label_id)] = tuple((int(a), int(b)) for a, b in spans)
    return out


def human_labels(s: Session, project_id: int) -> list[tuple[int, str, str, str, int]]:
    """(pair_id, query external id, document external id, annotator username, grade) of every current human
    label that counts (`store.qualification.counted_sql`: no gold draw's, none of a member who waits for
    qualification) on a pair that is not excluded."""
    sql = (
        "SELECT p.id, q.external_id, d.external_id, u.username, a.grade FROM assignments a "
        "JOIN pairs p ON p.id = a.pair_id JOIN queries q ON q.id = p.query_id "
        "JOIN documents d ON d.id = p.document_id JOIN users u ON u.id = a.annotator_id "
        f"WHERE a.project_id = %s AND a.status = '{AssignmentStatus.DONE}' AND NOT p.excluded "
        f"AND {counted_sql('a')} ORDER BY p.id, u.username"
    )
    return fetch_rows(s, sql, project_id, project_id)


def calibration_draws(s: Session, project_id: int) -> tuple[bool, set[int]]:
    """(steered, random pairs) of the project's current human labels that count (as `human_labels`) on pairs
    not excluded: ``steered`` whether any of them comes from a claim the queue drew in an order steered by
    the judges or the runs (`ClaimDraw.steered`); ``random pairs`` the pair ids with one from a uniformly
    random draw."""
    draws = (ClaimDraw.RANDOM, *ClaimDraw.steered())
    sql = (
        "SELECT a.pair_id, a.draw FROM assignments a JOIN pairs p ON p.id = a.pair_id "
        f"WHERE a.project_id = %s AND a.status = '{AssignmentStatus.DONE}' AND NOT p.excluded "
        f"AND a.draw IN ({', '.join(repr(str(d)) for d in draws)}) AND {counted_sql('a')}"
    )
    rows = fetch_rows(s, sql, project_id, project_id)
    steered = any(draw in ClaimDraw.steered() for _, draw in rows)
    return steered, {int(pair_id) for pair_id, draw in rows if draw == ClaimDraw.RANDOM}


def human_label_count(s: Session, project_id: int) -> int:
    """Human judgments made in the project (every label version counts: the effort spent)."""
    sql = "SELECT count(*) FROM labels l JOIN pairs p ON p.id = l.pair_id WHERE p.project_id = %s"
    return int(fetch_rows(s, sql, project_id)[0][0])


# ---------------------------------------------------------------------------------------------- settings
def settings_row(s: Session, project_id: int) -> JudgeSettings | None:
    return s.get(JudgeSettings, project_id)


def upsert_settings(s: Session, project_id: int, updated_by: int | None, **fields: Any) -> JudgeSettings:
    row = s.get(JudgeSettings, project_id)
    if row is None:
        row = JudgeSettings(project_id=project_id)
        s.add(row)
    for name, value in fields.items():
        setattr(row, name, value)
    row.updated_by, row.updated_at = updated_by, utcnow()
    s.flush()
    queue_changed(s, project_id)  # calibration share, budget, queue order: the "nothing left" markers clear
    return row


# ---------------------------------------------------------------------------------------------- releases
def qrel_sources(s: Session, release_id: int) -> dict[int, tuple[str, int | None]]:
    """pair_id → (source, judge_label_id) of every qrel of a release."""
    stmt = select(ReleaseQrel.pair_id, ReleaseQrel.source, ReleaseQrel.judge_label_id).where(
        ReleaseQrel.release_id == release_id
    )
    return {int(p): (str(src), j) for p, src, j in s.execute(stmt)}


def judge_labels_by_id(s: Session, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """id → the provenance of a machine label (for the JSONL export)."""
    if not ids:
        return {}
    stmt = (
        select(JudgeLabel, MachineJudge.name, JudgePrompt.version)
        .join(MachineJudge, MachineJudge.id == JudgeLabel.judge_id)
        .outerjoin(JudgePrompt, JudgePrompt.id == JudgeLabel.prompt_id)
        .where(JudgeLabel.id.in_(list(ids)))
    )
    out = {}
    for label, name, prompt_version in s.execute(stmt):
        out[label.id] = {
            "judge": name,
            "source": f"judge:{name}",
            "grade": label.grade,
            "reason": label.reason,
            "confidence": label.confidence,
            "model": label.model,
            "prompt_hash": label.prompt_hash,
            "prompt_version": prompt_version,
            "doc_version": label.doc_version,
            "created_at": label.created_at.isoformat(),
            "reasoning": label.reasoning,
            "aspects": dict(label.aspects or {}),
            "evidence": [list(span) for span in label.evidence or ()],
            "evidence_quotes": list(label.evidence_quotes or ()),
        }
    return out


def judge_label_rows(s: Session, project_id: int) -> list[tuple]:
    """Every graded machine label of the project (probes left out), oldest first, in the columns of the
    labels CSV: query, document, judge name, n-th label of that judge on the pair, grade, reason, confidence,
    latency, doc_version, current doc version, created_at."""
    number = (
        func.row_number()
        .over(partition_by=(JudgeLabel.judge_id, JudgeLabel.pair_id), order_by=JudgeLabel.id)
        .label("n")
    )
    stmt = (
        select(
            Query.external_id,
            Document.external_id,
            MachineJudge.name,
            number,
            JudgeLabel.grade,
            JudgeLabel.reason,
            JudgeLabel.confidence,
            JudgeLabel.latency_s,
            JudgeLabel.doc_version,
            Document.version,
            JudgeLabel.created_at,
        )
        .join(MachineJudge, MachineJudge.id == JudgeLabel.judge_id)
        .join(Pair, and_(Pair.id == JudgeLabel.pair_id, Pair.project_id == project_id))
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .where(JudgeLabel.grade.is_not(None), ~JudgeLabel.probe)
        .order_by(JudgeLabel.id)
    )
    return list(s.execute(stmt))


# ------------------------------------------------------------------------------------------------- queue
def candidate_order(order: QueueOrder, *, shuffled: bool = False) -> list[ColumnElement[Any]]:
    """ORDER BY terms of the judging queue (`judging.candidates`' ``order_by``), after the coverage:

    - ``shuffled``: uniformly random (the calibration share of a queue);
    - ``uncertainty``: the pairs the machine judges are least sure of first: judges disagreeing (more
      distinct current grades), then split samples or low confidence (lowest confidence; a pair no judge
      graded comes after the judged ones);
    - ``run_weight``: the pairs in the top k of the most runs first (pooling sources);
    - ``default``: nothing (by query, as before).
    """
    if shuffled:
        return [func.random()]
    graded = and_(JudgeLabel.pair_id == Pair.id, JudgeLabel.grade.is_not(None), ~JudgeLabel.probe)
    if order == QueueOrder.UNCERTAINTY:
        spread = select(func.count(func.distinct(JudgeLabel.grade))).where(graded).scalar_subquery()
        sure = select(func.min(func.coalesce(JudgeLabel.confidence, 1.0))).where(graded).scalar_subquery()
        return [spread.desc(), func.coalesce(sure, 2.0).asc()]
    if order == QueueOrder.RUN_WEIGHT:
        runs = select(func.count(func.distinct(PairSource.run_id))).where(PairSource.pair_id == Pair.id)
        return [runs.scalar_subquery().desc()]
    return []


# ------------------------------------------------------------------------------------------------- probes
def judge_costs(s: Session, judge_ids: Sequence[int]) -> dict[int, dict[str, float]]:
    """judge id → what its labels (probes left out) cost and how many failed: ``labels``, ``failed``,
    ``tokens`` (prompt + completion) and ``seconds`` (the sum of the latencies)."""
    stmt = (
        select(
            JudgeLabel.judge_id,
            func.count(),
            func.count(JudgeLabel.failure),
            func.coalesce(func.sum(JudgeLabel.prompt_tokens + JudgeLabel.completion_tokens), 0),
            func.coalesce(func.sum(JudgeLabel.latency_s), 0.0),
        )
        .where(JudgeLabel.judge_id.in_(list(judge_ids)), ~JudgeLabel.probe)
        .group_by(JudgeLabel.judge_id)
    )
    return {
        int(j): {"labels": int(n), "failed": int(f), "tokens": int(t), "seconds": float(sec)}
        for j, n, f, t, sec in s.execute(stmt)
    }


def probe_entries(s: Session, project_id: int, action: str) -> list[tuple[str, dict[str, Any]]]:
    """(judge name, details) of every audit entry ``action`` of the project (the probes' reports), oldest
    first."""
    stmt = (
        select(AuditEntry.target, AuditEntry.details)
        .where(AuditEntry.project_id == project_id, AuditEntry.action == action)
        .order_by(AuditEntry.id)
    )
    return [(str(target), dict(details or {})) for target, details in s.execute(stmt)]


# ----------------------------------------------------------------------------------------------- failures
def current_failures(
    s: Session, project_id: int, judge_ids: Sequence[int] | None = None, kind: str | None = None
) -> list[dict[str, Any]]:
    """The pairs whose latest machine label (probes left out) is a failure, on pairs not excluded: dicts with
    ``judge``, ``query_id``, ``doc_id``, ``failure``, ``error``, ``raw_response``, ``created_at``, by judge,
    query and document. ``kind``: only that failure kind."""
    ids = _latest(project_id, judge_ids)
    stmt = (
        select(
            MachineJudge.name,
            Query.external_id,
            Document.external_id,
            JudgeLabel.failure,
            JudgeLabel.error,
            JudgeLabel.raw_response,
            JudgeLabel.created_at,
        )
        .join(ids, ids.c.id == JudgeLabel.id)
        .where(JudgeLabel.failure.is_not(None))
    )
    if kind is not None:
        stmt = stmt.where(JudgeLabel.failure == kind)
    keys = ("judge", "query_id", "doc_id", "failure", "error", "raw_response", "created_at")
    return [dict(zip(keys, row, strict=True)) for row in s.execute(_with_pair(stmt))]
