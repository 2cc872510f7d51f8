"""Annotate: label the next pair of the chosen project (keys 0-3 pick a grade, Ctrl+Enter submits).

Light on purpose: no charts, no scipy; the card is a fragment. Guidelines render as safe Markdown
(`annotate_app.ui.components.guidelines`); corpus text and reasons are escaped.
"""

import streamlit as st

from annotate_app.ui import auth, cache, errors, nav
from annotate_app.ui.components import guidelines as rules
from annotate_app.ui.components import keyboard, labelling, widgets


def render() -> None:
    actor = auth.require()
    project = widgets.project_or_stop()
    nav.heading(nav.ANNOTATE)
    with errors.shown():
        guidelines = cache.guidelines(actor, project)
        with st.expander("Guidelines" + (f" (version {guidelines.version})" if guidelines else "")):
            if guidelines is None:
                st.caption("This project has no guidelines yet.")
            else:
                rules.show(guidelines.markdown)
    labelling.recheck_if_done()
    labelling.queue_card(actor, project)
    nav.link(nav.MY_LABELS, "Back / edit my recent labels")
    keyboard.install()


if __name__ == "__main__":
    render()
