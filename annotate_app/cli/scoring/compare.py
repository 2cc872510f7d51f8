"""``qrelforge compare QRELS RUN... [--baseline NAME]``: runs compared with confidence.

Means, paired tests against the baseline (t-test, randomization test, bootstrap interval; Holm-adjusted),
per-query win/tie/loss, as a table, Markdown, HTML, LaTeX or JSON; with ``--by``, the tests within each
slice (its own query count).
"""

from __future__ import annotations

import argparse

from annotate_app.cli._common import (
    Subcommands,
    add_project_option,
    command,
    emit,
    int_at_least,
    positive_int,
)
from annotate_app.cli.scoring._shared import DEFAULT_MEASURES, FORMATS, add_slice_options, level, slicing_of
from metrics.errors import QrelForgeError

__all__ = ["add_compare_parser"]


def add_compare_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "compare",
        help="compare runs against a baseline with significance tests",
        description="Score runs on the same qrels and test each against the baseline, query by "
        "query: paired t-test, randomization (sign-flip) test, bootstrap interval of the mean "
        "difference, Holm-adjusted across the runs; per-query win/tie/loss. Runs are named by "
        "their tag (or file name when two share a tag).",
    )
    p.add_argument("qrels", help="qrels file: TREC (qid iter docid rel) or BEIR TSV")
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC run files (at least two)")
    p.add_argument(
        "--baseline", metavar="NAME", help="the run the others are tested against (default: the first)"
    )
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        dest="measures",
        metavar="MEASURE",
        help="measure, e.g. P@10, nDCG@10, CtxP@5 (repeatable; default as `score`)",
    )
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.add_argument(
        "--permutations",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="random sign flips of the randomization test (default 10000; exact when 2^n <= N)",
    )
    p.add_argument(
        "--bootstrap",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="bootstrap resamples (default 10000)",
    )
    p.add_argument("--seed", type=int_at_least(0), default=0, help="random seed (default 0)")
    p.add_argument("--alpha", type=level, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--correction", choices=("holm", "bonferroni", "none"), default="holm")
    p.add_argument(
        "--tests",
        default="t,permutation,bootstrap",
        help="comma-separated tests among t, permutation, bootstrap (default all three)",
    )
    p.add_argument(
        "--max-queries",
        type=int,
        default=50,
        metavar="N",
        help="per-query tables in markdown/html only up to N queries (default 50)",
    )
    p.add_argument(
        "--corpus", metavar="DOCS", help="corpus (JSONL/CSV/TSV): unknown document IDs become errors"
    )
    p.add_argument(
        "--strict", action="store_true", help="queries missing from a run, or extra in it, are errors"
    )
    add_slice_options(p)
    add_project_option(p)
    p.set_defaults(handler=_cmd_compare)


@command
def _cmd_compare(args: argparse.Namespace) -> int:
    from annotate_app.cli import _reports

    if args.max_queries < 0:
        raise QrelForgeError(f"--max-queries must be an int >= 0; got {args.max_queries}")
    cut = slicing_of(args, uses="--by tag|tag:KEY")
    options = _reports.CompareOptions(
        baseline=args.baseline,
        tests=tuple(t.strip() for t in args.tests.split(",") if t.strip()),
        n_permutations=args.permutations,
        n_bootstrap=args.bootstrap,
        seed=args.seed,
        alpha=args.alpha,
        correction=args.correction,
        strict=args.strict,
    )
    report, parts = _reports.compare_reports(
        args.qrels, args.runs, args.measures or DEFAULT_MEASURES, options, cut=cut, corpus=args.corpus
    )
    emit(_reports.render_compare(report, parts, cut, args.format, args.max_queries), args.output)
    return 0
