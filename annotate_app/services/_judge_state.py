"""Machine judges inside a transaction: the judge task of a project, judges built from their stored rows, the
calibration figures against the humans, and the pairs a calibrated judge may fill in a release.

Private to `annotate_app.services`: `judges` and `releases` share it. Its functions take a session, never
``(db, actor)``; the role checks are the callers'. Machine labels are compared with the human ones here, one
judge at a time (`metrics.stats.calibration`); they never enter the gate's state (`_gate_state` reads only the
human assignments).
"""

from __future__ import annotations

import math
import random
import warnings
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy.orm import Session

from annotate_app.judges import BUILDERS, GradeScale, Judge, JudgeSetup, JudgeTask, check_extra_body
from annotate_app.services._context import settings_of
from annotate_app.services.errors import InvalidInput
from annotate_app.store import annotation, projects, scoring
from annotate_app.store import corpus as corpus_store
from annotate_app.store import judges as judges_store
from annotate_app.store.enums import AgreementMode, ClaimDraw, JudgeBackend, QrelKind, QueueOrder
from annotate_app.store.models import MachineJudge, Project
from metrics.data import Run
from metrics.errors import QrelForgeError, UndefinedMetricWarning
from metrics.stats.calibration import calibrate_judges, ranking_agreement_from_qrels
from metrics.stats.circularity import same_family

__all__ = [
    "JudgeSettingsInfo",
    "JudgeCalibrationInfo",
    "QueryAgreement",
    "DEFAULT_MIN_CALIBRATION_PAIRS",
    "DEFAULT_CALIBRATION_SHARE",
    "TAU_MEASURE",
    "task_of",
    "build_judge",
    "judge_setup",
    "ensemble_of",
    "settings_info",
    "calibrations",
    "fill_state",
    "source_of",
    "queue_order_by",
    "over_budget",
    "REQUEST_DEFAULTS",
    "request_params",
    "check_request_params",
    "adapted_of",
]

REQUEST_DEFAULTS: dict[str, Any] = {"max_tokens": 256, "timeout_s": 60.0, "seed": None, "extra_body": {}}
"""An ``openai`` judge's request parameters and defaults (``judges.params``; ``adapted`` beside them)."""
MAX_TOKENS_LIMIT = 1_000_000
MAX_TIMEOUT_S = 3600.0
DEFAULT_MIN_CALIBRATION_PAIRS = 30
DEFAULT_CALIBRATION_SHARE = 0.1
TAU_MEASURE = "nDCG@10"
TAU_TOP = 5


@dataclass(frozen=True)
class JudgeSettingsInfo:
    """A project's rules for machine judges.

    ``fill_judge``: the judge whose labels fill pairs no human judged (None: a qrel needs a human label), in
    effect only while it passes calibration: kappa against the humans >= the project's threshold on at least
    ``min_calibration_pairs`` randomly sampled human pairs (`JudgeCalibrationInfo.n_random_pairs`).
    ``queue_order``, ``calibration_share`` (the share of every annotator's queue kept uniformly random) and
    ``human_budget`` (human judgments the project may spend; None: no cap)."""

    fill_judge: str | None = None
    min_calibration_pairs: int = DEFAULT_MIN_CALIBRATION_PAIRS
    queue_order: QueueOrder = QueueOrder.DEFAULT
    calibration_share: float = DEFAULT_CALIBRATION_SHARE
    human_budget: int | None = None


@dataclass(frozen=True)
class QueryAgreement:
    """A judge against the humans on one query: ``n_pairs`` shared pairs, ``n_labels`` human labels on them,
    ``exact_agreement`` (share of those labels the judge's grade equals) and ``mean_difference`` (judge −
    human)."""

    query_id: str
    n_pairs: int
    n_labels: int
    exact_agreement: float | None
    mean_difference: float | None


@dataclass(frozen=True)
class JudgeCalibrationInfo:
    """One judge against the humans (see `metrics.stats.calibration.calibrate_judges`).

    ``n_pairs``: pairs the judge shares with at least one human; ``kappa`` in the project's agreement mode
    (binary at the relevance cut-off, or graded); ``weighted_kappa`` linear on the full scale;
    ``alpha_ordinal``; ``leniency`` (mean judge − human grade); ``tau`` and ``tau_top5``: Kendall's tau
    between the stored runs ranked by `TAU_MEASURE` with human and with judge qrels (None with fewer than 3
    runs, or undefined; ``n_runs``: the stored runs); ``confusion``: human grade → judge grade → count.
    ``n_random_pairs`` and ``random_kappa``: the same on the randomly sampled human pairs only, which the
    fill-in gate reads: once the project's queue has drawn a human label in an order steered by the judges or
    the runs (``steered``: `ClaimDraw.steered`), the pairs with a human label from a uniformly random draw
    (the calibration share); otherwise (the queue never steered: every claim in the default order, imported
    labels) every shared pair, so ``n_random_pairs == n_pairs`` and ``random_kappa == kappa``.
    ``passed``: the judge may fill pairs (at least ``min_pairs`` randomly sampled pairs and ``random_kappa``
    >= ``threshold``); ``gate_message`` says why not.
    ``mode``: the agreement mode of ``kappa``; ``leniency_by_grade``: human grade → mean judge − human grade
    among the human labels of that grade; ``per_query``: one `QueryAgreement` per query with a shared pair.
    ``circular_runs``: the stored runs made by a model of the judge's family
    (`metrics.stats.circularity.same_family`); ``tau_without_circular`` and ``tau_top5_without_circular``:
    ``tau`` and ``tau_top5`` on the other runs (None when no run is circular, or as ``tau``).
    ``span_f1``: the character-overlap F1 of the judge's evidence passages against the humans' on the shared
    pairs, over ``n_span_pairs`` (pair, human label) items; ``n_span_without_evidence`` items where neither
    marked a passage are left out (`annotate_app.services.judges._span_calibration`).
    Undefined figures are None."""

    name: str
    n_pairs: int
    kappa: float | None
    weighted_kappa: float | None
    alpha_ordinal: float | None
    leniency: float | None
    tau: float | None
    tau_top5: float | None
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)
    passed: bool = False
    threshold: float = 0.0
    min_pairs: int = DEFAULT_MIN_CALIBRATION_PAIRS
    mode: AgreementMode = AgreementMode.BINARY
    n_runs: int = 0
    leniency_by_grade: dict[str, float | None] = field(default_factory=dict)
    per_query: tuple[QueryAgreement, ...] = ()
    n_random_pairs: int = 0
    random_kappa: float | None = None
    steered: bool = False
    circular_runs: tuple[str, ...] = ()
    tau_without_circular: float | None = None
    tau_top5_without_circular: float | None = None
    span_f1: float | None = None
    n_span_pairs: int = 0
    n_span_without_evidence: int = 0

    @property
    def gate_message(self) -> str:
        """Why the judge may not fill pairs ("" when it passed), e.g. ``judge gpt has kappa 0.710 on 12
        randomly sampled human pairs; it needs >= 30``; the kappa clause reads ``kappa >= 0.700`` when the
        kappa is short (or undefined)."""
        if self.passed:
            return ""
        kappa = "undefined" if self.random_kappa is None else f"{self.random_kappa:.3f}"
        needs = []
        if self.n_random_pairs < self.min_pairs:
            needs.append(f">= {self.min_pairs}")
        if self.random_kappa is None or self.random_kappa < self.threshold:
            needs.append(f"kappa >= {self.threshold:.3f}")
        return (
            f"judge {self.name} has kappa {kappa} on {self.n_random_pairs} randomly sampled human pairs; "
            f"it needs {' and '.join(needs)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``qrelforge judge calibrate --format json`` (one judge)."""
        keys = ("name", "n_pairs", "kappa", "weighted_kappa", "alpha_ordinal", "leniency", "tau", "tau_top5")
        out: dict[str, Any] = {k: getattr(self, k) for k in keys}
        out["confusion"] = self.confusion
        out["n_random_pairs"] = self.n_random_pairs
        out["random_kappa"] = self.random_kappa
        out["passed"] = self.passed
        out["circular_runs"] = list(self.circular_runs)
        out["tau_without_circular"] = self.tau_without_circular
        out["tau_top5_without_circular"] = self.tau_top5_without_circular
        out["span_f1"] = self.span_f1
        out["n_span_pairs"] = self.n_span_pairs
        out["n_span_without_evidence"] = self.n_span_without_evidence
        return out


def source_of(judge_name: str) -> str:
    """The source of a machine label in exports and releases: ``judge:NAME`` (humans are ``human:USER``)."""
    return f"judge:{judge_name}"


# -------------------------------------------------------------------------------------------- the judges
def task_of(s: Session, project: Project) -> JudgeTask:
    """The project's grade scale and current guidelines, as every judge of it reads them."""
    scale = GradeScale.from_labels(settings_of(project).grade_scale)
    guidelines = projects.latest_guidelines(s, project.id)
    return JudgeTask(scale=scale, guidelines=guidelines.markdown if guidelines else "")


def request_params(params: Any) -> dict[str, Any]:
    """A judge's request parameters from its stored ``params``, defaults filled in (adaptations left out)."""
    stored = params if isinstance(params, dict) else {}
    return {key: stored.get(key, default) for key, default in REQUEST_DEFAULTS.items()}


def adapted_of(params: Any) -> dict[str, str]:
    """The adaptations stored with a judge: adaptation → the server's message that asked for it."""
    stored = params.get("adapted") if isinstance(params, dict) else None
    return {str(k): str(v) for k, v in stored.items()} if isinstance(stored, dict) else {}


def check_request_params(max_tokens: Any, timeout_s: Any, seed: Any, extra_body: Any) -> dict[str, Any]:
    """The request parameters of an ``openai`` judge, checked (InvalidInput naming the parameter)."""
    if (
        not isinstance(max_tokens, int)
        or isinstance(max_tokens, bool)
        or not 1 <= max_tokens <= MAX_TOKENS_LIMIT
    ):
        raise InvalidInput(
            f"max_tokens must be an int in [1, {MAX_TOKENS_LIMIT}]; got {str(max_tokens)[:40]!r}"
        )
    ok = isinstance(timeout_s, int | float) and not isinstance(timeout_s, bool)
    if not ok or not 0 < float(timeout_s) <= MAX_TIMEOUT_S:
        raise InvalidInput(
            f"timeout_s must be a number in (0, {MAX_TIMEOUT_S:.0f}]; got {str(timeout_s)[:40]!r}"
        )
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or abs(seed) >= 2**63):
        raise InvalidInput(f"seed must be an int or None; got {str(seed)[:40]!r}")
    try:
        extra = check_extra_body(extra_body)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    return {"max_tokens": max_tokens, "timeout_s": float(timeout_s), "seed": seed, "extra_body": extra}


def build_judge(s: Session, project: Project, row: MachineJudge) -> Judge:
    """The judge a stored row describes, made by its backend's builder (`annotate_app.judges.BUILDERS`),
    with its request parameters and the adaptations to its server made in earlier runs; an ensemble's
    members (``params["members"]``, names of the project's judges) are made the same way.

    Raises:
        InvalidInput: the backend has no builder (a ``replay`` judge only imports labels), or an ensemble's
            member is gone or cannot run.
    """
    builder = BUILDERS.get(JudgeBackend(row.backend))
    if builder is None:
        raise InvalidInput(
            f"judge {row.name!r} has backend {row.backend!r}: its labels are imported "
            "(qrelforge judge import), it cannot be run"
        )
    try:
        return builder(judge_setup(s, project, row))
    except ValueError as exc:
        raise InvalidInput(f"judge {row.name!r} cannot be made: {exc}") from None


def judge_setup(s: Session, project: Project, row: MachineJudge) -> JudgeSetup:
    """What a judge's builder reads of its stored row (and of its members' rows, for an ensemble)."""
    prompt = judges_store.latest_prompt(s, row.id)
    members: list[tuple[JudgeBackend, JudgeSetup]] = []
    if row.backend == JudgeBackend.ENSEMBLE:
        for name in ensemble_of(row.params)[0]:
            member = judges_store.find_judge(s, project.id, name)
            if member is None:
                raise InvalidInput(f"judge {row.name!r}: its member {name!r} no longer exists")
            members.append((JudgeBackend(member.backend), judge_setup(s, project, member)))
    return JudgeSetup(
        name=row.name,
        base_url=row.base_url,
        model=row.model,
        temperature=row.temperature,
        samples=row.samples,
        params=request_params(row.params),
        adapted=tuple(adapted_of(row.params)),
        prompt=None if prompt is None else prompt.text,
        corpus=lambda: _corpus(s, project),
        members=tuple(members),
        combine=ensemble_of(row.params)[1],
    )


def ensemble_of(params: Any) -> tuple[list[str], str]:
    """An ensemble judge's member names and rule from its stored ``params`` (no members: not an ensemble)."""
    stored = params if isinstance(params, dict) else {}
    members = stored.get("members")
    names = [str(m) for m in members] if isinstance(members, list) else []
    return names, str(stored.get("combine") or "majority")


def _corpus(s: Session, project: Project) -> dict[str, str]:
    return {
        doc: f"{title}\n\n{text}" if title else text
        for doc, title, text in scoring.corpus_texts(s, project.id)
    }


def settings_info(s: Session, project: Project) -> JudgeSettingsInfo:
    row = judges_store.settings_row(s, project.id)
    if row is None:
        return JudgeSettingsInfo()
    fill = None
    if row.fill_judge_id is not None:
        fill = next(
            (j.name for j in judges_store.judges_of(s, project.id) if j.id == row.fill_judge_id), None
        )
    return JudgeSettingsInfo(
        fill_judge=fill,
        min_calibration_pairs=row.min_calibration_pairs,
        queue_order=QueueOrder(row.queue_order),
        calibration_share=row.calibration_share,
        human_budget=row.human_budget,
    )


# ------------------------------------------------------------------------------------------- calibration
def calibrations(s: Session, project: Project, judges: list[MachineJudge]) -> list[JudgeCalibrationInfo]:
    """The calibration figures of ``judges`` against the project's current human labels."""
    settings, rules = settings_of(project), settings_info(s, project)
    humans = pd.DataFrame(
        judges_store.human_labels(s, project.id), columns=["item", "query", "doc_id", "annotator", "grade"]
    )
    columns = {"judge": "judge", "pair_id": "item", "query_id": "query", "doc_id": "doc_id", "grade": "grade"}
    grades = pd.DataFrame(
        judges_store.current_grades(s, project.id, [j.id for j in judges]), columns=list(columns)
    )
    grades = grades.rename(columns=columns)
    mode = AgreementMode(settings.agreement_mode)
    steered, random_pairs = judges_store.calibration_draws(s, project.id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        figures = _figures(humans, grades, settings, mode)
        drawn_humans = humans[humans["item"].isin(random_pairs)]
        sampled = _figures(drawn_humans, grades, settings, mode) if steered and random_pairs else {}
        runs = _stored_runs(s, project)
        taus = _taus(runs, humans, grades, [j.name for j in judges])
        made_by = {r.name: r.model for r in corpus_store.runs(s, project.id)}
        circular = {
            j.name: tuple(n for n in runs if same_family(made_by.get(str(n), ""), j.model)) for j in judges
        }
        without = {
            j.name: _taus(
                {n: r for n, r in runs.items() if n not in circular[j.name]}, humans, grades, [j.name]
            )[j.name]
            for j in judges
            if circular[j.name]
        }
    out = []
    for judge in judges:
        cal = figures.get(judge.name)
        n_pairs = 0 if cal is None else int(cal.n_pairs)
        kappa = None if cal is None else _number(cal.kappa)
        n_random, random_kappa = n_pairs, kappa
        if steered:
            drawn = sampled.get(judge.name)
            n_random = 0 if drawn is None else int(drawn.n_pairs)
            random_kappa = None if drawn is None else _number(drawn.kappa)
        out.append(
            JudgeCalibrationInfo(
                name=judge.name,
                n_pairs=n_pairs,
                kappa=kappa,
                weighted_kappa=None if cal is None else _number(cal.weighted_kappa),
                alpha_ordinal=None if cal is None else _number(cal.alpha_ordinal),
                leniency=None if cal is None else _number(cal.leniency),
                tau=taus[judge.name][0],
                tau_top5=taus[judge.name][1],
                confusion=_confusion(cal.confusion if cal is not None else None, settings.grades),
                passed=n_random >= rules.min_calibration_pairs
                and random_kappa is not None
                and random_kappa >= settings.threshold,
                threshold=settings.threshold,
                min_pairs=rules.min_calibration_pairs,
                mode=mode,
                n_runs=len(runs),
                leniency_by_grade=_by_grade(None if cal is None else cal.leniency_by_grade, settings.grades),
                per_query=_per_query(cal.per_query if cal is not None else None),
                n_random_pairs=n_random,
                random_kappa=random_kappa,
                steered=steered,
                circular_runs=tuple(str(n) for n in circular[judge.name]),
                tau_without_circular=without.get(judge.name, (None, None))[0],
                tau_top5_without_circular=without.get(judge.name, (None, None))[1],
            )
        )
    return out


def _figures(humans: pd.DataFrame, grades: pd.DataFrame, settings: Any, mode: AgreementMode) -> dict:
    """`metrics.stats.calibration.calibrate_judges` of the judges' ``grades`` against these human labels."""
    return calibrate_judges(
        humans[["item", "query", "annotator", "grade"]],
        grades[["item", "query", "judge", "grade"]],
        labels=list(settings.grades),
        mode="binary" if mode == AgreementMode.BINARY else "graded",
        cutoff=settings.relevance_cutoff,
    )


def _by_grade(series: pd.Series | None, grades: tuple[int, ...]) -> dict[str, float | None]:
    """human grade → leniency among the labels of that grade, over the whole scale (None: no such label)."""
    found = {} if series is None else {int(float(str(g))): _number(v) for g, v in series.items()}
    return {str(g): found.get(g) for g in grades}


def _per_query(table: pd.DataFrame | None) -> tuple[QueryAgreement, ...]:
    if table is None:
        return ()
    return tuple(
        QueryAgreement(
            query_id=str(row["query"]),
            n_pairs=int(row["n_pairs"]),
            n_labels=int(row["n_labels"]),
            exact_agreement=_number(row["exact_agreement"]),
            mean_difference=_number(row["mean_difference"]),
        )
        for row in table.to_dict("records")
    )


def _number(value: Any) -> float | None:
    return None if value is None or math.isnan(float(value)) else float(value)


def _confusion(table: pd.DataFrame | None, grades: tuple[int, ...]) -> dict[str, dict[str, int]]:
    """human grade → judge grade → count, over the whole scale."""
    out = {str(h): {str(j): 0 for j in grades} for h in grades}
    if table is not None:
        for h, row in table.iterrows():
            for j, n in row.items():
                out[str(int(float(str(h))))][str(int(float(str(j))))] = int(n)
    return out


def human_qrels(humans: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per pair, the most frequent current human grade (ties to the lowest)."""
    qrels: dict[str, dict[str, int]] = {}
    for (qid, did), part in humans.groupby(["query", "doc_id"], sort=True):
        counts = Counter(int(g) for g in part["grade"])
        top = max(counts.values())
        qrels.setdefault(str(qid), {})[str(did)] = min(g for g, c in counts.items() if c == top)
    return qrels


def _taus(
    runs: dict[Hashable, Run], humans: pd.DataFrame, grades: pd.DataFrame, names: list[str]
) -> dict[str, tuple[float | None, float | None]]:
    """(tau, tau among the top 5 runs) of each judge: None with fewer than 3 stored runs or undefined."""
    out: dict[str, tuple[float | None, float | None]] = {name: (None, None) for name in names}
    if len(runs) < 3 or humans.empty:
        return out
    human = human_qrels(humans)
    for name in names:
        mine = grades[grades["judge"] == name]
        if mine.empty:
            continue
        judge: dict[str, dict[str, int]] = {}
        for qid, did, g in zip(mine["query"], mine["doc_id"], mine["grade"], strict=True):
            judge.setdefault(str(qid), {})[str(did)] = int(g)
        try:
            res = ranking_agreement_from_qrels(human, judge, runs, measure=TAU_MEASURE, top=TAU_TOP)
        except QrelForgeError:
            continue
        out[name] = (_number(res.tau), _number(res.tau_top))
    return out


def _stored_runs(s: Session, project: Project) -> dict[Hashable, Run]:
    runs: dict[Hashable, Run] = {}
    for run in corpus_store.runs(s, project.id):
        rows = scoring.run_entries(s, run.id)
        if rows:
            runs[run.name] = Run(
                [r[0] for r in rows],
                [r[1] for r in rows],
                np.array([r[2] for r in rows], dtype=np.float64),
                name=run.name,
            )
    return runs


# ------------------------------------------------------------------------------------------------- fill
_FILL_COLUMNS = (
    "query_id",
    "doc_id",
    "grade",
    "kind",
    "label_ids",
    "adjudication_id",
    "pair_id",
    "source",
    "judge_label_id",
)


def fill_state(s: Session, project: Project) -> tuple[pd.DataFrame, str]:
    """(the qrels a calibrated judge fills, why it fills none): the live pairs no human judged that the
    project's fill judge graded, when it passes calibration now; none by default (the project setting is off:
    message "") or when it does not (message: `JudgeCalibrationInfo.gate_message`). Columns as a release's
    qrels (kind ``judge``) plus ``source`` and ``judge_label_id``."""
    empty = pd.DataFrame({c: [] for c in _FILL_COLUMNS})
    rules = judges_store.settings_row(s, project.id)
    if rules is None or rules.fill_judge_id is None:
        return empty, ""
    judge = next((j for j in judges_store.judges_of(s, project.id) if j.id == rules.fill_judge_id), None)
    if judge is None:
        return empty, ""
    calibration = calibrations(s, project, [judge])[0]
    if not calibration.passed:
        return empty, calibration.gate_message
    unjudged = {
        p["pair_id"]
        for p in judges_store.pair_inputs(s, project.id)
        if not p["excluded"] and p["n_human"] == 0
    }
    rows = [g for g in judges_store.current_grades(s, project.id, [judge.id]) if g["pair_id"] in unjudged]
    if not rows:
        return empty, ""
    filled = pd.DataFrame(
        {
            "query_id": [r["query_id"] for r in rows],
            "doc_id": [r["doc_id"] for r in rows],
            "grade": [int(r["grade"]) for r in rows],
            "kind": [QrelKind.JUDGE.value] * len(rows),
            "label_ids": [""] * len(rows),
            "adjudication_id": [None] * len(rows),
            "pair_id": [int(r["pair_id"]) for r in rows],
            "source": [source_of(judge.name)] * len(rows),
            "judge_label_id": [int(r["label_id"]) for r in rows],
        }
    )
    return filled, ""


# ------------------------------------------------------------------------------------------------ queue
def queue_order_by(s: Session, project: Project, *, row: Any) -> tuple[list[Any], ClaimDraw]:
    """The ORDER BY terms of the next claim of the project's queue and the draw it is (recorded on the claim,
    `ClaimDraw`): its ``queue_order`` setting, except for a uniformly random claim with probability
    ``calibration_share`` (so a set share of every annotator's queue stays a uniformly random calibration
    sample). No setting (``row``, the project's judge settings row, is None): the default order."""
    if row is None:
        return [], ClaimDraw.DEFAULT
    shuffled = row.calibration_share > 0 and random.random() < row.calibration_share  # noqa: S311 - sampling
    order = QueueOrder(row.queue_order)
    return judges_store.candidate_order(
        order, shuffled=shuffled
    ), ClaimDraw.RANDOM if shuffled else ClaimDraw(order)


def over_budget(s: Session, project: Project, *, row: Any) -> bool:
    """Whether the project has spent its budget of human judgments (labelled claims); ``row``: the project's
    judge settings row, or None."""
    return (
        row is not None
        and row.human_budget is not None
        and annotation.label_count(s, project.id) >= row.human_budget
    )
