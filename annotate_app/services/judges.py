"""Machine judges in a project: raters with provenance, never trusted blind.

A judge (`add_judge`, admin) is stored like an annotator who cannot log in: a name, a backend (an
OpenAI-compatible endpoint, the offline lexical baseline, or ``replay`` for labels made elsewhere and
imported), the model and its version, the prompt template (stored, versioned by `add_judge` when it changes,
hashed), the settings that change answers (temperature, samples), who added it and when. Its labels
(`run_judge`, `import_labels`, admin) are append-only, each with its grade, reason, confidence, prompt hash,
raw response, latency, tokens, the document version it judged, or its failure with the raw text.

The judge client's cache is the store (`StoreCache`): a label is keyed on the judge, its prompt hash and
settings, the query and the document version, so a rerun sends nothing and an interrupted run continues
where it stopped (each answer is committed as it arrives).

Never trusted blind: machine labels live apart from the human ones and never enter the agreement figures or
the release gate (`gate`), so a project's human kappa is the same before and after a judge runs. By default a
qrel needs a human label; `update_judge_settings` may name a judge whose labels fill the pairs no human
judged, which takes effect only while that judge passes calibration (`calibrate`: kappa against the humans
at least the project's threshold, on at least ``min_calibration_pairs`` randomly sampled human pairs: those
labelled from the calibration share's uniformly random claims once the queue has been ordered by uncertainty
or run weight, else every shared pair; see `JudgeCalibrationInfo`). Releases record how many qrels came from
humans and from each judge. `probe` is the keyword-stuffing probe.
"""

from __future__ import annotations

import io
import math
import numbers
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from annotate_app.judges import (
    DEFAULT_TEMPLATE,
    Backend,
    FailureKind,
    Judge,
    JudgeClient,
    JudgeResult,
    JudgeTask,
    Pair,
    PromptTemplate,
    ReplayJudge,
    read_machine_labels,
)
from annotate_app.services._context import ProjectRef, load_release, open_project
from annotate_app.services._judge_runs import (
    JudgeFailure,
    JudgeRunReport,
    counts_by_kind,
    failure_of,
    remember_adaptations,
    stopped_message,
)
from annotate_app.services._judge_state import (
    REQUEST_DEFAULTS,
    JudgeCalibrationInfo,
    JudgeSettingsInfo,
    QueryAgreement,
    adapted_of,
    build_judge,
    calibrations,
    check_request_params,
    request_params,
    settings_info,
    task_of,
)
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, InvalidInput, NotFound
from annotate_app.services.inputs import MAX_REASON, check_count, check_int, check_text, cut
from annotate_app.store import judges as q
from annotate_app.store import releases as rq
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction, JudgeBackend, QueueOrder
from annotate_app.store.models import MachineJudge, Project
from metrics.data import Qrels
from metrics.errors import FormatError
from metrics.stats.probe import probe_summary, stuff_query_terms

__all__ = [
    "add_judge",
    "list_judges",
    "run_judge",
    "import_labels",
    "calibrate",
    "probe",
    "probe_results",
    "judge_qrels",
    "human_release_qrels",
    "judge_settings",
    "update_judge_settings",
    "judge_failures",
    "failure_counts",
    "JudgeFailure",
    "StoreCache",
    "JudgeInfo",
    "JudgeRunReport",
    "ProbeReport",
    "JudgeCalibrationInfo",
    "JudgeSettingsInfo",
    "QueryAgreement",
    "PAIR_SELECTIONS",
    "MAX_CONCURRENCY",
]

PAIR_SELECTIONS = ("all", "unlabelled", "sample:N")
MAX_CONCURRENCY = 64
MAX_SAMPLES = 20
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
_KEEP: Any = object()


# ------------------------------------------------------------------------------------------------ values
@dataclass(frozen=True)
class JudgeInfo:
    """A judge of a project, with its current prompt version (None for judges without a prompt), its request
    parameters (``max_tokens``, ``timeout_s``, ``seed``, ``extra_body``; empty for judges that send no
    request) and the adaptations to its server (adaptation → the server's message that asked for it)."""

    name: str
    backend: JudgeBackend
    base_url: str
    model: str
    model_version: str
    temperature: float
    samples: int
    prompt_version: int | None
    prompt_sha256: str | None
    created_at: datetime
    params: Mapping[str, Any] = field(default_factory=dict)
    adapted: Mapping[str, str] = field(default_factory=dict)


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


# ------------------------------------------------------------------------------------------------- cache
class StoreCache:
    """The judge client's cache (`annotate_app.judges.JudgeCache`) over the store: a hit is a stored label of
    the judge with that key; each answer is committed in its own short transaction as it arrives.

    ``pairs`` maps (query ID, document ID) to (pair id, document version) for the pairs of the run.
    """

    def __init__(
        self,
        db: Database,
        judge: MachineJudge,
        pairs: Mapping[tuple[str, str], tuple[int, int]],
        *,
        prompt_id: int | None = None,
        probe: bool = False,
    ):
        self._db, self._judge_id, self._name = db, judge.id, judge.name
        self._backend = Backend(judge.backend)
        self._pairs, self._prompt_id, self._probe = dict(pairs), prompt_id, probe
        self._ids = {pair_id: key for key, (pair_id, _) in self._pairs.items()}
        self._lock = threading.Lock()

    def get(self, key: str) -> JudgeResult | None:
        with self._db.read() as s:
            row = q.cached_label(s, self._judge_id, key)
            if row is None:
                return None
            query_id, doc_id = self._ids.get(row.pair_id, ("?", "?"))
            return JudgeResult(
                query_id=query_id,
                doc_id=doc_id,
                judge=self._name,
                backend=self._backend,
                model=row.model,
                grade=row.grade,
                reason=row.reason,
                confidence=row.confidence,
                failure=FailureKind(row.failure) if row.failure else None,
                error=row.error,
                prompt_hash=row.prompt_hash,
                raw_response=row.raw_response,
                latency_s=row.latency_s,
                prompt_tokens=row.prompt_tokens,
                completion_tokens=row.completion_tokens,
                samples=row.samples,
                sample_grades=tuple(row.sample_grades or ()),
                reasoning=row.reasoning,
                answer_field=row.answer_field,
                aspects=dict(row.aspects or {}),
            )

    def put(self, key: str | None, result: JudgeResult) -> None:
        pair = self._pairs.get((result.query_id, result.doc_id))
        if pair is None:
            return
        fields = _label_fields(result)
        try:
            with self._lock, self._db.write() as s:
                q.insert_label(
                    s,
                    judge_id=self._judge_id,
                    pair_id=pair[0],
                    prompt_id=self._prompt_id,
                    cache_key=key,
                    probe=self._probe,
                    doc_version=pair[1],
                    **fields,
                )
        except IntegrityError:  # a concurrent run stored the same answer first
            return

    def record(self, result: JudgeResult) -> None:
        """Store a failure the client does not cache (a rerun retries it), with its raw text, under no key."""
        if not result.cached and result.failure is not None and result.failure.retried:
            self.put(None, result)


def _label_fields(result: JudgeResult) -> dict[str, Any]:
    return {
        "grade": result.grade,
        "reason": cut(result.reason, MAX_REASON),  # a model's reply may say more: raw_response keeps it
        "confidence": result.confidence,
        "sample_grades": list(result.sample_grades),
        "failure": None if result.failure is None else str(result.failure),
        "error": result.error,
        "prompt_hash": result.prompt_hash[:64],
        "raw_response": result.raw_response,
        "model": result.model[:255],
        "latency_s": float(result.latency_s),
        "prompt_tokens": int(result.prompt_tokens),
        "completion_tokens": int(result.completion_tokens),
        "samples": max(int(result.samples), 0),
        "reasoning": result.reasoning,
        "answer_field": result.answer_field[:32],
        "aspects": dict(result.aspects),
    }


# ---------------------------------------------------------------------------------------------- checks
def _check_name(name: Any) -> str:
    text = check_text(name, "judge name")
    if not _NAME.fullmatch(text):
        raise InvalidInput(
            "judge name must be 1-64 letters, digits, '.', '_', ':' or '-', starting with a letter or "
            f"digit; got {text[:80]!r}"
        )
    return text


def _check_backend(backend: Any) -> JudgeBackend:
    try:
        return JudgeBackend(backend)
    except ValueError:
        choices = ", ".join(repr(b.value) for b in JudgeBackend)
        raise InvalidInput(f"backend must be one of {choices}; got {str(backend)[:80]!r}") from None


def _check_temperature(value: Any) -> float:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not ok or not 0 <= float(value) <= 2 or math.isnan(float(value)):
        raise InvalidInput(f"temperature must be a number in [0, 2]; got {str(value)[:60]!r}")
    return float(value)


def _check_openai(base_url: Any, model: Any) -> tuple[str, str]:
    url, name = check_text(base_url, "base_url"), check_text(model, "model")
    if not re.fullmatch(r"https?://[^\s]{1,990}", url):
        raise InvalidInput(f"base_url must be an http:// or https:// URL; got {url[:80]!r}")
    if not name.strip() or len(name) > 255:
        raise InvalidInput(f"model must be a non-empty name of at most 255 characters; got {name[:80]!r}")
    return url, name


def _check_prompt(prompt: Any) -> PromptTemplate:
    if prompt is None:
        return PromptTemplate(text=DEFAULT_TEMPLATE)
    text = check_text(prompt, "prompt")
    try:
        return PromptTemplate(text=text)
    except ValueError as exc:
        raise InvalidInput(f"prompt: {exc}") from None


def _judge_of(s: Session, project: Project, name: str) -> MachineJudge:
    row = q.find_judge(s, project.id, name)
    if row is None:
        raise NotFound(f"judge {name!r} does not exist in project {project.name!r}")
    return row


def _info(s: Session, row: MachineJudge) -> JudgeInfo:
    prompt = q.latest_prompt(s, row.id)
    return JudgeInfo(
        name=row.name,
        backend=JudgeBackend(row.backend),
        base_url=row.base_url,
        model=row.model,
        model_version=row.model_version,
        temperature=row.temperature,
        samples=row.samples,
        prompt_version=None if prompt is None else prompt.version,
        prompt_sha256=None if prompt is None else prompt.sha256,
        created_at=row.created_at,
        params=request_params(row.params) if row.backend == JudgeBackend.OPENAI else {},
        adapted=adapted_of(row.params),
    )


# ---------------------------------------------------------------------------------------------- judges
def add_judge(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    name: str,
    *,
    backend: str = JudgeBackend.LEXICAL,
    base_url: str = "",
    model: str = "",
    samples: int = 1,
    temperature: float = 0.0,
    prompt: str | None = None,
    max_tokens: int = REQUEST_DEFAULTS["max_tokens"],
    timeout_s: float = REQUEST_DEFAULTS["timeout_s"],
    seed: int | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> JudgeInfo:
    """Add a machine judge to the project (admin). ``prompt``: the template text of an ``openai`` judge
    (default: ours; `annotate_app.judges.BUILTIN_PROMPTS` holds the built-in ones). Its request parameters
    (``max_tokens``, ``timeout_s``, ``seed``, ``extra_body``: a JSON object merged into every request) are
    stored with it and are part of its provenance. Adding an existing judge again with the same settings
    records a new prompt version when the prompt changed (else nothing); other changes are a Conflict (add a
    judge under a new name)."""
    name, kind = _check_name(name), _check_backend(backend)
    check_int(samples, "samples", 1, MAX_SAMPLES)
    temperature = _check_temperature(temperature)
    params = check_request_params(max_tokens, timeout_s, seed, extra_body)
    template = None
    if kind == JudgeBackend.OPENAI:
        base_url, model = _check_openai(base_url, model)
        template = _check_prompt(prompt)
    elif prompt is not None or base_url or model:
        raise InvalidInput(
            f"a {kind} judge takes no prompt, base_url or model; got {str(base_url or model)[:60]!r}"
        )
    elif params != request_params({}):
        raise InvalidInput(
            f"a {kind} judge sends no request: it takes no max_tokens, timeout, seed or extra_body"
        )
    fields = {
        "backend": kind.value,
        "base_url": base_url,
        "model": model if kind == JudgeBackend.OPENAI else ("bm25" if kind == JudgeBackend.LEXICAL else ""),
        "temperature": temperature,
        "samples": samples,
    }
    stored = params if kind == JudgeBackend.OPENAI else {}
    with db.write() as s:
        user, proj = open_project(s, actor, project, Role.ADMIN, "add judges")
        row = q.find_judge(s, proj.id, name)
        if row is None:
            row = q.insert_judge(
                s,
                project_id=proj.id,
                name=name,
                model_version="",
                params=stored,
                created_by=actor.user_id,
                **fields,
            )
        elif any(getattr(row, k) != v for k, v in fields.items()) or (
            kind == JudgeBackend.OPENAI and request_params(row.params) != params
        ):
            raise Conflict(f"judge {name!r} already exists in project {proj.name!r} with other settings")
        if template is not None:
            latest = q.latest_prompt(s, row.id)
            if latest is None or latest.sha256 != template.sha256:
                q.insert_prompt(s, row.id, template.text, template.sha256, actor.user_id)
        details = {**fields, **({"params": stored} if stored else {})}
        audit(s, actor, AuditAction.JUDGE_ADDED, project_id=proj.id, target=name, details=details)
        return _info(s, row)


def list_judges(db: Database, actor: Actor, project: ProjectRef) -> list[JudgeInfo]:
    """The project's judges, by name (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see judges")
        return [_info(s, row) for row in q.judges_of(s, proj.id)]


# ------------------------------------------------------------------------------------------------- runs
def _selection(pairs: Any) -> tuple[str, int | None]:
    text = check_text(pairs, "pairs")
    if text in ("all", "unlabelled"):
        return text, None
    match = re.fullmatch(r"sample:(\d{1,9})", text)
    if match is None or int(match.group(1)) < 1:
        raise InvalidInput(f"pairs must be 'all', 'unlabelled' or 'sample:N' (N >= 1); got {text[:60]!r}")
    return "sample", int(match.group(1))


def _selected(inputs: list[dict], how: str, n: int | None, seed: int) -> list[dict]:
    """``all``: every pair not excluded; ``unlabelled``: those no human judged; ``sample:N``: N drawn
    uniformly at random (``seed``) among those humans judged (the calibration sample)."""
    live = [p for p in inputs if not p["excluded"]]
    if how == "all":
        return live
    if how == "unlabelled":
        return [p for p in live if p["n_human"] == 0]
    judged = [p for p in live if p["n_human"] > 0]
    picks = np.random.default_rng(seed).permutation(len(judged))[: n or 0]
    return [judged[i] for i in sorted(picks.tolist())]


def _pair(item: dict, *, document: str | None = None, version: str | None = None) -> Pair:
    return Pair(
        query_id=item["query_id"],
        query=item["query_text"],
        doc_id=item["doc_id"],
        document=item["doc_text"] if document is None else document,
        doc_version=str(item["doc_version"]) if version is None else version,
    )


def _client(judge: Judge, task: JudgeTask, cache: StoreCache, concurrency: int, progress: Any) -> JudgeClient:
    return JudgeClient(judge, task, cache=cache, workers=concurrency, progress=progress)


def _closing(judge: Judge) -> None:
    close = getattr(judge, "close", None)
    if callable(close):
        close()


def run_judge(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    name: str,
    *,
    pairs: str = "unlabelled",
    concurrency: int = 4,
    dry_run: bool = False,
    seed: int = 0,
    progress: Callable[[Any], Any] | None = None,
) -> JudgeRunReport:
    """Run a judge over the project's pairs (admin): ``pairs`` is ``"all"``, ``"unlabelled"`` (no human
    label yet) or ``"sample:N"`` (N human-judged pairs drawn uniformly at random with ``seed``: the
    calibration sample). Answers already stored are not asked again; a dry run sends and stores nothing."""
    name, (how, n) = _check_name(name), _selection(pairs)
    check_int(concurrency, "concurrency", 1, MAX_CONCURRENCY)
    check_int(seed, "seed", 0)
    if not isinstance(dry_run, bool):
        raise InvalidInput(f"dry_run must be True or False; got {dry_run!r:.40}")
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "run judges")
        row = _judge_of(s, proj, name)
        task, judge = task_of(s, proj), build_judge(s, proj, row)
        prompt = q.latest_prompt(s, row.id)
        chosen = _selected(q.pair_inputs(s, proj.id), how, n, seed)
    try:
        if dry_run:
            first = JudgeClient(judge, task).dry_run(_pair(chosen[0])) if chosen else None
            text = "" if first is None else (first.request or first.text)
            return JudgeRunReport(
                judge=name, pairs=len(chosen), sent=0, cached=0, failed=0, dry_run=True, prompt=text
            )
        report = _run(
            db,
            row,
            judge,
            task,
            chosen,
            prompt_id=prompt.id if prompt else None,
            workers=concurrency,
            progress=progress,
        )
    finally:
        _closing(judge)
    _audit_run(db, actor, proj, AuditAction.JUDGE_RUN, report, pairs)
    return report


def _run(
    db: Database,
    row: MachineJudge,
    judge: Judge,
    task: JudgeTask,
    chosen: list[dict],
    *,
    prompt_id: int | None,
    workers: int,
    progress: Any = None,
) -> JudgeRunReport:
    mapping = {(p["query_id"], p["doc_id"]): (p["pair_id"], p["doc_version"]) for p in chosen}
    cache = StoreCache(db, row, mapping, prompt_id=prompt_id)
    client = _client(judge, task, cache, workers, progress)
    seen: dict[FailureKind, list[Any]] = {}

    def sink(result: JudgeResult) -> None:
        cache.record(result)
        if result.failure is not None:
            entry = seen.setdefault(result.failure, [0, result.error])
            entry[0] += 1

    try:
        counts = client.run_into((_pair(p) for p in chosen), sink)
    except ValueError as exc:
        raise InvalidInput(f"judge {row.name!r} cannot judge this project: {exc}") from None
    adapted = remember_adaptations(db, row, judge)
    return JudgeRunReport(
        judge=row.name,
        pairs=len(chosen),
        sent=counts.judged,
        cached=counts.cached,
        failed=counts.failed,
        requests=counts.sent,
        failures=tuple((str(k), seen[k][0], seen[k][1]) for k in FailureKind if k in seen),
        adapted=adapted,
        stopped=stopped_message(client.stopped, counts.done, counts.failed, len(chosen)),
    )


def _audit_run(
    db: Database, actor: Actor, proj: Project, action: AuditAction, report: Any, what: str
) -> None:
    with db.write() as s:
        details = {
            k: v for k, v in vars(report).items() if isinstance(v, int | float | str) and k != "prompt"
        }
        audit(
            s, actor, action, project_id=proj.id, target=report.judge, details={**details, "what": what[:200]}
        )


def import_labels(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    name: str,
    source: bytes | str | os.PathLike[str],
    *,
    filename: str = "machine-labels.jsonl",
) -> JudgeRunReport:
    """Import machine labels made elsewhere (admin), JSONL as `annotate_app.judges.read_machine_labels`
    reads it, as judge ``name`` (a ``replay`` judge, added if new). Every line must name a pair of the
    project; importing the same file again adds nothing."""
    name, filename = _check_name(name), check_text(filename, "filename")
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import machine labels")
        task = task_of(s, proj)
        inputs = {(p["query_id"], p["doc_id"]): p for p in q.pair_inputs(s, proj.id)}
    labels = _read_labels(source, filename, task)
    for x in labels:
        if len(x.reason) > MAX_REASON:
            raise InvalidInput(
                f"{filename}:{x.line}: reason must have at most {MAX_REASON} characters; got {len(x.reason)}"
            )
    unknown = [(x.query_id, x.doc_id, x.line) for x in labels if (x.query_id, x.doc_id) not in inputs]
    if unknown:
        qid, did, line = unknown[0]
        raise InvalidInput(
            f"{filename}:{line}: query {qid!r}, document {did!r} is not a pair of project {proj.name!r}"
            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
        )
    row = _replay_judge(db, actor, proj, name)
    judge = ReplayJudge(labels, name=name)
    chosen = [inputs[(x.query_id, x.doc_id)] for x in labels]
    report = _run(db, row, judge, task, chosen, prompt_id=None, workers=1)
    _audit_run(db, actor, proj, AuditAction.JUDGE_IMPORTED, report, filename)
    return report


def _read_labels(source: Any, filename: str, task: JudgeTask) -> list:
    if isinstance(source, bytes):
        stream: Any = io.BytesIO(source)
        stream.name = filename
    elif isinstance(source, str | os.PathLike):
        text = check_text(os.fspath(source), "source")
        stream = text
    else:
        raise InvalidInput(f"source must be bytes or a path; got {type(source).__name__}")
    try:
        return read_machine_labels(stream, scale=task.scale)
    except FormatError as exc:
        raise InvalidInput(str(exc).splitlines()[0], exc.problems) from None
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{filename}: cannot be read: {exc}") from None


def _replay_judge(db: Database, actor: Actor, proj: Project, name: str) -> MachineJudge:
    with db.write() as s:
        row = q.find_judge(s, proj.id, name)
        if row is None:
            row = q.insert_judge(
                s,
                project_id=proj.id,
                name=name,
                backend=JudgeBackend.REPLAY.value,
                base_url="",
                model="",
                model_version="",
                temperature=0.0,
                samples=1,
                params={},
                created_by=actor.user_id,
            )
            audit(
                s,
                actor,
                AuditAction.JUDGE_ADDED,
                project_id=proj.id,
                target=name,
                details={"backend": "replay"},
            )
        elif row.backend != JudgeBackend.REPLAY:
            raise Conflict(
                f"judge {name!r} has backend {row.backend!r}: labels are imported into replay judges"
            )
        s.expunge(row)
        return row


# --------------------------------------------------------------------------------------------- failures
def judge_failures(
    db: Database, actor: Actor, project: ProjectRef, name: str, *, kind: str | None = None
) -> list[JudgeFailure]:
    """The pairs whose latest label of judge ``name`` is a failure (reviewer), by query and document: the
    kind, the message and an excerpt of the raw reply. ``kind``: only that `FailureKind`."""
    name = _check_name(name)
    wanted = None if kind is None else _check_kind(kind)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see judge failures")
        row = _judge_of(s, proj, name)
        rows = q.current_failures(s, proj.id, [row.id], None if wanted is None else str(wanted))
    return [failure_of(r) for r in rows]


def failure_counts(db: Database, actor: Actor, project: ProjectRef) -> dict[str, dict[str, int]]:
    """judge name → failure kind → pairs whose latest label of that judge is a failure of that kind
    (reviewer); judges without a failure are absent, kinds in `FailureKind` order."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see judge failures")
        return counts_by_kind(q.current_failures(s, proj.id))


def _check_kind(kind: Any) -> FailureKind:
    try:
        return FailureKind(kind)
    except ValueError:
        choices = ", ".join(k.value for k in FailureKind)
        raise InvalidInput(f"kind must be one of {choices}; got {str(kind)[:60]!r}") from None


# ------------------------------------------------------------------------------------------ calibration
def calibrate(db: Database, actor: Actor, project: ProjectRef) -> list[JudgeCalibrationInfo]:
    """Every judge of the project against its human labels (reviewer): kappa in the project's agreement mode,
    linear weighted kappa, ordinal alpha, leniency, Kendall's tau of the stored runs' rankings and the
    confusion matrix; ``passed`` says whether the judge may fill pairs (`update_judge_settings`)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "calibrate judges")
        return calibrations(s, proj, q.judges_of(s, proj.id))


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
    name = _check_name(name)
    check_int(sample, "sample", 1, 10_000)
    check_int(seed, "seed", 0)
    check_int(concurrency, "concurrency", 1, MAX_CONCURRENCY)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "probe judges")
        row = _judge_of(s, proj, name)
        task, judge = task_of(s, proj), build_judge(s, proj, row)
        prompt = q.latest_prompt(s, row.id)
        chosen = _non_relevant(s, proj, sample, seed)
    try:
        report = _probe(db, row, judge, task, chosen, prompt.id if prompt else None, seed, concurrency)
    finally:
        _closing(judge)
    _audit_run(db, actor, proj, AuditAction.JUDGE_PROBED, report, f"sample {sample}")
    return report


def probe_results(db: Database, actor: Actor, project: ProjectRef) -> dict[str, ProbeReport]:
    """The latest stuffing probe of each judge that was probed (reviewer), as `probe` reported it (its audit
    entry); judges never probed are absent."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see probe results")
        found = q.latest_probes(s, proj.id, AuditAction.JUDGE_PROBED.value)
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
    for pair_id, *_, grade in q.human_labels(s, proj.id):
        grades.setdefault(int(pair_id), []).append(int(grade))
    wanted = {p for p, g in grades.items() if max(g) < cutoff}
    candidates = [p for p in q.pair_inputs(s, proj.id) if p["pair_id"] in wanted and not p["excluded"]]
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
        judge, task, StoreCache(db, row, mapping, prompt_id=prompt_id), (_pair(p) for p in chosen), workers
    )
    stuffed = []
    for p in chosen:
        try:
            text = stuff_query_terms(p["doc_text"], p["query_text"], seed=seed)
        except ValueError:  # a query without a word: nothing to stuff
            continue
        stuffed.append(_pair(p, document=text, version=f"{p['doc_version']}+stuffed:{seed}"))
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
    client = _client(judge, task, cache, workers, None)
    out = {}
    try:
        for result in client.run(pairs):
            cache.record(result)
            if result.grade is not None:
                out[(result.query_id, result.doc_id)] = result.grade
    except ValueError as exc:
        raise InvalidInput(f"judge {judge.name!r} cannot judge this project: {exc}") from None
    return out


def judge_qrels(db: Database, actor: Actor, project: ProjectRef, name: str) -> Qrels:
    """A judge's current grades as `metrics.Qrels` (reviewer): its latest graded label of each pair not
    excluded, made on the pair's current document version."""
    name = _check_name(name)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "read machine labels")
        row = _judge_of(s, proj, name)
        rows = q.current_grades(s, proj.id, [row.id])
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
        sources = q.qrel_sources(s, release.id)
        rows = sorted(r[:3] for r in rq.qrel_rows(s, release.id) if sources[int(r[6])][0] == "human")
    return Qrels(
        [r[0] for r in rows],
        [r[1] for r in rows],
        np.array([int(r[2]) for r in rows], dtype=np.int64),
        source=f"{proj.name} release {release.version} (human qrels)",
    )


# ------------------------------------------------------------------------------------------------ settings
def judge_settings(db: Database, actor: Actor, project: ProjectRef) -> JudgeSettingsInfo:
    """The project's rules for machine judges (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see judge settings")
        return settings_info(s, proj)


def update_judge_settings(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    *,
    fill_judge: str | None = _KEEP,
    min_calibration_pairs: int | None = None,
    queue_order: str | None = None,
    calibration_share: float | None = None,
    human_budget: int | None = _KEEP,
) -> JudgeSettingsInfo:
    """Change the project's rules for machine judges (admin); arguments left out keep their value.
    ``fill_judge=None`` turns filling off; ``human_budget=None`` removes the cap."""
    fields: dict[str, Any] = {}
    if min_calibration_pairs is not None:
        fields["min_calibration_pairs"] = check_count(min_calibration_pairs, "min_calibration_pairs")
    if queue_order is not None:
        fields["queue_order"] = _check_order(queue_order).value
    if calibration_share is not None:
        fields["calibration_share"] = _check_share(calibration_share)
    if human_budget is not _KEEP:
        fields["human_budget"] = check_count(human_budget, "human_budget", 0, optional=True)
    fill = _KEEP if fill_judge is _KEEP or fill_judge is None else _check_name(fill_judge)
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "change judge settings")
        if fill_judge is None:
            fields["fill_judge_id"] = None
        elif fill is not _KEEP:
            fields["fill_judge_id"] = _judge_of(s, proj, fill).id
        current = settings_info(s, proj)
        defaults = {
            "min_calibration_pairs": current.min_calibration_pairs,
            "queue_order": current.queue_order.value,
            "calibration_share": current.calibration_share,
        }
        q.upsert_settings(s, proj.id, actor.user_id, **{**defaults, **fields})
        shown = {k: v for k, v in fields.items()}
        audit(
            s, actor, AuditAction.JUDGE_SETTINGS_CHANGED, project_id=proj.id, target=proj.name, details=shown
        )
        return settings_info(s, proj)


def _check_order(value: Any) -> QueueOrder:
    try:
        return QueueOrder(value)
    except ValueError:
        choices = ", ".join(repr(o.value) for o in QueueOrder)
        raise InvalidInput(f"queue_order must be one of {choices}; got {str(value)[:60]!r}") from None


def _check_share(value: Any) -> float:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not ok or math.isnan(float(value)) or not 0 <= float(value) <= 1:
        raise InvalidInput(f"calibration_share must be a number in [0, 1]; got {str(value)[:60]!r}")
    return float(value)
