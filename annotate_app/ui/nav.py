"""The page map and the sidebar.

Logged out, the only page is the login page, served at the root and at every page's URL (a deep link shows the
login form, then its page once logged in). Logged in, every page is registered (hidden navigation), so a URL
to a page the role may not use still resolves and its guard says "Not allowed"; the sidebar links only the
pages the role may use, with the project picker, the user badge and "Log out". The default page (the app's
root URL) switches to the role's landing page, so that every page keeps its own URL (Streamlit serves the
default page at the root only: ``/annotate`` would be "Page not found" for an annotator if Annotate were it).

=================== ================ =========== ===========================================================
page                url              role        what
=================== ================ =========== ===========================================================
Annotate            /annotate        annotator   judge the next pair (keys 0-3, Ctrl+Enter)
My labels           /my_labels       annotator   one's own recent labels; edit one (adds a version)
Agreement           /agreement       reviewer    gate statistic, kappa heatmap, per query, confusion
Adjudicate          /adjudicate      reviewer    disagreements worst first, final grade and reason
Release             /release         reviewer    blockers, create a release, past releases, downloads
Score               /score           reviewer    score runs on a release, compare, coverage, BM25, fusion
Users               /admin_users     admin       users and roles
Project             /admin_project   admin       projects, settings, guidelines, members
Data                /admin_data      admin       imports with preview, pooling, pairs
Audit log           /audit           admin       who did what, when
=================== ================ =========== ===========================================================

The page modules live in ``views/``, not ``pages/``: Streamlit would treat a ``pages/`` folder next to the
entry point as a legacy pages directory and run a deep-linked page without the router.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from annotate_app.services.auth import Actor, Role
from annotate_app.ui import auth, resources, state

__all__ = ["PAGES", "PageSpec", "pages", "sidebar", "LOGIN", "HOME"]

HOME = "home"


@dataclass(frozen=True)
class PageSpec:
    path: str
    title: str
    role: Role
    section: str


LOGIN = PageSpec("views/login.py", "Log in", Role.ANNOTATOR, "")
PAGES = (
    PageSpec("views/annotate.py", "Annotate", Role.ANNOTATOR, "Judge"),
    PageSpec("views/my_labels.py", "My labels", Role.ANNOTATOR, "Judge"),
    PageSpec("views/agreement.py", "Agreement", Role.REVIEWER, "Review"),
    PageSpec("views/adjudicate.py", "Adjudicate", Role.REVIEWER, "Review"),
    PageSpec("views/release.py", "Release", Role.REVIEWER, "Review"),
    PageSpec("views/score.py", "Score", Role.REVIEWER, "Review"),
    PageSpec("views/admin_users.py", "Users", Role.ADMIN, "Admin"),
    PageSpec("views/admin_project.py", "Project", Role.ADMIN, "Admin"),
    PageSpec("views/admin_data.py", "Data", Role.ADMIN, "Admin"),
    PageSpec("views/audit.py", "Audit log", Role.ADMIN, "Admin"),
)


def _landing(actor: Actor) -> str:
    return "views/annotate.py" if actor.role == Role.ANNOTATOR else "views/agreement.py"


def pages(actor: Actor | None) -> dict[str, st.Page]:
    """path → st.Page of every page the session registers, and under `HOME` the default page (the root URL).

    Logged in: every page, and a default page that switches to the role's landing page. Logged out: the login
    page, under the root URL and under every page's URL, so a deep link shows the login form (not "Page not
    found") and keeps its URL; a page's script hash is its URL, so once the login succeeds the same URL runs
    the page itself."""
    if actor is None:
        login = {p.path: st.Page(LOGIN.path, title=LOGIN.title, url_path=_url(p.path)) for p in PAGES}
        return {**login, HOME: st.Page(LOGIN.path, title=LOGIN.title, url_path=HOME, default=True)}
    registered = {p.path: st.Page(p.path, title=p.title) for p in PAGES}
    landing = registered[_landing(actor)]

    def home() -> None:
        st.switch_page(landing)

    registered[HOME] = st.Page(home, title="QrelForge", url_path=HOME, default=True)
    return registered


def _url(path: str) -> str:
    """The URL path of a page (its file name without ``.py``, as `st.Page` infers it)."""
    return path.rsplit("/", 1)[-1].removesuffix(".py")


def _project_picker(actor: Actor) -> None:
    found = resources.list_projects(actor)
    if not found:
        hint = ": create one on the Project page." if actor.role == Role.ADMIN else "."
        st.caption("No project yet" + hint)
        return
    names = [p.name for p in found]
    titles = {p.name: p.title for p in found}
    if st.session_state.get(state.PROJECT) not in names:
        st.session_state[state.PROJECT] = names[0]
    st.selectbox("Project", names, key=state.PROJECT, format_func=lambda n: f"{n} · {titles[n]}"[:60])


def sidebar(actor: Actor, registered: dict[str, st.Page]) -> None:
    """Brand, project picker, the links this role may use, the user badge and the log out button."""
    with st.sidebar:
        st.markdown("### QrelForge")
        _project_picker(actor)
        section = None
        for spec in PAGES:
            if not actor.at_least(spec.role):
                continue
            if spec.section != section:
                section = spec.section
                st.caption(section)
            st.page_link(registered[spec.path], label=spec.title)
        st.divider()
        st.caption(f"Logged in as **{actor.username}** · {actor.role.value}")
        st.button("Log out", key=state.LOGOUT_BUTTON, on_click=auth.logout)
        auth.cookie_script()
