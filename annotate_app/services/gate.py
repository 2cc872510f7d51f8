"""The agreement gate: agreement figures, the disagreement queue, confusion between two annotators, and what
blocks a release; the statistics come from `metrics.agreement`, this module decides which labels count.

Agreement covers complete pairs (N current labels) only. A pair is accepted when unanimous, or by a majority
that does not straddle the relevance cut-off; else it is a disagreement to adjudicate. Excluded pairs and
machine labels never count. The rules in full: docs/modules.md.
"""

from __future__ import annotations

import math
import warnings

import pandas as pd
from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project, pair_content
from annotate_app.services._gate_state import (
    GateState,
    agreement_options,
    agreement_table,
    compute_blockers,
    load_state,
    summarize,
)
from annotate_app.services._gate_types import AgreementSummary, Blockers, Confusion, Disagreement
from annotate_app.services._records import adjudication_info, label_info
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import NotFound
from annotate_app.services.inputs import MAX_REASON, check_count, check_text
from annotate_app.services.types import ProjectSettings
from annotate_app.store import annotation
from annotate_app.store.db import Database
from metrics import agreement as metrics_agreement
from metrics.errors import UndefinedMetricWarning

__all__ = [
    "agreement",
    "disagreements",
    "confusion",
    "blockers",
    "AgreementSummary",
    "Blockers",
    "Confusion",
    "Disagreement",
]


def agreement(db: Database, actor: Actor, project: ProjectRef) -> AgreementSummary:
    """The project's agreement figures (reviewer): the gate statistic against its threshold, percent
    agreement, Fleiss, Krippendorff, mean pairwise kappa, the annotator × annotator kappa matrix, and
    per-query rows."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see agreement")
        state = load_state(s, proj)
    return summarize(state)


# ------------------------------------------------------------------------------------ disagreements
def disagreements(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    *,
    include_resolved: bool = False,
    limit: int = 50,
    offset: int = 0,
) -> list[Disagreement]:
    """The disagreement queue (reviewer), worst first: by weighted disagreement between the grades, then grade
    spread, then pair. Each item shows every annotator's grade and reason side by side, the adjudication if
    any, and prior judgments of the pair. Resolved (validly adjudicated) pairs are left out unless asked
    for."""
    check_count(limit, "limit")
    check_count(offset, "offset", 0)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see disagreements")
        state = load_state(s, proj)
        ranked = _ranked_disagreements(state, include_resolved)
        page = ranked.iloc[offset : offset + limit]
        rows = zip(page["item"].tolist(), page["disagreement"].tolist(), page["spread"].tolist(), strict=True)
        return [_disagreement(s, state, int(p), float(score), float(spread)) for p, score, spread in rows]


def _ranked_disagreements(state: GateState, include_resolved: bool) -> pd.DataFrame:
    ids = state.verdicts.index[state.verdicts["disagreement"].to_numpy()]
    if not include_resolved:
        ids = pd.Index(state.unresolved())
    if len(ids) == 0:
        return pd.DataFrame(columns=["item", "disagreement", "spread"])
    table = agreement_table(state)
    table = table[table["item"].isin(ids)]
    weights = state.settings.weights
    per_item = metrics_agreement.item_agreement(table, labels=list(state.settings.grades), weights=weights)
    return per_item.sort_values(
        ["disagreement", "spread", "item"], ascending=[False, False, True], kind="stable"
    )


def _disagreement(s: Session, state: GateState, pair_id: int, score: float, spread: float) -> Disagreement:
    content = pair_content(s, pair_id)
    rows = annotation.label_rows(
        s, project_id=state.project.id, pair_id=pair_id, current_only=True, reason_chars=MAX_REASON
    )
    labels = tuple(sorted((label_info(r) for r in rows), key=lambda x: x.annotator))
    adj = annotation.adjudication_of(s, state.project.id, pair_id)
    info = None if adj is None else adjudication_info(s, adj, state.adjudication_valid(pair_id))
    priors = tuple(annotation.priors(s, [pair_id]).get(pair_id, []))
    return Disagreement(
        pair_id=pair_id,
        query_id=content["query_id"],
        query_text=content["query_text"],
        doc_id=content["doc_id"],
        doc_title=content["doc_title"],
        doc_text=content["doc_text"],
        labels=labels,
        disagreement=score,
        spread=spread,
        adjudication=info,
        prior_grades=priors,
    )


# ---------------------------------------------------------------------------------------- confusion
def confusion(
    db: Database, actor: Actor, project: ProjectRef, annotator_a: str, annotator_b: str
) -> Confusion:
    """How two annotators' grades cross on the pairs both labelled (reviewer), with their Cohen's kappa in the
    project's agreement mode (NaN when undefined)."""
    check_text(annotator_a, "annotator_a")
    check_text(annotator_b, "annotator_b")
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see agreement")
        state = load_state(s, proj)
    ids = {v: k for k, v in state.names.items()}
    for name in (annotator_a, annotator_b):
        if name not in ids:
            raise NotFound(f"annotator {name!r} has no labels in project {proj.name!r}")
    two = state.labels[state.labels["annotator_id"].isin([ids[annotator_a], ids[annotator_b]])]
    grades = two.pivot(index="pair_id", columns="annotator_id", values="grade")
    both = grades.reindex(columns=[ids[annotator_a], ids[annotator_b]]).dropna()
    scale = list(state.settings.grades)
    table = pd.crosstab(both.iloc[:, 0].astype(int), both.iloc[:, 1].astype(int)).reindex(
        index=scale, columns=scale, fill_value=0
    )
    table.index.name, table.columns.name = annotator_a, annotator_b
    return Confusion(
        annotator_a=annotator_a,
        annotator_b=annotator_b,
        table=table,
        n_pairs=len(both),
        kappa=_pair_kappa(both, state.settings),
    )


def _pair_kappa(both: pd.DataFrame, settings: ProjectSettings) -> float:
    if both.empty:
        return math.nan
    opts = agreement_options(settings)
    r1, r2 = both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy()
    if "cutoff" in opts:
        r1, r2 = (
            metrics_agreement.binarize(r1, opts["cutoff"]),
            metrics_agreement.binarize(r2, opts["cutoff"]),
        )
        opts = {"labels": [0.0, 1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return float(metrics_agreement.cohen_kappa(r1, r2, **opts).kappa)


def blockers(db: Database, actor: Actor, project: ProjectRef) -> Blockers:
    """What stops a release right now (reviewer); ``Blockers.ok`` when nothing does."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see release blockers")
        state = load_state(s, proj)
    return compute_blockers(state, summarize(state))
