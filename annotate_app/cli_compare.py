"""``qrelforge compare``, ``qrelforge check`` and ``qrelforge ab``: compare runs with confidence.

- ``compare QRELS RUN... [--baseline NAME]``: means, paired tests against the baseline (t-test, randomization
  test, bootstrap interval; Holm-adjusted), per-query win/tie/loss, as a table, Markdown, HTML, LaTeX or JSON.
- ``check QRELS RUN --min "R@5=0.7" [--max ...] [--history FILE] [--trend] [--plot FILE.svg]``: a CI gate.
  Exit status 0 when every threshold is met, 1 when one is missed (each missed one is named), 2 on bad input.
  With ``--history`` each check appends a dated row to a CSV file; ``--trend`` prints that history.
- ``ab LOGFILE``: an online A/B test from an interaction log (CSV or JSONL with ``user_id``, ``group``,
  ``query``, ``feedback`` 0/1, ``timestamp``): each arm's satisfaction rate with a Wilson interval and a
  two-proportion z-test against the control.

The metrics library is imported inside the handlers, so building the parser stays fast; bad input raises
``ValueError`` (one line, exit status 2, via ``annotate_app.cli.main``).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FORMATS = ("table", "markdown", "html", "latex", "json")
HISTORY_FIELDS = ("timestamp", "run", "qrels", "status", "failed")
SPARK = "▁▂▃▄▅▆▇█"


# ------------------------------------------------------------------------------------------------ parsers
def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an int >= 1; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an int >= 1; got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an int >= 0; got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an int >= 0; got {text!r}")
    return value


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number strictly between 0 and 1; got {text!r}")
    return value


def add_compare_parser(sub: argparse._SubParsersAction) -> None:
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
        type=_count,
        default=10_000,
        metavar="N",
        help="random sign flips of the randomization test (default 10000; exact when 2^n <= N)",
    )
    p.add_argument(
        "--bootstrap", type=_count, default=10_000, metavar="N", help="bootstrap resamples (default 10000)"
    )
    p.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
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
    p.set_defaults(handler=_cmd_compare)


def add_check_parser(sub: argparse._SubParsersAction) -> None:
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
    p.set_defaults(handler=_cmd_check)


def add_ab_parser(sub: argparse._SubParsersAction) -> None:
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


# ------------------------------------------------------------------------------------------------ compare
def _emit(text: str, output: str | None) -> None:
    from annotate_app.cli import _emit as emit

    emit(text, output)


def named_run_files(paths: list[str]) -> dict[str, Any]:
    """Read run files, naming each by its tag; runs sharing a tag are named by their file names instead."""
    from metrics import read_run

    runs = [read_run(p) for p in paths]
    tags = [r.name for r in runs]
    names = [tag if tags.count(tag) == 1 else Path(p).name for tag, p in zip(tags, paths, strict=True)]
    names = [n if names.count(n) == 1 else p for n, p in zip(names, paths, strict=True)]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise ValueError(f"run file {paths[i]!r} is given twice")
    return dict(zip(names, runs, strict=True))


def _cmd_compare(args: argparse.Namespace) -> int:
    from annotate_app.cli import DEFAULT_MEASURES
    from metrics import read_qrels
    from metrics.compare import compare

    if args.max_queries < 0:
        raise ValueError(f"--max-queries must be an int >= 0; got {args.max_queries}")
    tests = tuple(t.strip() for t in args.tests.split(",") if t.strip())
    report = compare(
        read_qrels(args.qrels),
        named_run_files(args.runs),
        args.measures or DEFAULT_MEASURES,
        baseline=args.baseline,
        tests=tests,
        n_permutations=args.permutations,
        n_bootstrap=args.bootstrap,
        seed=args.seed,
        alpha=args.alpha,
        correction=args.correction,
        corpus=args.corpus,
        strict=args.strict,
    )
    _emit(_render(report, args.format, args.max_queries), args.output)
    return 0


def _render(report: Any, fmt: str, max_queries: int) -> str:
    if fmt == "json":
        return json.dumps(report.to_dict(), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    if fmt == "markdown":
        return report.to_markdown(max_queries=max_queries)
    if fmt == "html":
        return report.to_html(max_queries=max_queries)
    return report.to_latex() if fmt == "latex" else report.to_text()


# -------------------------------------------------------------------------------------------------- check
def _cmd_check(args: argparse.Namespace) -> int:
    if args.qrels is None or args.run is None:
        return _history_only(args)
    if (args.trend or args.plot) and not args.history:
        raise ValueError("--trend and --plot need --history FILE")
    if not (args.minimum or args.maximum):
        raise ValueError("check needs at least one threshold: --min MEASURE=VALUE or --max MEASURE=VALUE")
    from dataclasses import replace

    from metrics.checks import check_thresholds

    result = check_thresholds(args.qrels, args.run, minimum=args.minimum, maximum=args.maximum)
    result = replace(result, run=args.name or result.run or Path(args.run).name)
    if args.history:
        append_history(args.history, result, result.run, args.qrels)
    text = (
        result.to_text()
        if args.format == "table"
        else json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n"
    )
    sys.stdout.write(text)
    if args.trend or args.plot:
        _show_history(args)
    return _verdict(result, args.format)


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
    raise ValueError(
        "check needs QRELS and RUN (or only --history FILE with --trend/--plot to show the history)"
    )


def _verdict(result: Any, fmt: str) -> int:
    """Exit status 0 (PASS, said on standard output for the table format) or 1 (FAIL, on standard error)."""
    if result.passed:
        if fmt == "table":
            print(result.message())
        return 0
    print(f"qrelforge check: {result.message()}", file=sys.stderr)
    return 1


def _history_row(result: Any, name: str, qrels: str) -> dict[str, str]:
    from metrics.render import csv_safe

    row = {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "run": csv_safe(name),
        "qrels": csv_safe(qrels),
        "status": "pass" if result.passed else "fail",
        "failed": ";".join(r.measure for r in result.failures),
    }
    row.update({m: ("" if v is None else repr(v)) for m, v in result.values.items()})
    return row


def append_history(path: str, result: Any, name: str, qrels: str) -> None:
    """Append one dated row to the CSV history at ``path`` (created with its header when missing). A check
    with a measure the header lacks rewrites the file once with the wider header (older rows get blanks)."""
    row = _history_row(result, name, qrels)
    header, rows = (
        read_history(path) if os.path.exists(path) and os.path.getsize(path) else (list(HISTORY_FIELDS), [])
    )
    wider = header + [m for m in row if m not in header]
    if wider != header or not os.path.exists(path):
        _rewrite(path, wider, rows)
    with open(path, "a", encoding="utf-8", newline="") as f:
        csv.DictWriter(f, fieldnames=wider, lineterminator="\n").writerow(row)


def _rewrite(path: str, header: list[str], rows: list[dict[str, str]]) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, lineterminator="\n", restval="")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def read_history(path: str) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of a check history; errors name the file and line."""
    from metrics.errors import FormatError, Problem

    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or tuple(header[: len(HISTORY_FIELDS)]) != HISTORY_FIELDS:
            raise FormatError(
                Problem(
                    path,
                    1,
                    ",".join(header or []),
                    "not a qrelforge check history (expected a "
                    f"header starting with {','.join(HISTORY_FIELDS)})",
                )
            )
        rows = []
        for record in reader:
            if not record:
                continue
            if len(record) != len(header):
                raise FormatError(
                    Problem(
                        path,
                        reader.line_num,
                        ",".join(record),
                        f"expected {len(header)} fields as in the header, got {len(record)}",
                    )
                )
            rows.append(dict(zip(header, record, strict=True)))
    return header, rows


def _floats(rows: list[dict[str, str]], measure: str, path: str) -> list[float | None]:
    out = []
    for i, row in enumerate(rows):
        cell = row.get(measure, "")
        try:
            out.append(float(cell) if cell else None)
        except ValueError:
            raise ValueError(f"{path}: check {i + 1}: {measure} is not a number: {cell!r}") from None
    return out


def sparkline(values: list[float | None]) -> str:
    """One block character per value scaled between the series' min and max; a space for a gap."""
    known = [v for v in values if v is not None]
    if not known:
        return " " * len(values)
    lo, hi = min(known), max(known)
    return "".join(
        " " if v is None else SPARK[3 if hi == lo else round((v - lo) / (hi - lo) * 7)] for v in values
    )


def _show_history(args: argparse.Namespace) -> None:
    header, rows = read_history(args.history)
    measures = [h for h in header if h not in HISTORY_FIELDS]
    if args.trend:
        sys.stdout.write(trend_text(rows, measures, args.history))
    if args.plot:
        _plot(rows, measures, args.history, args.plot)


def trend_text(rows: list[dict[str, str]], measures: list[str], path: str) -> str:
    """Per run and measure: checks, first, last, min, max and a sparkline of the last 40; then the last check."""
    from metrics.render import _grid

    if not rows:
        return f"{path}: no checks recorded yet\n"
    table = [["run", "measure", "checks", "first", "last", "min", "max", "trend (oldest → newest)".ljust(40)]]
    for run in dict.fromkeys(r["run"] for r in rows):
        mine = [r for r in rows if r["run"] == run]
        for m in measures:
            values = _floats(mine, m, path)
            known = [v for v in values if v is not None]
            if known:
                table.append(
                    [
                        run,
                        m,
                        str(len(known)),
                        f"{known[0]:.4f}",
                        f"{known[-1]:.4f}",
                        f"{min(known):.4f}",
                        f"{max(known):.4f}",
                        sparkline(values[-40:]).ljust(40),
                    ]
                )
    last = rows[-1]
    failed = f" ({last['failed']})" if last["failed"] else ""
    return _grid(table) + f"last check: {last['timestamp']} {last['run']}: {last['status']}{failed}\n"


def _plot(rows: list[dict[str, str]], measures: list[str], path: str, out: str) -> None:
    from metrics.charts import svg_line_chart

    series = {}
    for run in dict.fromkeys(r["run"] for r in rows):
        for m in measures:
            values = [
                v if r["run"] == run else None for r, v in zip(rows, _floats(rows, m, path), strict=True)
            ]
            if any(v is not None for v in values):
                series[f"{run} · {m}"] = values
    chart = svg_line_chart(series, x_labels=[r["timestamp"] for r in rows], title=f"check history: {path}")
    Path(out).write_text(chart + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------------------------------- ab
def _cmd_ab(args: argparse.Namespace) -> int:
    from metrics.stats import ab_test

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
    _emit(text, args.output)
    return 0


def read_log(path: str) -> tuple[list[dict[str, Any]], list[int]]:
    """Records of a CSV/TSV (with header) or JSONL interaction log, and the line each came from."""
    from metrics.errors import FormatError, Problem

    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(
            Problem(path, line, "", f"not valid UTF-8 (byte {exc.start + 1} of the file)")
        ) from None
    suffix = Path(path).suffix.lower()
    jsonl = suffix in (".jsonl", ".ndjson", ".json") or (
        suffix not in (".csv", ".tsv") and text.lstrip()[:1] == "{"
    )
    records, lines = (
        _jsonl_records(text, path) if jsonl else _csv_records(text, path, "\t" if suffix == ".tsv" else ",")
    )
    if not records:
        raise FormatError(Problem(path, None, "", "no interactions in the log"))
    return records, lines


def _jsonl_records(text: str, path: str) -> tuple[list[dict[str, Any]], list[int]]:
    from metrics.errors import FormatError, Problem

    records, lines, problems = [], [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(path, number, line, f"invalid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(path, number, line, f"expected a JSON object, got {type(obj).__name__}"))
            continue
        records.append(obj)
        lines.append(number)
    if problems:
        raise FormatError(problems)
    return records, lines


def _csv_records(text: str, path: str, delimiter: str) -> tuple[list[dict[str, Any]], list[int]]:
    from metrics.errors import FormatError, Problem
    from metrics.stats import AB_COLUMNS

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = None
    records, lines, problems = [], [], []
    for record in reader:
        if not any(cell.strip() for cell in record):
            continue
        if header is None:
            header = [h.strip() for h in record]
            missing = [c for c in AB_COLUMNS if c not in header]
            if missing:
                raise FormatError(
                    Problem(
                        path,
                        reader.line_num,
                        delimiter.join(record),
                        f"header lacks column{'s' if len(missing) > 1 else ''} {missing}",
                    )
                )
            continue
        if len(record) != len(header):
            problems.append(
                Problem(
                    path,
                    reader.line_num,
                    delimiter.join(record),
                    f"expected {len(header)} fields as in the header, got {len(record)}",
                )
            )
            continue
        records.append(dict(zip(header, record, strict=True)))
        lines.append(reader.line_num)
    if problems:
        raise FormatError(problems)
    return records, lines
