"""The app's settings and secrets: the database URL, the session lifetime, the upload limits and the cookie
secret, read from the environment first, then ``.streamlit/secrets.toml``.

The variables and their defaults: docs/app.md ("Login, cookie and secrets") and docs/modules.md.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from annotate_app.config import load_settings

__all__ = [
    "database_url",
    "app_settings",
    "AppSettings",
    "cookie_secret",
    "secret_value",
    "SECRET_FILE",
]

DEFAULT_SESSION_HOURS = 12.0
DEFAULT_IMPORT_MAX_MB = 200
DEFAULT_RUN_UPLOAD_MAX_MB = 50
SECRET_FILE = "cookie_secret"


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
        database_url=base.database_url,
        data_dir=base.data_dir,
        session_seconds=max(1, round(hours * 3600)),
        import_max_mb=_megabytes("QRELFORGE_IMPORT_MAX_MB", DEFAULT_IMPORT_MAX_MB),
        run_upload_max_mb=_megabytes("QRELFORGE_RUN_UPLOAD_MAX_MB", DEFAULT_RUN_UPLOAD_MAX_MB),
    )


def database_url() -> str:
    return load_settings().database_url


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
