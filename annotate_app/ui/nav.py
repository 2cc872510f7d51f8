"""The page registry (each page's file, URL, title, role and section: the one place that names a page) and
the navigation: the pages a session registers with `st.navigation`, and the sidebar.

Logged out, every URL shows the login page; logged in, every page is registered and the sidebar links the
role's pages. The project is part of the address (``?project=``): `choose_project` resolves it and refuses
one the user may not see. Link with `link` and this module's constants, never a path string.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import streamlit as st

from annotate_app.services.auth import Actor, Role
from annotate_app.services.types import ProjectInfo
from annotate_app.ui import auth, cache, state
from annotate_app.ui.escape import escape_markdown

__all__ = [
    "PAGES",
    "PageSpec",
    "Section",
    "ProjectUse",
    "Resolution",
    "ProjectChoice",
    "PROJECT_PARAM",
    "pages",
    "sidebar",
    "link",
    "resolve_project",
    "choose_project",
    "project_gate",
    "heading",
    "confirm",
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
PROJECT_PARAM = "project"  # the URL's query parameter naming the project: /admin_data?project=kb2
PICK_LINKS = 20  # a refusal or a "choose" notice links at most this many projects (the sidebar has all)


class Section(StrEnum):
    """The sidebar's sections, one per role."""

    NONE = ""
    ANNOTATE = "Annotate"
    REVIEW = "Review"
    ADMIN = "Admin"


class ProjectUse(StrEnum):
    """How a page uses the chosen project."""

    NEEDED = "needed"  # it acts on one project: without one it does not run
    OPTIONAL = "optional"  # it also works without one (create a project, the whole audit log)
    UNUSED = "unused"  # it is not about a project (users)


@dataclass(frozen=True)
class PageSpec:
    """A page: its file (relative to the entry point), URL path, title, the least role that may use it, its
    sidebar section and how it uses the chosen project."""

    path: str
    url_path: str
    title: str
    role: Role
    section: Section
    project: ProjectUse = ProjectUse.NEEDED


# The login page is served at the root and at every page's URL (never at its own).
LOGIN = PageSpec(
    path="views/login.py",
    url_path="login",
    title="Log in",
    role=Role.ANNOTATOR,
    section=Section.NONE,
    project=ProjectUse.UNUSED,
)
ANNOTATE = PageSpec(
    path="views/annotate/annotate.py",
    url_path="annotate",
    title="Annotate",
    role=Role.ANNOTATOR,
    section=Section.ANNOTATE,
)
MY_LABELS = PageSpec(
    path="views/annotate/my_labels.py",
    url_path="my_labels",
    title="My labels",
    role=Role.ANNOTATOR,
    section=Section.ANNOTATE,
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
    project=ProjectUse.UNUSED,
)
ADMIN_PROJECT = PageSpec(
    path="views/admin/admin_project.py",
    url_path="admin_project",
    title="Project",
    role=Role.ADMIN,
    section=Section.ADMIN,
    project=ProjectUse.OPTIONAL,
)
ADMIN_DATA = PageSpec(
    path="views/admin/admin_data.py",
    url_path="admin_data",
    title="Data",
    role=Role.ADMIN,
    section=Section.ADMIN,
)
AUDIT = PageSpec(
    path="views/admin/audit.py",
    url_path="audit",
    title="Audit log",
    role=Role.ADMIN,
    section=Section.ADMIN,
    project=ProjectUse.OPTIONAL,
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

    Logged in: every page, and a default page that switches to the role's landing page (keeping the URL's
    query parameters, the project among them). Logged out: the login page, under the root URL and under every
    page's URL, so a deep link shows the login form (not "Page not found") and keeps its URL; a page's script
    hash is its URL, so once the login succeeds the same URL runs the page itself."""
    if actor is None:
        home = st.Page(LOGIN.path, title=LOGIN.title, url_path=HOME, default=True)
        return {Section.NONE: [home, *(_page(LOGIN, url_path=p.url_path) for p in PAGES)]}
    landing = _landing(actor)

    def to_landing() -> None:
        st.switch_page(landing.path, query_params=st.query_params.to_dict())

    registered: dict[str, list[st.Page]] = {
        Section.NONE: [st.Page(to_landing, title="QrelForge", url_path=HOME, default=True)]
    }
    for spec in PAGES:
        registered.setdefault(spec.section, []).append(_page(spec))
    return registered


def _project_params() -> dict[str, str]:
    """The query parameters that keep the chosen project in a link's URL (none when none is chosen)."""
    project = st.session_state.get(state.PROJECT)
    return {PROJECT_PARAM: project} if project else {}


def link(spec: PageSpec, label: str) -> None:
    """A link to the page ``spec`` (one of this module's constants), keeping the chosen project."""
    st.page_link(spec.path, label=label, query_params=_project_params())


# --------------------------------------------------------------------------------------------- the project
class Resolution(StrEnum):
    """How a run's project was resolved."""

    CHOSEN = "chosen"  # a project the user may see: named by the URL, the only one, or chosen before
    REFUSED = "refused"  # the URL names a project the user may not see (not a member, or no such project)
    CHOOSE = "choose"  # several projects, none named: the user must choose one
    NONE = "none"  # the user may see no project at all


@dataclass(frozen=True)
class ProjectChoice:
    """The outcome of `resolve_project`: ``name`` is the chosen project (CHOSEN) or the refused name
    (REFUSED), else None; ``label`` is what headings and links show ("kb2 (Help centre)")."""

    resolution: Resolution
    name: str | None = None
    label: str = ""


def _label(info: ProjectInfo) -> str:
    return f"{info.name} ({info.title})" if info.title and info.title != info.name else info.name


def resolve_project(
    *, wanted: str | None, remembered: str | None, visible: Sequence[ProjectInfo]
) -> ProjectChoice:
    """The project a run acts on, from the URL's ``wanted`` name, the session's ``remembered`` last choice and
    the projects the user may see (``visible``), in this order:

    1. the URL names a project: it, if visible, else REFUSED (never another project instead);
    2. no project is visible: NONE;
    3. one is visible: it;
    4. the remembered choice, if still visible;
    5. else CHOOSE: several projects and none named, the user must pick one (the app never guesses).
    """
    by_name = {p.name: p for p in visible}
    if wanted:
        if wanted in by_name:
            return ProjectChoice(resolution=Resolution.CHOSEN, name=wanted, label=_label(by_name[wanted]))
        return ProjectChoice(resolution=Resolution.REFUSED, name=wanted)
    if not visible:
        return ProjectChoice(resolution=Resolution.NONE)
    if len(visible) == 1:
        only = visible[0]
        return ProjectChoice(resolution=Resolution.CHOSEN, name=only.name, label=_label(only))
    if remembered in by_name:
        return ProjectChoice(resolution=Resolution.CHOSEN, name=remembered, label=_label(by_name[remembered]))
    return ProjectChoice(resolution=Resolution.CHOOSE)


def choose_project(actor: Actor) -> ProjectChoice:
    """Resolve this run's project (`resolve_project`) and apply it: the session's chosen project (None unless
    CHOSEN, so no page acts on a project the URL did not mean) and the URL (``?project=`` names the chosen
    project). Call it once per run, before the sidebar and the page."""
    ss = st.session_state
    choice = resolve_project(
        wanted=st.query_params.get(PROJECT_PARAM) or None,
        remembered=ss.get(state.PROJECT_LAST),
        visible=cache.list_projects(actor),
    )
    ss[state.PROJECT_CHOICE] = choice
    ss[state.PROJECT] = choice.name if choice.resolution == Resolution.CHOSEN else None
    if choice.resolution == Resolution.CHOSEN:
        ss[state.PROJECT_LAST] = choice.name
        if st.query_params.get(PROJECT_PARAM) != choice.name:
            st.query_params[PROJECT_PARAM] = choice.name
    return choice


def _picked() -> None:
    """The picker's callback: the picked project goes into the URL (and is remembered)."""
    picked = st.session_state.get(state.PROJECT)
    if picked:
        st.query_params[PROJECT_PARAM] = picked
        st.session_state[state.PROJECT_LAST] = picked


def _project_picker(actor: Actor) -> None:
    found = cache.list_projects(actor)
    if not found:
        hint = ": create one on the Project page." if actor.role == Role.ADMIN else "."
        st.caption("No project yet" + hint)
        return
    titles = {p.name: p.title for p in found}
    st.selectbox(
        "Project",
        list(titles),
        index=None,
        key=state.PROJECT,
        placeholder="Choose a project",
        format_func=lambda n: f"{n} · {titles[n]}"[:60],
        on_change=_picked,
    )


def _spec_of(page: st.Page) -> PageSpec | None:
    return next((spec for spec in PAGES if spec.url_path == page.url_path), None)


def _pick_links(actor: Actor, page: st.Page) -> None:
    """Links to this page for each project the user may see (the first `PICK_LINKS`; the picker has all)."""
    found = cache.list_projects(actor)
    for info in found[:PICK_LINKS]:
        st.page_link(page, label=escape_markdown(_label(info)[:80]), query_params={PROJECT_PARAM: info.name})
    if len(found) > PICK_LINKS:
        st.caption(f"… and {len(found) - PICK_LINKS} more: choose in the sidebar's project picker.")


def project_gate(actor: Actor, page: st.Page, choice: ProjectChoice) -> None:
    """Before ``page`` runs: a refused project is named with a way to pick one of the user's own, and several
    projects with none chosen ask for a choice; a page that needs a project then stops. Pages the role may not
    use are left to their guard ("Not allowed"); the default page only switches to the landing page."""
    spec = _spec_of(page)
    if spec is None or not actor.at_least(spec.role) or spec.project == ProjectUse.UNUSED:
        return
    if choice.resolution == Resolution.REFUSED:
        name = escape_markdown(str(choice.name)[:100])
        st.error(
            f"Project {name} is not open to you: it does not exist, or you are not one of its members. "
            "Nothing is shown or changed in another project instead."
        )
    elif choice.resolution == Resolution.CHOOSE:
        st.info("You work on several projects: choose the one this page acts on.")
    else:
        return
    if cache.list_projects(actor):
        st.markdown("Open this page for one of your projects:")
        _pick_links(actor, page)
    if spec.project == ProjectUse.NEEDED:
        st.stop()


def heading(spec: PageSpec) -> None:
    """A page's heading: its title, with the project it acts on beside it (a badge "kb2 (Help centre)").
    Every page calls it, with its own constant of this module."""
    choice = st.session_state.get(state.PROJECT_CHOICE)
    with st.container(key=state.PAGE_HEADING, horizontal=True, vertical_alignment="center"):
        st.title(spec.title)
        if isinstance(choice, ProjectChoice) and choice.resolution == Resolution.CHOSEN:
            # st.badge escapes the brackets itself
            label = escape_markdown(choice.label[:80]).replace("\\[", "[").replace("\\]", "]")
            st.badge(label, icon=":material/folder_open:", color="blue")
        elif spec.project != ProjectUse.UNUSED:
            st.badge("no project chosen", color="gray")


def confirm(text: str) -> None:
    """The confirm line of a write, naming the project it changes (e.g. "Import 13 documents into kb2.")."""
    st.markdown(f":material/arrow_forward: {escape_markdown(text)}")


def sidebar(actor: Actor) -> None:
    """Brand, project picker, the links this role may use (by section, keeping the project), the user badge
    and "Log out". Call it after `choose_project`."""
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
