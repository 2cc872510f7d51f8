"""The keyword-stuffing probe: pairs humans judged non-relevant, stuffed with the query's terms and
judged again."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from annotate_app.judges import (
    Judge,
    JudgeTask,
    Pair,
)
from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services._judge_state import (
    build_judge,
    task_of,
)
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import InvalidInput
from annotate_app.services.inputs import check_int
from annotate_app.services.judges._common import (
    MAX_CONCURRENCY,
    audit_run,
    check_name,
    client_of,
    close_judge,
    judge_of,
    pair_of,
)
from annotate_app.services.judges.cache import StoreCache
from annotate_app.store import judges as judges_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction
from annotate_app.store.models import MachineJudge, Project
from metrics.stats.probe import probe_summary, stuff_query_terms

__all__ = ["ProbeReport", "probe", "probe_results"]


@dataclass(frozen=True)
class ProbeReport:
    """The stuffing probe: pairs humans judged non-relevant, the query's terms inserted
    (`metrics.stats.probe.stuff_query_terms`), judged again. ``n_pairs`` probed (both judgments graded),
    how many grades rose, fell or stayed, ``share_raised`` and ``mean_rise`` (None when nothing was probed);
    ``failed``: sampled pairs left out because a judgment failed."""

    judge: str
    n_pairs: int
    n_raised: int
    n_lowered: int
    n_unchanged: int
    share_raised: float | None
    mean_rise: float | None
    failed: int = 0


def probe(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    name: str,
    *,
    sample: int = 20,
    seed: int = 0,
    concurrency: int = 4,
) -> ProbeReport:
    """The keyword-stuffing probe (admin): up to ``sample`` pairs every human judged non-relevant (below the
    relevance cut-off), drawn at random with ``seed``, judged as they are and with the query's terms stuffed
    into the document; how often the grade rises. The stuffed answers are stored as probes, never as labels
    of the pairs."""
    name = check_name(name)
    check_int(sample, "sample", 1, 10_000)
    check_int(seed, "seed", 0)
    check_int(concurrency, "concurrency", 1, MAX_CONCURRENCY)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "probe judges")
        row = judge_of(s, proj, name)
        task, judge = task_of(s, proj), build_judge(s, proj, row)
        prompt = judges_store.latest_prompt(s, row.id)
        chosen = _non_relevant(s, proj, sample, seed)
    try:
        report = _probe(db, row, judge, task, chosen, prompt.id if prompt else None, seed, concurrency)
    finally:
        close_judge(judge)
    audit_run(db, actor, proj, AuditAction.JUDGE_PROBED, report, f"sample {sample}")
    return report


def probe_results(db: Database, actor: Actor, project: ProjectRef) -> dict[str, ProbeReport]:
    """The latest stuffing probe of each judge that was probed (reviewer), as `probe` reported it (its audit
    entry); judges never probed are absent."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see probe results")
        found = judges_store.latest_probes(s, proj.id, AuditAction.JUDGE_PROBED.value)
    return {name: _probe_report(name, details) for name, details in found.items()}


def _probe_report(name: str, details: Mapping[str, Any]) -> ProbeReport:
    def count(key: str) -> int:
        value = details.get(key)
        return int(value) if isinstance(value, int | float) else 0

    def share(key: str) -> float | None:
        value = details.get(key)
        return float(value) if isinstance(value, int | float) else None

    return ProbeReport(
        judge=name,
        n_pairs=count("n_pairs"),
        n_raised=count("n_raised"),
        n_lowered=count("n_lowered"),
        n_unchanged=count("n_unchanged"),
        share_raised=share("share_raised"),
        mean_rise=share("mean_rise"),
        failed=count("failed"),
    )


def _non_relevant(s: Session, proj: Project, sample: int, seed: int) -> list[dict]:
    cutoff = proj.relevance_cutoff
    grades: dict[int, list[int]] = {}
    for pair_id, *_, grade in judges_store.human_labels(s, proj.id):
        grades.setdefault(int(pair_id), []).append(int(grade))
    wanted = {p for p, g in grades.items() if max(g) < cutoff}
    candidates = [
        p for p in judges_store.pair_inputs(s, proj.id) if p["pair_id"] in wanted and not p["excluded"]
    ]
    picks = np.random.default_rng(seed).permutation(len(candidates))[:sample]
    return [candidates[i] for i in sorted(picks.tolist())]


def _probe(
    db: Database,
    row: MachineJudge,
    judge: Judge,
    task: JudgeTask,
    chosen: list[dict],
    prompt_id: int | None,
    seed: int,
    workers: int,
) -> ProbeReport:
    mapping = {(p["query_id"], p["doc_id"]): (p["pair_id"], p["doc_version"]) for p in chosen}
    before = _grades(
        judge, task, StoreCache(db, row, mapping, prompt_id=prompt_id), (pair_of(p) for p in chosen), workers
    )
    stuffed = []
    for p in chosen:
        try:
            text = stuff_query_terms(p["doc_text"], p["query_text"], seed=seed)
        except ValueError:  # a query without a word: nothing to stuff
            continue
        stuffed.append(pair_of(p, document=text, version=f"{p['doc_version']}+stuffed:{seed}"))
    probe_cache = StoreCache(db, row, mapping, prompt_id=prompt_id, probe=True)
    after = _grades(judge, task, probe_cache, iter(stuffed), workers)
    both = [k for k in before if k in after]
    if not both:
        return ProbeReport(
            judge=row.name,
            n_pairs=0,
            n_raised=0,
            n_lowered=0,
            n_unchanged=0,
            share_raised=None,
            mean_rise=None,
            failed=len(chosen),
        )
    summary = probe_summary([before[k] for k in both], [after[k] for k in both])
    return ProbeReport(
        judge=row.name,
        n_pairs=summary.n_pairs,
        n_raised=summary.n_raised,
        n_lowered=summary.n_lowered,
        n_unchanged=summary.n_unchanged,
        share_raised=summary.share_raised,
        mean_rise=summary.mean_rise,
        failed=len(chosen) - len(both),
    )


def _grades(judge: Judge, task: JudgeTask, cache: StoreCache, pairs: Iterator[Pair], workers: int) -> dict:
    client = client_of(judge, task, cache, workers, None)
    out = {}
    try:
        for result in client.run(pairs):
            cache.record(result)
            if result.grade is not None:
                out[(result.query_id, result.doc_id)] = result.grade
    except ValueError as exc:
        raise InvalidInput(f"judge {judge.name!r} cannot judge this project: {exc}") from None
    return out
