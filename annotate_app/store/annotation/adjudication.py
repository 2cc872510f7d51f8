"""Adjudications: a reviewer's final grade on a pair, and its reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import (
    select,
)
from sqlalchemy.orm import Session

from annotate_app.store.bulk import fetch_rows
from annotate_app.store.models import (
    Adjudication,
    User,
    utcnow,
)

__all__ = [
    "latest_adjudications",
    "adjudication_of",
    "adjudication_by_request",
    "insert_adjudication",
    "adjudications_by_id",
]


def latest_adjudications(s: Session, project_id: int) -> dict[str, np.ndarray]:
    """The latest adjudication of each adjudicated pair as columns: pair_id, id, grade, label_state."""
    rows = fetch_rows(
        s,
        "SELECT pair_id, id, grade, label_state FROM adjudications WHERE project_id = %s ORDER BY id",
        project_id,
    )
    latest = {r[0]: r for r in rows}
    values = list(latest.values())
    return {
        "pair_id": np.array([r[0] for r in values], dtype=np.int64),
        "id": np.array([r[1] for r in values], dtype=np.int64),
        "grade": np.array([r[2] for r in values], dtype=np.int64),
        "label_state": np.array([r[3] for r in values], dtype=object),
    }


def adjudication_of(s: Session, project_id: int, pair_id: int) -> Adjudication | None:
    stmt = (
        select(Adjudication)
        .where(Adjudication.project_id == project_id, Adjudication.pair_id == pair_id)
        .order_by(Adjudication.id.desc())
        .limit(1)
    )
    return s.scalar(stmt)


def adjudication_by_request(s: Session, reviewer_id: int | None, request_id: str) -> Adjudication | None:
    """The adjudication the reviewer (None: the system actor) saved with this idempotency key, if any."""
    who = (
        Adjudication.reviewer_id.is_(None) if reviewer_id is None else Adjudication.reviewer_id == reviewer_id
    )
    stmt = select(Adjudication).where(who, Adjudication.request_id == request_id).order_by(Adjudication.id)
    return s.scalar(stmt.limit(1))


def insert_adjudication(s: Session, **fields: Any) -> Adjudication:
    row = Adjudication(created_at=utcnow(), **fields)
    s.add(row)
    s.flush()
    return row


def adjudications_by_id(s: Session, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    ids = sorted(set(ids))
    for start in range(0, len(ids), 5000):
        stmt = (
            select(
                Adjudication.id,
                User.username,
                Adjudication.grade,
                Adjudication.reason,
                Adjudication.created_at,
            )
            .outerjoin(User, User.id == Adjudication.reviewer_id)
            .where(Adjudication.id.in_(ids[start : start + 5000]))
        )
        for aid, reviewer, grade, reason, at in s.execute(stmt):
            out[aid] = {
                "reviewer": reviewer or "system",
                "grade": grade,
                "reason": reason,
                "created_at": at.isoformat(),
            }
    return out
