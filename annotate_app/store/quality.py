"""The annotator-quality reads: every current human label of a project, with its time, unsure flag and
version, in bulk; and how many pairs each annotator skipped."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from annotate_app.store.annotation.columns import int_columns
from annotate_app.store.enums import AssignmentStatus, ClaimDraw
from annotate_app.store.models import Assignment, User

__all__ = ["label_table", "skip_counts"]

# seconds travel as whole milliseconds (-1: unknown), so every column is an integer (`int_columns`)
_LABELS = (
    "SELECT a.annotator_id, a.pair_id, a.grade, a.label_id, "
    f"CASE WHEN a.draw = '{ClaimDraw.GOLD}' THEN 1 ELSE 0 END, "
    "COALESCE(CAST(ROUND(l.seconds * 1000) AS BIGINT), -1), "
    "CASE WHEN l.unsure THEN 1 ELSE 0 END, l.version "
    "FROM assignments a JOIN labels l ON l.id = a.label_id "
    f"WHERE a.project_id = %s AND a.status = '{AssignmentStatus.DONE}'"
)


def label_table(s: Session, project_id: int) -> pd.DataFrame:
    """The project's current labels, one row each: ``rater`` (username), ``item`` (pair id), ``label``
    (grade), ``seconds`` (time on the label, to the millisecond; NaN if unknown), ``at`` (the label's id:
    labels are appended, so it orders them in time), ``gold_draw`` (the queue drew the pair as gold),
    ``unsure`` (the annotator marked it unsure) and ``version`` (1, or more once edited).

    One bulk read of the labels (integers only) and one of the annotators' names."""
    data = int_columns(s, _LABELS, project_id, ncols=8)
    ids = np.unique(data[:, 0])
    names = dict(s.execute(select(User.id, User.username).where(User.id.in_(ids.tolist()))).all())
    codes = np.searchsorted(ids, data[:, 0])
    raters = np.array([names[int(i)] for i in ids], dtype=object)[codes] if len(ids) else np.array([], object)
    millis = data[:, 5].astype(float)
    return pd.DataFrame(
        {
            "rater": raters,
            "item": data[:, 1],
            "label": data[:, 2],
            "seconds": np.where(millis < 0, np.nan, millis / 1000.0),
            "at": data[:, 3],
            "gold_draw": data[:, 4].astype(bool),
            "unsure": data[:, 6].astype(bool),
            "version": data[:, 7],
        }
    )


def skip_counts(s: Session, project_id: int) -> dict[str, int]:
    """How many pairs of the project each annotator skipped (a skip is final: the pair never comes back to
    them), by username; annotators who skipped nothing are absent. One grouped read."""
    stmt = (
        select(User.username, func.count())
        .select_from(Assignment)
        .join(User, User.id == Assignment.annotator_id)
        .where(Assignment.project_id == project_id, Assignment.status == AssignmentStatus.SKIPPED.value)
        .group_by(User.username)
    )
    return {str(name): int(n) for name, n in s.execute(stmt).all()}
