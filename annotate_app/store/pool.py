"""Queries for pooling: run tops, pairs, pair sources and pool records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from annotate_app.store.bulk import bulk_insert
from annotate_app.store.db import unstorable
from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.exhausted import queue_changed
from annotate_app.store.models import (
    Assignment,
    Document,
    Pair,
    PairSource,
    Pool,
    PriorJudgment,
    Query,
    Run,
    RunEntry,
    table_of,
    utcnow,
)

__all__ = [
    "run_top",
    "pair_index",
    "insert_pool",
    "insert_pairs",
    "source_keys",
    "insert_sources",
    "prior_keys",
    "find_pair",
    "set_excluded",
    "pair_sources",
    "pair_listing",
    "deepest_pool",
]


def run_top(s: Session, run_ids: Sequence[int], depth: int) -> list[tuple[int, int, int, int]]:
    """(run_id, query_id, document_id, rank) of every entry ranked within ``depth``
    (ix_run_entries_run_id_rank)."""
    stmt = select(RunEntry.run_id, RunEntry.query_id, RunEntry.document_id, RunEntry.rank).where(
        RunEntry.run_id.in_(list(run_ids)), RunEntry.rank <= depth
    )
    return list(s.execute(stmt))


def pair_index(s: Session, project_id: int) -> dict[tuple[int, int], int]:
    """(query_id, document_id) → pair id."""
    stmt = select(Pair.query_id, Pair.document_id, Pair.id).where(Pair.project_id == project_id)
    return {(qq, d): p for qq, d, p in s.execute(stmt)}


def prior_keys(s: Session, project_id: int) -> set[tuple[int, int]]:
    stmt = select(PriorJudgment.query_id, PriorJudgment.document_id).where(
        PriorJudgment.project_id == project_id
    )
    return set(s.execute(stmt))


def insert_pool(s: Session, **fields: Any) -> int:
    return int(s.execute(insert(Pool).values(created_at=utcnow(), **fields).returning(Pool.id)).scalar_one())


def insert_pairs(s: Session, project_id: int, rows: Sequence[dict]) -> dict[tuple[int, int], int]:
    """Insert pairs; returns (query_id, document_id) → id of every pair of the project. The project's
    "nothing left" markers clear at commit."""
    bulk_insert(s, table_of(Pair), rows)
    queue_changed(s, project_id)
    return pair_index(s, project_id)


def source_keys(s: Session, run_ids: Sequence[int]) -> set[tuple[int, int]]:
    """(pair_id, run_id) already recorded for these runs."""
    stmt = select(PairSource.pair_id, PairSource.run_id).where(PairSource.run_id.in_(list(run_ids)))
    return set(s.execute(stmt))


def insert_sources(s: Session, rows: Sequence[dict]) -> None:
    bulk_insert(s, table_of(PairSource), rows)


def find_pair(s: Session, project_id: int, query_ext: str, doc_ext: str) -> Pair | None:
    if (
        not isinstance(query_ext, str)
        or not isinstance(doc_ext, str)
        or unstorable(query_ext)
        or unstorable(doc_ext)
    ):
        return None
    stmt = (
        select(Pair)
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .where(Pair.project_id == project_id, Query.external_id == query_ext, Document.external_id == doc_ext)
    )
    return s.scalar(stmt)


def set_excluded(s: Session, pair_id: int, excluded: bool, reason: str | None, by: int | None) -> None:
    project_id = s.execute(
        update(Pair)
        .where(Pair.id == pair_id)
        .values(excluded=excluded, excluded_reason=reason, excluded_by=by)
        .returning(Pair.project_id),
        execution_options={"synchronize_session": False},
    ).scalar_one_or_none()
    queue_changed(s, project_id)  # un-excluded: claimable again (excluding too, to be safe)


def pair_sources(s: Session, pair_ids: Sequence[int]) -> dict[int, list[tuple[str, int]]]:
    """pair id → [(run name, rank), ...] (best rank first)."""
    out: dict[int, list[tuple[str, int]]] = {}
    for start in range(0, len(pair_ids), 500):
        stmt = (
            select(PairSource.pair_id, Run.name, PairSource.rank)
            .join(Run, Run.id == PairSource.run_id)
            .where(PairSource.pair_id.in_(list(pair_ids[start : start + 500])))
            .order_by(PairSource.pair_id, PairSource.rank, Run.name)
        )
        for pid, name, rank in s.execute(stmt):
            out.setdefault(pid, []).append((name, rank))
    return out


def pair_listing(s: Session, project_id: int, *, limit: int, offset: int) -> list[dict[str, Any]]:
    """Pairs with their state, for the admin table."""
    done = (
        select(func.count())
        .select_from(Assignment)
        .where(Assignment.pair_id == Pair.id, Assignment.status == AssignmentStatus.DONE)
        .scalar_subquery()
    )
    stmt = (
        select(
            Pair.id,
            Query.external_id,
            Document.external_id,
            Pair.origin,
            Pair.excluded,
            Pair.claimed,
            done,
            Pair.excluded_reason,
            Pair.note,
        )
        .join(Query, Query.id == Pair.query_id)
        .join(Document, Document.id == Pair.document_id)
        .where(Pair.project_id == project_id)
        .order_by(Pair.query_id, Pair.id)
        .limit(limit)
        .offset(offset)
    )
    keys = (
        "pair_id",
        "query_id",
        "doc_id",
        "origin",
        "excluded",
        "claimed",
        "labels",
        "excluded_reason",
        "note",
    )
    return [dict(zip(keys, row, strict=True)) for row in s.execute(stmt)]


def deepest_pool(s: Session, project_id: int) -> int | None:
    """The greatest depth the project was pooled at (None: never pooled)."""
    return s.execute(select(func.max(Pool.depth)).where(Pool.project_id == project_id)).scalar_one_or_none()
