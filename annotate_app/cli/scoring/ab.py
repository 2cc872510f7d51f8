"""``qrelforge ab LOGFILE``: an online A/B test from an interaction log.

The log (`metrics.stats.ablog`: CSV or JSONL with ``user_id``, ``group``, ``query``, ``feedback`` 0/1,
``timestamp``) gives each arm's satisfaction rate with a Wilson interval and a two-proportion z-test
against the control.
"""

from __future__ import annotations

import argparse
import json

from annotate_app.cli._common import Subcommands, emit
from annotate_app.cli.scoring._shared import level

__all__ = ["add_ab_parser"]


def add_ab_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "ab",
        help="analyse an online A/B test from an interaction log",
        description="Read an interaction log (CSV with a header, or JSONL) with user_id, group, "
        "query, feedback (0/1) and timestamp; check that every user stayed in one group; report "
        "each group's satisfaction rate with a Wilson interval and a two-proportion z-test "
        "against the control (Fisher's exact test too when counts are small).",
    )
    p.add_argument("log", metavar="LOGFILE", help="interaction log: .csv, .tsv or .jsonl")
    p.add_argument(
        "--control", metavar="GROUP", help="the control group (default: the first in sorted order)"
    )
    p.add_argument(
        "--allow-mixed",
        action="store_true",
        help="drop users seen in more than one group (and report them) instead of failing",
    )
    p.add_argument("--alpha", type=level, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--confidence", type=level, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(handler=_cmd_ab)


def _cmd_ab(args: argparse.Namespace) -> int:
    from metrics.stats import ab_test
    from metrics.stats.ablog import read_log

    records, lines = read_log(args.log)
    report = ab_test(
        records,
        control=args.control,
        allow_mixed=args.allow_mixed,
        alpha=args.alpha,
        confidence=args.confidence,
        source=args.log,
        lines=lines,
    )
    text = (
        json.dumps(report.to_dict(), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
        if args.format == "json"
        else report.to_text()
    )
    emit(text, args.output)
    return 0
