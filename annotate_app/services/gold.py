"""Gold pairs (reviewer): a pair's expected grade with an explanation, and the project's gold rate.

A reviewer marks pairs gold by hand (`add_gold`), from the adjudicated pairs (`gold_from_adjudications`: the
latest adjudication's grade and reason) or from imported prior qrels (`gold_from_prior`). The queue then
mixes gold pairs into each annotator's stream at the project's ``gold_rate`` (`set_gold_rate`): a claim drawn
that way looks like any other, its label is stored as a label, and it is scored against gold
(`services.annotators`) but never counted in agreement or releases. Every change is in the audit log.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from annotate_app.services._context import ProjectRef, check_grade, open_project
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import InvalidInput, NotFound
from annotate_app.services.inputs import check_reason, check_text
from annotate_app.store import gold as gold_store
from annotate_app.store import pool as pool_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction, GoldSource

__all__ = [
    "GoldInfo",
    "add_gold",
    "remove_gold",
    "list_gold",
    "gold_from_adjudications",
    "gold_from_prior",
    "set_gold_rate",
]


@dataclass(frozen=True, kw_only=True)
class GoldInfo:
    """One gold pair: its external ids, expected grade, explanation and where the grade came from."""

    pair_id: int
    query_id: str
    doc_id: str
    grade: int
    explanation: str
    source: str


def add_gold(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    query_id: str,
    doc_id: str,
    *,
    grade: int,
    explanation: str,
) -> GoldInfo:
    """Mark the pair (query_id, doc_id) gold with ``grade`` and ``explanation`` (at least the project's
    minimum reason length), or replace its expected grade (reviewer).

    Raises:
        NotFound: the pair is not in the project's pool.
        InvalidInput: the grade is not on the scale, or the explanation is too short.
    """
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "mark gold pairs")
        value = check_grade(proj, grade)
        text = check_reason(explanation, proj.min_reason_length, "explanation")
        pair = pool_store.find_pair(s, proj.id, query_id, doc_id)
        if pair is None:
            raise NotFound(f"pair ({query_id!r}, {doc_id!r}) is not in the pool of project {proj.name!r}")
        gold_store.upsert_gold(
            s, proj.id, pair.id, grade=value, explanation=text, source=GoldSource.HAND, by=actor.user_id
        )
        details = {"query_id": query_id, "doc_id": doc_id, "grade": value, "source": str(GoldSource.HAND)}
        audit(s, actor, AuditAction.GOLD_ADDED, project_id=proj.id, target=proj.name, details=details)
        return GoldInfo(
            pair_id=pair.id,
            query_id=query_id,
            doc_id=doc_id,
            grade=value,
            explanation=text,
            source=GoldSource.HAND,
        )


def remove_gold(db: Database, actor: Actor, project: ProjectRef, query_id: str, doc_id: str) -> None:
    """Unmark a gold pair (reviewer); labels already made on it stay.

    Raises:
        NotFound: the pair is not gold in the project.
    """
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "remove gold pairs")
        pair = pool_store.find_pair(s, proj.id, query_id, doc_id)
        if pair is None or not gold_store.delete_gold(s, proj.id, pair.id):
            raise NotFound(f"pair ({query_id!r}, {doc_id!r}) is not a gold pair of project {proj.name!r}")
        details = {"query_id": query_id, "doc_id": doc_id}
        audit(s, actor, AuditAction.GOLD_REMOVED, project_id=proj.id, target=proj.name, details=details)


def list_gold(db: Database, actor: Actor, project: ProjectRef) -> list[GoldInfo]:
    """The project's gold pairs, by query then document (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "list gold pairs")
        return [GoldInfo(**row) for row in gold_store.gold_rows(s, proj.id)]


def gold_from_adjudications(db: Database, actor: Actor, project: ProjectRef) -> int:
    """Mark every adjudicated pair gold with its latest adjudication's grade, the reason as explanation
    (reviewer). Returns how many pairs became gold or changed."""
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "mark gold pairs")
        chosen = gold_store.adjudicated_pairs(s, proj.id)
        for pair_id, (grade, reason) in chosen.items():
            gold_store.upsert_gold(
                s,
                proj.id,
                pair_id,
                grade=grade,
                explanation=reason,
                source=GoldSource.ADJUDICATION,
                by=actor.user_id,
            )
        details = {"source": str(GoldSource.ADJUDICATION), "pairs": len(chosen)}
        audit(s, actor, AuditAction.GOLD_ADDED, project_id=proj.id, target=proj.name, details=details)
        return len(chosen)


def gold_from_prior(db: Database, actor: Actor, project: ProjectRef, source: str, *, explanation: str) -> int:
    """Mark every pool pair that the imported prior qrels ``source`` judged gold with its grade, and one
    ``explanation`` for all (reviewer). Returns how many pairs became gold or changed.

    Raises:
        NotFound: the prior qrels judged none of the project's pairs (or do not exist).
    """
    name = check_text(source, "prior qrels name")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "mark gold pairs")
        text = check_reason(explanation, proj.min_reason_length, "explanation")
        chosen = gold_store.prior_pairs(s, proj.id, name)
        if not chosen:
            raise NotFound(f"prior qrels {name!r} judged none of the pairs of project {proj.name!r}")
        for pair_id, grade in chosen.items():
            gold_store.upsert_gold(
                s,
                proj.id,
                pair_id,
                grade=check_grade(proj, grade),
                explanation=text,
                source=GoldSource.PRIOR,
                by=actor.user_id,
            )
        details = {"source": str(GoldSource.PRIOR), "prior": name, "pairs": len(chosen)}
        audit(s, actor, AuditAction.GOLD_ADDED, project_id=proj.id, target=proj.name, details=details)
        return len(chosen)


def set_gold_rate(db: Database, actor: Actor, project: ProjectRef, rate: float) -> float:
    """Set the share of each annotator's claims drawn from the gold pairs, in [0, 1) (reviewer).

    Raises:
        InvalidInput: ``rate`` is not a number in [0, 1).
    """
    if (
        isinstance(rate, bool)
        or not isinstance(rate, int | float)
        or not math.isfinite(rate)
        or not 0 <= rate < 1
    ):
        raise InvalidInput(f"gold rate must be a number in [0, 1), not {rate!r}")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "set the gold rate")
        gold_store.set_gold_rate(s, proj.id, float(rate))
        details = {"gold_rate": float(rate)}
        audit(s, actor, AuditAction.SETTINGS_CHANGED, project_id=proj.id, target=proj.name, details=details)
        return float(rate)
