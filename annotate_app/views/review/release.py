"""Release (reviewer): what blocks a release, creating one (a justification is required below the agreement
threshold), past releases with their agreement figures and hashes, and downloads (TREC, BEIR TSV, JSONL).

``st.table`` renders its cells as Markdown: the text cells (justification, names) are shown escaped (the
table's display values), so a justification reads exactly as typed."""

import functools

import pandas as pd
import streamlit as st

from annotate_app.services import export, gate
from annotate_app.services.auth import Actor, Role
from annotate_app.services.releases import MIN_JUSTIFICATION
from annotate_app.services.types import Blockers, ReleaseInfo
from annotate_app.ui import auth, cache, errors, review_cache, state
from annotate_app.ui.components import release_form, widgets
from annotate_app.ui.escape import escape_markdown

FORMATS = (
    ("trec", "TREC qrels", "qrels", "text/plain"),
    ("beir", "BEIR TSV", "beir.tsv", "text/tab-separated-values"),
    ("jsonl", "JSONL with reasons", "jsonl", "application/jsonl"),
)


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
    value = "undefined" if r.agreement_value is None else f"{r.agreement_value:.3f}"
    return {
        "version": r.version,
        "created by": r.created_by,
        "created at": f"{r.created_at:%Y-%m-%d %H:%M} UTC",
        "statistic": r.statistic,
        "agreement": value,
        "threshold": f"{r.threshold:.3f}",
        "qrels": r.n_qrels,
        "kinds": ", ".join(f"{k} {v}" for k, v in r.counts.items() if v),
        "annotators": ", ".join(r.annotators),
        "content sha256": r.content_hash[:16] + "…",
        "corpus sha256": r.corpus_hash[:16] + "…",
        "justification": r.justification or "",
    }


def downloads(actor: Actor, project: str, version: int) -> None:
    cols = st.columns([1, 2, 2, 2, 3])
    cols[0].markdown(f"**v{version}**")
    for col, (fmt, label, suffix, mime) in zip(cols[1:], FORMATS, strict=False):
        data = functools.partial(export.export_release, cache.database(), actor, project, version, format=fmt)
        col.download_button(
            label,
            data,
            file_name=f"{project}-v{version}.{suffix}",
            mime=mime,
            key=state.per_item(f"download_{fmt}", version),
            on_click="ignore",
        )


def _past(actor: Actor, project: str) -> None:
    st.subheader("Past releases")
    with errors.shown():
        past = list(reversed(review_cache.list_releases(actor, project)))
        if not past:
            st.caption("No release yet.")
            return
        table = pd.DataFrame([row(r) for r in past]).set_index("version")
        st.table(table.style.format(lambda value: escape_markdown(str(value))))
        for r in past:
            downloads(actor, project, r.version)


def render() -> None:
    actor = auth.require(Role.REVIEWER)
    project = widgets.project_or_stop()
    st.title("Release")
    errors.flash(state.RELEASE_FLASH)
    with errors.shown() as outcome:
        block = gate.blockers(cache.database(), actor, project)
    if outcome.failed:
        st.stop()
    _blockers(block)
    release_form.create_form(actor, project, block)
    _past(actor, project)


if __name__ == "__main__":
    render()
