"""Log in: username and password (throttled by the service), or single sign-on when it is configured."""

import streamlit as st

from annotate_app.ui import auth, errors, state
from annotate_app.ui.escape import escape_markdown


def _form() -> None:
    with st.form(state.LOGIN_FORM, border=True, width=420):
        st.subheader("Log in")
        username = st.text_input("Username", key=state.LOGIN_USERNAME, autocomplete="username")
        password = st.text_input(
            "Password", type="password", key=state.LOGIN_PASSWORD, autocomplete="current-password"
        )
        submitted = st.form_submit_button("Log in", type="primary")
    if submitted:
        with errors.shown() as outcome:
            auth.login(username, password)
        if not outcome.failed:
            st.session_state.pop(state.LOGIN_PASSWORD, None)
            st.rerun()


def render() -> None:
    st.title("QrelForge")
    st.caption("Relevance judgments with measured agreement.")
    notice = st.session_state.pop(state.LOGOUT_NOTICE, None)
    if notice:
        st.info(escape_markdown(notice))
    _form()
    if auth.sso_configured() and st.button("Log in with single sign-on"):
        st.login()


if __name__ == "__main__":
    render()
