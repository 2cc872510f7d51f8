"""Which model made a run, so calibration can flag the runs of a judge's own model family
(`JudgeCalibrationInfo.circular_runs`)."""

from __future__ import annotations

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import InvalidInput, NotFound
from annotate_app.services.inputs import check_text
from annotate_app.store import corpus as corpus_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction

__all__ = ["set_run_model"]


def set_run_model(db: Database, actor: Actor, project: ProjectRef, run: str, model: str) -> None:
    """Record the model that made the stored run ``run`` (admin), e.g. ``Qwen/Qwen2.5-7B-Instruct``; "" for
    unknown. Its family (`metrics.stats.circularity.model_family`) is compared with each judge's model.

    Raises:
        NotFound: no such run; InvalidInput: a model name longer than 255 characters.
    """
    name, text = check_text(run, "run"), check_text(model, "model").strip()
    if len(text) > 255:
        raise InvalidInput(f"model must be at most 255 characters; got {len(text)}")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "describe runs")
        row = corpus_store.find_run(s, proj.id, name)
        if row is None:
            raise NotFound(f"run {name!r} does not exist in project {proj.name!r}")
        corpus_store.set_run_model(s, row.id, text)
        audit(
            s,
            actor,
            AuditAction.JUDGE_SETTINGS_CHANGED,
            project_id=proj.id,
            target=name,
            details={"model": text},
        )
