"""``qrelforge serve``: the app (Streamlit) with the project's Streamlit settings, as ``make run`` starts it.

The settings, the address and the port go to Streamlit as `annotate_app.launch` says; ``--db URL`` is the
app's ``QRELFORGE_DATABASE_URL``, checked first (a bad URL is one line, exit status 2, and no server). Ctrl+C
stops the server with exit status 0. Needs the ``app`` extra.
"""

from __future__ import annotations

import argparse
import os

from annotate_app.cli._common import AddParser, Subcommands, add_db_option, command, open_db

__all__ = ["COMMANDS", "DEFAULT_HOST", "DEFAULT_PORT"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8501
_MAX_PORT = 65535


def _port(text: str) -> int:
    """argparse ``type=`` for a TCP port: an int in [0, 65535]."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= _MAX_PORT:
        raise argparse.ArgumentTypeError(f"must be an int in [0, {_MAX_PORT}]; got {text!r}")
    return value


def _serve_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "serve",
        help="start the app with the project's Streamlit settings (Ctrl+C stops it)",
        description="Start the app (Streamlit) with the project's Streamlit settings, as make run does: "
        "headless, no usage statistics, 200 MiB uploads, the viewer's toolbar. Ctrl+C stops it.",
    )
    p.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="H",
        help=f"address to listen on (default {DEFAULT_HOST}; 0.0.0.0 for every interface)",
    )
    p.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        metavar="P",
        help=f"port to listen on (default {DEFAULT_PORT}; 0 for a free one, printed)",
    )
    add_db_option(p)
    p.set_defaults(handler=_cmd_serve)


@command
def _cmd_serve(args: argparse.Namespace) -> int:
    from annotate_app import launch

    open_db(args, require_schema=False).dispose()  # a bad URL stops here, in one line
    if args.db:
        os.environ["QRELFORGE_DATABASE_URL"] = args.db
    return launch.run(args.host, args.port)


COMMANDS: dict[str, AddParser] = {"serve": _serve_parser}
