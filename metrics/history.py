"""The history of threshold checks: one dated CSV row per ``qrelforge check --history FILE``.

The file starts with the columns `HISTORY_FIELDS` (timestamp, run, qrels, status, failed), then one column per
measure ever checked. A check with a new measure rewrites the file once with the wider header (older rows get
blanks). `trend_text` summarises the history per run and measure with a sparkline, `history_chart` draws it.

``result`` is what `metrics.checks.check_thresholds` returns (anything with ``passed``, ``failures`` and
``values`` will do):

>>> import tempfile, types
>>> path = f"{tempfile.mkdtemp()}/history.csv"
>>> for value in (0.5, 0.75):
...     result = types.SimpleNamespace(passed=True, failures=[], values={"P@3": value})
...     append_history(path, result, "scheme_a", "qrels.trec")
>>> header, rows = read_history(path)
>>> header
['timestamp', 'run', 'qrels', 'status', 'failed', 'P@3']
>>> [(r["run"], r["status"], r["P@3"]) for r in rows]
[('scheme_a', 'pass', '0.5'), ('scheme_a', 'pass', '0.75')]
>>> print(trend_text(rows, history_measures(header), path).splitlines()[1].rstrip())
scheme_a      P@3       2  0.5000  0.7500  0.5000  0.7500  ▁█
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from metrics.errors import FormatError, Problem, QrelForgeError

__all__ = [
    "HISTORY_FIELDS",
    "append_history",
    "history_chart",
    "history_measures",
    "read_history",
    "sparkline",
    "trend_text",
]

HISTORY_FIELDS = ("timestamp", "run", "qrels", "status", "failed")
SPARK = "▁▂▃▄▅▆▇█"

Row = dict[str, str]


def append_history(path: str, result: Any, name: str, qrels: str) -> None:
    """Append one dated row for a check's result to the CSV history at ``path``.

    The file is created with its header when missing; a check with a measure the header lacks rewrites the
    file once with the wider header (older rows get blanks). Text cells a spreadsheet would run as formulas
    are defused (`metrics.report.render.csv_safe`).

    Args:
        path: the history file.
        result: a `metrics.checks.CheckResult`.
        name: the run recorded.
        qrels: the qrels file recorded.

    Raises:
        FormatError: an existing file that is not a check history (as `read_history`).

    >>> import tempfile
    >>> from metrics.checks import check_thresholds
    >>> path = f"{tempfile.mkdtemp()}/h.csv"
    >>> result = check_thresholds({"q1": {"D1": 1}}, {"q1": ["D1"]}, minimum=["RR=0.5"])
    >>> append_history(path, result, "a", "q.trec")
    >>> [(r["run"], r["status"], r["RR"]) for r in read_history(path)[1]]
    [('a', 'pass', '1.0')]
    """
    row = _history_row(result, name, qrels)
    exists = os.path.exists(path) and os.path.getsize(path) > 0
    header, rows = read_history(path) if exists else (list(HISTORY_FIELDS), [])
    wider = header + [m for m in row if m not in header]
    if wider != header or not os.path.exists(path):
        _rewrite(path, wider, rows)
    with open(path, "a", encoding="utf-8", newline="") as f:
        csv.DictWriter(f, fieldnames=wider, lineterminator="\n").writerow(row)


def _history_row(result: Any, name: str, qrels: str) -> Row:
    from metrics.report.render import csv_safe

    row = {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "run": csv_safe(name),
        "qrels": csv_safe(qrels),
        "status": "pass" if result.passed else "fail",
        "failed": ";".join(r.measure for r in result.failures),
    }
    row.update({m: ("" if v is None else repr(v)) for m, v in result.values.items()})
    return row


def _rewrite(path: str, header: list[str], rows: list[Row]) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, lineterminator="\n", restval="")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def read_history(path: str) -> tuple[list[str], list[Row]]:
    """The header and the rows of the check history at ``path``.

    Args:
        path: the history file.

    Returns:
        ``(header, rows)``, each row a dict by column.

    Raises:
        FormatError: naming the file and line, when the file is not a check history, is not UTF-8, or a
            row's field count differs from the header's.

    >>> import tempfile
    >>> bad = f"{tempfile.mkdtemp()}/h.csv"
    >>> with open(bad, "w") as f:
    ...     _ = f.write("timestamp,run,qrels,status,failed,P@3\\n2026-01-01,a,q.trec,pass\\n")
    >>> read_history(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    metrics.errors.FormatError: ...h.csv:2: expected 6 fields as in the header, got 4: '2026-01-01,a,...'
    """
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return _parse(csv.reader(f), path)
    except UnicodeDecodeError as exc:
        raise FormatError(Problem(path, None, "", f"not valid UTF-8 ({exc.reason})")) from None


def _parse(reader: Any, path: str) -> tuple[list[str], list[Row]]:
    try:
        header = next(reader, None)
        if header is None or tuple(header[: len(HISTORY_FIELDS)]) != HISTORY_FIELDS:
            expected = ",".join(HISTORY_FIELDS)
            reason = f"not a qrelforge check history (expected a header starting with {expected})"
            raise FormatError(Problem(path, 1, ",".join(header or []), reason))
        rows = []
        for record in reader:
            if not record:
                continue
            if len(record) != len(header):
                reason = f"expected {len(header)} fields as in the header, got {len(record)}"
                raise FormatError(Problem(path, reader.line_num, ",".join(record), reason))
            rows.append(dict(zip(header, record, strict=True)))
    except csv.Error as exc:
        raise FormatError(Problem(path, reader.line_num, "", f"not a CSV file ({exc})")) from None
    return header, rows


def history_measures(header: Sequence[str]) -> list[str]:
    """The measure columns of a history header (those after `HISTORY_FIELDS`).

    Args:
        header: the header, as `read_history` returns it.

    Returns:
        The measure names, in header order.

    >>> history_measures(["timestamp", "run", "qrels", "status", "failed", "P@3", "AP"])
    ['P@3', 'AP']
    """
    return [h for h in header if h not in HISTORY_FIELDS]


def _floats(rows: list[Row], measure: str, path: str) -> list[float | None]:
    out: list[float | None] = []
    for i, row in enumerate(rows):
        cell = row.get(measure, "")
        try:
            out.append(float(cell) if cell else None)
        except ValueError:
            raise QrelForgeError(f"{path}: check {i + 1}: {measure} is not a number: {cell!r}") from None
    return out


def sparkline(values: Sequence[float | None]) -> str:
    """One block character per value, scaled between the series' min and max; a space for a gap (None).

    Args:
        values: the series, None for a gap.

    Returns:
        The sparkline, one character per value.

    >>> sparkline([0.1, 0.5, None, 0.9])
    '▁▅ █'
    >>> sparkline([0.5, 0.5])
    '▄▄'
    """
    known = [v for v in values if v is not None]
    if not known:
        return " " * len(values)
    lo, hi = min(known), max(known)
    return "".join(
        " " if v is None else SPARK[3 if hi == lo else round((v - lo) / (hi - lo) * 7)] for v in values
    )


def trend_text(rows: list[Row], measures: Sequence[str], path: str) -> str:
    """Per run and measure: checks, first, last, min, max and a sparkline of the last 40; then the last check.

    Args:
        rows: the history's rows, as `read_history` returns them.
        measures: the measures shown.
        path: the history's name in messages.

    Returns:
        The table and the last check's line, as text.

    Raises:
        QrelForgeError: a measure's cell that is not a number, naming the file, the check and the cell.

    >>> rows = [
    ...     {"timestamp": "2026-01-01", "run": "a", "status": "pass", "failed": "", "AP": "0.5"},
    ...     {"timestamp": "2026-01-02", "run": "a", "status": "fail", "failed": "AP", "AP": "0.25"},
    ... ]
    >>> print(trend_text(rows, ["AP"], "h.csv"), end="")  # doctest: +NORMALIZE_WHITESPACE
    run  measure  checks   first    last     min     max  trend (oldest → newest)
    a    AP            2  0.5000  0.2500  0.2500  0.5000  █▁
    last check: 2026-01-02 a: fail (AP)
    """
    from metrics.report.render import _grid

    if not rows:
        return f"{path}: no checks recorded yet\n"
    table = [["run", "measure", "checks", "first", "last", "min", "max", "trend (oldest → newest)".ljust(40)]]
    for run in dict.fromkeys(r["run"] for r in rows):
        mine = [r for r in rows if r["run"] == run]
        for m in measures:
            values = _floats(mine, m, path)
            known = [v for v in values if v is not None]
            if known:
                table.append(_trend_row(run, m, values, known))
    last = rows[-1]
    failed = f" ({last['failed']})" if last["failed"] else ""
    return _grid(table) + f"last check: {last['timestamp']} {last['run']}: {last['status']}{failed}\n"


def _trend_row(run: str, measure: str, values: list[float | None], known: list[float]) -> list[str]:
    figures = [known[0], known[-1], min(known), max(known)]
    return [run, measure, str(len(known)), *(f"{v:.4f}" for v in figures), sparkline(values[-40:]).ljust(40)]


def history_chart(rows: list[Row], measures: Sequence[str], path: str) -> str:
    """The history as a standalone SVG line chart: one line per run and measure, checks along the x axis.

    Args:
        rows, measures, path: as in `trend_text`.

    Returns:
        The SVG document.

    Raises:
        QrelForgeError: as `trend_text`.

    >>> rows = [{"timestamp": "2026-01-01", "run": "a", "AP": "0.5"}, {"timestamp": "2026-01-02", "run": "a"}]
    >>> history_chart(rows, ["AP"], "h.csv").startswith("<svg")
    True
    """
    from metrics.report.charts import svg_line_chart

    series = {}
    for run in dict.fromkeys(r["run"] for r in rows):
        for m in measures:
            values = [
                v if r["run"] == run else None for r, v in zip(rows, _floats(rows, m, path), strict=True)
            ]
            if any(v is not None for v in values):
                series[f"{run} · {m}"] = values
    return svg_line_chart(series, x_labels=[r["timestamp"] for r in rows], title=f"check history: {path}")
