"""The audit log's table (admin): filters (project, action, user), the count of matching entries, and the
entries a page at a time, newest first, with each entry's project as a column."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from annotate_app.services import audit
from annotate_app.services.auth import Actor
from annotate_app.services.types import AuditInfo
from annotate_app.ui import cache, errors, state
from annotate_app.ui.components import names, pager, widgets

__all__ = ["show", "frame", "ALL_PROJECTS", "USER"]

ALL_PROJECTS = "all projects"
USER = "audit_user"  # the acting user filter's key


def frame(rows: list[AuditInfo]) -> pd.DataFrame:
    """One row per entry: id, at, actor, action, project, target and the details as JSON."""
    columns = ["id", "at", "actor", "action", "project", "target", "details"]
    records = [
        {
            "id": r.id,
            "at": r.at,
            "actor": r.actor,
            "action": r.action,
            "project": r.project or "",
            "target": r.target,
            "details": json.dumps(r.details, ensure_ascii=False, default=str),
        }
        for r in rows
    ]
    return pd.DataFrame(records, columns=columns)


def _filters(actor: Actor) -> tuple[str | None, str | None, str | None, int]:
    """The filter widgets: (project or None for all, action or None, user or None, entries per page)."""
    cols = st.columns(4)
    projects = [p.name for p in cache.list_projects(actor)]
    reset = {"on_change": pager.reset, "args": (pager.AUDIT,)}
    project = cols[0].selectbox("Project", [ALL_PROJECTS, *projects], key=state.AUDIT_SCOPE, **reset)
    action = cols[1].text_input("Action (exact, e.g. release_created)", key=state.AUDIT_ACTION, **reset)
    user = cols[2].text_input("User (exact)", key=USER, **reset)
    size = cols[3].number_input("Entries per page", 10, 10_000, 200, step=50, key=state.AUDIT_LIMIT, **reset)
    chosen = None if project in (None, ALL_PROJECTS) else str(project)
    return chosen, action.strip() or None, user.strip() or None, int(size)


def show(actor: Actor) -> None:
    """Filters, count, pager and the table of the audit log."""
    project, action, user, size = _filters(actor)
    with errors.shown():
        db = cache.database()
        total = audit.count_audit(db, actor, project=project, action=action, username=user)
        start = pager.offset(pager.AUDIT, total, size=size)
        rows = audit.audit_log(
            db, actor, project=project, action=action, username=user, limit=size, offset=start
        )
        st.caption(names.plural(total, "matching entry", "matching entries"))
        pager.controls(pager.AUDIT, total, size=size, shown=len(rows), noun="Entries")
        st.dataframe(widgets.shown_cells(frame(rows)), hide_index=True, width="stretch")
