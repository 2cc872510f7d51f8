"""Labels: saving a judgment (append-only versions), one's own recent labels (paged, counted), and a pair's
history.

`save_label` adds a label version to the caller's claim on a pair: the first save turns the claim into a done
assignment, later saves are edits (version + 1); nothing is ever updated or deleted. Each version records the
grade, the reason (required; at least the project's ``min_reason_length`` characters), the unsure flag, the
seconds spent, the document version and the guidelines version it was made under.
"""

from __future__ import annotations

import math
import numbers

from annotate_app.services._context import (
    ProjectRef,
    annotator_context,
    check_grade,
    open_project,
    pair_content,
)
from annotate_app.services._records import label_info
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from annotate_app.services.inputs import check_count, check_int, check_reason
from annotate_app.services.types import LabelInfo
from annotate_app.store import judging as jq
from annotate_app.store import projects as pq
from annotate_app.store.db import Database
from annotate_app.store.enums import AssignmentStatus

__all__ = ["save_label", "my_labels", "count_my_labels", "pair_history", "MAX_SECONDS"]

MAX_SECONDS = 24 * 3600.0


def _check_seconds(seconds: float | None) -> float | None:
    if seconds is None:
        return None
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, numbers.Real)
        or math.isnan(seconds)
        or not 0 <= seconds <= MAX_SECONDS
    ):
        raise InvalidInput(f"seconds must be a number in [0, {MAX_SECONDS:.0f}] or None; got {seconds!r}")
    return float(seconds)


def save_label(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    pair_id: int,
    *,
    grade: int,
    reason: str,
    unsure: bool = False,
    seconds: float | None = None,
    expected_version: int | None = None,
) -> LabelInfo:
    """Save the caller's judgment of a pair they hold (first label) or labelled before (an edit).

    ``expected_version``: the label version the caller was looking at (0 for a fresh pair); a different
    current version (an edit from another tab) raises Conflict instead of silently overwriting it.
    Raises NotFound for a pair not assigned to the caller, Conflict for a skipped or expired claim.
    """
    check_int(pair_id, "pair_id")
    check_int(expected_version, "expected_version", 0, optional=True)
    if not isinstance(unsure, bool):
        raise InvalidInput(f"unsure must be a bool; got {unsure!r}")
    secs = _check_seconds(seconds)
    with db.write() as s:
        user, proj = annotator_context(s, actor, project, "label pairs")
        value, text = check_grade(proj, grade), check_reason(reason, proj.min_reason_length)
        a = jq.own_assignment(s, pair_id, user.id)
        if a is None or a.project_id != proj.id:
            raise NotFound(f"pair {pair_id} is not assigned to {user.username}")
        if a.status not in AssignmentStatus.live():
            raise Conflict(
                f"pair {pair_id} is no longer assigned to {user.username} ({a.status}); ask for the next pair"
            )
        version = jq.mark_done(s, a.id, value, expected_version)
        if version is None:
            raise Conflict(
                f"pair {pair_id}: your claim changed meanwhile (edited elsewhere, skipped or expired); "
                "reload it"
            )
        doc_version = jq.current_doc_version(s, pair_id)
        label = jq.insert_label(
            s,
            assignment_id=a.id,
            pair_id=pair_id,
            annotator_id=user.id,
            version=version,
            grade=value,
            reason=text,
            unsure=unsure,
            seconds=secs,
            doc_version=doc_version,
            guidelines_version=pq.guidelines_version(s, proj.id),
        )
        jq.set_label_id(s, a.id, label.id)
        content = pair_content(s, pair_id)
        return LabelInfo(
            pair_id=pair_id,
            query_id=content["query_id"],
            doc_id=content["doc_id"],
            annotator=user.username,
            version=version,
            grade=value,
            reason=text,
            unsure=unsure,
            seconds=secs,
            doc_version=doc_version,
            stale=False,
            created_at=label.created_at,
            doc_title=content["doc_title"],
        )


def my_labels(
    db: Database, actor: Actor, project: ProjectRef, *, limit: int = 50, offset: int = 0
) -> list[LabelInfo]:
    """The caller's current labels, most recently saved first (to review or edit them); page with ``offset``
    (labels to skip) and `count_my_labels`."""
    check_count(limit, "limit")
    check_count(offset, "offset", 0)
    with db.read() as s:
        user, proj = annotator_context(s, actor, project, "list their labels")
        rows = jq.label_rows(
            s, project_id=proj.id, annotator_id=user.id, current_only=True, limit=limit, offset=offset
        )
        return [label_info(r) for r in rows]


def count_my_labels(db: Database, actor: Actor, project: ProjectRef) -> int:
    """How many current labels the caller has in the project (the rows `my_labels` pages through)."""
    with db.read() as s:
        user, proj = annotator_context(s, actor, project, "count their labels")
        return jq.own_label_count(s, project_id=proj.id, annotator_id=user.id, current_only=True)


def pair_history(db: Database, actor: Actor, project: ProjectRef, pair_id: int) -> list[LabelInfo]:
    """Every label version of a pair, newest first: an annotator sees only their own; reviewers see all."""
    check_int(pair_id, "pair_id")
    with db.read() as s:
        user, proj = open_project(s, actor, project, Role.ANNOTATOR, "see label history")
        own_only = None  # reviewers (and the system actor) see every annotator's labels
        if user is not None and user.role == Role.ANNOTATOR:
            if pq.member(s, proj.id, user.id) is None:
                raise PermissionDenied(f"{user.username} is not an annotator of project {proj.name!r}")
            own_only = user.id
        rows = jq.label_rows(s, project_id=proj.id, pair_id=pair_id, annotator_id=own_only)
        return [label_info(r) for r in rows]
