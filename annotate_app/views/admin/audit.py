"""Audit log (admin): who did what, when; newest first, filtered by project and action."""

import json

import pandas as pd
import streamlit as st

from annotate_app.services import audit
from annotate_app.services.auth import Role
from annotate_app.services.types import AuditInfo
from annotate_app.ui import auth, cache, errors, nav, state
from annotate_app.ui.components import names


def _frame(rows: list[AuditInfo]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "id": r.id,
                "at": r.at,
                "actor": r.actor,
                "action": r.action,
                "target": r.target,
                "details": json.dumps(r.details, ensure_ascii=False, default=str),
            }
            for r in rows
        ]
    )


def render() -> None:
    actor = auth.require(Role.ADMIN)
    nav.heading(nav.AUDIT)
    cols = st.columns(3)
    project = st.session_state.get(state.PROJECT)
    scopes = ["all projects", f"project {project}"] if project else ["all projects"]
    scope = cols[0].selectbox("Scope", scopes, key=state.AUDIT_SCOPE)
    action = (
        cols[1].text_input("Action (exact, e.g. release_created)", key=state.AUDIT_ACTION).strip() or None
    )
    limit = int(cols[2].number_input("Entries", 10, 10_000, 200, step=50, key=state.AUDIT_LIMIT))
    with errors.shown():
        rows = audit.audit_log(
            cache.database(),
            actor,
            project=None if scope == "all projects" else project,
            action=action,
            limit=limit,
        )
        frame = _frame(rows)
        st.caption(names.plural(len(rows), "entry", "entries"))
        st.dataframe(frame, hide_index=True, width="stretch")


if __name__ == "__main__":
    render()
