"""Paging of lists read a page at a time from the services (Adjudicate's queue, My labels, the audit log): the
page asks `offset` which rows to read, then `controls` shows Previous / Next, the page number and a caption
such as "Rows 51–100 of 734".

The page number lives in ``st.session_state[key]`` (1-based); `offset` clamps it to the pages there are, so a
list that shrank (a disagreement adjudicated, a filter changed) shows its last page rather than nothing.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["ADJUDICATE", "MY_LABELS", "AUDIT", "offset", "controls", "reset", "page_count", "rows_caption"]

ADJUDICATE = "page_adjudicate"
MY_LABELS = "page_my_labels"
AUDIT = "page_audit"


def page_count(total: int, size: int) -> int:
    """How many pages of ``size`` rows ``total`` rows fill (at least 1)."""
    return max(1, -(-total // size))


def offset(key: str, total: int, *, size: int) -> int:
    """The first row of the current page of ``key`` (the page number clamped to ``total`` rows)."""
    ss = st.session_state
    page = ss.get(key, 1)
    if isinstance(page, bool) or not isinstance(page, int | float):
        page = 1
    page = min(max(int(page), 1), page_count(total, size))
    ss[key] = page
    return (page - 1) * size


def reset(key: str) -> None:
    """Back to page 1 (an ``on_change`` of the filters)."""
    st.session_state[key] = 1


def _move(key: str, step: int, pages: int) -> None:
    st.session_state[key] = min(max(int(st.session_state.get(key, 1)) + step, 1), pages)


def rows_caption(start: int, shown: int, total: int, *, noun: str = "Rows") -> str:
    """``"Rows 51–100 of 734"`` (``"No rows"`` when nothing is shown)."""
    if shown == 0:
        return f"No {noun.lower()}"
    return f"{noun} {start + 1}–{start + shown} of {total}"


def controls(key: str, total: int, *, size: int, shown: int, noun: str = "Rows") -> None:
    """The caption, and Previous / Next with the page number when ``total`` rows need more than one page.
    Call `offset` first in the same run."""
    pages = page_count(total, size)
    page = int(st.session_state.get(key, 1))
    if pages > 1:
        left, right, number, _ = st.columns([1, 1, 1, 3], vertical_alignment="bottom")
        left.button(
            "Previous page", key=f"{key}_prev", disabled=page <= 1, on_click=_move, args=(key, -1, pages)
        )
        right.button(
            "Next page", key=f"{key}_next", disabled=page >= pages, on_click=_move, args=(key, 1, pages)
        )
        number.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key=key)
    st.caption(rows_caption((page - 1) * size, shown, total, noun=noun))
