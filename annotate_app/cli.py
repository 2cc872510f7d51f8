"""``qrelforge``: the command line. Each subcommand calls the services or the metrics library.

Bad input prints one line, ``qrelforge: error: ...``, and exits with status 2; never a traceback.
Heavy modules are imported inside the subcommands, so ``qrelforge score`` starts fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from annotate_app import cli_admin, cli_backup, cli_data, cli_review
from annotate_app.cli_compare import add_ab_parser, add_check_parser, add_compare_parser
from annotate_app.cli_retrieval import add_baseline_parser, add_fuse_parser

DEFAULT_MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR"]


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def _score_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score runs against qrels (trec_eval -c semantics)",
        description="Score one or more TREC runs against qrels.",
    )
    p.add_argument("qrels", help="qrels file: TREC (qid iter docid rel) or BEIR TSV")
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC run file(s)")
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        dest="measures",
        metavar="MEASURE",
        help=f"measure, e.g. P@10, nDCG@10, P(rel=2)@5 (repeatable; default {' '.join(DEFAULT_MEASURES)})",
    )
    p.add_argument("--per-query", action="store_true", help="also show the value of every query")
    p.add_argument("--format", choices=["table", "json", "csv", "trec"], default="table")
    p.add_argument(
        "--corpus", metavar="DOCS", help="corpus (JSONL/CSV/TSV): unknown document IDs become errors"
    )
    p.add_argument(
        "--chunk-map", metavar="FILE", help="chunk_id→doc_id table: score a chunk-level run by document"
    )
    p.add_argument(
        "--strict", action="store_true", help="queries missing from a run, or extra in it, are errors"
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(handler=_cmd_score)


def _cmd_score(args: argparse.Namespace) -> int:
    from metrics import evaluate, parse_measures, read_corpus, read_qrels, render

    measures = parse_measures(args.measures or DEFAULT_MEASURES)
    qrels = read_qrels(args.qrels)
    corpus = read_corpus(args.corpus) if args.corpus else None
    results = [
        evaluate(qrels, run, measures, corpus=corpus, strict=args.strict, chunk_map=args.chunk_map)
        for run in args.runs
    ]
    _emit(render.score_output(results, measures, fmt=args.format, per_query=args.per_query), args.output)
    return 0


def _emit(text: str, output: str | None) -> None:
    if output:
        with open(output, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


PARSERS: list[Callable[[argparse._SubParsersAction], None]] = [
    _score_parser,
    add_baseline_parser,
    add_fuse_parser,
    add_compare_parser,
    add_check_parser,
    add_ab_parser,
    cli_admin.add_parsers,
    cli_data.add_parsers,
    cli_review.add_parsers,
    cli_backup.add_parsers,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qrelforge", description="Relevance judgments and retrieval metrics."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in PARSERS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except (ValueError, CliError, OSError) as exc:
        message = " ".join(str(exc).split("\n")[0].split()) or type(exc).__name__
        print(f"qrelforge: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
