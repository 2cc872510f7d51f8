"""Data (admin): imports with a preview and line-numbered errors (labels made in another tool too: the
tool's format, grade and annotator maps, a preview of the labels per annotator and of the accounts the
import creates disabled), the project's imports with an Undo button
each (a confirm step names the project and the import), pooling (depth, runs, per-query budget),
pairs added or excluded by hand, and the pool itself, `widgets.PAGE_ROWS` pairs at a time (a pool may hold
100 000 pairs of one query). Uploads are limited to ``AppSettings.import_max_mb``."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from annotate_app.services import imports, pooling
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import InvalidInput
from annotate_app.services.import_kinds import IMPORT_KINDS, ImportKind
from annotate_app.services.types import ImportInfo, ImportPreview, LabelImportPreview
from annotate_app.ui import auth, cache, errors, nav, settings, state
from annotate_app.ui.components import widgets
from annotate_app.ui.escape import escape_markdown

HINT = "Import bigger files on the server with `qrelforge import KIND FILE` (it streams them)."
LABELS_DOCS = (
    "Formats, grade maps and annotator names: the README's section *Labels from other tools* "
    "(`qrelforge import labels --help`); examples of every format: `tests/fixtures/labels/`."
)


def done(message: str) -> None:
    cache.clear_reads()
    errors.set_flash(state.ADMIN_FLASH, "success", message)


def run_import(
    actor: Actor, project: str, kind: str, data: bytes, filename: str, name: str | None, chunks: bool
):
    info = IMPORT_KINDS[ImportKind(kind)]
    options: dict[str, Any] = {"name": name} if info.named else {}
    if info.chunks:
        options["chunks"] = chunks
    return getattr(imports, info.function)(
        cache.database(), actor, project, data, filename=filename, **options
    )


def _confirm(
    actor: Actor, project: str, kind: str, data: bytes, filename: str, preview: ImportPreview
) -> None:
    """A preview without problems: its sample, the name and chunk options, and the Import button."""
    st.success(escape_markdown(f"{filename}: {preview.n_rows} rows; columns {', '.join(preview.columns)}."))
    st.dataframe(widgets.shown_cells(pd.DataFrame(list(preview.sample))), hide_index=True, width="stretch")
    info = IMPORT_KINDS[ImportKind(kind)]
    name = (
        st.text_input("Name (default: the run's tag or the file name)", key=state.IMPORT_NAME)
        if info.named
        else None
    )
    chunks = info.chunks and st.checkbox("Document IDs are chunk IDs", key=state.IMPORT_CHUNKS)
    one, several = info.rows
    nav.confirm(f"Import {preview.n_rows} {one if preview.n_rows == 1 else several} into {project}.")
    if st.button("Import", type="primary"):
        with errors.shown() as outcome:
            report = run_import(actor, project, kind, data, filename, name or None, chunks)
        if not outcome.failed:
            done(f"Imported {report}.")
            st.rerun()


@dataclass(frozen=True)
class LabelOptions:
    """What the admin chose for a label import (the maps as typed)."""

    fmt: str
    annotator: str
    grade_map: str
    annotator_map: str

    def arguments(self) -> dict[str, Any]:
        """Keyword arguments of `imports.preview_labels` and `imports.import_labels`."""
        return {
            "fmt": self.fmt,
            "annotator": self.annotator or None,
            "grade_map": imports.grade_map_from_text(self.grade_map) or None,
            "annotators": imports.annotator_map_from_text(self.annotator_map) or None,
            "option_names": {"annotator": "the Annotator field", "grade_map": "the grade map"},
        }


def _label_options() -> LabelOptions:
    """The tool's format (each with its one-line description) and the options of `imports.import_labels`."""
    fmt = str(
        st.selectbox(
            "Format",
            list(imports.LABEL_FORMATS),
            format_func=lambda f: f"{f}: {imports.LABEL_FORMAT_HELP[f]}",
            key=state.IMPORT_LABEL_FORMAT,
        )
    )
    st.caption(LABELS_DOCS)
    cols = st.columns(3)
    annotator = cols[0].text_input(
        "Annotator (labels whose file names none; required for quepid)", key=state.IMPORT_LABEL_ANNOTATOR
    )
    grades = cols[1].text_area(
        "Grade map: LABEL=GRADE a line",
        placeholder="Highly relevant=3\nNot relevant=0",
        key=state.IMPORT_GRADE_MAP,
    )
    names = cols[2].text_area(
        "Annotator map: NAME=USER a line", placeholder="label-studio-3=alice", key=state.IMPORT_ANNOTATOR_MAP
    )
    return LabelOptions(fmt=fmt, annotator=annotator.strip(), grade_map=grades, annotator_map=names)


def _show_problems(filename: str, problems: Sequence[str]) -> None:
    st.error(escape_markdown(f"{filename}: {len(problems)} problem(s); nothing can be imported."))
    st.code("\n".join(problems[:100]), language=None)


def _labels(actor: Actor, project: str, options: LabelOptions, data: bytes, filename: str) -> None:
    """A label file's preview (every check of the import, nothing written): labels per annotator, the
    accounts it creates; then the Import button. A second click imports nothing more (every label is then
    unchanged)."""
    db = cache.database()
    with errors.shown():
        arguments = options.arguments()
        try:
            preview = imports.preview_labels(db, actor, project, data, filename=filename, **arguments)
        except InvalidInput as exc:
            if not exc.problems:
                raise
            _show_problems(filename, [str(p) for p in exc.problems])
            return
        _confirm_labels(preview, project)
        if st.button("Import", type="primary"):
            with errors.shown() as outcome:
                report = imports.import_labels(db, actor, project, data, filename=filename, **arguments)
            if not outcome.failed:
                done(f"Imported {report}.")
                st.rerun()


def _confirm_labels(preview: LabelImportPreview, project: str) -> None:
    """The preview as ``qrelforge import labels --dry-run`` prints it: headline, rows per annotator, the
    accounts the import creates."""
    n = preview.n_labels
    st.success(escape_markdown(preview.headline))
    st.dataframe(pd.DataFrame(preview.rows()), hide_index=True, width="stretch")
    if preview.accounts_note:
        st.info(escape_markdown(preview.accounts_note))
    nav.confirm(f"Import {n} label{'s' if n != 1 else ''} into {project}.")


def _kind_text(kind: ImportKind) -> str:
    """``A TREC run (qid Q0 docid rank score tag)``: the kind's help, capitalized."""
    text = IMPORT_KINDS[kind].help
    return text[:1].upper() + text[1:]


def _import(actor: Actor, project: str) -> None:
    st.subheader("Import")
    kind = str(st.selectbox("What", list(IMPORT_KINDS), format_func=_kind_text, key=state.IMPORT_KIND))
    options = _label_options() if kind == ImportKind.LABELS else None
    limit = settings.app_settings().import_max_mb
    upload = st.file_uploader(
        "File",
        key=state.per_item(state.IMPORT_FILE, kind),
        max_upload_size=limit,
        help=f"Up to {limit} MB; bigger files: `qrelforge import`, which streams them.",
    )
    if upload is None or not widgets.within_limit(upload, limit, HINT):
        return
    data = upload.getvalue()
    if options is not None:
        _labels(actor, project, options, data, upload.name)
        return
    with errors.shown():
        preview = imports.preview(cache.database(), actor, kind, data, filename=upload.name)
        if preview.problems:
            _show_problems(upload.name, preview.problems)
        else:
            _confirm(actor, project, kind, data, upload.name, preview)


UNDO_SHOWN = 50  # imports listed (newest first)


def _imports(actor: Actor, project: str) -> None:
    """The project's imports, newest first, each with an Undo button; the picked one's confirm step."""
    st.subheader("Imports")
    with errors.shown():
        listed = imports.list_imports(cache.database(), actor, project)
        if not listed:
            st.caption(f"No imports into {project} yet.")
            return
        if len(listed) > UNDO_SHOWN:
            st.caption(f"The newest {UNDO_SHOWN} of {len(listed)} imports (all: `qrelforge import list`).")
        picked = st.session_state.get(state.IMPORT_UNDO_PICK)
        for info in listed[:UNDO_SHOWN]:
            _import_row(info)
            if info.import_id == picked and info.undone_at is None:
                _confirm_undo(actor, project, info)


def _import_row(info: ImportInfo) -> None:
    cols = st.columns([5, 1])
    when = info.at.strftime("%Y-%m-%d %H:%M")
    state_text = f" · undone {info.undone_at:%Y-%m-%d %H:%M}" if info.undone_at else ""
    line = f"#{info.import_id} · {info.kind} {info.name} · {info.summary} · {info.by}, {when} UTC{state_text}"
    cols[0].markdown(escape_markdown(line))
    if cols[1].button(
        "Undo", key=state.per_item(state.IMPORT_UNDO, info.import_id), disabled=info.undone_at is not None
    ):
        st.session_state[state.IMPORT_UNDO_PICK] = info.import_id
        st.rerun()


def _confirm_undo(actor: Actor, project: str, info: ImportInfo) -> None:
    with st.container(border=True):
        nav.confirm(
            f"Undo import {info.import_id} ({info.kind} {info.name}) of {project}: remove what it added, "
            "in one transaction."
        )
        exclude = st.checkbox(
            "If labelled pairs depend on it, exclude those pairs instead (and keep what they need)",
            key=state.IMPORT_UNDO_EXCLUDE,
        )
        cols = st.columns(2)
        if cols[0].button("Confirm undo", type="primary", key=state.IMPORT_UNDO_CONFIRM):
            with errors.shown() as outcome:
                report = imports.undo_import(
                    cache.database(), actor, project, info.import_id, exclude_dependent=exclude
                )
            if not outcome.failed:
                st.session_state.pop(state.IMPORT_UNDO_PICK, None)
                done(f"{report}.")
                st.rerun()
        if cols[1].button("Cancel", key=state.IMPORT_UNDO_CANCEL):
            st.session_state.pop(state.IMPORT_UNDO_PICK, None)
            st.rerun()


def _pooling(actor: Actor, project: str) -> None:
    db = cache.database()
    st.subheader("Pooling")
    with errors.shown():
        runs = [name for name, _ in imports.list_runs(db, actor, project)]
    with st.form(state.POOL_FORM):
        cols = st.columns([1, 3, 1])
        depth = cols[0].number_input("Depth", 1, 10_000, 10, key=state.POOL_DEPTH)
        picked = cols[1].multiselect("Runs (none: every run)", runs, key=state.POOL_RUNS)
        budget = cols[2].number_input("Per-query budget (0: none)", 0, 100_000, 0, key=state.POOL_BUDGET)
        skip_prior = st.checkbox("Leave out pairs judged in imported prior qrels", key=state.POOL_SKIP_PRIOR)
        nav.confirm(f"Pool the runs of {project} into its judging queue.")
        if st.form_submit_button("Pool", type="primary"):
            with errors.shown() as outcome:
                report = pooling.pool(
                    db,
                    actor,
                    project,
                    depth=int(depth),
                    runs=picked or None,
                    budget=int(budget) or None,
                    skip_prior=skip_prior,
                )
            if not outcome.failed:
                done(f"{report}.")
                st.rerun()


def _apply_pair(actor: Actor, project: str, action: str, key: tuple[str, str], reason: str):
    db = cache.database()
    if action == "add":
        return pooling.add_pair(db, actor, project, *key, note=reason)
    if action == "exclude":
        return pooling.exclude_pair(db, actor, project, *key, reason=reason)
    return pooling.include_pair(db, actor, project, *key)


def _pairs_by_hand(actor: Actor, project: str) -> None:
    st.subheader("Pairs by hand")
    with st.form(state.PAIR_FORM, clear_on_submit=True):
        cols = st.columns([1, 1, 1, 3])
        query_id = cols[0].text_input("Query ID", key=state.PAIR_QUERY)
        doc_id = cols[1].text_input("Document ID", key=state.PAIR_DOC)
        action = cols[2].selectbox("Action", ["add", "exclude", "include"], key=state.PAIR_ACTION)
        reason = cols[3].text_input("Note / exclusion reason", key=state.PAIR_REASON)
        nav.confirm(f"Add, exclude or include a pair of {project}.")
        if st.form_submit_button("Apply"):
            with errors.shown() as outcome:
                info = _apply_pair(actor, project, action, (query_id.strip(), doc_id.strip()), reason)
            if not outcome.failed:
                done(f"Pair {info.query_id} · {info.doc_id}: {action} done.")
                st.rerun()


def _pool(actor: Actor, project: str) -> None:
    st.subheader("The pool")
    page_size = widgets.PAGE_ROWS
    offset = int(st.number_input("Pairs to skip", 0, 10_000_000, 0, step=page_size, key=state.PAIRS_PAGE))
    with errors.shown():
        shown = pooling.list_pairs(cache.database(), actor, project, limit=page_size, offset=offset)
        st.caption(
            f"Pairs {offset + 1}–{offset + len(shown)}, {page_size} at a time."
            if len(shown)
            else f"No pairs after the first {offset}."
        )
        st.dataframe(widgets.shown_cells(shown), hide_index=True, width="stretch")


def render() -> None:
    actor = auth.require(Role.ADMIN)
    project = widgets.project_or_stop()
    nav.heading(nav.ADMIN_DATA)
    errors.flash(state.ADMIN_FLASH)
    _import(actor, project)
    _imports(actor, project)
    _pooling(actor, project)
    _pairs_by_hand(actor, project)
    _pool(actor, project)


if __name__ == "__main__":
    render()
