"""``qrelforge check QRELS RUN --min "R@5=0.7" [--max ...] [--history FILE] [--trend] [--plot F.svg]``.

A CI gate: exit status 0 when every threshold is met, 1 when one is missed (each missed one is named), 2 on
bad input. With ``--history`` each check appends a dated row to a CSV file (`metrics.history`), a row per
slice too with ``--by`` (run ``NAME[slice]``); ``--trend`` prints it. A slice that misses a threshold
fails the gate.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from annotate_app.cli._common import Subcommands, add_project_option, command
from annotate_app.cli.scoring._shared import add_slice_options, slicing_of
from metrics.errors import QrelForgeError

__all__ = ["add_check_parser"]


def add_check_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "check",
        help="check a run against thresholds (CI gate, exit 1 when one is missed)",
        description="Score a run and check its means against thresholds. Exit status 0 when all "
        "are met, 1 when one is missed (each is named), 2 on bad input. --history appends a dated "
        "row per check to a CSV file; --trend prints the history (QRELS and RUN may then be "
        "left out).",
    )
    p.add_argument("qrels", nargs="?", help="qrels file")
    p.add_argument("run", nargs="?", help="TREC run file")
    p.add_argument(
        "--min",
        action="append",
        default=[],
        metavar="MEASURE=VALUE",
        dest="minimum",
        help="the mean must be >= VALUE, e.g. 'R@5=0.7' (repeatable)",
    )
    p.add_argument(
        "--max",
        action="append",
        default=[],
        metavar="MEASURE=VALUE",
        dest="maximum",
        help="the mean must be <= VALUE, e.g. 'FirstRel=3' (repeatable)",
    )
    p.add_argument("--history", metavar="FILE", help="CSV file the check appends a dated row to")
    p.add_argument("--trend", action="store_true", help="print the history of --history")
    p.add_argument("--plot", metavar="FILE.svg", help="draw the history of --history as an SVG line chart")
    p.add_argument("--name", help="run name to record (default: the run's tag)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    add_slice_options(p)
    add_project_option(p)
    p.set_defaults(handler=_cmd_check)


@command
def _cmd_check(args: argparse.Namespace) -> int:
    if args.qrels is None or args.run is None:
        return _history_only(args)
    if (args.trend or args.plot) and not args.history:
        raise QrelForgeError("--trend and --plot need --history FILE")
    if not (args.minimum or args.maximum):
        raise QrelForgeError("check needs at least one threshold: --min MEASURE=VALUE or --max MEASURE=VALUE")
    from annotate_app.cli import _reports
    from metrics.history import append_history

    cut = slicing_of(args, uses="--by tag|tag:KEY")
    outcome = _reports.check_results(
        args.qrels, args.run, args.minimum, args.maximum, name=args.name, cut=cut
    )
    if args.history:
        for name, sliced in outcome.slices.items():  # the slices first: the last row is the check's own
            append_history(args.history, sliced, f"{sliced.run}[{name}]", args.qrels)
        append_history(args.history, outcome.result, outcome.result.run, args.qrels)
    if args.format == "table":
        text = _reports.check_text(outcome)
    else:
        document = _reports.check_document(
            outcome, args.qrels, args.run, args.minimum, args.maximum, name=args.name, cut=cut
        )
        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    sys.stdout.write(text)
    if args.trend or args.plot:
        _show_history(args)
    return _verdict(outcome, args.format)


def _history_only(args: argparse.Namespace) -> int:
    """``check --history FILE --trend/--plot`` without QRELS and RUN: only show the history."""
    if (
        (args.trend or args.plot)
        and args.history
        and args.qrels is None
        and not (args.minimum or args.maximum)
    ):
        _show_history(args)
        return 0
    raise QrelForgeError(
        "check needs QRELS and RUN (or only --history FILE with --trend/--plot to show the history)"
    )


def _verdict(outcome: Any, fmt: str) -> int:
    """Exit status 0 (PASS, said on standard output for the table format) or 1 (FAIL, on standard error:
    one line per failing check, the overall one and each slice's)."""
    if outcome.passed:
        if fmt == "table":
            print(outcome.message())
        return 0
    for line in outcome.failures():
        print(f"qrelforge check: {line}", file=sys.stderr)
    return 1


def _show_history(args: argparse.Namespace) -> None:
    from metrics.history import history_chart, history_measures, read_history, trend_text

    header, rows = read_history(args.history)
    measures = history_measures(header)
    if args.trend:
        sys.stdout.write(trend_text(rows, measures, args.history))
    if args.plot:
        chart = history_chart(rows, measures, args.history)
        Path(args.plot).write_text(chart + "\n", encoding="utf-8")
