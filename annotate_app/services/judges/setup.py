"""Adding and listing a project's machine judges, and the project's rules for them."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from annotate_app.judges import (
    BUILDERS,
    DEFAULT_TEMPLATE,
    Combine,
    PromptTemplate,
)
from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services._judge_state import (
    REQUEST_DEFAULTS,
    JudgeSettingsInfo,
    adapted_of,
    check_request_params,
    ensemble_of,
    request_params,
    settings_info,
)
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.services.inputs import check_count, check_int, check_text
from annotate_app.services.judges._common import check_name, judge_of
from annotate_app.store import judges as judges_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction, JudgeBackend, QueueOrder
from annotate_app.store.models import MachineJudge

__all__ = ["MAX_SAMPLES", "JudgeInfo", "add_judge", "list_judges", "judge_settings", "update_judge_settings"]


MAX_SAMPLES = 20


_KEEP: Any = object()


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


def _info(s: Session, row: MachineJudge) -> JudgeInfo:
    prompt = judges_store.latest_prompt(s, row.id)
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
        params=_shown_params(row),
        adapted=adapted_of(row.params),
    )


def _shown_params(row: MachineJudge) -> dict[str, Any]:
    if row.backend == JudgeBackend.OPENAI:
        return request_params(row.params)
    if row.backend == JudgeBackend.ENSEMBLE:
        members, combine = ensemble_of(row.params)
        return {"members": members, "combine": combine}
    return {}


def _check_ensemble(s: Session, project_id: int, name: str, members: Any, combine: Any) -> dict[str, Any]:
    """An ensemble's stored params: 2 or more distinct judges of the project that can run (not an ensemble,
    not imported labels), and a rule of `Combine`."""
    if isinstance(members, str) or not isinstance(members, Sequence):
        raise InvalidInput(f"an ensemble judge needs members: a list of judge names; got {members!r:.80}")
    names = [check_name(m) for m in members]
    if len(set(names)) != len(names) or len(names) < 2:
        raise InvalidInput(f"an ensemble judge needs at least 2 distinct members; got {names!r:.200}")
    try:
        rule = Combine(combine)
    except ValueError:
        choices = ", ".join(repr(c.value) for c in Combine)
        raise InvalidInput(f"combine must be one of {choices}; got {str(combine)[:60]!r}") from None
    for member in names:
        row = judges_store.find_judge(s, project_id, member)
        if row is None or member == name:
            raise InvalidInput(f"ensemble member {member!r} is no other judge of the project")
        if JudgeBackend(row.backend) not in BUILDERS or row.backend == JudgeBackend.ENSEMBLE:
            raise InvalidInput(
                f"ensemble member {member!r} has backend {row.backend!r}: members must be judges that run"
            )
    return {"members": names, "combine": rule.value}


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
    members: Sequence[str] | None = None,
    combine: str | None = None,
) -> JudgeInfo:
    """Add a machine judge to the project (admin). ``prompt``: the template text of an ``openai`` judge
    (default: ours; `annotate_app.judges.BUILTIN_PROMPTS` holds the built-in ones). Its request parameters
    (``max_tokens``, ``timeout_s``, ``seed``, ``extra_body``: a JSON object merged into every request) are
    stored with it and are part of its provenance. Adding an existing judge again with the same settings
    records a new prompt version when the prompt changed (else nothing); other changes are a Conflict (add a
    judge under a new name). An ``ensemble`` judge takes ``members`` (2 or more of the project's judges that
    run) and ``combine`` (`annotate_app.judges.Combine`, default ``majority``) and nothing else."""
    name, kind = check_name(name), _check_backend(backend)
    check_int(samples, "samples", 1, MAX_SAMPLES)
    temperature = _check_temperature(temperature)
    params = check_request_params(max_tokens, timeout_s, seed, extra_body)
    template = None
    if kind == JudgeBackend.OPENAI:
        base_url, model = _check_openai(base_url, model)
        template = _check_prompt(prompt)
    elif kind != JudgeBackend.ENSEMBLE and (members is not None or combine is not None):
        raise InvalidInput(f"a {kind} judge takes no members or combine; they are for ensemble judges")
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
        if kind == JudgeBackend.ENSEMBLE:
            stored = _check_ensemble(s, proj.id, name, members, combine or Combine.MAJORITY.value)
            fields["model"] = f"{stored['combine']} of {','.join(stored['members'])}"[:255]
        row = judges_store.find_judge(s, proj.id, name)
        if row is None:
            row = judges_store.insert_judge(
                s,
                project_id=proj.id,
                name=name,
                model_version="",
                params=stored,
                created_by=actor.user_id,
                **fields,
            )
        elif (
            any(getattr(row, k) != v for k, v in fields.items())
            or (kind == JudgeBackend.OPENAI and request_params(row.params) != params)
            or (kind == JudgeBackend.ENSEMBLE and ensemble_of(row.params) != ensemble_of(stored))
        ):
            raise Conflict(f"judge {name!r} already exists in project {proj.name!r} with other settings")
        if template is not None:
            latest = judges_store.latest_prompt(s, row.id)
            if latest is None or latest.sha256 != template.sha256:
                judges_store.insert_prompt(s, row.id, template.text, template.sha256, actor.user_id)
        details = {**fields, **({"params": stored} if stored else {})}
        audit(s, actor, AuditAction.JUDGE_ADDED, project_id=proj.id, target=name, details=details)
        return _info(s, row)


def list_judges(db: Database, actor: Actor, project: ProjectRef) -> list[JudgeInfo]:
    """The project's judges, by name (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see judges")
        return [_info(s, row) for row in judges_store.judges_of(s, proj.id)]


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
    fill = _KEEP if fill_judge is _KEEP or fill_judge is None else check_name(fill_judge)
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "change judge settings")
        if fill_judge is None:
            fields["fill_judge_id"] = None
        elif fill is not _KEEP:
            fields["fill_judge_id"] = judge_of(s, proj, fill).id
        current = settings_info(s, proj)
        defaults = {
            "min_calibration_pairs": current.min_calibration_pairs,
            "queue_order": current.queue_order.value,
            "calibration_share": current.calibration_share,
        }
        judges_store.upsert_settings(s, proj.id, actor.user_id, **{**defaults, **fields})
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
