"""``qrelforge``: the command line. Each command calls the services or the metrics library.

One module per command group, each exposing ``COMMANDS`` (name -> the function adding its parser); `HOMES`
says which module a command lives in. Imports `metrics` and `annotate_app.services`, never the store,
SQLAlchemy or Streamlit. Bad input is one line, ``qrelforge: error: ...``, and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from annotate_app.cli._common import AddParser
from metrics.errors import QrelForgeError

__all__ = ["build_parser", "main"]

HOMES = {
    "score": "scoring",
    "baseline": "retrieval",
    "fuse": "retrieval",
    "compare": "scoring",
    "check": "scoring",
    "verify": "scoring",
    "ab": "scoring",
    "passages": "passages",
    "init": "admin",
    "user": "admin",
    "project": "admin",
    "demo-data": "admin",
    "serve": "serve",
    "import": "data",
    "pool": "data",
    "assign": "data",
    "status": "review",
    "agreement": "review",
    "release": "review",
    "export": "review",
    "gold": "quality",
    "annotators": "quality",
    "judge": "judges",
    "backup": "backup",
    "restore": "backup",
}
"""Each command, in the order ``qrelforge --help`` lists them, and the module of this package adding it: a
command imports its own module only (``qrelforge score`` never imports the database commands' modules)."""
HELP_ORDER = tuple(HOMES)
"""The commands in the order ``qrelforge --help`` lists them."""
GROUP_NAMES = (
    "scoring",
    "retrieval",
    "passages",
    "admin",
    "data",
    "review",
    "quality",
    "judges",
    "backup",
    "serve",
)


def __getattr__(name: str) -> Any:
    if name == "GROUPS":  # the command modules, imported on first use
        return tuple(_group(g) for g in GROUP_NAMES)
    if name in GROUP_NAMES:
        return _group(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _group(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def _commands() -> dict[str, AddParser]:
    commands: dict[str, AddParser] = {}
    for group in GROUP_NAMES:
        registered = _group(group).COMMANDS
        homed = sorted(c for c, home in HOMES.items() if home == group)
        if sorted(registered) != homed:
            raise RuntimeError(f"HOMES must give {group} the commands {sorted(registered)}; got {homed}")
        commands.update(registered)
    return commands


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``qrelforge`` parser with every command; with ``command`` (one of `HOMES`), with that one only,
    which parses that command's arguments alike."""
    parser = argparse.ArgumentParser(
        prog="qrelforge", description="Relevance judgments and retrieval metrics."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    if command in HOMES:
        _group(HOMES[command]).COMMANDS[command](sub)
        return parser
    commands = _commands()
    for name in HELP_ORDER:
        commands[name](sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``qrelforge`` with ``argv`` (default: the process's arguments); returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv else None)
    args, rest = parser.parse_known_args(argv)
    if rest and getattr(args, "runs", None) == [] and not any(r.startswith("-") for r in rest):
        # ``RUN...`` may be empty (with --passages every path is a run), and argparse gives such a list
        # nothing when options stand between it and QRELS: the paths after the options are its runs.
        args.runs = rest
    elif rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        return int(args.handler(args) or 0)
    except (QrelForgeError, OSError) as exc:
        message = " ".join(str(exc).split("\n")[0].split()) or type(exc).__name__
        print(f"qrelforge: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
