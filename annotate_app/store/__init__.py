"""The store: SQLAlchemy models, engine/transactions and the queries — the only package touching the database.

`db.Database` hands out transactions, the query modules read and write rows for the services, `models` is
the schema, `enums` the stored vocabulary, `migrate` the migrations. Imports SQLAlchemy, Alembic, drivers,
`annotate_app.config` and pure `metrics` helpers; never the services or above. Knows no roles.
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
