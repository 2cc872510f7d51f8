"""The page registry (every page's file, URL, title, role and section: the one place that names a page) and
the navigation: which pages a session registers with `st.navigation`, and the sidebar.

Logged out, the only page is the login page, served at the root and at every page's URL (a deep link shows the
login form, then its page once logged in). Logged in, every page is registered (hidden navigation), so a URL
to a page the role may not use still resolves and its guard says "Not allowed"; the sidebar links only the
pages the role may use, by section (Judge, Review, Admin, as the roles are), with the project picker, the user
badge and "Log out". The default page (the app's root URL) switches to the role's landing page, so that every
page keeps its own URL (Streamlit serves the default page at the root only: ``/annotate`` would be "Page not
found" for an annotator if Annotate were it).

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

Pages are registered by file (``st.Page(spec.path, url_path=spec.url_path)``); Streamlit runs the file as a
script, which calls its ``render()`` (see `annotate_app.views`). Each URL is set explicitly and equals the
file's name, so bookmarks keep working and a deep link resolves before the first run as well (Streamlit, and
`AppTest.switch_page`, identify a page by its file name until `st.navigation` has run). Link to a page with
`link` and a constant of this module, never with a path string.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import streamlit as st

from annotate_app.services.auth import Actor, Role
from annotate_app.ui import auth, cache, state

__all__ = [
    "PAGES",
    "PageSpec",
    "Section",
    "pages",
    "sidebar",
    "link",
    "LOGIN",
    "HOME",
    "ANNOTATE",
    "MY_LABELS",
    "AGREEMENT",
    "ADJUDICATE",
    "RELEASE",
    "SCORE",
    "ADMIN_USERS",
    "ADMIN_PROJECT",
    "ADMIN_DATA",
    "AUDIT",
]

HOME = "home"


class Section(StrEnum):
    """The sidebar's sections, one per role."""

    NONE = ""
    JUDGE = "Judge"
    REVIEW = "Review"
    ADMIN = "Admin"


@dataclass(frozen=True)
class PageSpec:
    """A page: its file (relative to the entry point), URL path, title, the least role that may use it and
    its sidebar section."""

    path: str
    url_path: str
    title: str
    role: Role
    section: Section


# The login page is served at the root and at every page's URL (never at its own).
LOGIN = PageSpec(
    path="views/login.py", url_path="login", title="Log in", role=Role.ANNOTATOR, section=Section.NONE
)
ANNOTATE = PageSpec(
    path="views/judge/annotate.py",
    url_path="annotate",
    title="Annotate",
    role=Role.ANNOTATOR,
    section=Section.JUDGE,
)
MY_LABELS = PageSpec(
    path="views/judge/my_labels.py",
    url_path="my_labels",
    title="My labels",
    role=Role.ANNOTATOR,
    section=Section.JUDGE,
)
AGREEMENT = PageSpec(
    path="views/review/agreement.py",
    url_path="agreement",
    title="Agreement",
    role=Role.REVIEWER,
    section=Section.REVIEW,
)
ADJUDICATE = PageSpec(
    path="views/review/adjudicate.py",
    url_path="adjudicate",
    title="Adjudicate",
    role=Role.REVIEWER,
    section=Section.REVIEW,
)
RELEASE = PageSpec(
    path="views/review/release.py",
    url_path="release",
    title="Release",
    role=Role.REVIEWER,
    section=Section.REVIEW,
)
SCORE = PageSpec(
    path="views/review/score.py", url_path="score", title="Score", role=Role.REVIEWER, section=Section.REVIEW
)
ADMIN_USERS = PageSpec(
    path="views/admin/admin_users.py",
    url_path="admin_users",
    title="Users",
    role=Role.ADMIN,
    section=Section.ADMIN,
)
ADMIN_PROJECT = PageSpec(
    path="views/admin/admin_project.py",
    url_path="admin_project",
    title="Project",
    role=Role.ADMIN,
    section=Section.ADMIN,
)
ADMIN_DATA = PageSpec(
    path="views/admin/admin_data.py",
    url_path="admin_data",
    title="Data",
    role=Role.ADMIN,
    section=Section.ADMIN,
)
AUDIT = PageSpec(
    path="views/admin/audit.py", url_path="audit", title="Audit log", role=Role.ADMIN, section=Section.ADMIN
)
PAGES = (
    ANNOTATE,
    MY_LABELS,
    AGREEMENT,
    ADJUDICATE,
    RELEASE,
    SCORE,
    ADMIN_USERS,
    ADMIN_PROJECT,
    ADMIN_DATA,
    AUDIT,
)


def _landing(actor: Actor) -> PageSpec:
    return ANNOTATE if actor.role == Role.ANNOTATOR else AGREEMENT


def _page(spec: PageSpec, *, url_path: str | None = None) -> st.Page:
    return st.Page(spec.path, title=spec.title, url_path=url_path or spec.url_path)


def pages(actor: Actor | None) -> dict[str, list[st.Page]]:
    """The pages the session registers, by section (`st.navigation`'s argument); the default page (the root
    URL) comes first.

    Logged in: every page, and a default page that switches to the role's landing page. Logged out: the login
    page, under the root URL and under every page's URL, so a deep link shows the login form (not "Page not
    found") and keeps its URL; a page's script hash is its URL, so once the login succeeds the same URL runs
    the page itself."""
    if actor is None:
        home = st.Page(LOGIN.path, title=LOGIN.title, url_path=HOME, default=True)
        return {Section.NONE: [home, *(_page(LOGIN, url_path=p.url_path) for p in PAGES)]}
    landing = _landing(actor)

    def to_landing() -> None:
        st.switch_page(landing.path)

    registered: dict[str, list[st.Page]] = {
        Section.NONE: [st.Page(to_landing, title="QrelForge", url_path=HOME, default=True)]
    }
    for spec in PAGES:
        registered.setdefault(spec.section, []).append(_page(spec))
    return registered


def link(spec: PageSpec, label: str) -> None:
    """A link to the page ``spec`` (one of this module's constants)."""
    st.page_link(spec.path, label=label)


def _project_picker(actor: Actor) -> None:
    found = cache.list_projects(actor)
    if not found:
        hint = ": create one on the Project page." if actor.role == Role.ADMIN else "."
        st.caption("No project yet" + hint)
        return
    names = [p.name for p in found]
    titles = {p.name: p.title for p in found}
    if st.session_state.get(state.PROJECT) not in names:
        st.session_state[state.PROJECT] = names[0]
    st.selectbox("Project", names, key=state.PROJECT, format_func=lambda n: f"{n} · {titles[n]}"[:60])


def sidebar(actor: Actor) -> None:
    """Brand, project picker, the links this role may use (by section), the user badge and "Log out"."""
    with st.sidebar:
        st.markdown("### QrelForge")
        _project_picker(actor)
        for section in Section:
            allowed = [spec for spec in PAGES if spec.section == section and actor.at_least(spec.role)]
            if allowed:
                st.caption(section)
            for spec in allowed:
                link(spec, spec.title)
        st.divider()
        st.caption(f"Logged in as **{actor.username}** · {actor.role.value}")
        st.button("Log out", key=state.LOGOUT_BUTTON, on_click=auth.logout)
        auth.cookie_script()
