"""Database setup for the app and the command line: the one door from the upper layers to the store's engine
and migrations. No actor: these run before anyone logs in.

>>> import tempfile
>>> db = open_database(f"sqlite:///{tempfile.mkdtemp()}/qf.db")
>>> schema_state(db).initialised
False
>>> initialise(db) == schema_state(db).current == schema_state(db).head
True
>>> require_schema(db)
>>> db.dispose()
"""

from __future__ import annotations

from dataclasses import dataclass

from annotate_app.services.errors import Conflict
from annotate_app.store import Database, migrate, safe_url
from annotate_app.store import open_database as _open

__all__ = [
    "Database",
    "SchemaState",
    "initialise",
    "open_database",
    "require_schema",
    "safe_url",
    "schema_revision",
    "schema_state",
]


@dataclass(frozen=True)
class SchemaState:
    """The database's schema revision (None when empty) and the newest one this code knows."""

    current: str | None
    head: str

    @property
    def initialised(self) -> bool:
        return self.current is not None

    @property
    def up_to_date(self) -> bool:
        return self.current == self.head


def open_database(url: str | None = None, *, pool_size: int = 10) -> Database:
    """A `Database` for ``url`` (default: ``QRELFORGE_DATABASE_URL``, else SQLite in the data folder)."""
    return _open(url, pool_size=pool_size)


def initialise(db: Database | str) -> str:
    """Create the schema or bring it to the newest revision (idempotent); returns the revision reached."""
    return migrate.upgrade(db)


def schema_revision(db: Database | str) -> str | None:
    """The database's schema revision, None when it has none; unlike `schema_state`, it reads no migration
    script (nor imports Alembic), so the app's check of a new connection costs one query."""
    return migrate.current_revision(db)


def schema_state(db: Database | str) -> SchemaState:
    """Where the database's schema stands against this code."""
    return SchemaState(current=migrate.current_revision(db), head=migrate.head_revision())


def require_schema(db: Database) -> None:
    """Refuse (`Conflict`) an uninitialised or outdated database, naming it and the fix."""
    state = schema_state(db)
    if state.up_to_date:
        return
    where = safe_url(db.url)
    if not state.initialised:
        raise Conflict(f"the database {where} has no QrelForge schema yet: run `qrelforge init`")
    raise Conflict(
        f"the database {where} is at schema {state.current}, not {state.head}: run `qrelforge init`"
    )
