"""Helpers shared by the ``qrelforge`` command modules: options, the database commands' wrapper, output.

Database commands act as `annotate_app.services.auth.SYSTEM` on ``QRELFORGE_DATABASE_URL`` or ``--db``,
opened through `annotate_app.services.setup`; heavy modules load only when a command runs.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from metrics.errors import QrelForgeError

if TYPE_CHECKING:
    from annotate_app.services.setup import Database

__all__ = [
    "APP_EXTRA",
    "AddParser",
    "Handler",
    "Subcommands",
    "add_db_option",
    "add_project_option",
    "command",
    "emit",
    "grid",
    "int_at_least",
    "open_db",
    "partitioned",
    "positive_int",
    "project_of",
    "read_password",
]

Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
AddParser: TypeAlias = Callable[[Subcommands], None]
"""Adds one command's parser (with its ``handler`` default) to the ``qrelforge`` subcommands."""
Handler: TypeAlias = Callable[[argparse.Namespace], "int | None"]

APP_EXTRA = frozenset({"sqlalchemy", "alembic", "psycopg", "argon2", "itsdangerous", "streamlit", "altair"})
"""Top-level packages of the ``app`` extra (pyproject.toml): the database commands need them."""


def int_at_least(minimum: int) -> Callable[[str], int]:
    """argparse ``type=`` for an int >= ``minimum``; else "must be an int >= 0; got '-2'" (for 0), which
    argparse prefixes with the option: "argument --seed: must be an int >= 0; got '-2'"."""

    def parse(text: str) -> int:
        message = f"must be an int >= {minimum}; got {text!r}"
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(message) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(message)
        return value

    return parse


positive_int = int_at_least(1)
"""argparse ``type=`` for a count: an int >= 1, else "must be an int >= 1; got '0'"."""


def partitioned(run: str) -> bool:
    """A run held as partitions: a directory, Parquet, or a glob pattern that is not itself a file name."""
    if os.path.isdir(run) or run.lower().endswith((".parquet", ".pq")):
        return True
    return not os.path.exists(run) and any(c in run for c in "*?[")


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


def command(fn: Handler) -> Callable[[argparse.Namespace], int]:
    """Wrap a database command: a missing ``app`` extra and database errors become `QrelForgeError` (one
    line, exit 2); the connection pool is closed afterwards."""

    @functools.wraps(fn)
    def run(args: argparse.Namespace) -> int:
        try:
            return int(fn(args) or 0)
        except ModuleNotFoundError as exc:
            if (exc.name or "").partition(".")[0] not in APP_EXTRA:
                raise
            raise QrelForgeError(
                f"`qrelforge {args.command}` needs the app extra: pip install 'qrelforge[app]'"
            ) from None
        except Exception as exc:
            if not _is_database_error(exc):
                raise
            detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            raise QrelForgeError(f"database error: {detail}") from None
        finally:
            db = getattr(args, "_db", None)
            if db is not None:
                db.dispose()

    return run


def _is_database_error(exc: Exception) -> bool:
    """Whether ``exc`` is a SQLAlchemy error, told without importing SQLAlchemy (the CLI must not: only the
    services and the store talk to the database). A SQLAlchemy error implies its module is loaded."""
    errors = sys.modules.get("sqlalchemy.exc")
    return errors is not None and isinstance(exc, errors.SQLAlchemyError)


def open_db(args: argparse.Namespace, *, require_schema: bool = True) -> Database:
    """The configured database; refuses an uninitialised or outdated one (run ``qrelforge init``)."""
    from annotate_app.services import setup

    try:
        db = setup.open_database(getattr(args, "db", None))
    except QrelForgeError:
        raise
    except ValueError as exc:  # an unsupported URL scheme
        raise QrelForgeError(str(exc)) from None
    args._db = db
    if not require_schema:
        return db
    state = setup.schema_state(db)
    if not state.initialised:
        problem = "is not initialised"
    elif not state.up_to_date:
        problem = f"is at schema {state.current}, not {state.head}"
    else:
        return db
    raise QrelForgeError(f"database {setup.safe_url(db.url)} {problem}; run `qrelforge init`")


def project_of(db: Database, args: argparse.Namespace) -> str:
    """The project named by --project, $QRELFORGE_PROJECT, or the only project of the database."""
    from annotate_app.services import projects
    from annotate_app.services.auth import SYSTEM

    name = getattr(args, "project", None) or os.environ.get("QRELFORGE_PROJECT")
    if name:
        return str(name)
    names = [p.name for p in projects.list_projects(db, SYSTEM)]
    if len(names) != 1:
        found = f"projects: {', '.join(names)}" if names else "no project yet (qrelforge init --project NAME)"
        raise QrelForgeError(f"--project is required: {found}")
    return names[0]


def read_password(args: argparse.Namespace) -> tuple[str, bool]:
    """(password, generated): the first line of standard input with --password-stdin, else a random one."""
    import secrets

    if getattr(args, "password_stdin", False):
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise QrelForgeError("--password-stdin: standard input is empty")
        return line, False
    return secrets.token_urlsafe(12), True


def emit(text: str, output: str | None = None, *, binary: bytes | None = None) -> None:
    """Write ``text`` (UTF-8, or ``binary`` as is) to the file ``output``, else to standard output."""
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
