"""Small shared widgets: the project guard, grade buttons, the highlighted pair, upload size checks, paged
tables, and how much of a stored text a page shows.

User text goes through `annotate_app.ui.escape`. Stored text is shown cut (`shown`, `shown_cells`, at most
`SHOWN_TEXT`, `SHOWN_CELL`, `SHOWN_TITLE`, `SHOWN_DOCUMENT`), the rest named by its length.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from annotate_app.services.inputs import MAX_REASON, cut
from annotate_app.ui import state
from annotate_app.ui.components import evidence_text, keyboard
from annotate_app.ui.components.highlight import to_markdown
from annotate_app.ui.escape import escape_markdown, escape_name

__all__ = [
    "project_or_stop",
    "grade_label",
    "grade_buttons",
    "show_pair",
    "text_block",
    "shortcut_for",
    "MIB",
    "within_limit",
    "PAGE_ROWS",
    "paged_dataframe",
    "shown",
    "shown_cells",
    "SHOWN_TEXT",
    "SHOWN_CELL",
    "SHOWN_TITLE",
    "SHOWN_DOCUMENT",
]

MIB = 1024 * 1024
PAGE_ROWS = 200
SHOWN_TEXT = MAX_REASON  # a reason, a note: the longest reason the app accepts is shown whole
SHOWN_CELL = 1_000  # a text in a table cell (a page shows up to a few hundred rows)
SHOWN_TITLE = 200  # a text in a one-line title
SHOWN_DOCUMENT = 200_000  # a document's title or text (a long article is ~50,000 characters)


def shown(text: str, limit: int = SHOWN_TEXT) -> str:
    """What a page shows of a stored text: ``text``, cut to ``limit`` characters with a note of its length
    (`services.inputs.cut`).

    >>> shown("x" * 15_000_000)[-40:]
    'xxxxxxxxxx… (cut: 15,000,000 characters)'
    """
    return cut(text, limit)


def shown_cells(frame: pd.DataFrame, limit: int = SHOWN_CELL) -> pd.DataFrame:
    """A table (DataFrame) with every text cell `shown` in at most ``limit`` characters."""
    return frame.map(lambda value: cut(value, limit) if isinstance(value, str) else value)


def project_or_stop() -> str:
    """The chosen project's name, or a notice and stop when there is none."""
    project = st.session_state.get(state.PROJECT)
    if not project:
        st.info("No project to work on: ask an admin to create one and add you to it.")
        st.stop()
    return project


def grade_label(scale: Sequence[tuple[int, str]], grade: int | None) -> str:
    """``"2 · Partly answers"`` (the bare number for a grade not on the scale; "" for None)."""
    if grade is None:
        return ""
    names = dict(scale)
    return f"{grade} · {names[grade]}" if grade in names else str(grade)


def shortcut_for(grade: int) -> str | None:
    """The keyboard shortcut of a grade button: its digit when the grade is 0-9."""
    return str(grade) if 0 <= grade <= 9 else None


def grade_buttons(
    scale: Sequence[tuple[int, str]],
    chosen: int | None,
    key: Callable[[int], str],
    on_pick: Callable[[int], None],
) -> None:
    """One button per grade (keys 0-9 press them, and move the focus to the reason box: see
    `annotate_app.ui.components.keyboard`); the chosen one is highlighted."""
    columns = st.container(key=keyboard.GRADES).columns(len(scale))
    for column, (grade, label) in zip(columns, scale, strict=True):
        column.button(
            escape_name(f"{grade} · {label}"),
            key=key(grade),
            shortcut=shortcut_for(grade),
            width="stretch",
            type="primary" if grade == chosen else "secondary",
            on_click=on_pick,
            args=(grade,),
        )


def text_block(text: str) -> None:
    """User-written text (a reason, a note) shown as inert Markdown, cut to `SHOWN_TEXT` characters."""
    st.markdown(escape_markdown(shown(text)) if text else "_(empty)_")


def show_pair(
    query_id: str,
    query_text: str,
    doc_id: str,
    title: str,
    text: str,
    *,
    chunk: tuple[int, int] | None = None,
    card: tuple[str, int] | None = None,
    below: int = 0,
) -> None:
    """The query and the document (title and text), query terms highlighted, everything escaped. A long
    document scrolls in a box of fixed height (`keyboard.document_box`), so the form below stays in view.
    ``chunk``: the ``[start, end)`` of the text a chunk-level run retrieved, shaded
    (`evidence_text.CHUNK`). ``card``: a labelling card's name (see `keyboard.open_at`) and the character of
    ``text`` its box opens at. ``below``: the px of controls shown under the box (`keyboard.document_box`)."""
    st.caption(f"Query {escape_markdown(query_id)} · document {escape_markdown(doc_id)}")
    query_text, title, text = shown(query_text), shown(title), shown(text, SHOWN_DOCUMENT)
    st.markdown(f"**Query:** {escape_markdown(query_text)}")
    with keyboard.document_box(text, below=below):
        if title:
            st.markdown(f"#### {to_markdown(title, query_text)}")
        body = st.container(key=keyboard.TEXT if card is not None else None)
        if chunk is None:
            body.markdown(to_markdown(text, query_text))
        else:
            body.markdown(evidence_text.to_markdown(text, query_text, [], chunk=chunk))
        if card is not None:
            keyboard.open_at(card[0], text, card[1])


def within_limit(upload, limit_mb: int, hint: str) -> bool:
    """True when ``upload`` (an UploadedFile) has at most ``limit_mb`` MiB; else False and an error naming the
    limit (the browser refuses bigger files already; this catches a client that skips its check)."""
    if upload.size <= limit_mb * MIB:
        return True
    st.error(
        escape_markdown(
            f"{upload.name} is {upload.size / MIB:.1f} MB: files here are limited to {limit_mb} MB. {hint}"
        )
    )
    return False


def paged_dataframe(frame, key: str, *, rows: int = PAGE_ROWS) -> None:
    """``frame`` (a DataFrame) at most ``rows`` rows at a time, with a page number when it has more: the
    browser never receives a huge table at once. The page widget's key holds the page count, so a table that
    shrinks starts again at page 1."""
    total = len(frame)
    start = 0
    if total > rows:
        pages = -(-total // rows)
        page = int(st.number_input(f"Page (of {pages})", 1, pages, 1, key=state.per_item(key, pages)))
        start = (page - 1) * rows
        st.caption(f"Rows {start + 1}–{min(start + rows, total)} of {total}")
    st.dataframe(frame.iloc[start : start + rows], hide_index=True, width="stretch")
