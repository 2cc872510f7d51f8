"""``qrelforge verify REPORT.json QRELS RUN...``: a report's files hashed and every number recomputed.

A report made with ``--passages`` takes the same ``--passages PASSAGES --chunks CHUNKS``. Exit status 0 when
all hold, 1 listing each that differs, 2 on bad input (`annotate_app.cli._verify`).
"""

from __future__ import annotations

import argparse

from annotate_app.cli._chunk_runs import add_chunk_run_options
from annotate_app.cli._common import Subcommands
from metrics.errors import QrelForgeError

__all__ = ["add_verify_parser"]


def add_verify_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "verify",
        help="recompute a JSON report of score, compare or check and say whether every number holds",
        description="Check that QRELS and each RUN are the files the report was made from (their sha256 "
        "in its fingerprint), recompute the report and compare every number. A score report made with "
        "--chunk-map needs the same file (--chunk-map FILE, sha256 checked), one made with --passages the "
        "same --passages PASSAGES --chunks CHUNKS (then every positional argument is a RUN); --corpus DOCS "
        "is checked when given. Exit status 0 when all "
        "hold, 1 when one differs (each is listed: measure, run, query or mean, stored and recomputed), "
        "2 on bad input (a file that differs from the report's is bad input).",
    )
    p.add_argument("report", metavar="REPORT.json", help="a report made with --format json")
    p.add_argument(
        "qrels", metavar="QRELS", help="the qrels file the report was made from (with --passages: a RUN)"
    )
    p.add_argument("runs", nargs="*", metavar="RUN", help="the run files, in the report's order")
    add_chunk_run_options(p, verify=True)
    p.add_argument(
        "--chunk-map",
        metavar="FILE",
        help="the chunk map a score report was made with (required for such a report; its sha256 is checked)",
    )
    p.add_argument(
        "--corpus",
        metavar="DOCS",
        help="the corpus a score report was made with (optional; its sha256 is checked when given)",
    )
    p.set_defaults(handler=_cmd_verify)


def _cmd_verify(args: argparse.Namespace) -> int:
    from annotate_app.cli._verify import verify

    qrels, runs = (args.passages, [args.qrels, *args.runs]) if args.passages else (args.qrels, args.runs)
    if not runs:
        raise QrelForgeError("the following arguments are required: RUN")
    if args.chunks is not None and args.passages is None:
        raise QrelForgeError(f"--chunks {args.chunks!r} is only used with --passages PASSAGES")
    verdict = verify(
        args.report,
        qrels,
        runs,
        chunk_map=args.chunk_map,
        corpus=args.corpus,
        chunks=args.chunks,
        docs=args.docs,
    )
    if verdict.holds:
        print(f"{args.report}: all {verdict.numbers} numbers hold")
        return 0
    n = len(verdict.differences)
    print(
        f"{args.report}: {n} of {verdict.numbers} number{'s' if verdict.numbers != 1 else ''} "
        f"differ{'s' if n == 1 else ''}:"
    )
    for line in verdict.differences:
        print(f"  {line}")
    return 1
