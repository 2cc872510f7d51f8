"""Shared pytest fixtures, for every folder of the suite.

The tests are grouped by layer: ``metrics/`` (the library, its oracles and trec_eval's own files),
``services/`` (store, workflow and judges on SQLite and PostgreSQL), ``cli/``, ``app/`` (AppTest pages),
``e2e/`` (Chromium), ``architecture/`` (the import contract) and ``helpers/`` (fixtures and helper modules,
put on ``sys.path`` here so that every test imports them by name). The database fixtures (``db_url``, ``db``,
``demo``, ...) live in ``helpers/store_fixtures.py``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))

from app_helpers import app_db, demo_template, labelled_db, released_db  # noqa: E402, F401  (the app tests)
from cli_fixtures import cli  # noqa: E402, F401  (the CLI tests)
from e2e_helpers import app_server, browser_type_launch_args, servers  # noqa: E402, F401  (the browser tests)
from store_fixtures import (  # noqa: E402, F401
    actors,
    db,
    db_url,
    demo,
    fast_hashing,
    pg_demo_copy,
    pg_session_url,
    sqlite_template,
)

FIRST = ("slow", "e2e")
"""Markers of the longest tests, which `pytest_collection_modifyitems` runs first."""


def pytest_collection_modifyitems(items: list) -> None:
    """Put the browser and slow tests first, in their collected order: pytest-xdist hands tests out in this
    order, so both workers start on the long ones and none is left to run alone at the end."""
    first = [item for item in items if any(item.get_closest_marker(name) for name in FIRST)]
    chosen = set(map(id, first))
    items[:] = first + [item for item in items if id(item) not in chosen]
