"""``qrelforge backup FILE`` and ``qrelforge restore FILE``: the whole database as a portable archive.

An archive written from SQLite restores into PostgreSQL and back (see `annotate_app.services.backup`). Restore
creates the schema of a new database first, refuses a database that holds data unless ``--force``, checks the
whole archive before writing, and writes in one transaction.
"""

from __future__ import annotations

import argparse

from annotate_app.cli_common import add_db_option, command, open_db

__all__ = ["add_parsers"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
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
    from annotate_app.services import backup
    from annotate_app.services.auth import SYSTEM
    from annotate_app.store.migrate import current_revision, upgrade

    backup.read_manifest(args.file)  # a bad archive is reported before the database is touched
    db = open_db(args, require_schema=False)
    if current_revision(db) is None:
        upgrade(db)
    info = backup.restore(db, SYSTEM, args.file, force=args.force)
    print(f"restored {info}")
    return 0
