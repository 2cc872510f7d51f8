"""QrelForge's Streamlit entry point: it only routes (page config, current user, navigation).

Run it with ``make run`` or ``streamlit run annotate_app/streamlit_app.py``; pages live in ``views/``, shared
widgets in ``ui/`` (see `annotate_app.ui.nav` for the page map and `annotate_app.ui.auth` for the login).
"""

import streamlit as st

from annotate_app.ui import auth, nav, resources

st.set_page_config(page_title="QrelForge", page_icon="🏷️", layout="wide")
try:
    resources.database()
except RuntimeError as exc:
    st.error(str(exc))
    st.stop()
actor = auth.current_actor()
registered = nav.pages(actor)
page = st.navigation(list(registered.values()), position="hidden")
if actor is None:
    auth.cookie_script()
else:
    nav.sidebar(actor, registered)
page.run()
