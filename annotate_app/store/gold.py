"""Gold pairs: a reviewer's expected grade of a pair, and the queue's gold draw.

`seek_gold` is the queue's one statement of a gold draw: it picks a random gold pair the annotator never had,
whatever its coverage (a gold pair is shown to every annotator, beyond the project's N annotators per pair),
and locks its row as an ordinary claim does, without counting the claim: ``pairs.claimed`` counts the
ordinary live claims, which N governs, so gold draws neither take the slots a gold pair needs for its own N
labels nor stop N from being lowered. Skipping or expiring a gold claim gives no slot back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, exists, false, func, select, update
from sqlalchemy.orm import Session

from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.models import (
    Adjudication,
    Assignment,
    Document,
    GoldPair,
    Pair,
    PriorJudgment,
    Project,
    Query,
    utcnow,
)

__all__ = [
    "seek_gold",
    "upsert_gold",
    "delete_gold",
    "gold_rows",
    "gold_grades",
    "set_gold_rate",
    "adjudicated_pairs",
    "prior_pairs",
    "gold_labels",
]


def _seek_gold_statement(postgresql: bool) -> Any:
    project_id = bindparam("b_project", type_=Pair.__table__.c.project_id.type)
    annotator = bindparam("b_annotator", type_=Assignment.__table__.c.annotator_id.type)
    mine = exists().where(Assignment.pair_id == GoldPair.pair_id, Assignment.annotator_id == annotator)
    live = exists().where(Pair.id == GoldPair.pair_id, Pair.excluded == false())
    pick = (
        select(GoldPair.pair_id)
        .where(GoldPair.project_id == project_id, live, ~mine)
        .order_by(func.random())
        .limit(1)
    )
    if postgresql:
        pick = pick.with_for_update(skip_locked=True, key_share=True)
    return (
        update(Pair)
        .where(Pair.id == pick.scalar_subquery().correlate(None))
        .values(claimed=Pair.claimed)  # locks the row; a gold claim is not counted
        .returning(Pair.id)
    )


_SEEK_GOLD = {pg: _seek_gold_statement(pg) for pg in (False, True)}


def seek_gold(s: Session, project_id: int, annotator_id: int) -> int | None:
    """Pick (and lock) a random live gold pair of the project that the annotator never had, in one statement
    (an index range of ``ix_gold_pairs_project_id_pair_id`` with a probe of the pair and of
    ``uq_assignments_pair_id_annotator_id`` per gold pair). Returns its pair id, or None."""
    postgresql = s.connection().dialect.name == "postgresql"
    params = {"b_project": project_id, "b_annotator": annotator_id}
    return s.connection().execute(_SEEK_GOLD[postgresql], params).scalar()


def upsert_gold(
    s: Session, project_id: int, pair_id: int, *, grade: int, explanation: str, source: str, by: int | None
) -> bool:
    """Mark a pair gold, or replace its expected grade and explanation. Returns True if it was not gold."""
    row = s.get(GoldPair, pair_id)
    if row is None:
        s.add(
            GoldPair(
                pair_id=pair_id,
                project_id=project_id,
                grade=grade,
                explanation=explanation,
                source=source,
                created_by=by,
                created_at=utcnow(),
            )
        )
        s.flush()
        return True
    row.grade, row.explanation, row.source, row.created_by = grade, explanation, source, by
    return False


def delete_gold(s: Session, project_id: int, pair_id: int) -> bool:
    stmt = delete(GoldPair).where(GoldPair.project_id == project_id, GoldPair.pair_id == pair_id)
    return bool(s.execute(stmt).rowcount)  # type: ignore[attr-defined]


def gold_rows(s: Session, project_id: int) -> list[dict[str, Any]]:
    """The project's gold pairs: pair_id, query_id, doc_id (external ids), grade, explanation, source."""
    stmt = (
        select(
            GoldPair.pair_id,
            Query.external_id,
            Document.external_id,
            GoldPair.grade,
            GoldPair.explanation,
            GoldPair.source,
        )
        .join(Pair, Pair.id == GoldPair.pair_id)
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .where(GoldPair.project_id == project_id)
        .order_by(Query.external_id, Document.external_id)
    )
    keys = ("pair_id", "query_id", "doc_id", "grade", "explanation", "source")
    return [dict(zip(keys, r, strict=True)) for r in s.execute(stmt)]


def gold_grades(s: Session, project_id: int) -> dict[int, int]:
    """pair id → expected grade, of every gold pair of the project."""
    stmt = select(GoldPair.pair_id, GoldPair.grade).where(GoldPair.project_id == project_id)
    return {int(k): int(v) for k, v in s.execute(stmt)}


def set_gold_rate(s: Session, project_id: int, rate: float) -> None:
    s.execute(update(Project).where(Project.id == project_id).values(gold_rate=rate))


def adjudicated_pairs(s: Session, project_id: int) -> dict[int, tuple[int, str]]:
    """pair id → (grade, reason) of the latest adjudication of each adjudicated pair."""
    stmt = (
        select(Adjudication.pair_id, Adjudication.grade, Adjudication.reason)
        .where(Adjudication.project_id == project_id)
        .order_by(Adjudication.id)
    )
    return {pid: (grade, reason) for pid, grade, reason in s.execute(stmt)}


def prior_pairs(s: Session, project_id: int, source: str) -> dict[int, int]:
    """pair id → grade of the prior qrels ``source`` on the project's pairs."""
    stmt = (
        select(Pair.id, PriorJudgment.grade)
        .join(
            PriorJudgment,
            (PriorJudgment.query_id == Pair.query_id) & (PriorJudgment.document_id == Pair.document_id),
        )
        .where(Pair.project_id == project_id, PriorJudgment.project_id == project_id)
        .where(PriorJudgment.source == source)
    )
    return {int(k): int(v) for k, v in s.execute(stmt)}


def gold_labels(s: Session, project_id: int) -> list[tuple[int, int, int, datetime]]:
    """(annotator_id, pair_id, grade, labelled at) of every current label on a gold pair (any draw)."""
    stmt = (
        select(Assignment.annotator_id, Assignment.pair_id, Assignment.grade, Assignment.updated_at)
        .join(GoldPair, GoldPair.pair_id == Assignment.pair_id)
        .where(Assignment.project_id == project_id, Assignment.status == AssignmentStatus.DONE)
        .order_by(Assignment.updated_at, Assignment.id)
    )
    return [(a, p, g, t) for a, p, g, t in s.execute(stmt) if g is not None]
