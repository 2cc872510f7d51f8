"""Cached resources of the app: the Database (one engine per URL), the app settings, the cookie secret, and
the cached reads that do not change between an annotator's submits.

Settings (environment first, then ``.streamlit/secrets.toml``):

=============================== ====================================================================
``QRELFORGE_DATABASE_URL``      the database (see `annotate_app.config`); default SQLite in the data dir
``QRELFORGE_DATA_DIR``          local data folder (default ``./data``)
``QRELFORGE_COOKIE_SECRET``     secret that signs the login cookie; else ``cookie_secret`` in
                                ``.streamlit/secrets.toml``; else the file ``<data dir>/cookie_secret``,
                                created once (mode 0600) with 32 random bytes, so logins survive restarts.
                                Replicas behind a load balancer must share one secret.
``QRELFORGE_SESSION_HOURS``     how long a login lasts (default 12, a decimal number: 0.25 is 15 minutes;
                                ``session_hours`` in secrets.toml works too): the cookie expires then,
                                an older cookie is refused, and an open tab is logged out
``QRELFORGE_IMPORT_MAX_MB``     largest file the Data page imports (default 200; whole MiB)
``QRELFORGE_RUN_UPLOAD_MAX_MB`` largest run the Score page reads (default 50: an uploaded run is parsed
                                in the app's memory on every rerun)
=============================== ====================================================================

Upload limits: both are also capped by Streamlit's ``server.maxUploadSize`` (MiB, default 200; ``make run``
sets it to 200), which the server enforces on every upload. Each uploader passes its limit to the browser
(``max_upload_size``: the browser refuses a bigger file with its own message) and the page checks the size
again (a client that skips the browser's check gets an ``st.error`` naming the limit). Bigger imports go
through the command line, which streams the file: ``qrelforge import docs|queries|run|qrels|chunks FILE``.

Cached reads (`st.cache_data`, keyed by database URL, the caller and the arguments, short ``ttl``) go through
the services, so every call still checks the caller's role on a cache miss; `clear_reads` empties them after a
write that changes what they show.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from annotate_app.config import load_settings
from annotate_app.services import projects
from annotate_app.services.auth import Actor
from annotate_app.store import migrate
from annotate_app.store.db import Database, safe_url

__all__ = [
    "database",
    "database_url",
    "app_settings",
    "AppSettings",
    "cookie_secret",
    "clear_reads",
    "list_projects",
    "get_project",
    "guidelines",
    "agreement",
    "list_runs",
    "list_releases",
    "release_qrels",
    "stored_run",
    "secret_value",
]

DEFAULT_SESSION_HOURS = 12.0
DEFAULT_IMPORT_MAX_MB = 200
DEFAULT_RUN_UPLOAD_MAX_MB = 50
SECRET_FILE = "cookie_secret"
TTL = 30


@dataclass(frozen=True)
class AppSettings:
    database_url: str
    data_dir: Path
    session_seconds: int
    import_max_mb: int = DEFAULT_IMPORT_MAX_MB
    run_upload_max_mb: int = DEFAULT_RUN_UPLOAD_MAX_MB


def secret_value(name: str) -> object | None:
    """``name`` from ``.streamlit/secrets.toml``, or None when there is no such file or key."""
    try:
        return st.secrets.get(name)
    except Exception:  # no secrets file: Streamlit raises its own FileNotFoundError subclass
        return None


def _megabytes(name: str, default: int) -> int:
    """An upload limit in MiB from the environment, capped by Streamlit's ``server.maxUploadSize``."""
    raw = os.environ.get(name) or default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a whole number of megabytes; got {raw!r}") from None
    if value < 1:
        raise ValueError(f"{name} must be at least 1; got {raw!r}")
    return min(value, int(st.get_option("server.maxUploadSize")))


def app_settings() -> AppSettings:
    base = load_settings()
    raw = os.environ.get("QRELFORGE_SESSION_HOURS") or secret_value("session_hours") or DEFAULT_SESSION_HOURS
    try:
        hours = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"QRELFORGE_SESSION_HOURS must be a number of hours; got {raw!r}") from None
    if not 0 < hours <= 24 * 30:
        raise ValueError(f"QRELFORGE_SESSION_HOURS must be in (0, 720]; got {raw!r}")
    return AppSettings(
        base.database_url,
        base.data_dir,
        max(1, round(hours * 3600)),
        _megabytes("QRELFORGE_IMPORT_MAX_MB", DEFAULT_IMPORT_MAX_MB),
        _megabytes("QRELFORGE_RUN_UPLOAD_MAX_MB", DEFAULT_RUN_UPLOAD_MAX_MB),
    )


def database_url() -> str:
    return load_settings().database_url


@st.cache_resource(show_spinner=False, max_entries=16)
def _database(url: str) -> Database:
    db = Database(url, pool_size=20)
    if migrate.current_revision(db) is None:
        db.dispose()
        raise RuntimeError(
            f"the database {safe_url(url)} has no QrelForge schema yet: run `qrelforge init` "
            "(or `qrelforge demo-data`, or `make run`) first"
        )
    return db


def database() -> Database:
    """The Database of the configured URL (one engine and pool per URL, shared by all sessions)."""
    return _database(database_url())


@st.cache_resource(show_spinner=False, max_entries=16)
def _file_secret(path: str) -> str:
    file = Path(path)
    if not file.exists():
        file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(32))
    value = file.read_text().strip()
    if len(value) < 16:
        raise ValueError(f"{file}: the cookie secret must have at least 16 characters")
    return value


def cookie_secret() -> str:
    """The login cookie's signing secret (see the module doc)."""
    value = os.environ.get("QRELFORGE_COOKIE_SECRET") or secret_value("cookie_secret")
    if value:
        if len(str(value)) < 16:
            raise ValueError("the cookie secret must have at least 16 characters")
        return str(value)
    return _file_secret(str((load_settings().data_dir / SECRET_FILE).resolve()))


# -------------------------------------------------------------------------------------------- cached reads
@st.cache_data(ttl=TTL, show_spinner=False, max_entries=256)
def _projects(url: str, actor: Actor):
    return projects.list_projects(_database(url), actor)


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=256)
def _project(url: str, actor: Actor, project: str):
    return projects.get_project(_database(url), actor, project)


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=256)
def _guidelines(url: str, actor: Actor, project: str):
    return projects.get_guidelines(_database(url), actor, project)


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=64)
def _agreement(url: str, actor: Actor, project: str):
    from annotate_app.services import gate  # heavy (statistics): reviewer pages only

    return gate.agreement(_database(url), actor, project)


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=64)
def _runs(url: str, actor: Actor, project: str):
    from annotate_app.services import imports

    return imports.list_runs(_database(url), actor, project)


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=64)
def _releases(url: str, actor: Actor, project: str):
    from annotate_app.services import releases

    return releases.list_releases(_database(url), actor, project)


@st.cache_data(ttl=600, show_spinner=False, max_entries=32)
def _qrels(url: str, actor: Actor, project: str, version: int):
    from annotate_app.services import releases

    return releases.release_qrels(_database(url), actor, project, version)


@st.cache_data(ttl=600, show_spinner=False, max_entries=32)
def _stored_run(url: str, actor: Actor, project: str, name: str):
    from annotate_app.services import scoring

    return scoring.stored_run(_database(url), actor, project, name)


def list_projects(actor: Actor):
    return _projects(database_url(), actor)


def get_project(actor: Actor, project: str):
    return _project(database_url(), actor, project)


def guidelines(actor: Actor, project: str):
    return _guidelines(database_url(), actor, project)


def agreement(actor: Actor, project: str):
    return _agreement(database_url(), actor, project)


def list_runs(actor: Actor, project: str):
    return _runs(database_url(), actor, project)


def list_releases(actor: Actor, project: str):
    return _releases(database_url(), actor, project)


def release_qrels(actor: Actor, project: str, version: int):
    """A release's qrels (releases are immutable, so they are kept longer)."""
    return _qrels(database_url(), actor, project, version)


def stored_run(actor: Actor, project: str, name: str):
    """A stored run as a metrics Run (a run name is imported once and never changes, so it is kept longer)."""
    return _stored_run(database_url(), actor, project, name)


def clear_reads() -> None:
    """Forget every cached read (call after a write that changes projects, guidelines, labels' agreement,
    runs or releases)."""
    for fn in (_projects, _project, _guidelines, _agreement, _runs, _releases):
        fn.clear()
