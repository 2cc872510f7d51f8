"""A scratch PostgreSQL database for a benchmark process (shared by soak.py and store_scale.py)."""

from __future__ import annotations

import os

PG_URL = os.environ.get("QRELFORGE_BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def scratch_database(prefix: str, *, create: bool) -> str:
    """The URL of ``<prefix>_<pid>`` on the server of `PG_URL`, dropped first (with its connections) and
    created again when ``create``; call with ``create=False`` to drop it at the end."""
    import psycopg
    from sqlalchemy import make_url

    name = f"{prefix}_{os.getpid()}"
    admin = make_url(PG_URL).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if create:
            conn.execute(f'CREATE DATABASE "{name}"')
    return make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
