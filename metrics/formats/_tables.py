"""JSONL, CSV and TSV tables (private; re-exported by `metrics.formats`): corpora, queries and chunk→document
maps, and `write_jsonl`."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from metrics import _ids, _tags
from metrics._choice import Choice
from metrics._lazy import lazy
from metrics.errors import FormatError, Problem, quoted
from metrics.formats._lines import (
    _CSV_FIELD_LIMIT,
    _SURROGATE_ESCAPE,
    MAX_COLUMNS,
    Source,
    _Collector,
    _decode,
    _Limits,
    _line_too_long,
    _resolve,
    _Source,
    _write_lines,
    reader_limits,
)

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy("pyarrow")

if TYPE_CHECKING:
    import pandas as pd


_ID_KEYS = {"corpus": ("doc_id", "_id", "docid", "id"), "queries": ("query_id", "_id", "qid", "id")}


class TableFormat(Choice):
    """The layouts of corpora, queries and chunk maps (``auto``: from the file name, else JSONL)."""

    AUTO = "auto"
    JSONL = "jsonl"
    CSV = "csv"
    TSV = "tsv"


def read_corpus(
    source: Source,
    *,
    format: str = TableFormat.AUTO,
    max_inflated_mb: float | None = None,
    max_line_mb: float | None = None,
) -> pd.DataFrame:
    """Read documents from JSONL, CSV or TSV.

    The ID may be called ``doc_id``, ``_id`` (BEIR), ``docid`` or ``id``; ``title`` defaults to "".

    Args:
        source: a path (plain or gzip) or an open file.
        format: ``"jsonl"``, ``"csv"``, ``"tsv"`` or ``"auto"`` (by the file name's suffix, JSONL
            otherwise).
        max_inflated_mb: the most megabytes gzip content may inflate to, as in `metrics.formats.read_run`.
        max_line_mb: the longest line (a CSV record counts as one), as in `metrics.formats.read_run`.

    Returns:
        A DataFrame with ``doc_id``, ``title``, ``text`` and the extra fields, a row per line.

    Raises:
        FormatError: an unknown ``format``; every bad line, with its file, line and value: invalid JSON, NaN
            or infinity in any field, a missing or empty ID, an ID longer than 512 bytes or holding a space
            or line break, a duplicate ID, a missing ``text``, a non-string field, a CSV header of more than
            1000 columns.

    >>> import io
    >>> read_corpus(io.BytesIO(b'{"_id": "d1", "text": "a"}\\n')).to_dict("records")
    [{'doc_id': 'd1', 'title': '', 'text': 'a'}]
    """
    return _read_records(source, format, kind="corpus", limits=_limits(max_inflated_mb, max_line_mb))


def iter_corpus(
    source: Source,
    *,
    format: str = TableFormat.AUTO,
    rows: int = 5000,
    max_inflated_mb: float | None = None,
    max_line_mb: float | None = None,
) -> Iterator[list[dict]]:
    """Stream documents as `read_corpus` reads them, ``rows`` records at a time.

    Memory: one batch and the IDs seen so far (the duplicate check), whatever the file size. The batches
    before a bad line are yielded, then `FormatError` lists every problem once the whole file is read (a
    caller writing the batches in one transaction rolls it back: a bad line anywhere imports nothing).

    Args:
        source: as `read_corpus` takes it.
        format: ``"jsonl"``, ``"csv"``, ``"tsv"`` or ``"auto"`` (by the file name's suffix, JSONL
            otherwise).
        rows: the records of each batch, >= 1.
        max_inflated_mb: the most megabytes gzip content may inflate to, as in `metrics.formats.read_run`.
        max_line_mb: the longest line (a CSV record counts as one), as in `metrics.formats.read_run`.

    Yields:
        Lists of dicts with ``doc_id``, ``title`` (default ""), ``text`` and the extra fields each line has.

    Raises:
        FormatError: a bad ``rows`` or ``format``; the errors of `read_corpus`.

    >>> import io
    >>> data = io.BytesIO(b'{"doc_id": "d1", "text": "a"}\\n{"_id": "d2", "text": "b", "lang": "en"}\\n')
    >>> [[r["doc_id"] for r in batch] for batch in iter_corpus(data, rows=1)]
    [['d1'], ['d2']]
    """
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise FormatError(Problem("<input>", None, repr(rows), "rows must be an int >= 1"))
    if format not in tuple(TableFormat):
        raise FormatError(
            Problem("<input>", None, repr(format), "format must be 'auto', 'jsonl', 'csv' or 'tsv'")
        )
    src = _resolve(source, _limits(max_inflated_mb, max_line_mb))
    fmt = TableFormat(format) if format != TableFormat.AUTO else _record_format(src.name)
    problems = _Collector(src.name)
    lines = _jsonl_rows(src, problems) if fmt == TableFormat.JSONL else _delimited_rows(src, fmt, problems)
    batch: list[dict] = []
    for record in _valid_records(lines, "corpus", problems):
        batch.append(record)
        if len(batch) >= rows:
            yield batch
            batch = []
    if batch:
        yield batch
    problems.check()


def read_queries(
    source: Source,
    *,
    format: str = TableFormat.AUTO,
    max_inflated_mb: float | None = None,
    max_line_mb: float | None = None,
) -> pd.DataFrame:
    """Read queries from JSONL, CSV or TSV.

    An optional ``tags`` field is read as a list of tags (slices, `metrics.slices`): in JSONL a list of
    strings, in CSV/TSV one cell with the tags separated by ``|``. A tag is a label (``head``) or
    ``key:value`` (``lang:zh``), of letters, digits, ``_``, ``.`` and ``-``.

    Args:
        source: a path (plain or gzip) or an open file.
        format: ``"jsonl"``, ``"csv"``, ``"tsv"`` or ``"auto"`` (by the file name's suffix, JSONL
            otherwise).
        max_inflated_mb: the most megabytes gzip content may inflate to, as in `metrics.formats.read_run`.
        max_line_mb: the longest line (a CSV record counts as one), as in `metrics.formats.read_run`.

    Returns:
        A DataFrame with ``query_id``, ``text`` and the extra fields, a row per line.

    Raises:
        FormatError: the errors of `read_corpus` for queries, and a bad tag, each naming its line.

    >>> import io
    >>> q = read_queries(io.BytesIO(b'{"query_id": "q1", "text": "x", "tags": ["head", "lang:en"]}\\n'))
    >>> q.loc[0, "tags"]
    ['head', 'lang:en']
    """
    return _read_records(source, format, kind="queries", limits=_limits(max_inflated_mb, max_line_mb))


def _limits(max_inflated_mb: float | None, max_line_mb: float | None) -> _Limits:
    return reader_limits(max_inflated_mb=max_inflated_mb, max_line_mb=max_line_mb)


def _read_records(source: Source, format: str, *, kind: str, limits: _Limits) -> pd.DataFrame:
    import pandas as pd

    if format not in tuple(TableFormat):
        raise FormatError(
            Problem("<input>", None, repr(format), "format must be 'auto', 'jsonl', 'csv' or 'tsv'")
        )
    src = _resolve(source, limits)
    fmt = TableFormat(format) if format != TableFormat.AUTO else _record_format(src.name)
    problems = _Collector(src.name)
    rows = (
        _jsonl_rows(src, problems) if fmt == TableFormat.JSONL else _delimited_rows(src, fmt, problems)
    )  # streamed
    records = _normalize_records(rows, kind, problems, delimited=fmt != TableFormat.JSONL)
    problems.check()
    id_key = "doc_id" if kind == "corpus" else "query_id"
    columns = [id_key, "title", "text"] if kind == "corpus" else [id_key, "text"]
    frame = pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=columns)
    rest = [c for c in frame.columns if c not in columns]
    return frame[columns + rest]


def _record_format(name: str) -> TableFormat:
    lower = name.lower().removesuffix(".gz")
    if lower.endswith(".csv"):
        return TableFormat.CSV
    return TableFormat.TSV if lower.endswith(".tsv") else TableFormat.JSONL


class _NotFinite(ValueError):
    """A JSON number that is NaN, infinite or beyond the float64 range (``1e400``)."""


def _no_constant(name: str) -> float:
    raise _NotFinite("a metadata field holds NaN or infinity (not valid JSON)")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotFinite(f"a metadata field holds a number beyond the float64 range: {quoted(text)}")
    return value


_JSON = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
"""`json.loads` with these hooks, made once (`json.loads` makes a decoder a line when given hooks)."""


def _jsonl_rows(src: _Source, problems: _Collector) -> Iterator[tuple[int, str, Any]]:
    decode = _JSON.decode
    for number, raw in src.lines():
        text = _decode(raw.rstrip(b"\r"), number, problems)
        if text is None or not text.strip():
            continue
        try:
            obj = decode(text)
        except _NotFinite as exc:
            problems.add(number, text, str(exc))
        except json.JSONDecodeError as exc:
            problems.add(number, text, f"invalid JSON ({exc.msg} at column {exc.colno})")
        except RecursionError:
            problems.add(number, text, "invalid JSON (nested too deeply)")
        except ValueError:  # Python's limit on the digits of an integer
            problems.add(number, text, "invalid JSON (a number has too many digits)")
        else:
            if _SURROGATE_ESCAPE.search(text) and _lone_surrogate(obj):
                problems.add(
                    number, text, "invalid JSON (a \\u escape encodes a lone surrogate, not a character)"
                )
            else:
                yield number, text, obj


def _lone_surrogate(obj: Any) -> bool:
    """True when a string of ``obj`` holds an unpaired surrogate (cannot be written as UTF-8)."""
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class _Feed:
    """The decoded lines of a CSV/TSV input for `csv.reader`, streamed (never the whole file in memory):
    split as ``io.StringIO(text, newline="")`` splits them, so the reader's ``line_num`` numbers lines as
    before. ``pending`` counts the characters fed since the last record: one record (a quoted field may span
    lines) may not grow past the line limit."""

    def __init__(self, src: _Source, problems: _Collector):
        self.src, self.problems, self.pending = src, problems, 0

    def __iter__(self) -> Iterator[str]:
        offset, limit = 0, self.src.limits.line
        for number, raw in self.src.lines(skip_blank=False):
            try:
                text = raw.decode("utf-8") + "\n"
            except UnicodeDecodeError as exc:
                self.problems.add(number, "", f"not valid UTF-8 (byte {offset + exc.start + 1} of the file)")
                return
            offset += len(raw) + 1
            self.pending += len(text)
            if self.pending > limit:
                raise _line_too_long(self.src.name, number, raw, self.src.limits, "record")
            yield from _LONE_CR.split(text) if "\r" in text[:-2] else (text,)


_LONE_CR = re.compile("(?<=\r)(?!\n)")


def _delimited_rows(src: _Source, fmt: str, problems: _Collector) -> Iterator[tuple[int, str, Any]]:
    import csv

    csv.field_size_limit(max(csv.field_size_limit(), _CSV_FIELD_LIMIT))
    feed = _Feed(src, problems)
    reader = csv.reader(feed, delimiter="," if fmt == TableFormat.CSV else "\t")
    try:
        yield from _csv_records(reader, feed, problems)
    except csv.Error as exc:
        problems.add(reader.line_num, "", f"malformed {fmt.upper()} ({exc})")


def _csv_records(reader: Any, feed: _Feed, problems: _Collector) -> Iterator[tuple[int, str, Any]]:
    header: list[str] | None = None
    for record in reader:
        number, feed.pending = reader.line_num, 0
        if not any(cell.strip() for cell in record):
            continue
        if header is None:
            header = [h.strip() for h in record]
            reason = _header_problem(header)
            if reason:
                problems.add(number, ",".join(record[:20]), reason)
                return
            continue
        if len(record) != len(header):
            problems.add(
                number, ",".join(record), f"expected {len(header)} fields as in the header, got {len(record)}"
            )
            continue
        yield number, ",".join(record), dict(zip(header, record, strict=True))


def _header_problem(header: list[str]) -> str | None:
    """Why a CSV/TSV header cannot be read (too many columns, a column twice), or None; linear in its
    length."""
    if len(header) > MAX_COLUMNS:
        return f"the header has {len(header)} columns; at most {MAX_COLUMNS} are read"
    twice = sorted(name for name, n in Counter(header).items() if n > 1)
    return f"column {quoted(twice[0])} appears twice in the header" if twice else None


def _normalize_records(
    rows: Iterable[tuple[int, str, Any]], kind: str, problems: _Collector, *, delimited: bool = False
) -> list[dict]:
    return list(_valid_records(rows, kind, problems, delimited=delimited))


def _valid_records(
    rows: Iterable[tuple[int, str, Any]], kind: str, problems: _Collector, *, delimited: bool = False
) -> Iterator[dict]:
    """The valid records, canonical keys; every invalid or duplicate one goes to ``problems``."""
    id_key = "doc_id" if kind == "corpus" else "query_id"
    seen: dict[str, int] = {}
    for number, text, obj in rows:
        record = _normalize_record(obj, kind, id_key, delimited=delimited)
        if isinstance(record, str):
            problems.add(number, text, record)
            continue
        first = seen.setdefault(record[id_key], number)
        if first != number:
            problems.add(number, text, f"duplicate {id_key} {quoted(record[id_key])} (first on line {first})")
            continue
        yield record


def _normalize_record(obj: Any, kind: str, id_key: str, *, delimited: bool = False) -> dict | str:
    """The record with canonical keys, or the reason it is invalid."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    key = next((k for k in _ID_KEYS[kind] if k in obj), None)
    if key is None:
        return f"missing {id_key} (or {', '.join(_ID_KEYS[kind][1:])})"
    record = {id_key: obj[key], **{k: v for k, v in obj.items() if k != key}}
    if isinstance(record[id_key], int) and not isinstance(record[id_key], bool):
        record[id_key] = str(record[id_key])
    if not isinstance(record[id_key], str) or not record[id_key]:
        return f"{id_key} must be a non-empty string; got {quoted(record[id_key])}"
    reason = _ids.id_problem(record[id_key], id_key)
    if reason:
        return reason
    if "text" not in record:
        return "missing text"
    record.setdefault("title", "") if kind == "corpus" else None
    for field in ("title", "text"):
        if field in record and not isinstance(record[field], str):
            return f"{field} must be a string; got {type(record[field]).__name__}"
    if kind == "queries" and "tags" in record:
        tags = _tags.parse_tags(record["tags"]) if delimited else record["tags"]
        reason = _tags.tag_problem(tags)
        if reason:
            return reason
        record["tags"] = list(tags)
    return record


def write_jsonl(records: Iterable[dict] | pd.DataFrame, dest: Source) -> None:
    """Write records as UTF-8 JSON lines, non-ASCII kept as is.

    Args:
        records: dicts, or a DataFrame (a line per row).
        dest: a path or an open text file.

    >>> import io
    >>> out = io.StringIO()
    >>> write_jsonl([{"doc_id": "d1", "text": "café"}], out)
    >>> print(out.getvalue(), end="")
    {"doc_id": "d1", "text": "café"}
    """
    if hasattr(records, "to_dict") and hasattr(records, "columns"):
        records = records.to_dict(orient="records")
    _write_lines(dest, (json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def read_chunk_map(
    source: Source, *, max_inflated_mb: float | None = None, max_line_mb: float | None = None
) -> tuple[pa.Array, pa.Array]:
    """Read a chunk-to-document table: JSONL, CSV or TSV (by the file name) with ``chunk_id`` and ``doc_id``.

    Args:
        source: a path (plain or gzip) or an open file.
        max_inflated_mb: the most megabytes gzip content may inflate to, as in `metrics.formats.read_run`.
        max_line_mb: the longest line (a CSV record counts as one), as in `metrics.formats.read_run`.

    Returns:
        ``(chunk IDs, document IDs)``, two Arrow string arrays in file order.

    Raises:
        FormatError: every bad line: a missing or empty ID, an ID longer than 512 bytes or holding a space,
            tab or line break, a chunk listed twice.

    >>> import io
    >>> chunks, docs = read_chunk_map(io.BytesIO(b'{"chunk_id": "d1#0", "doc_id": "d1"}\\n'))
    >>> chunks.to_pylist(), docs.to_pylist()
    (['d1#0'], ['d1'])
    """
    src = _resolve(source, _limits(max_inflated_mb, max_line_mb))
    fmt = _record_format(src.name)
    problems = _Collector(src.name)
    rows = _jsonl_rows(src, problems) if fmt == TableFormat.JSONL else _delimited_rows(src, fmt, problems)
    seen: dict[str, int] = {}
    chunks, docs = [], []
    for number, text, obj in rows:
        chunk, doc = (obj.get("chunk_id"), obj.get("doc_id")) if isinstance(obj, dict) else (None, None)
        if not isinstance(chunk, str) or not chunk.strip() or not isinstance(doc, str) or not doc.strip():
            problems.add(number, text, "expected non-empty string fields chunk_id and doc_id")
        elif reason := _ids.id_problem(chunk, "chunk_id") or _ids.id_problem(doc, "doc_id"):
            problems.add(number, text, reason)
        elif seen.setdefault(chunk, number) != number:
            problems.add(number, text, f"duplicate chunk_id {quoted(chunk)} (first on line {seen[chunk]})")
        else:
            chunks.append(chunk)
            docs.append(doc)
    problems.check()
    return pa.array(chunks, pa.string()), pa.array(docs, pa.string())
