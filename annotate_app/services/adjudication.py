"""Adjudication: a reviewer's final grade for a disagreement.

Only a complete, disagreeing pair can be adjudicated, with a grade and a reason; adjudications are appended,
the latest counts, and it holds while the labels it saw are current. A reviewer who labelled the pair may not
adjudicate it unless ``allow_self_adjudication``. Idempotent like label saves (``request_id``).
"""

from __future__ import annotations

import pandas as pd
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, check_grade, open_project
from annotate_app.services._gate_state import classify
from annotate_app.services._records import adjudication_info
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, NotFound, PermissionDenied
from annotate_app.services.inputs import check_int, check_reason, check_request_id
from annotate_app.services.types import AdjudicationInfo
from annotate_app.store import annotation
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction
from annotate_app.store.models import Adjudication, Project

__all__ = ["adjudicate", "get_adjudication"]


def _pair_labels(s, project_id: int, pair_id: int) -> pd.DataFrame:
    rows = annotation.label_rows(s, project_id=project_id, pair_id=pair_id, current_only=True)
    return pd.DataFrame(
        {
            "pair_id": [r["pair_id"] for r in rows],
            "annotator_id": range(len(rows)),
            "grade": [r["grade"] for r in rows],
            "label_id": [r["label_id"] for r in rows],
            "stale": [int(r["doc_version"] != r["current_doc_version"]) for r in rows],
        }
    )


def adjudicate(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    pair_id: int,
    *,
    grade: int,
    reason: str,
    request_id: str | None = None,
) -> AdjudicationInfo:
    """Record the final grade of a disagreement (reviewer). Conflict if the pair is not a current
    disagreement (incomplete, unanimous, accepted by majority, or excluded); PermissionDenied if the reviewer
    labelled the pair, unless the project allows self-adjudication (then the audit entry says so).

    Idempotent: the same grade and reason as the reviewer's current adjudication of the same labels add
    nothing; ``request_id`` (unique per reviewer) makes a retry return what its first attempt stored."""
    check_int(pair_id, "pair_id")
    key = check_request_id(request_id)
    try:
        with db.write() as s:
            return _adjudicate(s, actor, project, pair_id, grade, reason, key)
    except IntegrityError:
        if key is None:
            raise
    with db.read() as s:  # a concurrent attempt with the same key committed first
        _, proj = open_project(s, actor, project, Role.REVIEWER, "adjudicate")
        row = annotation.adjudication_by_request(s, actor.user_id, key)
        if row is None:
            raise Conflict(f"pair {pair_id}: a concurrent adjudication failed; try again") from None
        return _replay(s, proj, row, pair_id, key)


def _adjudicate(
    s: Session, actor: Actor, project: ProjectRef, pair_id: int, grade: int, reason: str, key: str | None
) -> AdjudicationInfo:
    _, proj = open_project(s, actor, project, Role.REVIEWER, "adjudicate")
    value, text = check_grade(proj, grade), check_reason(reason, proj.min_reason_length)
    earlier = None if key is None else annotation.adjudication_by_request(s, actor.user_id, key)
    if earlier is not None:
        return _replay(s, proj, earlier, pair_id, key)
    content = annotation.pair_content(s, pair_id)
    if content is None or content["project_id"] != proj.id:
        raise NotFound(f"pair {pair_id} does not exist in project {proj.name!r}")
    if content["excluded"]:
        raise Conflict(f"pair {pair_id} is excluded")
    own = _check_not_own(s, actor, proj, content)
    verdict = classify(_pair_labels(s, proj.id, pair_id), proj.annotators_per_pair, proj.relevance_cutoff)
    if verdict.empty or not bool(verdict["disagreement"].iloc[0]):
        raise Conflict(
            f"pair {pair_id} is not a disagreement (it needs all {proj.annotators_per_pair} labels "
            "and labels that disagree)"
        )
    label_state = verdict["label_state"].iloc[0]
    latest = annotation.adjudication_of(s, proj.id, pair_id)
    if latest is not None and _same(latest, actor.user_id, value, text, label_state):
        return adjudication_info(s, latest, True)  # nothing new to record
    row = annotation.insert_adjudication(
        s,
        project_id=proj.id,
        pair_id=pair_id,
        reviewer_id=actor.user_id,
        grade=value,
        reason=text,
        label_state=label_state,
        request_id=key,
    )
    details: dict[str, object] = {"pair_id": pair_id, "grade": value}
    if own:
        details["self_adjudication"] = True
    target = f"{content['query_id']} {content['doc_id']}"
    audit(s, actor, AuditAction.ADJUDICATED, project_id=proj.id, target=target, details=details)
    return adjudication_info(s, row, True)


def _same(adj: Adjudication, reviewer_id: int | None, grade: int, reason: str, label_state: str) -> bool:
    return (adj.reviewer_id, adj.grade, adj.reason, adj.label_state) == (
        reviewer_id,
        grade,
        reason,
        label_state,
    )


def _check_not_own(s: Session, actor: Actor, proj: Project, content: dict) -> bool:
    """Whether the reviewer labelled the pair; refused unless the project allows self-adjudication."""
    if actor.user_id is None or not annotation.has_labelled(s, content["pair_id"], actor.user_id):
        return False
    if not proj.allow_self_adjudication:
        raise PermissionDenied(
            f"{actor.username} labelled {content['query_id']} {content['doc_id']} (pair "
            f"{content['pair_id']}) and may not adjudicate it; project {proj.name!r} does not allow "
            "self-adjudication (setting allow_self_adjudication)"
        )
    return True


def _replay(s: Session, proj: Project, row: Adjudication, pair_id: int, key: str | None) -> AdjudicationInfo:
    """What an earlier attempt with the same request_id stored."""
    if row.pair_id != pair_id or row.project_id != proj.id:
        raise Conflict(
            f"request_id {key!r} was already used to adjudicate pair {row.pair_id}, not pair {pair_id}; "
            "use a new request_id for every adjudication"
        )
    return adjudication_info(s, row, _valid(s, proj, row))


def _valid(s: Session, proj: Project, adj: Adjudication) -> bool:
    verdict = classify(_pair_labels(s, proj.id, adj.pair_id), proj.annotators_per_pair, proj.relevance_cutoff)
    return not verdict.empty and adj.label_state == verdict["label_state"].iloc[0]


def get_adjudication(
    db: Database, actor: Actor, project: ProjectRef, pair_id: int
) -> AdjudicationInfo | None:
    """The latest adjudication of a pair (reviewer), with whether it is still valid; None if none."""
    check_int(pair_id, "pair_id")
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see adjudications")
        adj = annotation.adjudication_of(s, proj.id, pair_id)
        if adj is None:
            return None
        return adjudication_info(s, adj, _valid(s, proj, adj))
