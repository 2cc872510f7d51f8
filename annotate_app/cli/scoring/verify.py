"""``qrelforge verify REPORT.json QRELS RUN...``: a report's files hashed and every number recomputed.

Exit status 0 when all hold, 1 listing each that differs, 2 on bad input (`annotate_app.cli._verify`).
"""

from __future__ import annotations

import argparse

from annotate_app.cli._common import Subcommands

__all__ = ["add_verify_parser"]


def add_verify_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "verify",
        help="recompute a JSON report of score, compare or check and say whether every number holds",
        description="Check that QRELS and each RUN are the files the report was made from (their sha256 "
        "in its fingerprint), recompute the report and compare every number. A score report made with "
        "--chunk-map needs the same file (--chunk-map FILE, sha256 checked); --corpus DOCS is checked when "
        "given. Exit status 0 when all "
        "hold, 1 when one differs (each is listed: measure, run, query or mean, stored and recomputed), "
        "2 on bad input (a file that differs from the report's is bad input).",
    )
    p.add_argument("report", metavar="REPORT.json", help="a report made with --format json")
    p.add_argument("qrels", metavar="QRELS", help="the qrels file the report was made from")
    p.add_argument("runs", nargs="+", metavar="RUN", help="the run files, in the report's order")
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

    verdict = verify(args.report, args.qrels, args.runs, chunk_map=args.chunk_map, corpus=args.corpus)
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
