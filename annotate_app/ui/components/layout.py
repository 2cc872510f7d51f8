"""The app's few layout rules that Streamlit has no option for, as one ``<style>`` block (`style`, called once
per run by the entry point; a style-only ``st.html`` takes no space on the page).

In a column, Streamlit keeps a button on one line and cuts its label with an ellipsis ("0 · Not r…"), and a
shortcut hint can take the whole button ("Ctrl + Enter" instead of "Submit"). In the main area a button's
label wraps instead, and its shortcut hint goes under the label when both do not fit, so a narrow window
(800 px with the sidebar open) shows every label whole.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["CSS", "style"]

CSS = """
[data-testid="stMain"] button { height: auto; min-height: 2.5rem; }
[data-testid="stMain"] button span[data-has-shortcut="true"] {
  flex-wrap: wrap; justify-content: center; row-gap: 0.15rem; max-width: 100%;
}
[data-testid="stMain"] button .stMarkdownEllipsis,
[data-testid="stMain"] button .stMarkdownEllipsis p {
  white-space: normal; overflow: visible; text-overflow: clip; overflow-wrap: break-word;
}
[data-testid="stMain"] button kbd { white-space: normal; max-width: 100%; text-align: center; }
"""


def style() -> None:
    """Add the app's `CSS` to the page."""
    st.html(f"<style>{CSS}</style>")
