"""Shared pytest fixtures. The database fixtures (``db_url``, ``db``, ``demo``, ...) live in store_fixtures."""

from store_fixtures import (  # noqa: F401
    actors,
    db,
    db_url,
    demo,
    fast_hashing,
    pg_session_url,
    sqlite_template,
)
