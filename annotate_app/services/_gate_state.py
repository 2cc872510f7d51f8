"""The gate's state, read in one transaction, and the figures computed from it: per-pair verdicts
(`classify`), the agreement summary (`summarize`) and the release blockers (`compute_blockers`).

Private to `annotate_app.services`: `gate`, `releases` and `status` share it. Its functions take a session or
a loaded `GateState`, never ``(db, actor)``; the role checks are the callers'.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy.orm import Session

from annotate_app.services._context import settings_of
from annotate_app.services._gate_types import AgreementSummary, Blockers
from annotate_app.services.types import ProjectSettings
from annotate_app.store import annotation, users
from annotate_app.store.enums import AgreementMode, Statistic, Weights
from annotate_app.store.models import Project
from metrics import agreement
from metrics.errors import QrelForgeError, UndefinedMetricWarning

__all__ = [
    "GateState",
    "load_state",
    "classify",
    "label_states",
    "agreement_table",
    "agreement_options",
    "summarize",
    "compute_blockers",
]


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
        seen = self.adjudications.at[pair_id, "label_state"]
        return isinstance(seen, str) and seen == self.verdicts.at[pair_id, "label_state"]

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
    pairs = pd.DataFrame(annotation.pair_rows(s, project.id)).set_index("pair_id", drop=False)
    labels = pd.DataFrame(annotation.current_labels(s, project.id))
    excluded = pairs.index[pairs["excluded"].to_numpy()]
    if len(excluded):
        labels = labels[~labels["pair_id"].isin(excluded)].reset_index(drop=True)
    verdicts = classify(
        labels.drop(columns="label_id"), settings.annotators_per_pair, settings.relevance_cutoff
    )
    wanted = verdicts.index[verdicts["complete" if all_states else "disagreement"].to_numpy()]
    states = label_states(labels[labels["pair_id"].isin(wanted)])
    verdicts["label_state"] = states.reindex(verdicts.index).to_numpy()
    names = users.names_of(s, labels["annotator_id"].unique().tolist())
    adjudications = pd.DataFrame(annotation.latest_adjudications(s, project.id)).set_index("pair_id")
    return GateState(
        project=project,
        settings=settings,
        labels=labels,
        pairs=pairs,
        verdicts=verdicts,
        adjudications=adjudications,
        names=names,
        queries=annotation.query_names(s, project.id),
    )


def classify(labels: pd.DataFrame, n: int, cutoff: int) -> pd.DataFrame:
    """Per pair (index ``pair_id``, ascending): ``n_labels``, ``complete``, ``unanimous``, ``majority``
    (accepted by majority), ``disagreement``, ``grade`` (the accepted grade, -1 for a disagreement), ``stale``
    and ``label_state`` (`label_states` when ``labels`` has a ``label_id`` column, else None).

    >>> t = pd.DataFrame({"pair_id": [1, 1, 2, 2], "annotator_id": [7, 8, 7, 8], "grade": [2, 2, 0, 3],
    ...                   "label_id": [1, 2, 3, 4], "stale": [0, 0, 0, 0]})
    >>> verdicts = classify(t, 2, 1)
    >>> verdicts[["unanimous", "disagreement", "grade"]].to_dict("list")
    {'unanimous': [True, False], 'disagreement': [False, True], 'grade': [2, -1]}
    >>> verdicts["label_state"].tolist()
    ['1,2', '3,4']
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
    fingerprint an adjudication keeps and the provenance a release stores. Pairs with the same number of
    labels are handled together, as the rows of one matrix.

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
def agreement_table(state: GateState) -> pd.DataFrame:
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


def agreement_options(settings: ProjectSettings) -> dict:
    if settings.agreement_mode == AgreementMode.BINARY:
        return {"labels": list(settings.grades), "cutoff": settings.relevance_cutoff}
    return {"labels": list(settings.grades), "weights": settings.weights}


def summarize(state: GateState) -> AgreementSummary:
    """The agreement figures of a loaded state (see the module doc)."""
    settings, table = state.settings, agreement_table(state)
    level = "nominal" if settings.agreement_mode == AgreementMode.BINARY else "ordinal"
    opts = agreement_options(settings)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        try:
            figures = agreement.agreement_summary(table, level=level, **opts)
            pairwise = agreement.pairwise_kappa(table, **opts)
        except QrelForgeError as exc:
            return _empty_summary(state, str(exc))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            per_query = agreement.group_agreement(table, group="query_id", level=level, **opts)
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
    key = {
        Statistic.COHEN: "mean_pairwise_kappa",
        Statistic.FLEISS: "fleiss_kappa",
        Statistic.KRIPPENDORFF: "krippendorff_alpha",
    }
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
        statistic=settings.statistic,
        value=value,
        threshold=settings.threshold,
        passes=bool(value >= settings.threshold),
        band=agreement.interpret(value),
        mode=settings.agreement_mode,
        weights=_weights(settings),
        n_pairs=int(figures["n_items"]),
        n_annotators=int(figures["n_raters"]),
        n_labels=int(figures["n_ratings"]),
        percent_agreement=float(figures["percent_agreement"]),
        mean_pairwise_kappa=float(figures["mean_pairwise_kappa"]),
        fleiss_kappa=None if fleiss is None else float(fleiss),
        krippendorff_alpha=float(figures["krippendorff_alpha"]),
        disagreements=int(state.verdicts["disagreement"].sum()),
        unadjudicated=len(state.unresolved()),
        pairwise=kappa,
        pairwise_n=shared,
        per_query=per_query,
        warnings=notes,
    )


def _empty_summary(state: GateState, why: str) -> AgreementSummary:
    settings, nan = state.settings, math.nan
    empty = pd.DataFrame()
    return AgreementSummary(
        statistic=settings.statistic,
        value=nan,
        threshold=settings.threshold,
        passes=False,
        band="undefined",
        mode=settings.agreement_mode,
        weights=_weights(settings),
        n_pairs=len(state.complete),
        n_annotators=len(state.names),
        n_labels=int(state.complete["n_labels"].sum()),
        percent_agreement=nan,
        mean_pairwise_kappa=nan,
        fleiss_kappa=None,
        krippendorff_alpha=nan,
        disagreements=int(state.verdicts["disagreement"].sum()),
        unadjudicated=len(state.unresolved()),
        pairwise=empty,
        pairwise_n=empty,
        per_query=empty,
        warnings=(f"no agreement yet: {why}",),
    )


def _weights(settings: ProjectSettings) -> Weights | None:
    """The kappa weights in weighted mode (None in binary mode, where they do not apply)."""
    return settings.weights if settings.agreement_mode == AgreementMode.WEIGHTED else None


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
