"""Judges against the humans: calibration, and the qrels a judge and a release's humans give."""

from __future__ import annotations

import dataclasses

import numpy as np

from annotate_app.services._context import ProjectRef, load_release, open_project
from annotate_app.services._judge_state import (
    JudgeCalibrationInfo,
    calibrations,
)
from annotate_app.services.auth import Actor, Role
from annotate_app.services.judges._common import check_name, judge_of
from annotate_app.services.judges._span_calibration import SpanCalibration, span_calibrations
from annotate_app.store import judges as judges_store
from annotate_app.store import releases
from annotate_app.store.db import Database
from metrics.data import Qrels

__all__ = ["calibrate", "judge_qrels", "human_release_qrels", "judge_confidences"]


def calibrate(db: Database, actor: Actor, project: ProjectRef) -> list[JudgeCalibrationInfo]:
    """Every judge of the project against its human labels (reviewer): kappa in the project's agreement mode,
    linear weighted kappa, ordinal alpha, leniency, Kendall's tau of the stored runs' rankings and the
    confusion matrix; ``passed`` says whether the judge may fill pairs (`update_judge_settings`); the span F1
    of its evidence passages against the humans' (`span_calibrations`)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "calibrate judges")
        rows = judges_store.judges_of(s, proj.id)
        spans = span_calibrations(s, proj.id, {j.name: j.id for j in rows})
        return [_with_spans(c, spans[c.name]) for c in calibrations(s, proj, rows)]


def _with_spans(info: JudgeCalibrationInfo, spans: SpanCalibration) -> JudgeCalibrationInfo:
    return dataclasses.replace(
        info,
        span_f1=spans.span_f1,
        n_span_pairs=spans.n_pairs,
        n_span_without_evidence=spans.n_without_evidence,
    )


def judge_qrels(db: Database, actor: Actor, project: ProjectRef, name: str) -> Qrels:
    """A judge's current grades as `metrics.Qrels` (reviewer): its latest graded label of each pair not
    excluded, made on the pair's current document version."""
    name = check_name(name)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "read machine labels")
        row = judge_of(s, proj, name)
        rows = judges_store.current_grades(s, proj.id, [row.id])
    return Qrels(
        [r["query_id"] for r in rows],
        [r["doc_id"] for r in rows],
        np.array([int(r["grade"]) for r in rows], dtype=np.int64),
        source=f"{proj.name} judge {name}",
    )


def human_release_qrels(db: Database, actor: Actor, project: ProjectRef, version: int | None = None) -> Qrels:
    """The qrels of a release (default: the latest) that came from human labels, without the pairs a judge
    filled (reviewer): the human side of prediction-powered inference."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "read releases")
        release = load_release(s, proj, version)
        sources = judges_store.qrel_sources(s, release.id)
        rows = sorted(r[:3] for r in releases.qrel_rows(s, release.id) if sources[int(r[6])][0] == "human")
    return Qrels(
        [r[0] for r in rows],
        [r[1] for r in rows],
        np.array([int(r[2]) for r in rows], dtype=np.int64),
        source=f"{proj.name} release {release.version} (human qrels)",
    )


def judge_confidences(
    db: Database, actor: Actor, project: ProjectRef, name: str
) -> dict[tuple[str, str], float | None]:
    """(query ID, document ID) → the judge's confidence in its current grade (reviewer), for the labels
    `judge_qrels` reads; None where the judge gave none (`metrics.stats.isotonic.judge_score` reads it)."""
    name = check_name(name)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "read machine labels")
        row = judge_of(s, proj, name)
        rows = judges_store.current_grades(s, proj.id, [row.id])
    return {
        (r["query_id"], r["doc_id"]): None if r["confidence"] is None else float(r["confidence"])
        for r in rows
    }
