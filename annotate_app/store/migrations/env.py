"""Alembic environment: runs on the connection given by annotate_app.store.migrate, or on ``-x url=...``.

Alembic executes this file inside an `EnvironmentContext` (``alembic.command.upgrade`` and friends), which is
when the migrations run. Importing it on its own (``import annotate_app.store.migrations.env``: doctests,
tools that import every module) runs nothing.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from annotate_app.store.models import Base

__all__ = ["run_migrations_online", "target_metadata"]

target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Migrate on the connection `annotate_app.store.migrate` passes, else on ``-x url=...`` or the ini's
    ``sqlalchemy.url``."""
    config = context.config
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("no database URL: pass -x url=... or set sqlalchemy.url in alembic.ini")
    engine = create_engine(url)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


def _alembic_is_running() -> bool:
    """True inside an Alembic `EnvironmentContext` (it installs the `alembic.context` proxy while it runs)."""
    return getattr(context, "_proxy", None) is not None


if _alembic_is_running():
    if context.is_offline_mode():
        raise SystemExit("offline (--sql) migrations are not supported; run them against a database")
    run_migrations_online()
