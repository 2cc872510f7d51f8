"""``qrelforge baseline bm25`` and ``qrelforge fuse``: make runs to score next to a team's own.

Both write a TREC run (``-o -`` writes it to standard output) and print a one-line summary on standard error.
These commands need only the metrics library (no ``app`` extra). It is imported inside the handlers, so
building the parser stays fast; bad input raises `QrelForgeError` (one line, exit status 2, via
`annotate_app.cli.main`).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Any

from annotate_app.cli._common import AddParser, Subcommands
from metrics.errors import QrelForgeError

__all__ = ["COMMANDS", "FUSION_METHODS", "NORMS"]

FUSION_METHODS = ("rrf", "combsum", "combmnz")
NORMS = ("minmax", "zscore", "none")


def add_baseline_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "baseline",
        help="make a baseline run (BM25)",
        description="Make a baseline run from a corpus and queries.",
    )
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    b = models.add_parser(
        "bm25",
        help="BM25 over title + text (CJK bigrams, Latin words)",
        description="BM25 (Lucene variant, bm25s) over each document's title and text. Terms: overlapping "
        "character bigrams of CJK runs (a lone character is a term), lowercase words of Latin "
        "letters and digits. A document is retrieved when it shares a term with the query.",
    )
    b.add_argument(
        "--corpus", required=True, metavar="DOCS", help="documents: JSONL, CSV or TSV (doc_id, title, text)"
    )
    b.add_argument(
        "--queries", required=True, metavar="QUERIES", help="queries: JSONL, CSV or TSV (query_id, text)"
    )
    b.add_argument("-k", type=int, default=100, help="documents per query (default 100)")
    b.add_argument("--k1", type=float, default=1.5, help="BM25 term-frequency saturation (default 1.5)")
    b.add_argument("--b", type=float, default=0.75, help="BM25 length normalization, 0..1 (default 0.75)")
    b.add_argument("--tag", default="bm25", help="run tag, the run's name (default bm25)")
    b.add_argument(
        "-o", "--output", required=True, metavar="RUN", help="TREC run to write ('-': standard output)"
    )
    b.set_defaults(handler=_cmd_bm25)


def add_fuse_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "fuse",
        help="fuse runs: RRF, CombSUM, CombMNZ",
        description="Fuse TREC runs query by query. rrf: sum of 1/(k + rank); combsum: sum of normalized "
        "scores; combmnz: combsum x number of runs retrieving the document. Ranks follow "
        "trec_eval's order (score descending, then doc ID descending); a run lacking a document "
        "adds 0; ties in the fused run are broken by doc ID descending.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC run files")
    p.add_argument("--method", choices=FUSION_METHODS, default="rrf", help="fusion method (default rrf)")
    p.add_argument(
        "--norm", choices=NORMS, help="score normalization per query for combsum/combmnz (default minmax)"
    )
    p.add_argument("-k", type=float, help="RRF constant (default 60)")
    p.add_argument(
        "--depth", type=int, metavar="N", help="use only the top N documents of each run per query"
    )
    p.add_argument("--tag", default="fused", help="run tag of the fused run (default fused)")
    p.add_argument(
        "-o", "--output", required=True, metavar="RUN", help="TREC run to write ('-': standard output)"
    )
    p.set_defaults(handler=_cmd_fuse)


COMMANDS: dict[str, AddParser] = {"baseline": add_baseline_parser, "fuse": add_fuse_parser}


def _check_tag(tag: str) -> None:
    if not tag or re.search(r"\s", tag):
        raise QrelForgeError(f"--tag must be a non-empty word without spaces; got {tag!r}")


def _write(run: Any, output: str, tag: str) -> None:
    from metrics.formats import write_run

    write_run(run, sys.stdout if output == "-" else output, tag=tag)


def _cmd_bm25(args: argparse.Namespace) -> int:
    from metrics.retrieval.bm25 import BM25Index

    _check_tag(args.tag)
    start = time.perf_counter()
    index = BM25Index(args.corpus, k1=args.k1, b=args.b)
    indexed = time.perf_counter()
    run = index.run(args.queries, k=args.k, name=args.tag)
    searched = time.perf_counter()
    _write(run, args.output, args.tag)
    answered = len(run.query_ids)
    nothing = f"; retrieved nothing for {', '.join(run.empty_queries)}" if run.empty_queries else ""
    queries = answered + len(run.empty_queries)
    print(
        f"bm25: {len(index)} documents ({index.vocabulary_size} terms) indexed in {indexed - start:.2f} s; "
        f"{queries} queries searched in {searched - indexed:.2f} s; {len(run)} rows "
        f"-> {args.output}{nothing}",
        file=sys.stderr,
    )
    return 0


def _cmd_fuse(args: argparse.Namespace) -> int:
    from metrics.formats import read_run
    from metrics.retrieval.fusion import fuse

    _check_tag(args.tag)
    if args.method == "rrf" and args.norm is not None:
        raise QrelForgeError(f"--norm applies to combsum and combmnz, not to rrf; got --norm {args.norm}")
    if args.method != "rrf" and args.k is not None:
        raise QrelForgeError(
            f"-k (the RRF constant) applies to rrf only; got -k {args.k:g} with --method {args.method}"
        )
    runs = [read_run(path) for path in args.runs]
    k = 60.0 if args.k is None else args.k
    fused = fuse(runs, method=args.method, norm=args.norm, k=k, depth=args.depth, name=args.tag)
    _write(fused, args.output, args.tag)
    how = f"k={k:g}" if args.method == "rrf" else f"norm={args.norm or 'minmax'}"
    depth = f", depth {args.depth}" if args.depth else ""
    print(
        f"fuse: {len(runs)} runs ({', '.join(str(r.name) for r in runs)}) with {args.method} ({how}{depth}): "
        f"{len(fused.query_ids)} queries, {len(fused)} rows -> {args.output}",
        file=sys.stderr,
    )
    return 0
