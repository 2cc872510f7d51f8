"""Agreement on evidence passages (reviewer): Krippendorff's unitizing alpha αu over the project and the
character-overlap F1 of each two annotators, beside the grade statistic of `gate.agreement`.

The pairs compared are those with two or more current labels, none stale, that at least one annotator
graded at or above the relevance cut-off (where a passage is asked for); each label's own passages count,
on its document version. A label without passages marks nothing (all gap). αu
(`metrics.agreement.unitizing_alpha`) lays the pairs' texts end to end and compares, pair by pair, the
annotators who labelled it (as raters 1..m in name order: who they are does not matter to αu); the F1
(`metrics.agreement.pairwise_span_f1`) is per two named annotators over the pairs both labelled.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project, settings_of
from annotate_app.services._evidence import compared_pairs
from annotate_app.services.auth import Actor, Role
from annotate_app.store.db import Database
from annotate_app.store.models import Project

__all__ = ["PassageAgreement", "passage_agreement"]  # passage_block: for the release gate (a session)


@dataclass(frozen=True)
class PassageAgreement:
    """``alpha``: αu (None: nothing to compare, or undefined); ``pairwise``: one row per two annotators
    (``rater_a``, ``rater_b``, ``items``, ``chars_a``, ``chars_b``, ``overlap``, ``f1``); ``mean_f1``: the
    mean of the defined F1s; ``n_pairs``: the pairs compared; ``n_passages``: their passages."""

    alpha: float | None
    pairwise: pd.DataFrame
    mean_f1: float | None
    n_pairs: int
    n_passages: int


def passage_agreement(db: Database, actor: Actor, project: ProjectRef) -> PassageAgreement:
    """αu and the pairwise character-overlap F1 of the project's evidence passages (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see agreement")
        return _compute(s, proj)


def passage_block(s: Session, proj: Project) -> str:
    """Why the passages' agreement stops a release of the project ("" when it does not): αu below the
    project's ``passage_threshold``, or undefined while one is set."""
    threshold = settings_of(proj).passage_threshold
    if threshold is None:
        return ""
    alpha = _compute(s, proj).alpha
    if alpha is None:
        return f"passage agreement (unitizing alpha) is undefined, so it does not reach {threshold:.3f}"
    if alpha < threshold:
        return (
            f"passage agreement (unitizing alpha) {alpha:.3f} is below the passage threshold {threshold:.3f}"
        )
    return ""


def _compute(s: Session, proj: Project) -> PassageAgreement:
    from metrics.agreement import pairwise_span_f1, unitizing_alpha

    compared = compared_pairs(s, proj.id, settings_of(proj).relevance_cutoff)
    named: list[tuple[Any, ...]] = []  # (pair, annotator, start, end); no span: None, None
    slots: list[tuple[Any, ...]] = []  # (pair, "r1".."rm", start, end)
    lengths: dict[int, int] = {}
    for pair, item in compared.items():
        lengths[pair] = item.length
        for k, (_, name, _, own) in enumerate(item.labels):
            named += [(pair, name, a, b) for a, b in own] or [(pair, name, None, None)]
            slots += [(pair, f"r{k + 1}", a, b) for a, b in own]
    columns = ["item", "rater", "start", "end"]
    empty = pd.DataFrame(columns=["rater_a", "rater_b", "items", "chars_a", "chars_b", "overlap", "f1"])
    if not slots:
        return PassageAgreement(None, empty, None, len(compared), 0)
    f1 = pairwise_span_f1(pd.DataFrame(named, columns=columns).astype({"start": "Int64", "end": "Int64"}))
    m = max(len(item.labels) for item in compared.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an undefined αu is reported as None
        alpha = unitizing_alpha(
            pd.DataFrame(slots, columns=columns), lengths, raters=[f"r{k + 1}" for k in range(m)]
        ).alpha
    return PassageAgreement(
        alpha=None if math.isnan(alpha) else float(alpha),
        pairwise=f1.table,
        mean_f1=f1.mean,
        n_pairs=len(compared),
        n_passages=len(slots),
    )
