"""Where a project stands: pairs, labels, disagreements, releases and every annotator's progress."""

from __future__ import annotations

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services._gate_state import load_state
from annotate_app.services._records import annotator_progress
from annotate_app.services.auth import Actor, Role
from annotate_app.services.types import ProjectStatus
from annotate_app.store import annotation, projects
from annotate_app.store import releases as releases_store
from annotate_app.store.db import Database

__all__ = ["project_status"]


def project_status(db: Database, actor: Actor, project: ProjectRef) -> ProjectStatus:
    """Counts for the dashboard (reviewer). ``complete``: pairs with all N labels; ``in_progress``: pairs with
    some of their labels; ``untouched``: pairs without a label yet (excluded pairs are counted apart)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see project status")
        state = load_state(s, proj)
        groups = annotation.annotator_counts(s, proj.id)
        members = [(u.id, u.username, quota) for u, quota in projects.members(s, proj.id)]
        people = [
            annotator_progress(s, proj, uid, name, quota, [g for g in groups if g[0] == uid])
            for uid, name, quota in members
        ]
        releases = releases_store.count(s, proj.id)
    pairs, verdicts = state.pairs, state.verdicts
    live = int((~pairs["excluded"]).sum())
    complete = int(verdicts["complete"].sum())
    touched = len(verdicts)
    return ProjectStatus(
        project=proj.name,
        pairs=live,
        excluded=len(pairs) - live,
        complete=complete,
        in_progress=touched - complete,
        untouched=live - touched,
        labels=len(state.labels),
        slots=live * proj.annotators_per_pair,
        stale=int(state.labels["stale"].astype(bool).sum()),
        disagreements=int(verdicts["disagreement"].sum()),
        adjudicated=int(verdicts["disagreement"].sum()) - len(state.unresolved()),
        releases=releases,
        annotators=tuple(people),
    )
