"""Release (reviewer): what blocks a release, creating one (a justification is required below the agreement
threshold), past releases with their agreement figures and notes, and each release's details (note,
justification, hashes) with its downloads (one a `ReleaseFormat`).

``st.table`` renders its cells as Markdown: the text cells (note, justification, names) are shown escaped (the
table's display values), so a note or a justification reads exactly as typed."""

import functools

import pandas as pd
import streamlit as st

from annotate_app.services import export, gate
from annotate_app.services.aggregations import Aggregation
from annotate_app.services.auth import Actor, Role
from annotate_app.services.release_formats import ReleaseFormat
from annotate_app.services.releases import MIN_JUSTIFICATION
from annotate_app.services.types import Blockers, ReleaseInfo
from annotate_app.ui import auth, cache, errors, nav, review_cache, state
from annotate_app.ui.components import names, release_form, widgets
from annotate_app.ui.escape import escape_markdown


def _blockers(block: Blockers) -> None:
    st.subheader("What blocks a release")
    for message in block.hard:
        st.error(message)
    if block.below_threshold:
        st.warning(
            f"{block.agreement_message}: a release needs a written justification (at least "
            f"{MIN_JUSTIFICATION} characters)."
        )
    if block.ok:
        st.success("Nothing blocks a release.")


def row(r: ReleaseInfo) -> dict:
    """A past release in the list: the figures one compares releases by, its note and justification."""
    value = "undefined" if r.agreement_value is None else f"{r.agreement_value:.3f}"
    return {
        "version": r.version,
        "created at": f"{r.created_at:%Y-%m-%d %H:%M} UTC",
        "created by": r.created_by,
        "statistic": names.statistic_name(r.statistic),
        "agreement": value,
        "threshold": f"{r.threshold:.3f}",
        "qrels": r.n_qrels,
        "note": widgets.shown(r.note or "", widgets.SHOWN_CELL),
        "justification": widgets.shown(r.justification or "", widgets.SHOWN_CELL),
    }


def details(r: ReleaseInfo) -> dict:
    """Everything a release records, for its details."""
    return {
        "note": widgets.shown(r.note or "—"),
        "justification": widgets.shown(r.justification or "—"),
        "agreement band": str(r.agreement.get("band", "")) or "—",
        "kinds": ", ".join(f"{k} {v}" for k, v in r.counts.items() if v) or "—",
        "qrels by source": ", ".join(f"{v} {k}" for k, v in sorted(r.sources.items())) or "—",
        "aggregation": _aggregation(r.aggregation),
        "annotators": ", ".join(r.annotators) or "—",
        "guidelines version": "—" if r.guidelines_version is None else str(r.guidelines_version),
        "content sha256": r.content_hash,
        "corpus sha256": r.corpus_hash,
    }


def _aggregation(record: dict) -> str:
    """How the release's labels became grades: the aggregation's label, its parameters, and how many grades
    differ from the vote under a model."""
    name = Aggregation(record.get("name", Aggregation.MAJORITY))
    parameters = ", ".join(f"{k}={v}" for k, v in sorted(record.get("parameters", {}).items()))
    changed = record.get("changed")
    return (
        name.label
        + (f" ({parameters})" if parameters else "")
        + ("" if changed is None else f"; {changed} differ from the vote")
    )


def downloads(actor: Actor, project: str, version: int) -> None:
    """The release's files, side by side while they fit (a row that wraps, never a cut label)."""
    with st.container(horizontal=True, gap="small"):
        for fmt in ReleaseFormat:
            data = functools.partial(
                export.export_release, cache.database(), actor, project, version, format=fmt.value
            )
            st.download_button(
                fmt.label,
                data,
                file_name=f"{project}-v{version}.{fmt.suffix}",
                mime=fmt.mime,
                key=state.per_item(f"download_{fmt.value}", version),
                on_click="ignore",
                icon=":material/download:",
                width="content",
            )


def _details(actor: Actor, project: str, r: ReleaseInfo, *, newest: bool) -> None:
    """A release's details and downloads (the newest one open)."""
    note = widgets.shown(r.note or "", widgets.SHOWN_TITLE)
    title = f"v{r.version} · {r.created_at:%Y-%m-%d %H:%M} UTC" + (f" · {note}" if note else "")
    with st.expander(escape_markdown(title), expanded=newest):
        frame = pd.DataFrame({"": list(details(r).values())}, index=list(details(r)))
        st.table(frame.style.format(lambda value: escape_markdown(str(value))), hide_header=True)
        downloads(actor, project, r.version)


def _past(actor: Actor, project: str) -> None:
    st.subheader("Past releases")
    with errors.shown():
        past = list(reversed(review_cache.list_releases(actor, project)))
        if not past:
            st.caption("No release yet.")
            return
        table = pd.DataFrame([row(r) for r in past]).set_index("version")
        st.table(table.style.format(lambda value: escape_markdown(str(value))))
        st.caption("Details and downloads of each release:")
        for r in past:
            _details(actor, project, r, newest=r is past[0])


def render() -> None:
    actor = auth.require(Role.REVIEWER)
    project = widgets.project_or_stop()
    nav.heading(nav.RELEASE)
    errors.flash(state.RELEASE_FLASH)
    with errors.shown() as outcome:
        block = gate.blockers(cache.database(), actor, project)
    if outcome.failed:
        st.stop()
    _blockers(block)
    nav.confirm(f"Create a release of {project}.")
    release_form.create_form(actor, project, block)
    _past(actor, project)


if __name__ == "__main__":
    render()
