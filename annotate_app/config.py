"""Settings of the app and the CLI, read from the environment: ``QRELFORGE_DATA_DIR`` (default ``./data``) and
``QRELFORGE_DATABASE_URL`` (default SQLite in the data folder; PostgreSQL for a team).

>>> load_settings({"QRELFORGE_DATA_DIR": "/srv/qf"}).database_url
'sqlite:////srv/qf/qrelforge.db'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Settings", "load_settings", "DEFAULT_DB_FILE"]

DEFAULT_DB_FILE = "qrelforge.db"


@dataclass(frozen=True)
class Settings:
    """What the app needs to start: where its data lives and which database to use."""

    data_dir: Path
    database_url: str

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``env`` (default: ``os.environ``); an empty variable counts as unset."""
    env = os.environ if env is None else env
    data_dir = Path(env.get("QRELFORGE_DATA_DIR") or "data").expanduser()
    url = env.get("QRELFORGE_DATABASE_URL") or f"sqlite:///{(data_dir / DEFAULT_DB_FILE).as_posix()}"
    return Settings(data_dir=data_dir, database_url=url)
