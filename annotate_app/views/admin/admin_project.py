"""Project (admin): create a project; the chosen project's settings (grade scale, N, statistic, threshold,
relevance cut-off, reason length, the gold rules ...), its versioned guidelines and its members. The
guidelines preview renders Markdown as annotators see it: never raw HTML nor images
(`annotate_app.ui.components.guidelines`)."""

import numbers

import pandas as pd
import streamlit as st

from annotate_app.services import projects, users
from annotate_app.services.auth import Actor, Role
from annotate_app.services.types import EvidenceMode, ProjectSettings
from annotate_app.ui import auth, cache, errors, nav, state
from annotate_app.ui.components import guidelines as rules
from annotate_app.ui.components import names

STATISTICS = ["cohen", "fleiss", "krippendorff"]
MODES = ["binary", "weighted"]
EVIDENCE = [m.value for m in EvidenceMode]
WEIGHTS = ["linear", "quadratic"]


def done(message: str) -> None:
    cache.clear_reads()
    errors.set_flash(state.ADMIN_FLASH, "success", message)


def _create(actor: Actor) -> None:
    with (
        st.expander("Create a project", expanded=not st.session_state.get(state.PROJECT)),
        st.form(state.NEW_PROJECT_FORM, clear_on_submit=True),
    ):
        name = st.text_input("Name (a-z, 0-9, _ and -)", key=state.NEW_PROJECT_NAME)
        title = st.text_input("Title", key=state.NEW_PROJECT_TITLE)
        if st.form_submit_button("Create project", type="primary"):
            with errors.shown() as outcome:
                made = projects.create_project(cache.database(), actor, name, title=title)
            if not outcome.failed:
                done(f"Project {made.name} created; pick it in the sidebar.")
                st.rerun()


def scale_rows(frame: pd.DataFrame) -> tuple:
    """The edited grade scale as (grade, label) pairs; a grade that is not a whole number is passed on as is,
    so the service names it in its error."""
    out = []
    for grade, label in frame.dropna(how="all")[["grade", "label"]].itertuples(index=False):
        whole = isinstance(grade, numbers.Real) and grade == grade and float(grade).is_integer()
        out.append((int(grade) if whole else grade, "" if label is None or label != label else str(label)))
    return tuple(out)


def _settings_fields(current: ProjectSettings) -> dict:
    """The settings form's widgets; returns the wanted settings."""
    scale = st.data_editor(
        pd.DataFrame(current.grade_scale, columns=["grade", "label"]),
        num_rows="dynamic",
        key=state.per_item("setting", "grade_scale"),
        hide_index=True,
    )
    cols = st.columns(3)
    n = cols[0].number_input("Annotators per pair (N)", 1, 50, current.annotators_per_pair)
    statistic = cols[1].selectbox(
        "Gate statistic",
        STATISTICS,
        index=STATISTICS.index(current.statistic),
        format_func=names.statistic_name,
    )
    threshold = cols[2].number_input(
        "Threshold", -1.0, 1.0, float(current.threshold), step=0.05, format="%.3f"
    )
    mode = cols[0].selectbox("Agreement mode", MODES, index=MODES.index(current.agreement_mode))
    weights = cols[1].selectbox("Weights (weighted mode)", WEIGHTS, index=WEIGHTS.index(current.weights))
    cutoff = cols[2].number_input(
        "Relevance cut-off (grade ≥ cut-off is relevant)", -1000, 1000, current.relevance_cutoff
    )
    reason = cols[0].number_input("Minimum reason length", 0, 1000, current.min_reason_length)
    timeout = cols[1].number_input("Claim timeout (minutes)", 1, 7 * 24 * 60, current.claim_timeout_minutes)
    evidence = cols[2].selectbox(
        "Evidence passages",
        EVIDENCE,
        index=EVIDENCE.index(current.evidence),
        help="optional: annotators may mark passages; required: for grades at or above the cut-off.",
    )
    passages = cols[0].number_input(
        "Passage threshold (unitizing α a release needs; empty: none)",
        -1.0,
        1.0,
        value=current.passage_threshold,
        step=0.05,
        format="%.3f",
    )
    gold = _gold_rules(current)
    return gold | {
        "grade_scale": scale_rows(scale),
        "annotators_per_pair": int(n),
        "statistic": statistic,
        "threshold": float(threshold),
        "agreement_mode": mode,
        "weights": weights,
        "relevance_cutoff": int(cutoff),
        "min_reason_length": int(reason),
        "claim_timeout_minutes": int(timeout),
        "evidence": evidence,
        "passage_threshold": None if passages is None else float(passages),
    }


def _gold_rules(current: ProjectSettings) -> dict:
    """The gold rules' widgets (qualification, pause, training feedback); 0 pairs: the rule is off."""
    st.markdown("**Gold rules**")
    cols = st.columns(2)
    qualify = cols[0].number_input(
        "Qualification: gold pairs a new annotator must pass (0: off)", 0, 10_000, current.qualify_pairs or 0
    )
    qualify_bar = cols[1].number_input(
        "Qualification: exact accuracy needed", 0.0, 1.0, float(current.qualify_accuracy), step=0.05
    )
    pause = cols[0].number_input(
        "Pause: over the last gold pairs (0: off)", 0, 10_000, current.pause_pairs or 0
    )
    pause_bar = cols[1].number_input(
        "Pause: below this exact accuracy", 0.0, 1.0, float(current.pause_accuracy), step=0.05
    )
    feedback = st.checkbox(
        "Training feedback: show the expected grade and explanation after a gold pair is saved",
        value=current.gold_feedback,
    )
    return {
        "qualify_pairs": int(qualify) or None,
        "qualify_accuracy": float(qualify_bar),
        "pause_pairs": int(pause) or None,
        "pause_accuracy": float(pause_bar),
        "gold_feedback": bool(feedback),
    }


def _settings(actor: Actor, project: str, name: str, current: ProjectSettings) -> None:
    st.subheader(f"Settings of {name}")
    with st.form(state.SETTINGS_FORM):
        wanted = _settings_fields(current)
        nav.confirm(f"Save the settings of {project}.")
        if st.form_submit_button("Save settings", type="primary"):
            changes = {k: v for k, v in wanted.items() if v != getattr(current, k)}
            with errors.shown() as outcome:
                if changes:
                    projects.update_settings(cache.database(), actor, project, **changes)
            if not outcome.failed:
                done(f"Settings saved ({', '.join(changes) or 'nothing changed'}).")
                st.rerun()


def _guidelines(actor: Actor, project: str) -> None:
    st.subheader("Guidelines")
    latest = cache.guidelines(actor, project)
    st.caption(
        f"Version {latest.version} by {latest.author}, {latest.created_at:%Y-%m-%d %H:%M} UTC; saving "
        "adds a new version (older ones are kept)."
        if latest
        else "No guidelines yet."
    )
    with st.form(state.GUIDELINES_FORM):
        text = st.text_area(
            "Guidelines (Markdown)",
            value=latest.markdown if latest else "",
            height=260,
            key=state.per_item("guidelines", project),
        )
        nav.confirm(f"Save a new version of {project}'s guidelines.")
        if st.form_submit_button("Save a new version", type="primary"):
            with errors.shown() as outcome:
                version = projects.set_guidelines(cache.database(), actor, project, text)
            if not outcome.failed:
                done(f"Guidelines version {version} saved.")
                st.rerun()
    with st.expander("Preview"):
        rules.show(latest.markdown if latest else "")


def _members(actor: Actor, project: str) -> None:
    db = cache.database()
    st.subheader("Members")
    with errors.shown():
        members = projects.list_members(db, actor, project)
        st.dataframe(
            pd.DataFrame([{"user": m.username, "role": m.role, "quota": m.quota} for m in members]),
            hide_index=True,
            width="stretch",
        )
        people = [u.username for u in users.list_users(db, actor) if u.active]
    with st.form(state.MEMBERS_FORM, clear_on_submit=True):
        cols = st.columns([3, 1])
        picked = cols[0].multiselect("Add or update annotators", people, key=state.MEMBERS_PICK)
        quota = cols[1].number_input("Quota (0: none)", 0, 10_000_000, 0, key=state.MEMBERS_QUOTA)
        nav.confirm(f"Assign the picked annotators to {project}.")
        if st.form_submit_button("Assign"):
            with errors.shown() as outcome:
                projects.assign(db, actor, project, picked, quota=int(quota) or None)
            if not outcome.failed:
                done(f"Assigned {', '.join(picked)} to {project}.")
                st.rerun()
    if members:
        cols = st.columns([3, 1])
        gone = cols[0].selectbox(
            f"Remove a member from {project}", [m.username for m in members], key=state.MEMBER_REMOVE
        )
        if cols[1].button("Remove"):
            with errors.shown() as outcome:
                projects.unassign(db, actor, project, gone)
            if not outcome.failed:
                done(f"{gone} removed from {project} (their labels stay).")
                st.rerun()


def render() -> None:
    actor = auth.require(Role.ADMIN)
    nav.heading(nav.ADMIN_PROJECT)
    errors.flash(state.ADMIN_FLASH)
    _create(actor)
    project = st.session_state.get(state.PROJECT)
    if not project:
        st.stop()
    with errors.shown() as outcome:
        info = projects.get_project(cache.database(), actor, project)
    if outcome.failed:
        st.stop()
    _settings(actor, project, info.name, info.settings)
    _guidelines(actor, project)
    _members(actor, project)


if __name__ == "__main__":
    render()
