"""The annotator-quality read: every current human label of a project, with its time, in one statement."""

from __future__ import annotations

from typing import Any

import pandas as pd
from sqlalchemy.orm import Session

from annotate_app.store.bulk import fetch_rows
from annotate_app.store.enums import AssignmentStatus

__all__ = ["label_table"]

_LABELS = (
    "SELECT u.username, a.pair_id, a.grade, l.seconds, l.created_at, "
    "CASE WHEN a.draw = 'gold' THEN 1 ELSE 0 END "
    "FROM assignments a JOIN labels l ON l.id = a.label_id JOIN users u ON u.id = a.annotator_id "
    f"WHERE a.project_id = %s AND a.status = '{AssignmentStatus.DONE}'"
)


def label_table(s: Session, project_id: int) -> pd.DataFrame:
    """The project's current labels, one row each: ``rater`` (username), ``item`` (pair id), ``label``
    (grade), ``seconds`` (time on the label, NaN if unknown), ``at`` (when it was saved) and ``gold_draw``
    (whether the queue drew the pair as gold)."""
    rows: list[Any] = fetch_rows(s, _LABELS, project_id)
    frame = pd.DataFrame(rows, columns=["rater", "item", "label", "seconds", "at", "gold_draw"])
    frame["seconds"] = pd.to_numeric(frame["seconds"], errors="coerce").astype(float)
    frame["at"] = pd.to_datetime(frame["at"], utc=True, format="mixed")
    frame["gold_draw"] = frame["gold_draw"].astype(bool)
    return frame
