"""Adjudication: a reviewer's final grade for a disagreement.

Only a complete pair whose labels disagree (see `gate`) can be adjudicated; the reviewer sees every
annotator's grade and reason side by side (`gate.disagreements`) and gives a grade and a reason (at least the
project's ``min_reason_length`` characters). Adjudications are appended, never changed: adjudicating again
records a new one, the latest counts. It stays valid while the labels it saw are current.
"""

from __future__ import annotations

import pandas as pd

from annotate_app.services._context import ProjectRef, check_grade, open_project
from annotate_app.services._gate_state import classify
from annotate_app.services._records import adjudication_info
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, NotFound
from annotate_app.services.inputs import check_int, check_reason
from annotate_app.services.types import AdjudicationInfo
from annotate_app.store import judging as jq
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction

__all__ = ["adjudicate", "get_adjudication"]


def _pair_labels(s, project_id: int, pair_id: int) -> pd.DataFrame:
    rows = jq.label_rows(s, project_id=project_id, pair_id=pair_id, current_only=True)
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
    db: Database, actor: Actor, project: ProjectRef, pair_id: int, *, grade: int, reason: str
) -> AdjudicationInfo:
    """Record the final grade of a disagreement (reviewer). Conflict if the pair is not a current
    disagreement (incomplete, unanimous, accepted by majority, or excluded)."""
    check_int(pair_id, "pair_id")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "adjudicate")
        value, text = check_grade(proj, grade), check_reason(reason, proj.min_reason_length)
        content = jq.pair_content(s, pair_id)
        if content is None or content["project_id"] != proj.id:
            raise NotFound(f"pair {pair_id} does not exist in project {proj.name!r}")
        if content["excluded"]:
            raise Conflict(f"pair {pair_id} is excluded")
        verdict = classify(_pair_labels(s, proj.id, pair_id), proj.annotators_per_pair, proj.relevance_cutoff)
        if verdict.empty or not bool(verdict["disagreement"].iloc[0]):
            raise Conflict(
                f"pair {pair_id} is not a disagreement (it needs all {proj.annotators_per_pair} labels "
                "and labels that disagree)"
            )
        row = jq.insert_adjudication(
            s,
            project_id=proj.id,
            pair_id=pair_id,
            reviewer_id=actor.user_id,
            grade=value,
            reason=text,
            label_state=verdict["label_state"].iloc[0],
        )
        audit(
            s,
            actor,
            AuditAction.ADJUDICATED,
            project_id=proj.id,
            target=f"{content['query_id']} {content['doc_id']}",
            details={"pair_id": pair_id, "grade": value},
        )
        return adjudication_info(s, row, True)


def get_adjudication(
    db: Database, actor: Actor, project: ProjectRef, pair_id: int
) -> AdjudicationInfo | None:
    """The latest adjudication of a pair (reviewer), with whether it is still valid; None if none."""
    check_int(pair_id, "pair_id")
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see adjudications")
        adj = jq.adjudication_of(s, proj.id, pair_id)
        if adj is None:
            return None
        verdict = classify(_pair_labels(s, proj.id, pair_id), proj.annotators_per_pair, proj.relevance_cutoff)
        valid = not verdict.empty and adj.label_state == verdict["label_state"].iloc[0]
        return adjudication_info(s, adj, valid)
