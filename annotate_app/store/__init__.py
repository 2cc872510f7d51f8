"""The store: SQLAlchemy models, engine/transactions and the queries. The only package touching the database.

``open_database()`` connects to the configured database (``QRELFORGE_DATABASE_URL``, default SQLite under
``QRELFORGE_DATA_DIR``); ``migrate.upgrade(db)`` creates or updates the schema.
"""

from __future__ import annotations

from annotate_app.store.db import Database, safe_url

__all__ = ["Database", "open_database", "safe_url"]


def open_database(url: str | None = None, *, upgrade: bool = False, pool_size: int = 10) -> Database:
    """A `Database` for ``url`` (default: the settings' URL); ``upgrade=True`` also runs the migrations."""
    from annotate_app.config import load_settings

    db = Database(url or load_settings().database_url, pool_size=pool_size)
    if upgrade:
        from annotate_app.store.migrate import upgrade as run_upgrade

        run_upgrade(db)
    return db
