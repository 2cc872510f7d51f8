"""Judges that differ in prompt or model compared on the same random human sample: agreement with the humans
(`metrics.stats.judge_compare`), Kendall's τ of the run rankings, the failure rate and the cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from annotate_app.services._context import ProjectRef, open_project, settings_of
from annotate_app.services._judge_state import calibrations
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import InvalidInput
from annotate_app.services.inputs import check_int
from annotate_app.services.judges._common import check_name, judge_of
from annotate_app.store import judges as judges_store
from annotate_app.store.db import Database
from metrics.stats.judge_compare import JudgeComparison
from metrics.stats.judge_compare import compare_judges as compare_grades

__all__ = ["JudgeComparisonReport", "JudgeCost", "compare_judges"]


@dataclass(frozen=True)
class JudgeCost:
    """A judge's Kendall's τ (None with fewer than 3 stored runs), its failure rate (failed labels / labels,
    probes left out; None without a label), and its cost: tokens (prompt + completion) and seconds (summed
    latency) of all its labels."""

    judge: str
    tau: float | None
    failure_rate: float | None
    tokens: int
    seconds: float


@dataclass(frozen=True)
class JudgeComparisonReport:
    """The comparison: ``n_sample`` randomly sampled human pairs, ``comparison`` on the pairs of the sample
    every judge graded (the human reference grade of a pair: the lower median of its annotators' grades),
    ``costs`` per judge, in the order asked; ``message`` says which judge is best, or that no difference is
    significant."""

    n_sample: int
    comparison: JudgeComparison | None
    costs: tuple[JudgeCost, ...]
    message: str


def compare_judges(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    names: Sequence[str],
    *,
    n_bootstrap: int = 2000,
    seed: int = 0,
) -> JudgeComparisonReport:
    """Compare judges on the same random human sample (reviewer): the randomly sampled human pairs (every
    human-labelled pair when the queue was never steered), as calibration reads them. Bootstrap 95%
    intervals and paired tests resample the pairs every judge graded.

    Raises:
        InvalidInput: fewer than 2 distinct judges, an unknown judge, or a bad number.
    """
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise InvalidInput(f"names must be a list of judge names; got {names!r:.80}")
    chosen = [check_name(n) for n in names]
    if len(set(chosen)) != len(chosen) or len(chosen) < 2:
        raise InvalidInput(f"compare at least 2 distinct judges; got {chosen!r:.200}")
    check_int(n_bootstrap, "n_bootstrap", 100, 100_000)
    check_int(seed, "seed", 0)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "compare judges")
        rows = [judge_of(s, proj, n) for n in chosen]
        settings = settings_of(proj)
        steered, random_pairs = judges_store.calibration_draws(s, proj.id)
        humans: dict[int, list[int]] = {}
        for pair_id, *_, grade in judges_store.human_labels(s, proj.id):
            if not steered or pair_id in random_pairs:
                humans.setdefault(int(pair_id), []).append(int(grade))
        grades: dict[str, dict[int, int]] = {n: {} for n in chosen}
        for g in judges_store.current_grades(s, proj.id, [r.id for r in rows]):
            grades[g["judge"]][int(g["pair_id"])] = int(g["grade"])
        taus = {c.name: c.tau for c in calibrations(s, proj, rows)}
        spent = judges_store.judge_costs(s, [r.id for r in rows])
    costs = tuple(_cost(r.name, taus.get(r.name), spent.get(r.id)) for r in rows)
    shared = sorted(p for p in humans if all(p in grades[n] for n in chosen))
    if len(shared) < 2:
        message = f"too few pairs to compare: {len(shared)} of the {len(humans)} sampled human pairs"
        return JudgeComparisonReport(len(humans), None, costs, message + " were graded by every judge")
    reference = [sorted(humans[p])[(len(humans[p]) - 1) // 2] for p in shared]
    result = compare_grades(
        reference,
        {n: [grades[n][p] for p in shared] for n in chosen},
        labels=list(settings.grades),
        n_bootstrap=n_bootstrap,
        seed=seed,
    )
    return JudgeComparisonReport(len(humans), result, costs, _message(result))


def _cost(name: str, tau: float | None, spent: dict[str, float] | None) -> JudgeCost:
    spent = spent or {"labels": 0, "failed": 0, "tokens": 0, "seconds": 0.0}
    rate = spent["failed"] / spent["labels"] if spent["labels"] else None
    return JudgeCost(name, tau, rate, int(spent["tokens"]), float(spent["seconds"]))


def _message(result: JudgeComparison) -> str:
    if result.best is not None:
        return (
            f"best: {result.best}, its kappa significantly above every other judge's (paired bootstrap, 95%)"
        )
    tied = [d for d in result.differences if not d.significant]
    pairs = ", ".join(f"{d.first} and {d.second}" for d in tied)
    if not tied:
        return "no judge is significantly above every other"
    return f"no significant difference between {pairs} (paired bootstrap, 95%)"
