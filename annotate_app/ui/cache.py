"""What the app keeps between runs: the Database (`st.cache_resource`) and the services' cached reads.

`cached_read` caches a service read per URL, caller and arguments, with a ``ttl``; every miss goes through
the service's role check, and a dropped read is retried once. `clear_reads` empties them after a write.
Reviewer reads live in `annotate_app.ui.review_cache`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

import streamlit as st

from annotate_app.services import projects, setup
from annotate_app.services.auth import Actor
from annotate_app.services.errors import retry_once
from annotate_app.services.setup import Database
from annotate_app.ui.settings import database_url

__all__ = [
    "TTL",
    "database",
    "cached_read",
    "clear_reads",
    "list_projects",
    "get_project",
    "guidelines",
]

P = ParamSpec("P")
R = TypeVar("R")
TTL = 30
POOL_SIZE = 20
_CLEARED: list = []  # the cached functions `clear_reads` empties


@st.cache_resource(show_spinner=False, max_entries=16)
def _database(url: str) -> Database:
    db = setup.open_database(url, pool_size=POOL_SIZE)
    try:
        initialised = setup.schema_revision(db) is not None
    except Exception:  # the database is unreachable: nothing cached, the next run tries again
        db.dispose()
        raise
    if not initialised:
        db.dispose()
        raise RuntimeError(
            f"the database {setup.safe_url(url)} has no QrelForge schema yet: run `qrelforge init` "
            "(or `qrelforge demo-data`, or `make run`) first"
        )
    return db


def database() -> Database:
    """The Database of the configured URL (one engine and pool per URL, shared by all sessions)."""
    return _database(database_url())


def cached_read(
    fn: Callable[Concatenate[Database, Actor, P], R],
    *,
    ttl: int = TTL,
    max_entries: int = 64,
    immutable: bool = False,
) -> Callable[Concatenate[Actor, P], R]:
    """``fn(db, actor, *args)`` as ``read(actor, *args)`` on the configured database, cached by
    `st.cache_data` (key: database URL, actor, arguments) for ``ttl`` seconds. ``immutable=True``:
    `clear_reads` keeps it."""

    def read(url: str, actor: Actor, *args: P.args, **kwargs: P.kwargs) -> R:
        return retry_once(fn, _database(url), actor, *args, **kwargs)  # a read: safe to send again

    # st.cache_data tells functions apart by module, qualified name and source: every `read` has the same
    # source, so its name must say which service it calls (else all reads would share one cache).
    read.__qualname__ = f"cached_read[{fn.__module__}.{fn.__qualname__}]"
    cached = st.cache_data(ttl=ttl, show_spinner=False, max_entries=max_entries)(read)
    if not immutable:
        _CLEARED.append(cached)

    @functools.wraps(fn)
    def call(actor: Actor, *args: P.args, **kwargs: P.kwargs) -> R:
        return cached(database_url(), actor, *args, **kwargs)

    return call


def clear_reads() -> None:
    """Forget every cached read but the immutable ones (call after a write that changes projects, guidelines,
    labels' agreement, runs or releases)."""
    for cached in _CLEARED:
        cached.clear()


list_projects = cached_read(projects.list_projects, max_entries=256)
get_project = cached_read(projects.get_project, max_entries=256)
guidelines = cached_read(projects.get_guidelines, max_entries=256)
