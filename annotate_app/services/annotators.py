"""Annotator quality (reviewer): one row per annotator of a project, and one annotator's charts.

Gold accuracy with Wilson intervals and weighted kappa against gold, time per label and speeders, leniency,
drift, Dawid–Skene and MACE competence, and the unsure, skip and edit rates, all from `metrics.agreement`
over the project's current human labels (`store.quality`). Gold draws' labels are left out of leniency,
drift's agreement and the competence models. The figures in detail: docs/modules.md.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from annotate_app.services._context import ProjectRef, open_project, settings_of
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import InvalidInput, NotFound
from annotate_app.services.inputs import check_text
from annotate_app.store import gold as gold_store
from annotate_app.store import quality as quality_store
from annotate_app.store.db import Database
from metrics.agreement import (
    behaviour_rates,
    dawid_skene,
    drift,
    gold_scores,
    leniency,
    mace,
    time_scores,
)

__all__ = ["AnnotatorTable", "AnnotatorCharts", "COLUMNS", "BEHAVIOUR", "annotator_table", "annotator_charts"]

BEHAVIOUR = ("unsure_share", "skip_rate", "edit_rate")
"""The behaviour columns (`metrics.agreement.behaviour_rates`): share of labels marked unsure, skips / (labels
+ skips), share of labels edited (version > 1)."""

COLUMNS = (
    "annotator",
    "n_labels",
    "n_gold",
    "exact",
    "exact_low",
    "exact_high",
    "within_one",
    "within_one_low",
    "within_one_high",
    "kappa",
    "median_seconds",
    "speeder_share",
    "leniency",
    "gold_drift",
    "agreement_drift",
    "ds_competence",
    "mace_competence",
    *BEHAVIOUR,
)
"""The table's columns, in order (`annotator_table`)."""


@dataclass(frozen=True, eq=False)
class AnnotatorTable:
    """``rows``: one row per annotator who labelled in the project, columns `COLUMNS` (NaN where a figure is
    undefined, e.g. no gold label); ``floor_seconds`` and ``window``: the settings it was computed with."""

    rows: pd.DataFrame
    floor_seconds: float
    window: int


@dataclass(frozen=True, eq=False)
class AnnotatorCharts:
    """One annotator's charts: ``accuracy`` (per window of their labels: ``window``, ``gold_accuracy``,
    ``agreement``), ``seconds`` (each label's ``seconds``, in the order they were made) and ``grades`` (per
    grade: the annotator's ``share`` and the team's ``team_share``)."""

    annotator: str
    accuracy: pd.DataFrame
    seconds: pd.DataFrame
    grades: pd.DataFrame


def _check(floor_seconds: object, window: object) -> tuple[float, int]:
    if (
        isinstance(floor_seconds, bool)
        or not isinstance(floor_seconds, int | float)
        or not 0 < floor_seconds < math.inf
    ):
        raise InvalidInput(f"floor_seconds must be a number of seconds > 0, not {floor_seconds!r}")
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise InvalidInput(f"window must be an integer >= 1, not {window!r}")
    return float(floor_seconds), window


def _load(
    db: Database, actor: Actor, project: ProjectRef, *, skips: bool = False
) -> tuple[pd.DataFrame, dict[int, int], list[int], dict[str, int]]:
    """The labels, the gold grades, the scale and (``skips``) each annotator's skip count."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see annotator quality")
        grades = list(settings_of(proj).grades)
        skipped = quality_store.skip_counts(s, proj.id) if skips else {}
        return quality_store.label_table(s, proj.id), gold_store.gold_grades(s, proj.id), grades, skipped


def annotator_table(
    db: Database, actor: Actor, project: ProjectRef, *, floor_seconds: float = 5.0, window: int = 50
) -> AnnotatorTable:
    """Every annotator's quality figures (reviewer), sorted by annotator; see the module doc.

    Args:
        floor_seconds: labels made faster than this count as speeding.
        window: labels per window of the drift figures.

    Raises:
        InvalidInput: a bad ``floor_seconds`` or ``window``.
    """
    floor, window = _check(floor_seconds, window)
    table, gold, grades, skipped = _load(db, actor, project, skips=True)
    rows = pd.DataFrame(index=pd.Index(sorted(table["rater"].unique()), name="annotator"))
    rows["n_labels"] = table.groupby("rater").size().reindex(rows.index).fillna(0).astype(int)
    if not table.empty:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # undefined kappas and the like are NaN in the table
            _fill(rows, table, gold, grades, floor, window)
        _fill_behaviour(rows, table, skipped)
    out = rows.reindex(columns=list(COLUMNS[1:])).reset_index()
    out["n_gold"] = out["n_gold"].fillna(0).astype(int)
    return AnnotatorTable(rows=out, floor_seconds=floor, window=window)


def _fill(rows, table, gold, grades, floor, window) -> None:
    on_gold = table[table["item"].isin(gold.keys())]
    if not on_gold.empty:
        scores = gold_scores(on_gold, gold, labels=grades).scores
        for name in ("n_gold", "exact", "exact_low", "exact_high", "within_one", "within_one_low"):
            rows[name] = scores[name]
        rows["within_one_high"], rows["kappa"] = scores["within_one_high"], scores["kappa"]
    times = time_scores(table, floor=floor).scores
    rows["median_seconds"], rows["speeder_share"] = times["median_seconds"], times["speeder_share"]
    shared = table[~table["gold_draw"]]
    if shared.empty:
        return
    rows["leniency"] = leniency(shared, labels=grades).scores["leniency"]
    change = drift(table, window=window, gold=gold or None, labels=grades).change
    rows["gold_drift"], rows["agreement_drift"] = change["gold_accuracy"], change["agreement"]
    ds = dawid_skene(shared, labels=grades, gold=gold or None)
    accuracy = np.einsum("c,rcc->r", ds.priors.to_numpy(), ds.confusion)
    rows["ds_competence"] = pd.Series(accuracy, index=ds.raters)
    rows["mace_competence"] = mace(shared, labels=grades, restarts=1).competence


def _fill_behaviour(rows: pd.DataFrame, table: pd.DataFrame, skipped: dict[str, int]) -> None:
    """The `BEHAVIOUR` columns, over every current label of the annotator (gold draws too)."""
    rates = behaviour_rates(table, skips=skipped).scores
    for name in BEHAVIOUR:
        rows[name] = rates[name].reindex(rows.index)


def annotator_charts(
    db: Database, actor: Actor, project: ProjectRef, annotator: str, *, window: int = 50
) -> AnnotatorCharts:
    """One annotator's charts (reviewer): accuracy and agreement per window, seconds per label, grades.

    Raises:
        NotFound: the annotator has no label in the project.
        InvalidInput: a bad ``window``.
    """
    _, window = _check(1.0, window)
    annotator = check_text(annotator, "annotator")
    table, gold, grades, _ = _load(db, actor, project)
    mine = table[table["rater"] == annotator]
    if mine.empty:
        raise NotFound(f"{annotator!r} has no label in this project")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        windows = drift(table, window=window, gold=gold or None, labels=grades).windows
    windows = windows[windows["rater"] == annotator]
    accuracy = windows[["window", "gold_accuracy", "agreement"]].reset_index(drop=True)
    seconds = mine.sort_values("at")[["seconds"]].reset_index(drop=True)
    share = mine["label"].value_counts(normalize=True).reindex(grades, fill_value=0.0)
    team = table["label"].value_counts(normalize=True).reindex(grades, fill_value=0.0)
    frame = pd.DataFrame({"grade": grades, "share": share.to_numpy(), "team_share": team.to_numpy()})
    return AnnotatorCharts(annotator=annotator, accuracy=accuracy, seconds=seconds, grades=frame)
