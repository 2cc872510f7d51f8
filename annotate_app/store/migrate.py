"""Schema migrations, run programmatically: ``upgrade(url)`` brings a database to the newest schema.

On PostgreSQL the upgrade holds an advisory lock, so replicas starting at once migrate one at a time.

>>> import tempfile
>>> url = f"sqlite:///{tempfile.mkdtemp()}/qf.db"
>>> upgrade(url) == head_revision() == current_revision(url)
True
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.engine import URL

from annotate_app.store.db import Database

__all__ = ["upgrade", "downgrade_all", "current_revision", "head_revision", "MIGRATIONS_DIR"]

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
_LOCK_KEY = 0x51F0_4A11  # PostgreSQL advisory lock held while migrating


def _config(connection: Connection | None = None) -> Config:
    cfg = Config(str(MIGRATIONS_DIR / "alembic.ini"))
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """The newest revision the code knows."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no migration revision in {MIGRATIONS_DIR}")
    return head


def current_revision(url: str | URL | Database) -> str | None:
    """The revision the database is at (None for an empty database)."""
    db = url if isinstance(url, Database) else Database(url, pool_size=1)
    try:  # a read (SQLite: a deferred BEGIN), so that checking the schema never waits for a writer
        with db.engine.execution_options(qf_write=False).connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        if db is not url:
            db.dispose()


def upgrade(url: str | URL | Database, revision: str = "head") -> str:
    """Migrate the database to ``revision`` (default: the newest); returns the revision reached."""
    _run(url, lambda cfg: command.upgrade(cfg, revision))
    reached = current_revision(url)
    if reached is None:
        raise RuntimeError(f"the upgrade to {revision!r} left the database without a schema revision")
    return reached


def downgrade_all(url: str | URL | Database) -> None:
    """Drop every QrelForge table (``alembic downgrade base``). Destroys all data."""
    _run(url, lambda cfg: command.downgrade(cfg, "base"))


def _run(url: str | URL | Database, action) -> None:
    db = url if isinstance(url, Database) else Database(url, pool_size=1)
    try:
        with db.engine.connect() as conn:
            locked = not db.is_sqlite
            if locked:
                conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _LOCK_KEY})
                conn.commit()
            try:
                action(_config(conn))
                conn.commit()
            finally:
                if locked:
                    conn.rollback()
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _LOCK_KEY})
                    conn.commit()
    finally:
        if db is not url:
            db.dispose()
