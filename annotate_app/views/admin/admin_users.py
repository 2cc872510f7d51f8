"""Users (admin): every account, create one, change a role, reset a password, deactivate or unlock."""

import pandas as pd
import streamlit as st

from annotate_app.services import users
from annotate_app.services.auth import Actor, Role
from annotate_app.services.types import UserInfo
from annotate_app.ui import auth, cache, errors, nav, state

ROLES = [r.value for r in Role]


def done(message: str) -> None:
    cache.clear_reads()
    errors.set_flash(state.ADMIN_FLASH, "success", message)


def _table(everyone: list[UserInfo]) -> None:
    rows = [
        {
            "username": u.username,
            "name": u.display_name,
            "role": u.role,
            "active": u.active,
            "locked until": u.locked_until,
            "last login": u.last_login_at,
            "created": u.created_at,
        }
        for u in everyone
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _add(actor: Actor) -> None:
    st.subheader("Add a user")
    with st.form(state.NEW_USER_FORM, clear_on_submit=True):
        cols = st.columns(4)
        name = cols[0].text_input("Username", key=state.NEW_USER_NAME)
        display = cols[1].text_input("Display name", key=state.NEW_USER_DISPLAY)
        password = cols[2].text_input(
            "Password", type="password", key=state.NEW_USER_PASSWORD, autocomplete="new-password"
        )
        role = cols[3].selectbox("Role", ROLES, key=state.NEW_USER_ROLE)
        if st.form_submit_button("Add user", type="primary"):
            with errors.shown() as outcome:
                made = users.create_user(
                    cache.database(), actor, name, password, role=role, display_name=display
                )
            if not outcome.failed:
                done(f"User {made.username} ({made.role}) added.")
                st.rerun()


def act(actor: Actor, who: str, what: str) -> None:
    ss = st.session_state
    db = cache.database()
    with errors.captured(state.ADMIN_FLASH) as outcome:
        if what == "role":
            info = users.set_role(db, actor, who, ss[state.USER_ROLE])
            message = f"{info.username} is now {info.role}."
        elif what == "password":
            info = users.reset_password(db, actor, who, ss.get(state.USER_PASSWORD) or "")
            message = f"Password of {info.username} reset; their sessions ended."
        elif what == "deactivate":
            message = f"{users.deactivate(db, actor, who).username} deactivated."
        elif what == "reactivate":
            message = f"{users.reactivate(db, actor, who).username} reactivated."
        else:
            message = f"{users.unlock(db, actor, who).username} unlocked."
    ss.pop(state.USER_PASSWORD, None)
    if not outcome.failed:
        done(message)


def _change(actor: Actor, everyone: list[UserInfo]) -> None:
    st.subheader("Change a user")
    names = [u.username for u in everyone]
    who = st.selectbox("User", names, key=state.USER_PICK)
    chosen = next(u for u in everyone if u.username == who)
    st.caption(
        f"{chosen.username}: {chosen.role}, {'active' if chosen.active else 'deactivated'}"
        + (f", locked until {chosen.locked_until:%H:%M:%S} UTC" if chosen.locked_until else "")
    )
    cols = st.columns(3)
    with cols[0]:
        st.selectbox("New role", ROLES, index=ROLES.index(chosen.role), key=state.USER_ROLE)
        st.button("Change role", on_click=act, args=(actor, who, "role"))
    with cols[1]:
        st.text_input("New password", type="password", key=state.USER_PASSWORD, autocomplete="new-password")
        st.button("Reset password", on_click=act, args=(actor, who, "password"))
    with cols[2]:
        toggle = "deactivate" if chosen.active else "reactivate"
        st.button(toggle.capitalize(), on_click=act, args=(actor, who, toggle))
        st.button("Unlock", on_click=act, args=(actor, who, "unlock"), disabled=chosen.locked_until is None)


def render() -> None:
    actor = auth.require(Role.ADMIN)
    nav.heading(nav.ADMIN_USERS)
    errors.flash(state.ADMIN_FLASH)
    with errors.shown() as outcome:
        everyone = users.list_users(cache.database(), actor)
    if outcome.failed:
        st.stop()
    _table(everyone)
    _add(actor)
    _change(actor, everyone)


if __name__ == "__main__":
    render()
