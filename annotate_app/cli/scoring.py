"""``qrelforge score``, ``compare``, ``check`` and ``ab``: score runs, compare them with confidence, gate CI.

- ``score QRELS RUN...``: trec_eval-faithful measures of each run, as a table, JSON, CSV or trec_eval text.
  A RUN may be a file, or a run held as partition files: a directory, a quoted glob, Parquet
  (`metrics.distributed`). ``--engine ray [--address local|auto|HOST:PORT]`` scores the partitions on Ray
  (the ``ray`` extra), with the same output as the default ``--engine local``.
- ``score --passages PASSAGES --chunks CHUNKS RUN...``: chunk runs against evidence passages: every measure on
  the chunk qrels derived for the chunking, and the evidence measures (``EvidenceRecall@k``, ...) at the
  character level (`annotate_app.cli._chunk_runs`); ``verify`` takes the same flags.
- ``score --ppi JUDGE -p P RELEASE RUN...``: prediction-powered inference (`metrics.stats.ppi`) of each run's
  mean over a project's release and a machine judge: the measure per query with the judge's qrels (every query
  it judged) and with the human qrels (``release`` for the latest release, ``release:N``, or a qrels file),
  the PPI estimate with its 95% interval beside the human-only interval (needs the ``app`` extra).
- ``compare QRELS RUN... [--baseline NAME]``: means, paired tests against the baseline (t-test, randomization
  test, bootstrap interval; Holm-adjusted), per-query win/tie/loss, as a table, Markdown, HTML, LaTeX or JSON.
- ``check QRELS RUN --min "R@5=0.7" [--max ...] [--history FILE] [--trend] [--plot FILE.svg]``: a CI gate.
  Exit status 0 when every threshold is met, 1 when one is missed (each missed one is named), 2 on bad input.
  With ``--history`` each check appends a dated row to a CSV file (`metrics.history`); ``--trend`` prints it.
- ``--by tag|tag:KEY --queries FILE`` (score, compare, check): also per slice of queries, the slices taken
  from the queries file's ``tags`` (`metrics.slices`): each slice's means; compare's tests within each slice
  (its own query count); check's thresholds in every slice too (a slice that misses one fails the gate).
  Without ``--queries``, ``-p PROJECT`` (or ``--db``'s only project, or ``$QRELFORGE_PROJECT``) gives the
  tags stored with the project's queries (`annotate_app.services.scoring.query_tags`; needs the ``app``
  extra). ``check --history`` records each slice too, as a row for run ``NAME[slice]``.
- Fingerprints: every JSON report of score, compare and check, and compare's Markdown and HTML, carry what
  they were computed from (`metrics.fingerprint`: hashes of the qrels and runs, the measures, the version,
  the semantics, the options). ``verify REPORT.json QRELS RUN...`` checks the files' hashes and recomputes
  every number: exit 0 when all hold, 1 listing each that differs, 2 on bad input
  (`annotate_app.cli._reports`).
- ``ab LOGFILE``: an online A/B test from an interaction log (`metrics.stats.ablog`: CSV or JSONL with
  ``user_id``, ``group``, ``query``, ``feedback`` 0/1, ``timestamp``): each arm's satisfaction rate with a
  Wilson interval and a two-proportion z-test against the control.

These commands need only the metrics library (no ``app`` extra). It is imported inside the handlers, so
building the parser stays fast; bad input raises `QrelForgeError` (one line, exit status 2, via
`annotate_app.cli.main`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from annotate_app.cli._chunk_runs import add_chunk_run_options
from annotate_app.cli._common import (
    AddParser,
    Subcommands,
    add_project_option,
    command,
    emit,
    int_at_least,
    open_db,
    partitioned,
    positive_int,
    project_of,
)
from metrics.errors import QrelForgeError

if TYPE_CHECKING:
    from annotate_app.cli._reports import named_run_files

__all__ = ["COMMANDS", "DEFAULT_MEASURES", "Engine", "named_run_files"]

DEFAULT_MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR"]
FORMATS = ("table", "markdown", "html", "latex", "json")


class Engine(StrEnum):
    """Where ``score`` evaluates: in this process, or on Ray (`metrics.distributed`)."""

    LOCAL = "local"
    RAY = "ray"


# ------------------------------------------------------------------------------------------------ parsers
def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number strictly between 0 and 1; got {text!r}")
    return value


def _add_slice_options(p: argparse.ArgumentParser) -> None:
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
    add_chunk_run_options(p)
    _add_slice_options(p)
    add_project_option(p)
    p.set_defaults(handler=_cmd_score)


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
    p.add_argument("--alpha", type=_level, default=0.05, help="significance level (default 0.05)")
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
    _add_slice_options(p)
    add_project_option(p)
    p.set_defaults(handler=_cmd_compare)


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
    _add_slice_options(p)
    add_project_option(p)
    p.set_defaults(handler=_cmd_check)


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
    p.add_argument("--alpha", type=_level, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--confidence", type=_level, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(handler=_cmd_ab)


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


def __getattr__(name: str) -> Any:
    if name == "named_run_files":  # re-exported, imported on first use (plain scoring never needs it)
        from annotate_app.cli._reports import named_run_files

        return named_run_files
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


COMMANDS: dict[str, AddParser] = {
    "score": add_score_parser,
    "compare": add_compare_parser,
    "check": add_check_parser,
    "ab": add_ab_parser,
    "verify": add_verify_parser,
}


# ------------------------------------------------------------------------------------------------- slices
def _slicing(args: argparse.Namespace, *, uses: str) -> Any:
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
    return _reports.slicing(args.by, args.queries, (lambda: _stored_tags(args)) if in_project else None)


def _stored_tags(args: argparse.Namespace) -> tuple[str, dict[str, tuple[str, ...]]]:
    """The project's name and ``{query_id: tags}`` of its stored queries."""
    from annotate_app.services import scoring
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    project = project_of(db, args)
    return project, scoring.query_tags(db, SYSTEM, project)


# -------------------------------------------------------------------------------------------------- score
@command
def _cmd_score(args: argparse.Namespace) -> int:
    _lean_arrow()
    from annotate_app.cli import _chunk_runs
    from metrics import parse_measures, read_qrels
    from metrics.report import render

    measures = parse_measures(args.measures or DEFAULT_MEASURES)
    chunked = _chunk_runs.chunk_scoring(args, measures)
    if args.ppi is not None:
        if args.by is not None:
            raise QrelForgeError("--by does not work with --ppi")
        return _cmd_score_ppi(args)
    cut = _slicing(args, uses="--ppi JUDGE or --by tag|tag:KEY")
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
    hands freed parse buffers back sooner than the default mimalloc, a lower peak RSS (7M-line run: ~410 MB
    against ~490 MB). Only before pyarrow is imported; the numbers are the same with any pool."""
    if "pyarrow" not in sys.modules:
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")


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


@command
def _cmd_score_ppi(args: argparse.Namespace) -> int:
    from annotate_app.services import judges
    from annotate_app.services.auth import SYSTEM
    from metrics import parse_measures

    if args.engine is not Engine.LOCAL or args.per_query or args.format not in ("table", "json"):
        raise QrelForgeError(
            "--ppi works with --engine local and --format table or json, without --per-query"
        )
    measures = parse_measures(args.measures or DEFAULT_MEASURES)
    db = open_db(args)
    project = project_of(db, args)
    human = _human_qrels(db, project, args.qrels)
    judge = judges.judge_qrels(db, SYSTEM, project, args.ppi)
    if len(judge.relevance) == 0:
        raise QrelForgeError(f"judge {args.ppi!r} has no current labels in project {project!r}")
    rows = [row for run in args.runs for row in _ppi_rows(human, judge, run, measures)]
    if args.format == "json":
        emit(json.dumps({"judge": args.ppi, "results": rows}, indent=2, allow_nan=False) + "\n", args.output)
    else:
        emit(_ppi_table(rows), args.output)
    return 0


def _human_qrels(db: Any, project: str, spec: str) -> Any:
    """The human qrels of ``--ppi``: ``release`` (latest), ``release:N``, or a qrels file."""
    from annotate_app.services import judges
    from annotate_app.services.auth import SYSTEM
    from metrics import read_qrels

    if spec != "release" and not spec.startswith("release:"):
        return read_qrels(spec)
    version = spec.partition(":")[2]
    if version and not version.isdigit():
        raise QrelForgeError(
            f"QRELS must be release, release:N (N a release version) or a file; got {spec!r}"
        )
    return judges.human_release_qrels(db, SYSTEM, project, int(version) if version else None)


def _ppi_rows(human: Any, judge: Any, run_path: str, measures: list[Any]) -> list[dict[str, Any]]:
    """One JSON row per measure of `metrics.stats.ppi.ppi_run` (as the Score page's PPI tab)."""
    import math
    import warnings

    from metrics import read_run
    from metrics.errors import UndefinedMetricWarning
    from metrics.stats.ppi import ppi_run

    run = read_run(run_path)
    name = run.name or Path(run_path).name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        results = ppi_run(human, judge, run, measures, name=name)
    rows = []
    for measure, result in results.items():
        fields = result.to_dict().items()
        clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in fields}
        rows.append(
            {
                "measure": measure,
                **{k: str(v) if k in ("method", "human_interval") else v for k, v in clean.items()},
            }
        )
    return rows


def _ppi_table(rows: list[dict[str, Any]]) -> str:
    from annotate_app.cli._common import grid

    def interval(low: float | None, high: float | None) -> str:
        return "-" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"

    header = ["run", "measure", "human n/N", "human mean", "human 95% CI", "PPI", "PPI 95% CI", "width ratio"]
    body = [
        [
            r["run"],
            r["measure"],
            f"{r['n_human']}/{r['n_total']}",
            f"{r['human_mean']:.4f}",
            interval(r["human_ci_low"], r["human_ci_high"]),
            f"{r['estimate']:.4f}",
            interval(r["ci_low"], r["ci_high"]),
            "-" if not r["human_width"] or r["width"] is None else f"{r['width'] / r['human_width']:.2f}",
        ]
        for r in rows
    ]
    return grid(header, body)


# ------------------------------------------------------------------------------------------------ compare
@command
def _cmd_compare(args: argparse.Namespace) -> int:
    from annotate_app.cli import _reports

    if args.max_queries < 0:
        raise QrelForgeError(f"--max-queries must be an int >= 0; got {args.max_queries}")
    cut = _slicing(args, uses="--by tag|tag:KEY")
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


# -------------------------------------------------------------------------------------------------- check
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

    cut = _slicing(args, uses="--by tag|tag:KEY")
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


# ------------------------------------------------------------------------------------------------- verify
def _cmd_verify(args: argparse.Namespace) -> int:
    from annotate_app.cli._reports import verify

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


def _show_history(args: argparse.Namespace) -> None:
    from metrics.history import history_chart, history_measures, read_history, trend_text

    header, rows = read_history(args.history)
    measures = history_measures(header)
    if args.trend:
        sys.stdout.write(trend_text(rows, measures, args.history))
    if args.plot:
        chart = history_chart(rows, measures, args.history)
        Path(args.plot).write_text(chart + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------------------------------- ab
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
