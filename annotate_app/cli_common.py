"""Shared helpers of the ``qrelforge`` store commands (init, user, import, pool, assign, status, ...).

These commands run on the server with direct database access and act as the local administrator
(`annotate_app.services.auth.SYSTEM`): whoever can run them can read the database anyway. The database is the
one configured by ``QRELFORGE_DATABASE_URL`` (default: SQLite under ``QRELFORGE_DATA_DIR``), or ``--db URL``.
Heavy modules (SQLAlchemy, the services) are imported only when a command runs.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "add_db_option",
    "add_project_option",
    "command",
    "open_db",
    "project_of",
    "read_password",
    "emit",
    "grid",
]


def add_db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="URL",
        help="database URL (default: $QRELFORGE_DATABASE_URL or the SQLite file under $QRELFORGE_DATA_DIR)",
    )


def add_project_option(p: argparse.ArgumentParser) -> None:
    add_db_option(p)
    p.add_argument(
        "-p",
        "--project",
        metavar="NAME",
        help="project name (default: $QRELFORGE_PROJECT, or the only project)",
    )


def command(fn: Callable[[argparse.Namespace], int | None]) -> Callable[[argparse.Namespace], int]:
    """Turn database errors into one-line errors (exit 2) and close the connection pool afterwards."""

    @functools.wraps(fn)
    def run(args: argparse.Namespace) -> int:
        from sqlalchemy.exc import SQLAlchemyError

        try:
            return int(fn(args) or 0)
        except SQLAlchemyError as exc:
            detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            raise ValueError(f"database error: {detail}") from None
        finally:
            db = getattr(args, "_db", None)
            if db is not None:
                db.dispose()

    return run


def open_db(args: argparse.Namespace, *, require_schema: bool = True):
    """The configured database; refuses an uninitialised or outdated one (run ``qrelforge init``)."""
    from annotate_app.store import open_database
    from annotate_app.store.migrate import current_revision, head_revision

    db = open_database(getattr(args, "db", None))
    args._db = db
    if require_schema:
        current = current_revision(db)
        if current != head_revision():
            state = (
                "is not initialised" if current is None else f"is at schema {current}, not {head_revision()}"
            )
            raise ValueError(
                f"database {db.url.render_as_string(hide_password=True)} {state}; run `qrelforge init`"
            )
    return db


def project_of(db, args: argparse.Namespace) -> str:
    """The project named by --project, $QRELFORGE_PROJECT, or the only project of the database."""
    from annotate_app.services import projects
    from annotate_app.services.auth import SYSTEM

    name = getattr(args, "project", None) or os.environ.get("QRELFORGE_PROJECT")
    if name:
        return name
    names = [p.name for p in projects.list_projects(db, SYSTEM)]
    if len(names) != 1:
        found = f"projects: {', '.join(names)}" if names else "no project yet (qrelforge init --project NAME)"
        raise ValueError(f"--project is required: {found}")
    return names[0]


def read_password(args: argparse.Namespace) -> tuple[str, bool]:
    """(password, generated): the first line of standard input with --password-stdin, else a random one."""
    import secrets

    if getattr(args, "password_stdin", False):
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise ValueError("--password-stdin: standard input is empty")
        return line, False
    return secrets.token_urlsafe(12), True


def emit(text: str, output: str | None = None, *, binary: bytes | None = None) -> None:
    if output:
        with open(output, "wb") as f:
            f.write(binary if binary is not None else text.encode("utf-8"))
    elif binary is not None:
        sys.stdout.buffer.write(binary)
        sys.stdout.flush()
    else:
        sys.stdout.write(text)


def grid(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain left-aligned text table."""
    cells = [list(map(str, header))] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n" for r in cells
    )
