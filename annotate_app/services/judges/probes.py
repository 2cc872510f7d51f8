"""Probes of a judge: pairs humans judged non-relevant, changed by a probe that adds no relevance
(`metrics.stats.probe.ProbeKind`: query terms stuffed in, a sentence asserting relevance injected, padding
from other non-relevant documents) and judged again."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping, Sequence
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
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import InvalidInput
from annotate_app.services.inputs import check_int
from annotate_app.services.judges._common import (
    MAX_CONCURRENCY,
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
from metrics.errors import QrelForgeError
from metrics.stats.probe import ProbeKind, probe_summary, probe_transform

__all__ = ["PROBE_KINDS", "ProbePair", "ProbeReport", "probe", "probe_reports", "probe_results"]

PROBE_KINDS: tuple[str, ...] = tuple(k.value for k in ProbeKind)
"""The probe kinds' names (`metrics.stats.probe.ProbeKind`), the default first."""


@dataclass(frozen=True)
class ProbePair:
    """One probed pair: the judge's grade of the document as it is and as the probe changed it."""

    query_id: str
    doc_id: str
    before: int
    after: int


@dataclass(frozen=True)
class ProbeReport:
    """A probe's result: pairs humans judged non-relevant, changed by the probe ``kind``
    (`metrics.stats.probe.PROBES`), judged again. ``n_pairs`` probed (both judgments graded), how many grades
    rose, fell or stayed, ``share_raised`` and ``mean_rise`` with their 95% intervals (None when nothing was
    probed; NaN bounds when one pair was); ``failed``: sampled pairs left out (a judgment failed, or nothing
    to change them with); ``prompt_hash``: the hash of the prompts the probe sent (`_sent_hash`), so the same
    probe can be run again and checked; ``pairs``: the grades behind the figures."""

    judge: str
    n_pairs: int
    n_raised: int
    n_lowered: int
    n_unchanged: int
    share_raised: float | None
    mean_rise: float | None
    failed: int = 0
    kind: str = ProbeKind.STUFFING.value
    share_raised_ci: tuple[float, float] | None = None
    mean_rise_ci: tuple[float, float] | None = None
    prompt_hash: str = ""
    pairs: tuple[ProbePair, ...] = ()

    def details(self) -> dict[str, Any]:
        """The report as JSON-ready values (NaN as None), as its audit entry keeps it."""
        return {
            "n_pairs": self.n_pairs,
            "n_raised": self.n_raised,
            "n_lowered": self.n_lowered,
            "n_unchanged": self.n_unchanged,
            "share_raised": self.share_raised,
            "mean_rise": self.mean_rise,
            "failed": self.failed,
            "kind": self.kind,
            "share_raised_ci": _json_interval(self.share_raised_ci),
            "mean_rise_ci": _json_interval(self.mean_rise_ci),
            "prompt_hash": self.prompt_hash,
            "pairs": [[p.query_id, p.doc_id, p.before, p.after] for p in self.pairs],
        }


def probe(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    name: str,
    *,
    sample: int = 20,
    seed: int = 0,
    concurrency: int = 4,
    kind: str = ProbeKind.STUFFING.value,
) -> ProbeReport:
    """Probe a judge (admin): up to ``sample`` pairs every human judged non-relevant (below the relevance
    cut-off), drawn at random with ``seed``, judged as they are and changed by the probe ``kind`` (one of
    `PROBE_KINDS`); how often the grade rises. The ``length`` probe pads with documents humans judged
    non-relevant and none judged relevant to the pair's query. The changed answers are stored as probes,
    never as labels of the pairs; the report is kept in the audit log (`probe_reports`).

    Raises:
        InvalidInput: an unknown kind, a bad name or number, or a judge that cannot judge the project.
    """
    name = check_name(name)
    chosen_kind = _kind(kind)
    check_int(sample, "sample", 1, 10_000)
    check_int(seed, "seed", 0)
    check_int(concurrency, "concurrency", 1, MAX_CONCURRENCY)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "probe judges")
        row = judge_of(s, proj, name)
        task, judge = task_of(s, proj), build_judge(s, proj, row)
        prompt = judges_store.latest_prompt(s, row.id)
        chosen, fillers = _non_relevant(s, proj, sample, seed)
    try:
        report = _probe(
            db,
            row,
            judge,
            task,
            chosen,
            fillers,
            chosen_kind,
            prompt.id if prompt else None,
            seed,
            concurrency,
        )
    finally:
        close_judge(judge)
    with db.write() as s:
        details = {**report.details(), "what": f"{chosen_kind} sample {sample}"}
        audit(s, actor, AuditAction.JUDGE_PROBED, project_id=proj.id, target=report.judge, details=details)
    return report


def probe_reports(db: Database, actor: Actor, project: ProjectRef) -> dict[str, dict[str, ProbeReport]]:
    """judge name → probe kind → the latest probe of that kind (reviewer), as `probe` reported it (its audit
    entry); kinds never run and judges never probed are absent."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see probe results")
        entries = judges_store.probe_entries(s, proj.id, AuditAction.JUDGE_PROBED.value)
    out: dict[str, dict[str, ProbeReport]] = {}
    for name, details in entries:
        report = _probe_report(name, details)
        out.setdefault(name, {})[report.kind] = report
    return {name: {k: by_kind[k] for k in PROBE_KINDS if k in by_kind} for name, by_kind in out.items()}


def probe_results(db: Database, actor: Actor, project: ProjectRef) -> dict[str, ProbeReport]:
    """The latest stuffing probe of each judge that was probed so (reviewer); see `probe_reports`."""
    stuffing = ProbeKind.STUFFING.value
    reports = probe_reports(db, actor, project)
    return {name: by_kind[stuffing] for name, by_kind in reports.items() if stuffing in by_kind}


def _kind(kind: Any) -> ProbeKind:
    try:
        return ProbeKind(kind)
    except ValueError:
        raise InvalidInput(f"probe kind must be one of {', '.join(PROBE_KINDS)}; got {kind!r}") from None


def _json_interval(interval: tuple[float, float] | None) -> list[float | None] | None:
    if interval is None:
        return None
    return [None if math.isnan(x) else float(x) for x in interval]


def _probe_report(name: str, details: Mapping[str, Any]) -> ProbeReport:
    def count(key: str) -> int:
        value = details.get(key)
        return int(value) if isinstance(value, int | float) else 0

    def share(key: str) -> float | None:
        value = details.get(key)
        return float(value) if isinstance(value, int | float) else None

    def interval(key: str) -> tuple[float, float] | None:
        value = details.get(key)
        if not isinstance(value, list) or len(value) != 2:
            return None
        low, high = (float(x) if isinstance(x, int | float) else math.nan for x in value)
        return low, high

    pairs = tuple(
        ProbePair(str(p[0]), str(p[1]), int(p[2]), int(p[3]))
        for p in details.get("pairs") or ()
        if isinstance(p, list) and len(p) == 4
    )
    kind = details.get("kind")
    return ProbeReport(
        judge=name,
        n_pairs=count("n_pairs"),
        n_raised=count("n_raised"),
        n_lowered=count("n_lowered"),
        n_unchanged=count("n_unchanged"),
        share_raised=share("share_raised"),
        mean_rise=share("mean_rise"),
        failed=count("failed"),
        kind=kind if kind in PROBE_KINDS else ProbeKind.STUFFING.value,
        share_raised_ci=interval("share_raised_ci"),
        mean_rise_ci=interval("mean_rise_ci"),
        prompt_hash=str(details.get("prompt_hash") or ""),
        pairs=pairs,
    )


def _non_relevant(
    s: Session, proj: Project, sample: int, seed: int
) -> tuple[list[dict], dict[str, list[str]]]:
    """The sampled pairs every human judged non-relevant, and per query the texts of the documents humans
    judged non-relevant to some query and none judged relevant to it (the length probe's padding)."""
    cutoff = proj.relevance_cutoff
    grades: dict[int, list[int]] = {}
    for pair_id, *_, grade in judges_store.human_labels(s, proj.id):
        grades.setdefault(int(pair_id), []).append(int(grade))
    wanted = {p for p, g in grades.items() if max(g) < cutoff}
    inputs = judges_store.pair_inputs(s, proj.id)
    relevant = {(p["query_id"], p["doc_id"]) for p in inputs if max(grades.get(p["pair_id"], [-1])) >= cutoff}
    candidates = [p for p in inputs if p["pair_id"] in wanted and not p["excluded"]]
    texts = {p["doc_id"]: p["doc_text"] for p in candidates}
    fillers = {
        query: [text for doc, text in texts.items() if (query, doc) not in relevant]
        for query in {p["query_id"] for p in candidates}
    }
    picks = np.random.default_rng(seed).permutation(len(candidates))[:sample]
    return [candidates[i] for i in sorted(picks.tolist())], fillers


def _probe(
    db: Database,
    row: MachineJudge,
    judge: Judge,
    task: JudgeTask,
    chosen: list[dict],
    fillers: dict[str, list[str]],
    kind: ProbeKind,
    prompt_id: int | None,
    seed: int,
    workers: int,
) -> ProbeReport:
    mapping = {(p["query_id"], p["doc_id"]): (p["pair_id"], p["doc_version"]) for p in chosen}
    texts = {p["pair_id"]: p["text"] for p in chosen}  # the answers on the pairs themselves keep evidence
    cache = StoreCache(db, row, mapping, prompt_id=prompt_id, texts=texts)
    before = _grades(judge, task, cache, (pair_of(p) for p in chosen), workers)
    tag = "stuffed" if kind is ProbeKind.STUFFING else kind.value  # the stuffing probe's cache keys stay
    changed = []
    for p in chosen:
        others = [t for t in fillers.get(p["query_id"], []) if t != p["doc_text"]]
        try:
            text = probe_transform(kind, p["doc_text"], p["query_text"], seed=seed, fillers=others)
        except QrelForgeError:  # a query without a word to stuff, no padding to add: nothing to probe
            continue
        changed.append(pair_of(p, document=text, version=f"{p['doc_version']}+{tag}:{seed}"))
    probe_cache = StoreCache(db, row, mapping, prompt_id=prompt_id, probe=True)
    after = _grades(judge, task, probe_cache, iter(changed), workers)
    prompt_hash = _sent_hash(judge, task, changed)
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
            kind=kind.value,
            prompt_hash=prompt_hash,
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
        kind=kind.value,
        share_raised_ci=summary.share_raised_ci,
        mean_rise_ci=summary.mean_rise_ci,
        prompt_hash=prompt_hash,
        pairs=tuple(ProbePair(k[0], k[1], int(before[k]), int(after[k])) for k in both),
    )


def _sent_hash(judge: Judge, task: JudgeTask, pairs: Sequence[Pair]) -> str:
    """The probe's prompt hash: sha256 over the changed pairs in the probe's order, each as its query and
    document IDs, the judge's instruction hash and prompt as `Judge.render` gives it, and the changed
    document's text (what an offline judge scores); "" when no pair was changed. The same judge, pairs, kind
    and seed give the same hash; the kinds, which send different documents, give different ones."""
    if not pairs:
        return ""
    digest = hashlib.sha256()
    for pair in pairs:
        shown = judge.render(pair, task)
        for part in (pair.query_id, pair.doc_id, shown.prompt_hash, shown.text, pair.document):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
    return digest.hexdigest()


def _grades(
    judge: Judge, task: JudgeTask, cache: StoreCache, pairs: Iterator[Pair], workers: int
) -> dict[tuple[str, str], int]:
    """(query ID, document ID) → grade of the pairs judged."""
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
