"""QrelForge's Streamlit entry point: it only routes (page config, the database check, the current user, the
project named by the URL, the navigation), inside `annotate_app.ui.errors.guarded` (no traceback).

Run it with ``make run`` or ``streamlit run annotate_app/streamlit_app.py``; pages live in ``views/`` (one
folder per role), shared code in ``ui/`` (see `annotate_app.ui.nav` for the page registry and
`annotate_app.ui.auth` for the login).
"""

import streamlit as st

from annotate_app.ui import auth, cache, errors, nav
from annotate_app.ui.components import layout

st.set_page_config(page_title="QrelForge", page_icon="🏷️", layout="wide")
layout.style()
with errors.guarded():  # a busy, unreachable or full database: one message, on every page, logged in or not
    try:
        cache.database()
    except RuntimeError as exc:
        st.error(str(exc))
        st.stop()
    actor = auth.current_actor()
    page = st.navigation(nav.pages(actor), position="hidden")
    if actor is None:
        auth.cookie_script()
    else:
        choice = nav.choose_project(actor)
        nav.sidebar(actor)
        nav.project_gate(actor, page, choice)
    page.run()
