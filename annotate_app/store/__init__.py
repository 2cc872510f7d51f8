"""The store: SQLAlchemy models, engine/transactions and the queries — the only package touching the database.

What it is for: `db.Database` hands out short transactions; the query modules (``corpus``, ``pool``,
``annotation``, ``judges``, ``projects``, ``releases``, ``users``, ``scoring``, ``backup``,
``doc_staging``) read and write rows for the services; `models` is the schema, `enums` the stored
vocabulary, `migrate` (and ``migrations/``, Alembic) the schema's history. ``open_database()`` connects to
the configured database (``QRELFORGE_DATABASE_URL``, default SQLite under ``QRELFORGE_DATA_DIR``);
``migrate.upgrade(db)`` creates or updates the schema.

What it may import: SQLAlchemy, Alembic, the database drivers, `annotate_app.config`, and the pure helpers of
`metrics` (no statistics a service should own); never `annotate_app.services`, `ui`, `views` or the CLI. It
knows nothing of roles or workflow rules: those are the services'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from annotate_app.store.db import Database, safe_url

__all__ = ["Database", "open_database", "safe_url"]


def __getattr__(name: str) -> Any:
    """`Database` and `safe_url`, imported on first use: `enums` reads without SQLAlchemy."""
    if name in ("Database", "safe_url"):
        from annotate_app.store import db

        return getattr(db, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_database(url: str | None = None, *, upgrade: bool = False, pool_size: int = 10) -> Database:
    """A `Database` for ``url`` (default: the settings' URL); ``upgrade=True`` also runs the migrations."""
    from annotate_app.config import load_settings
    from annotate_app.store.db import Database

    db = Database(url or load_settings().database_url, pool_size=pool_size)
    if upgrade:
        from annotate_app.store.migrate import upgrade as run_upgrade

        run_upgrade(db)
    return db
