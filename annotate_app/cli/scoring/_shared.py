"""What the scoring commands share: the default measures, report formats, the engine choice and the
``--by`` slicing options."""

from __future__ import annotations

import argparse
import os
from enum import StrEnum
from typing import Any

from annotate_app.cli._common import open_db, project_of
from metrics.errors import QrelForgeError

DEFAULT_MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR"]


FORMATS = ("table", "markdown", "html", "latex", "json")


class Engine(StrEnum):
    """Where ``score`` evaluates: in this process, or on Ray (`metrics.distributed`)."""

    LOCAL = "local"
    RAY = "ray"


def level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number strictly between 0 and 1; got {text!r}")
    return value


def add_slice_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--by",
        metavar="tag|tag:KEY",
        help="also report per slice of queries: per tag (tag), or per value of the key:value tags KEY "
        "(tag:KEY); the tags come from --queries FILE or from the queries of the project (-p)",
    )
    p.add_argument(
        "--queries",
        metavar="FILE",
        help="queries file (JSONL/CSV/TSV) whose tags field (a list; 'a|b' in CSV/TSV) gives the slices",
    )


def slicing_of(args: argparse.Namespace, *, uses: str) -> Any:
    """``--by``'s slicing: the tags of ``--queries FILE``, or those stored with the queries of the project
    (``-p``, ``--db``'s only project, or ``$QRELFORGE_PROJECT``); ``uses``: what else -p/--db serve."""
    named = args.project is not None or args.db is not None
    if args.by is None:
        for flag, value in (("--project", args.project), ("--db", args.db)):
            if value is not None:
                raise QrelForgeError(f"{flag} {value!r} is only used with {uses}")
        if args.queries is None:
            return None  # (not through _reports: plain scoring never imports it)
    from annotate_app.cli import _reports

    if args.by is None:
        return _reports.slicing(None, args.queries)
    if named and args.queries is not None:
        raise QrelForgeError("--by takes its tags from --queries FILE or from -p PROJECT, not both")
    in_project = named or bool(os.environ.get("QRELFORGE_PROJECT"))
    return _reports.slicing(args.by, args.queries, (lambda: stored_tags(args)) if in_project else None)


def stored_tags(args: argparse.Namespace) -> tuple[str, dict[str, tuple[str, ...]]]:
    """The project's name and ``{query_id: tags}`` of its stored queries."""
    from annotate_app.services import scoring
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    project = project_of(db, args)
    return project, scoring.query_tags(db, SYSTEM, project)
