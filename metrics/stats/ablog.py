"""Interaction logs of online A/B tests, read from CSV, TSV (with a header) or JSONL files.

Each record has at least ``user_id``, ``group``, ``query``, ``feedback`` (0/1) and ``timestamp``
(`metrics.stats.AB_COLUMNS`). `read_log` returns the records and the line each came from, so that
`metrics.stats.ab_test` can name the line of a bad value; it checks the file's structure, not the values.

>>> import tempfile
>>> path = f"{tempfile.mkdtemp()}/log.jsonl"
>>> with open(path, "w") as f:
...     _ = f.write('{"user_id": "u1", "group": "A", "query": "q1", "feedback": 1, "timestamp": 1}\\n\\n')
...     _ = f.write('{"user_id": "u2", "group": "B", "query": "q1", "feedback": 0, "timestamp": 2}\\n')
>>> records, lines = read_log(path)
>>> [(r["user_id"], r["group"], r["feedback"]) for r in records], lines
([('u1', 'A', 1), ('u2', 'B', 0)], [1, 3])
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from metrics.errors import FormatError, Problem

__all__ = ["JSONL_SUFFIXES", "read_log"]

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")

Records = tuple[list[dict[str, Any]], list[int]]


def read_log(path: str) -> Records:
    """The records of the interaction log at ``path`` and the line each came from.

    ``.jsonl``, ``.ndjson`` and ``.json`` files hold one JSON object per line; ``.csv`` and ``.tsv`` files a
    header naming the columns, then one record per line (CSV values stay strings). Any other name is read as
    JSONL when its text starts with ``{``, else as CSV. Blank lines are skipped. Raises `FormatError` naming
    the file, the line and its text for every bad line (invalid UTF-8 or JSON, a non-object, a missing
    column, a wrong field count), and when the log holds no interaction.

    >>> import tempfile
    >>> path = f"{tempfile.mkdtemp()}/log.csv"
    >>> with open(path, "w") as f:
    ...     _ = f.write("user_id,group,query,feedback,timestamp\\nu1,A,q1,1,2026-01-01\\nu2,B,q1\\n")
    >>> read_log(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    metrics.errors.FormatError: ...log.csv:3: expected 5 fields as in the header, got 3: 'u2,B,q1'
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        reason = f"not valid UTF-8 (byte {exc.start + 1} of the file)"
        raise FormatError(Problem(path, line, "", reason)) from None
    suffix = Path(path).suffix.lower()
    jsonl = suffix in JSONL_SUFFIXES or (suffix not in (".csv", ".tsv") and text.lstrip()[:1] == "{")
    if jsonl:
        records, lines = _jsonl_records(text, path)
    else:
        records, lines = _csv_records(text, path, "\t" if suffix == ".tsv" else ",")
    if not records:
        raise FormatError(Problem(path, None, "", "no interactions in the log"))
    return records, lines


def _jsonl_records(text: str, path: str) -> Records:
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


def _csv_records(text: str, path: str, delimiter: str) -> Records:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        return _read_csv(reader, path, delimiter)
    except csv.Error as exc:
        raise FormatError(Problem(path, reader.line_num, "", f"not a CSV file ({exc})")) from None


def _read_csv(reader: Any, path: str, delimiter: str) -> Records:
    header: list[str] | None = None
    records: list[dict[str, Any]] = []
    lines, problems = [], []
    for record in reader:
        if not any(cell.strip() for cell in record):
            continue
        if header is None:
            header = [h.strip() for h in record]
            _check_header(header, record, path, reader.line_num, delimiter)
            continue
        if len(record) != len(header):
            reason = f"expected {len(header)} fields as in the header, got {len(record)}"
            problems.append(Problem(path, reader.line_num, delimiter.join(record), reason))
            continue
        records.append(dict(zip(header, record, strict=True)))
        lines.append(reader.line_num)
    if problems:
        raise FormatError(problems)
    return records, lines


def _check_header(header: list[str], record: list[str], path: str, line: int, delimiter: str) -> None:
    from metrics.stats import AB_COLUMNS

    missing = [c for c in AB_COLUMNS if c not in header]
    if missing:
        reason = f"header lacks column{'s' if len(missing) > 1 else ''} {missing}"
        raise FormatError(Problem(path, line, delimiter.join(record), reason))
