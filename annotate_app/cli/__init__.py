"""``qrelforge``: the command line. Each command calls the services or the metrics library.

What this package may import: `metrics` (the scoring and retrieval commands, which work without the ``app``
extra) and `annotate_app.services` (the database commands, through `annotate_app.services.setup` to open
and create the database); never `annotate_app.store`, SQLAlchemy or Streamlit. Arrows point down only.

One module per command group, each exposing ``COMMANDS`` (command name -> the function adding its parser):

============== ======================================================
module         commands
============== ======================================================
``scoring``    score, compare, check, verify, ab
``retrieval``  baseline, fuse
``admin``      init, user, project, demo-data
``data``       import, pool, assign
``review``     status, agreement, release, export
``judges``     judge (add, run, import, calibrate, probe)
``backup``     backup, restore
``_common``    shared options, the database commands' wrapper, output
============== ======================================================

Bad input prints one line, ``qrelforge: error: ...``, and exits with status 2; never a traceback. Heavy
modules are imported inside the commands, so ``qrelforge score`` starts fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from annotate_app.cli import admin, backup, data, judges, retrieval, review, scoring
from annotate_app.cli._common import AddParser
from metrics.errors import QrelForgeError

__all__ = ["build_parser", "main"]

GROUPS = (scoring, retrieval, admin, data, review, judges, backup)
HELP_ORDER = (
    "score",
    "baseline",
    "fuse",
    "compare",
    "check",
    "verify",
    "ab",
    "init",
    "user",
    "project",
    "demo-data",
    "import",
    "pool",
    "assign",
    "status",
    "agreement",
    "release",
    "export",
    "judge",
    "backup",
    "restore",
)
"""The commands in the order ``qrelforge --help`` lists them."""


def _commands() -> dict[str, AddParser]:
    commands: dict[str, AddParser] = {}
    for group in GROUPS:
        commands.update(group.COMMANDS)
    if sorted(commands) != sorted(HELP_ORDER):
        raise RuntimeError(f"HELP_ORDER must list the commands {sorted(commands)}; got {sorted(HELP_ORDER)}")
    return commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qrelforge", description="Relevance judgments and retrieval metrics."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands = _commands()
    for name in HELP_ORDER:
        commands[name](sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``qrelforge`` with ``argv`` (default: the process's arguments); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except (QrelForgeError, OSError) as exc:
        message = " ".join(str(exc).split("\n")[0].split()) or type(exc).__name__
        print(f"qrelforge: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
