"""Schema migrations, run programmatically: ``upgrade(url)`` brings a database to the newest schema.

On PostgreSQL the upgrade holds an advisory lock, so replicas starting at once migrate one at a time.
Alembic (about 10 MB resident) is imported only by what runs or lists migrations; `current_revision`, the
app's schema check, reads Alembic's version table with SQLAlchemy alone.

>>> import tempfile
>>> url = f"sqlite:///{tempfile.mkdtemp()}/qf.db"
>>> upgrade(url) == head_revision() == current_revision(url)
True
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, inspect, text
from sqlalchemy.engine import URL

from annotate_app.store.db import Database

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["upgrade", "downgrade_all", "current_revision", "head_revision", "MIGRATIONS_DIR"]

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
_LOCK_KEY = 0x51F0_4A11  # PostgreSQL advisory lock held while migrating
_VERSION_TABLE = "alembic_version"  # Alembic's default, which `migrations/env.py` keeps


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    cfg = Config(str(MIGRATIONS_DIR / "alembic.ini"))
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """The newest revision the code knows."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no migration revision in {MIGRATIONS_DIR}")
    return head


def current_revision(url: str | URL | Database) -> str | None:
    """The revision the database is at (None for an empty database), as Alembic's
    ``MigrationContext.get_current_revision`` reads it, without importing Alembic."""
    db = url if isinstance(url, Database) else Database(url, pool_size=1)
    try:  # a read (SQLite: a deferred BEGIN), so that checking the schema never waits for a writer
        with db.engine.execution_options(qf_write=False).connect() as conn:
            if not inspect(conn).has_table(_VERSION_TABLE):
                return None
            heads = conn.execute(text(f"SELECT version_num FROM {_VERSION_TABLE}")).scalars().all()
    finally:
        if db is not url:
            db.dispose()
    if len(heads) > 1:
        raise RuntimeError(f"the database's {_VERSION_TABLE} table names {len(heads)} revisions, not one")
    return heads[0] if heads else None


def upgrade(url: str | URL | Database, revision: str = "head") -> str:
    """Migrate the database to ``revision`` (default: the newest); returns the revision reached."""
    from alembic import command

    _run(url, lambda cfg: command.upgrade(cfg, revision))
    reached = current_revision(url)
    if reached is None:
        raise RuntimeError(f"the upgrade to {revision!r} left the database without a schema revision")
    return reached


def downgrade_all(url: str | URL | Database) -> None:
    """Drop every QrelForge table (``alembic downgrade base``). Destroys all data."""
    from alembic import command

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
