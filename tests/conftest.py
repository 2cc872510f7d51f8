"""Shared pytest fixtures. The database fixtures (``db_url``, ``db``, ``demo``, ...) live in
store_fixtures."""

from app_helpers import app_db, demo_template, labelled_db, released_db  # noqa: F401  (the app tests)
from e2e_helpers import app_server, browser_type_launch_args, servers  # noqa: F401  (the browser tests)
from store_fixtures import (  # noqa: F401
    actors,
    db,
    db_url,
    demo,
    fast_hashing,
    pg_session_url,
    sqlite_template,
)
