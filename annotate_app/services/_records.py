"""Store rows turned into the services' result values (`annotate_app.services.types`), for the modules that
share them: a label version, an adjudication, an annotator's progress.

Private to `annotate_app.services`: the functions take rows or an open session, never ``(db, actor)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from annotate_app.services.inputs import MAX_REASON, cut
from annotate_app.services.types import AdjudicationInfo, AnnotatorProgress, LabelInfo
from annotate_app.store import annotation, users
from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.models import Adjudication, Project

__all__ = ["label_info", "adjudication_info", "annotator_progress"]


def label_info(row: Mapping[str, Any]) -> LabelInfo:
    """A label version from a `store.annotation.label_rows` row; a reason longer than `MAX_REASON` (stored
    past the services' checks) comes cut, with a note of its length (`inputs.cut`)."""
    return LabelInfo(
        pair_id=row["pair_id"],
        query_id=row["query_id"],
        doc_id=row["doc_id"],
        annotator=row["annotator"],
        version=row["version"],
        grade=row["grade"],
        reason=cut(row["reason"], MAX_REASON, length=row.get("reason_length")),
        unsure=bool(row["unsure"]),
        seconds=row["seconds"],
        doc_version=row["doc_version"],
        stale=row["doc_version"] != row["current_doc_version"],
        created_at=row["created_at"],
        doc_title=row.get("doc_title", ""),
        label_id=row.get("label_id"),
    )


def adjudication_info(s: Session, adj: Adjudication, valid: bool) -> AdjudicationInfo:
    """An adjudication with its reviewer's name (``"system"`` for the CLI's) and whether it still holds."""
    reviewer = "system"
    if adj.reviewer_id is not None:
        reviewer = users.names_of(s, [adj.reviewer_id]).get(adj.reviewer_id, "system")
    return AdjudicationInfo(
        pair_id=adj.pair_id,
        reviewer=reviewer,
        grade=adj.grade,
        reason=adj.reason,
        created_at=adj.created_at,
        valid=valid,
    )


def annotator_progress(
    s: Session,
    proj: Project,
    user_id: int,
    username: str,
    quota: int | None,
    groups: Sequence[tuple[int, str, int, bool]] | None = None,
) -> AnnotatorProgress:
    """One annotator's counts in a project; ``groups``: their rows of
    `store.annotation.claims.annotator_counts` (read here when not given)."""
    if groups is None:
        groups = [g for g in annotation.annotator_counts(s, proj.id) if g[0] == user_id]
    count = dict.fromkeys(AssignmentStatus, 0)
    stale = 0
    for _, status, n, is_stale in groups:
        count[AssignmentStatus(status)] += n
        stale += n if is_stale and status == AssignmentStatus.DONE else 0
    return AnnotatorProgress(
        username=username,
        done=count[AssignmentStatus.DONE],
        active=count[AssignmentStatus.ACTIVE],
        skipped=count[AssignmentStatus.SKIPPED],
        stale=stale,
        quota=quota,
        available=annotation.available_count(s, proj.id, user_id, proj.annotators_per_pair),
    )
