"""``qrelforge score QRELS RUN...``: trec_eval-faithful measures of each run, as a table, JSON, CSV or
trec_eval text.

A RUN may be partition files (`metrics.distributed`, ``--engine ray``); ``--by`` adds slice means, ``--ppi``
is `annotate_app.cli.scoring.ppi`, ``--passages`` is `annotate_app.cli._chunk_runs`. JSON carries a
fingerprint.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from annotate_app.cli._chunk_runs import add_chunk_run_options
from annotate_app.cli._common import Subcommands, add_project_option, command, emit, partitioned
from annotate_app.cli.scoring._shared import DEFAULT_MEASURES, Engine, add_slice_options, slicing_of
from annotate_app.cli.scoring.ppi import score_ppi
from metrics.errors import QrelForgeError
from metrics.stats.isotonic import Calibration

__all__ = ["add_score_parser"]


def add_score_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "score",
        help="score runs against qrels (trec_eval -c semantics)",
        description="Score one or more TREC runs against qrels.",
    )
    p.add_argument("qrels", help="qrels file: TREC (qid iter docid rel) or BEIR TSV (with --passages: a RUN)")
    p.add_argument(
        "runs",
        nargs="*",
        metavar="RUN",
        help="TREC run file(s); a run held as partitions: a directory, a quoted glob, or Parquet files "
        "(query_id, doc_id, score), every query in one partition",
    )
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
        "--engine",
        type=Engine,
        choices=list(Engine),
        default=Engine.LOCAL,
        help="local: in this process (default); ray: one Ray task per partition (needs the ray extra)",
    )
    p.add_argument(
        "--address",
        metavar="auto|local|HOST:PORT",
        help="with --engine ray: local starts a Ray with this machine's CPUs (default), auto joins the "
        "cluster running here, HOST:PORT (or ray://HOST:PORT) a remote one",
    )
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
    p.add_argument(
        "--ppi",
        metavar="JUDGE",
        help="prediction-powered inference with the machine judge JUDGE of the project (-p); QRELS is then "
        "the human qrels: release (the latest), release:N, or a qrels file",
    )
    p.add_argument(
        "--calibrate",
        choices=[c.value for c in Calibration],
        help="with --ppi: also give the interval with the judge's grades calibrated on the human sample "
        "(isotonic, cross-fitted over 5 folds of its queries), and how much narrower it is",
    )
    add_chunk_run_options(p)
    add_slice_options(p)
    add_project_option(p)
    p.set_defaults(handler=_cmd_score)


@command
def _cmd_score(args: argparse.Namespace) -> int:
    _lean_arrow()
    _small_pages()
    from annotate_app.cli import _chunk_runs
    from metrics import parse_measures, read_qrels
    from metrics.report import render

    measures = parse_measures(args.measures or DEFAULT_MEASURES)
    chunked = _chunk_runs.chunk_scoring(args, measures)
    if args.ppi is not None:
        if args.by is not None:
            raise QrelForgeError("--by does not work with --ppi")
        return score_ppi(args)
    if args.calibrate is not None:
        raise QrelForgeError("--calibrate works with --ppi JUDGE only")
    cut = slicing_of(args, uses="--ppi JUDGE or --by tag|tag:KEY")
    if cut is not None and args.format == "trec":
        raise QrelForgeError("--by works with --format table, json or csv")
    digests = _report_digests(args) if args.format == "json" else None
    qrels = chunked.qrels if chunked else read_qrels(args.qrels)
    if chunked:
        results = [chunked.score(run, measures, strict=args.strict) for run in args.runs]
    elif args.engine is Engine.RAY:
        results = _score_on_ray(args, measures)
    else:
        if args.address is not None:
            raise QrelForgeError(f"--address {args.address!r} needs --engine ray")
        results = _score_here(args, qrels, measures)
    if args.format == "json" or cut is not None:
        text = _report_text(args, qrels, results, measures, cut, digests, chunked)
    else:
        text = render.score_output(results, measures, fmt=args.format, per_query=args.per_query)
    emit(text, args.output)
    return 0


def _report_digests(args: argparse.Namespace) -> Any:
    """The sha256 of the report's files, hashed on a background thread while the runs are scored."""
    from metrics.fingerprint import FileDigests

    files = [args.qrels, *args.runs, args.corpus, args.chunk_map, args.queries, args.chunks, args.docs]
    return FileDigests(f for f in files if f)


def _report_text(
    args: argparse.Namespace,
    qrels: Any,
    results: list[Any],
    measures: list[Any],
    cut: Any,
    digests: Any,
    chunked: Any = None,
) -> str:
    """``score``'s JSON report, or its table or CSV with slices (``--by``)."""
    from annotate_app.cli import _reports

    if args.format == "json":
        fp = _reports.score_fingerprint(
            qrels,
            args.qrels,
            args.runs,
            results,
            measures,
            per_query=args.per_query,
            strict=args.strict,
            cut=cut,
            corpus=args.corpus,
            chunk_map=args.chunk_map,
            digests=digests,
            chunked=chunked,
        )
        document = _reports.score_document(
            results, measures, per_query=args.per_query, cut=cut, fingerprint=fp
        )
        return json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    document = _reports.score_document(results, measures, per_query=False, cut=cut, fingerprint=None)
    return _reports.score_text(document, results, measures, args.format)


def _lean_arrow() -> None:
    """Arrow's jemalloc pool for this process, unless the user chose one (``ARROW_DEFAULT_MEMORY_POOL``): it
    hands freed parse buffers back sooner than the default mimalloc, so the peak RSS is lower (figures in the
    README's Speed section). Only before pyarrow is imported; the numbers are the same with any pool."""
    if "pyarrow" not in sys.modules:
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")


def _small_pages() -> None:
    """numpy's large arrays in 4 KB pages for this process, unless the user chose one
    (``NUMPY_MADVISE_HUGEPAGE``): the run's columns are reserved whole and written piece by piece, and
    faulting them in as transparent huge pages costs more system time than it saves (figures in the
    README's Speed section). Only before numpy is imported; the numbers are the same either way."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def _score_here(args: argparse.Namespace, qrels: Any, measures: list[Any]) -> list[Any]:
    from metrics.evaluate import evaluate

    corpus = _corpus(args.corpus) if args.corpus else None
    return [
        evaluate(
            qrels,
            _partitions(run) if partitioned(run) else run,
            measures,
            corpus=corpus,
            strict=args.strict,
            chunk_map=args.chunk_map,
        )
        for run in args.runs
    ]


def _corpus(path: str) -> Any:
    from metrics import read_corpus  # (only with --corpus: plain scoring never imports the table readers)

    return read_corpus(path)


def _partitions(run: str) -> Any:
    from metrics.distributed import read_partitions  # pyarrow: imported only for a partitioned run

    return read_partitions(run)


def _score_on_ray(args: argparse.Namespace, measures: list[Any]) -> list[Any]:
    from metrics import read_qrels
    from metrics.distributed import Address, evaluate_ray_runs

    for flag, value in (("--corpus", args.corpus), ("--chunk-map", args.chunk_map)):
        if value:
            raise QrelForgeError(f"{flag} {value!r} is not supported with --engine ray; use --engine local")
    address = args.address or Address.LOCAL
    return evaluate_ray_runs(read_qrels(args.qrels), args.runs, measures, address=address, strict=args.strict)
