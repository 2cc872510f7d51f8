"""The agreement gate: agreement figures, the disagreement queue, confusion between two annotators, and what
blocks a release. The statistics come from `metrics.agreement`; this module decides which labels count.

Rules (N = the project's annotators per pair; excluded pairs are ignored everywhere):

- A pair is *complete* when it has N current labels. Agreement is computed over complete pairs only, on the
  current label of each annotator: binary at the project's relevance cut-off (``agreement_mode="binary"``) or
  on the grades with linear/quadratic weights (``"weighted"``).
- A complete pair is accepted automatically when it is *unanimous* (one grade), or by *majority* when more than
  half of its labels give one grade and its labels do not straddle the relevance cut-off. Every other complete
  pair is a *disagreement* (with N = 2: any two different grades) and needs a reviewer's adjudication.
- An adjudication holds while the labels it saw are the current ones; an edit made afterwards reopens the pair.
- A release is blocked while a pair lacks labels, a label is stale (made on an older document version) or a
  disagreement is unadjudicated; an agreement statistic below the threshold blocks it unless a reviewer writes a
  justification (see `releases.create_release`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy.orm import Session

from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import NotFound
from annotate_app.services.inputs import check_count, check_text
from annotate_app.services.projects import ProjectRef, open_project, settings_of
from annotate_app.services.queue import label_info
from annotate_app.services.types import (
    AdjudicationInfo,
    AgreementSummary,
    Blockers,
    Confusion,
    Disagreement,
    ProjectSettings,
)
from annotate_app.store import judging as jq
from annotate_app.store import users as uq
from annotate_app.store.db import Database
from annotate_app.store.models import Adjudication, Project
from metrics import agreement as ag
from metrics.errors import QrelForgeError, UndefinedMetricWarning

__all__ = ["agreement", "disagreements", "confusion", "blockers", "classify", "load_state", "GateState"]


# ------------------------------------------------------------------------------------------ the state
@dataclass(frozen=True, eq=False)
class GateState:
    """Everything the gate needs, read in one transaction: current labels (of non-excluded pairs, int columns
    pair_id, annotator_id, grade, label_id, stale), pairs (index pair_id: query_id as internal id, excluded),
    the per-pair verdicts, the latest adjudications, and the annotators' and queries' names."""

    project: Project
    settings: ProjectSettings
    labels: pd.DataFrame
    pairs: pd.DataFrame
    verdicts: pd.DataFrame
    adjudications: pd.DataFrame
    names: dict[int, str]
    queries: dict[int, str]

    @property
    def complete(self) -> pd.DataFrame:
        return self.verdicts[self.verdicts["complete"].to_numpy()]

    def adjudication_valid(self, pair_id: int) -> bool:
        if pair_id not in self.adjudications.index or pair_id not in self.verdicts.index:
            return False
        return self.adjudications.at[pair_id, "label_state"] == self.verdicts.at[pair_id, "label_state"]

    def valid_adjudications(self) -> pd.DataFrame:
        """The latest adjudication (id, grade) of each disagreement whose labels have not changed since."""
        disagreeing = self.verdicts.index[self.verdicts["disagreement"].to_numpy()]
        adj = self.adjudications.reindex(disagreeing)
        same = adj["label_state"].to_numpy() == self.verdicts.loc[disagreeing, "label_state"].to_numpy()
        return adj[same]

    def unresolved(self) -> np.ndarray:
        """Pair ids of the disagreements without a valid adjudication."""
        disagreeing = self.verdicts.index[self.verdicts["disagreement"].to_numpy()]
        return np.setdiff1d(disagreeing.to_numpy(), self.valid_adjudications().index.to_numpy())


def load_state(s: Session, project: Project, *, all_states: bool = False) -> GateState:
    """Read the gate's inputs. ``all_states``: compute ``label_state`` for every pair (releases need the label
    IDs behind every qrel), not only for the disagreements."""
    settings = settings_of(project)
    pairs = pd.DataFrame(jq.pair_rows(s, project.id)).set_index("pair_id", drop=False)
    labels = pd.DataFrame(jq.current_labels(s, project.id))
    excluded = pairs.index[pairs["excluded"].to_numpy()]
    if len(excluded):
        labels = labels[~labels["pair_id"].isin(excluded)].reset_index(drop=True)
    verdicts = classify(
        labels.drop(columns="label_id"), settings.annotators_per_pair, settings.relevance_cutoff
    )
    wanted = verdicts.index[verdicts["complete" if all_states else "disagreement"].to_numpy()]
    states = label_states(labels[labels["pair_id"].isin(wanted)])
    verdicts["label_state"] = states.reindex(verdicts.index).to_numpy()
    names = uq.names_of(s, labels["annotator_id"].unique().tolist())
    adjudications = pd.DataFrame(jq.latest_adjudications(s, project.id)).set_index("pair_id")
    return GateState(
        project, settings, labels, pairs, verdicts, adjudications, names, jq.query_names(s, project.id)
    )


def classify(labels: pd.DataFrame, n: int, cutoff: int) -> pd.DataFrame:
    """Per pair (index ``pair_id``, ascending): ``n_labels``, ``complete``, ``unanimous``, ``majority``
    (accepted by majority), ``disagreement``, ``grade`` (the accepted grade, -1 for a disagreement), ``stale``
    and ``label_state`` (`label_states` when ``labels`` has a ``label_id`` column, else None).

    >>> t = pd.DataFrame({"pair_id": [1, 1, 2, 2], "annotator_id": [7, 8, 7, 8], "grade": [2, 2, 0, 3],
    ...                   "label_id": [1, 2, 3, 4], "stale": [0, 0, 0, 0]})
    >>> classify(t, 2, 1)[["unanimous", "disagreement", "grade", "label_state"]].to_dict("list")
    {'unanimous': [True, False], 'disagreement': [False, True], 'grade': [2, -1], 'label_state': ['1,2', '3,4']}
    """
    pair_ids, codes = _codes(labels["pair_id"].to_numpy(dtype=np.int64))
    grades, grade_codes = _codes(labels["grade"].to_numpy(dtype=np.int64))
    k = max(len(grades), 1)
    counts = np.bincount(codes * k + grade_codes, minlength=len(pair_ids) * k).reshape(len(pair_ids), k)
    count = counts.sum(axis=1)
    present = counts > 0
    low = grades[present.argmax(axis=1)] if len(grades) else count
    high = grades[len(grades) - 1 - present[:, ::-1].argmax(axis=1)] if len(grades) else count
    top_count, top_grade = counts.max(axis=1), grades[counts.argmax(axis=1)] if len(grades) else count
    unanimous = low == high
    majority = ~unanimous & (2 * top_count > count) & ~((low < cutoff) & (high >= cutoff))
    complete = count >= n
    stale = (
        np.bincount(codes, weights=labels["stale"].to_numpy(dtype=np.float64), minlength=len(pair_ids)) > 0
    )
    index = pd.Index(pair_ids, name="pair_id")
    states = (
        label_states(labels).reindex(index).to_numpy()
        if "label_id" in labels
        else np.full(len(pair_ids), None, dtype=object)
    )
    return pd.DataFrame(
        {
            "n_labels": count,
            "complete": complete,
            "unanimous": complete & unanimous,
            "majority": complete & majority,
            "disagreement": complete & ~unanimous & ~majority,
            "grade": np.where(unanimous | majority, top_grade, -1),
            "stale": stale,
            "label_state": states,
        },
        index=index,
    )


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values ascending, code of each value) — by counting when the values are dense integers (IDs,
    grades), which is O(n), else by sorting (`numpy.unique`)."""
    if len(values) == 0:
        return values[:0], np.zeros(0, dtype=np.int64)
    low, high = int(values.min()), int(values.max())
    if high - low > 4 * len(values) + 1024:
        return np.unique(values, return_inverse=True)
    seen = np.zeros(high - low + 1, dtype=bool)
    seen[values - low] = True
    code_of = np.cumsum(seen) - 1
    return np.flatnonzero(seen) + low, code_of[values - low]


def label_states(frame: pd.DataFrame) -> pd.Series:
    """Per pair (a Series indexed by ``pair_id``): its current label ids, ascending, joined by commas — the
    fingerprint an adjudication keeps and the provenance a release stores. Pairs with the same number of labels
    are handled together, as the rows of one matrix.

    >>> label_states(pd.DataFrame({"pair_id": [5, 5, 6], "label_id": [9, 3, 4]})).to_dict()
    {5: '3,9', 6: '4'}
    """
    pair = frame["pair_id"].to_numpy(dtype=np.int64)
    ids = frame["label_id"].to_numpy(dtype=np.int64)
    order = np.lexsort((ids, pair))
    pair, ids = pair[order], ids[order]
    keys, codes = _codes(pair)
    per_pair = np.bincount(codes, minlength=len(keys))
    out = np.full(len(keys), None, dtype=object)
    for size in np.unique(per_pair):
        block = per_pair[codes] == size
        out[codes[block][::size]] = [",".join(map(str, row)) for row in ids[block].reshape(-1, size).tolist()]
    return pd.Series(out, index=pd.Index(keys, name="pair_id"), dtype=object)


# --------------------------------------------------------------------------------------- agreement
def _table(state: GateState) -> pd.DataFrame:
    """The complete pairs' labels for metrics.agreement, with integer keys (fast to encode): item = pair id,
    rater = annotator id, label = grade, query_id = internal query id."""
    complete = state.verdicts["complete"].reindex(state.labels["pair_id"].to_numpy()).to_numpy(dtype=bool)
    table = state.labels[complete]
    return pd.DataFrame(
        {
            "item": table["pair_id"].to_numpy(),
            "rater": table["annotator_id"].to_numpy(),
            "label": table["grade"].to_numpy(),
            "query_id": state.pairs["query_id"].reindex(table["pair_id"].to_numpy()).to_numpy(),
        }
    )


def _options(settings: ProjectSettings) -> dict:
    if settings.agreement_mode == "binary":
        return {"labels": list(settings.grades), "cutoff": settings.relevance_cutoff}
    return {"labels": list(settings.grades), "weights": settings.weights}


def summarize(state: GateState) -> AgreementSummary:
    """The agreement figures of a loaded state (see the module doc)."""
    settings, table = state.settings, _table(state)
    level = "nominal" if settings.agreement_mode == "binary" else "ordinal"
    opts = _options(settings)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        try:
            figures = ag.agreement_summary(table, level=level, **opts)
            pairwise = ag.pairwise_kappa(table, **opts)
        except QrelForgeError as exc:
            return _empty_summary(state, str(exc))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            per_query = ag.group_agreement(table, group="query_id", level=level, **opts)
    notes = tuple(
        dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UndefinedMetricWarning))
    )
    per_query["query_id"] = per_query["query_id"].map(state.queries)
    per_query = per_query.sort_values("query_id", kind="stable").reset_index(drop=True)
    return _summary(
        state,
        figures,
        _named(pairwise.kappa, state.names),
        _named(pairwise.n_items, state.names),
        per_query,
        notes,
    )


def _named(matrix: pd.DataFrame, names: dict[int, str]) -> pd.DataFrame:
    """An annotator × annotator matrix keyed by username, in name order."""
    out = matrix.rename(index=names, columns=names)
    order = sorted(out.index)
    return out.loc[order, order]


def _statistic(settings: ProjectSettings, figures: dict) -> float:
    key = {"cohen": "mean_pairwise_kappa", "fleiss": "fleiss_kappa", "krippendorff": "krippendorff_alpha"}
    value = figures[key[settings.statistic]]
    return math.nan if value is None else float(value)


def _summary(
    state: GateState,
    figures: dict,
    kappa: pd.DataFrame,
    shared: pd.DataFrame,
    per_query: pd.DataFrame,
    notes: tuple,
) -> AgreementSummary:
    settings = state.settings
    value = _statistic(settings, figures)
    fleiss = figures["fleiss_kappa"]
    return AgreementSummary(
        settings.statistic,
        value,
        settings.threshold,
        bool(value >= settings.threshold),
        ag.interpret(value),
        settings.agreement_mode,
        settings.weights if settings.agreement_mode == "weighted" else None,
        int(figures["n_items"]),
        int(figures["n_raters"]),
        int(figures["n_ratings"]),
        float(figures["percent_agreement"]),
        float(figures["mean_pairwise_kappa"]),
        None if fleiss is None else float(fleiss),
        float(figures["krippendorff_alpha"]),
        int(state.verdicts["disagreement"].sum()),
        len(state.unresolved()),
        kappa,
        shared,
        per_query,
        notes,
    )


def _empty_summary(state: GateState, why: str) -> AgreementSummary:
    settings, nan = state.settings, math.nan
    empty = pd.DataFrame()
    return AgreementSummary(
        settings.statistic,
        nan,
        settings.threshold,
        False,
        "undefined",
        settings.agreement_mode,
        settings.weights if settings.agreement_mode == "weighted" else None,
        len(state.complete),
        len(state.names),
        int(state.complete["n_labels"].sum()),
        nan,
        nan,
        None,
        nan,
        int(state.verdicts["disagreement"].sum()),
        len(state.unresolved()),
        empty,
        empty,
        empty,
        (f"no agreement yet: {why}",),
    )


def agreement(db: Database, actor: Actor, project: ProjectRef) -> AgreementSummary:
    """The project's agreement figures (reviewer): the gate statistic against its threshold, percent agreement,
    Fleiss, Krippendorff, mean pairwise kappa, the annotator × annotator kappa matrix, and per-query rows."""
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
    spread, then pair. Each item shows every annotator's grade and reason side by side, the adjudication if any,
    and prior judgments of the pair. Resolved (validly adjudicated) pairs are left out unless asked for."""
    check_count(limit, "limit")
    check_count(offset, "offset", 0)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see disagreements")
        state = load_state(s, proj)
        ranked = _ranked_disagreements(state, include_resolved)
        page = ranked.iloc[offset : offset + limit]
        return [
            _disagreement(s, state, int(r.item), float(r.disagreement), float(r.spread))
            for r in page.itertuples(index=False)
        ]


def _ranked_disagreements(state: GateState, include_resolved: bool) -> pd.DataFrame:
    ids = state.verdicts.index[state.verdicts["disagreement"].to_numpy()]
    if not include_resolved:
        ids = pd.Index(state.unresolved())
    if len(ids) == 0:
        return pd.DataFrame(columns=["item", "disagreement", "spread"])
    table = _table(state)
    table = table[table["item"].isin(ids)]
    weights = state.settings.weights
    per_item = ag.item_agreement(table, labels=list(state.settings.grades), weights=weights)
    return per_item.sort_values(
        ["disagreement", "spread", "item"], ascending=[False, False, True], kind="stable"
    )


def _disagreement(s: Session, state: GateState, pair_id: int, score: float, spread: float) -> Disagreement:
    content = jq.pair_content(s, pair_id)
    rows = jq.label_rows(s, project_id=state.project.id, pair_id=pair_id, current_only=True)
    labels = tuple(sorted((label_info(r) for r in rows), key=lambda x: x.annotator))
    adj = jq.adjudication_of(s, state.project.id, pair_id)
    info = None if adj is None else adjudication_info(s, adj, state.adjudication_valid(pair_id))
    priors = tuple(jq.priors(s, [pair_id]).get(pair_id, []))
    return Disagreement(
        pair_id,
        content["query_id"],
        content["query_text"],
        content["doc_id"],
        content["doc_title"],
        content["doc_text"],
        labels,
        score,
        spread,
        info,
        priors,
    )


def adjudication_info(s: Session, adj: Adjudication, valid: bool) -> AdjudicationInfo:
    reviewer = (
        uq.names_of(s, [adj.reviewer_id]).get(adj.reviewer_id, "system") if adj.reviewer_id else "system"
    )
    return AdjudicationInfo(adj.pair_id, reviewer, adj.grade, adj.reason, adj.created_at, valid)


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
    return Confusion(annotator_a, annotator_b, table, len(both), _pair_kappa(both, state.settings))


def _pair_kappa(both: pd.DataFrame, settings: ProjectSettings) -> float:
    if both.empty:
        return math.nan
    opts = _options(settings)
    r1, r2 = both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy()
    if "cutoff" in opts:
        r1, r2 = ag.binarize(r1, opts["cutoff"]), ag.binarize(r2, opts["cutoff"])
        opts = {"labels": [0.0, 1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return float(ag.cohen_kappa(r1, r2, **opts).kappa)


# ----------------------------------------------------------------------------------------- blockers
def compute_blockers(state: GateState, summary: AgreementSummary) -> Blockers:
    verdicts = state.verdicts
    live = int((~state.pairs["excluded"]).sum())
    return Blockers(
        missing_labels=live - int(verdicts["complete"].sum()),
        stale_labels=int(state.labels["stale"].astype(bool).sum()),
        unadjudicated=len(state.unresolved()),
        no_pairs=not bool(verdicts["complete"].any()),
        agreement=summary.value,
        threshold=summary.threshold,
        statistic=summary.statistic,
    )


def blockers(db: Database, actor: Actor, project: ProjectRef) -> Blockers:
    """What stops a release right now (reviewer); ``Blockers.ok`` when nothing does."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see release blockers")
        state = load_state(s, proj)
    return compute_blockers(state, summarize(state))
