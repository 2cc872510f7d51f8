"""``qrelforge backup FILE`` and ``qrelforge restore FILE``: the whole database as a portable archive.

An archive written from SQLite restores into PostgreSQL and back (see `annotate_app.services.backup`). Restore
creates the schema of a new database first, refuses a database that holds data unless ``--force``, checks the
whole archive before writing, and writes in one transaction. These commands need the ``app`` extra.
"""

from __future__ import annotations

import argparse

from annotate_app.cli._common import AddParser, Subcommands, add_db_option, command, open_db

__all__ = ["COMMANDS"]


def _backup_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "backup",
        help="write the whole database to a portable archive (zip of JSONL tables)",
        description="Back up every table (users with their password hashes: keep it private) "
        "in one consistent snapshot. The file appears only when complete.",
    )
    p.add_argument("file", help="archive to write, e.g. qrelforge-2026-11-30.zip")
    p.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    add_db_option(p)
    p.set_defaults(handler=_cmd_backup)


def _restore_parser(sub: Subcommands) -> None:
    r = sub.add_parser(
        "restore",
        help="load an archive written by `qrelforge backup`",
        description="Restore an archive into this database (SQLite or PostgreSQL, whichever wrote "
        "it). The archive is checked first; then everything is written in one "
        "transaction, keeping every id, so releases and exports are unchanged.",
    )
    r.add_argument("file", help="archive written by `qrelforge backup`")
    r.add_argument("--force", action="store_true", help="replace the contents of a database that holds data")
    add_db_option(r)
    r.set_defaults(handler=_cmd_restore)


@command
def _cmd_backup(args: argparse.Namespace) -> int:
    from annotate_app.services import backup
    from annotate_app.services.auth import SYSTEM

    print(backup.backup(open_db(args), SYSTEM, args.file, overwrite=args.force))
    return 0


@command
def _cmd_restore(args: argparse.Namespace) -> int:
    from annotate_app.services import backup, setup
    from annotate_app.services.auth import SYSTEM

    backup.read_manifest(args.file)  # a bad archive is reported before the database is touched
    db = open_db(args, require_schema=False)
    if not setup.schema_state(db).initialised:
        setup.initialise(db)
    info = backup.restore(db, SYSTEM, args.file, force=args.force)
    print(f"restored {info}")
    return 0


COMMANDS: dict[str, AddParser] = {"backup": _backup_parser, "restore": _restore_parser}
