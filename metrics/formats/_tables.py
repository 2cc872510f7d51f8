"""JSONL, CSV and TSV tables (private; re-exported by `metrics.formats`): corpora, queries and chunk→document
maps, and `write_jsonl`."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from metrics import _ids
from metrics._choice import Choice
from metrics.errors import FormatError, Problem
from metrics.formats._lines import (
    _BOM,
    _CSV_FIELD_LIMIT,
    _SURROGATE_ESCAPE,
    Source,
    _Collector,
    _decode,
    _resolve,
    _Source,
    _write_lines,
)

if TYPE_CHECKING:
    import pandas as pd


_ID_KEYS = {"corpus": ("doc_id", "_id", "docid", "id"), "queries": ("query_id", "_id", "qid", "id")}


class TableFormat(Choice):
    """The layouts of corpora, queries and chunk maps (``auto``: from the file name, else JSONL)."""

    AUTO = "auto"
    JSONL = "jsonl"
    CSV = "csv"
    TSV = "tsv"


def read_corpus(source: Source, *, format: str = TableFormat.AUTO) -> pd.DataFrame:
    """Read documents from JSONL, CSV or TSV into a DataFrame with ``doc_id``, ``title``, ``text`` and extras.

    The ID may be called ``doc_id``, ``_id`` (BEIR), ``docid`` or ``id``; ``title`` defaults to "". Errors:
    invalid JSON, a missing or empty ID, a duplicate ID, a missing ``text``, a non-string field.
    """
    return _read_records(source, format, kind="corpus")


def read_queries(source: Source, *, format: str = TableFormat.AUTO) -> pd.DataFrame:
    """Read queries from JSONL, CSV or TSV into a DataFrame with ``query_id``, ``text`` and extras."""
    return _read_records(source, format, kind="queries")


def _read_records(source: Source, format: str, *, kind: str) -> pd.DataFrame:
    import pandas as pd

    if format not in tuple(TableFormat):
        raise FormatError(
            Problem("<input>", None, repr(format), "format must be 'auto', 'jsonl', 'csv' or 'tsv'")
        )
    src = _resolve(source)
    fmt = TableFormat(format) if format != TableFormat.AUTO else _record_format(src.name)
    problems = _Collector(src.name)
    rows = (
        _jsonl_rows(src, problems) if fmt == TableFormat.JSONL else _delimited_rows(src, fmt, problems)
    )  # streamed
    records = _normalize_records(rows, kind, problems)
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


def _jsonl_rows(src: _Source, problems: _Collector) -> Iterator[tuple[int, str, Any]]:
    for number, raw in src.lines():
        text = _decode(raw.rstrip(b"\r"), number, problems)
        if text is None or not text.strip():
            continue
        try:
            obj = json.loads(text)
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


def _delimited_rows(src: _Source, fmt: str, problems: _Collector) -> Iterator[tuple[int, str, Any]]:
    import csv

    text = _decode_all(src, problems)
    if text is None:
        return
    csv.field_size_limit(max(csv.field_size_limit(), _CSV_FIELD_LIMIT))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="," if fmt == TableFormat.CSV else "\t")
    try:
        yield from _csv_records(reader, problems)
    except csv.Error as exc:
        problems.add(reader.line_num, "", f"malformed {fmt.upper()} ({exc})")


def _csv_records(reader: Any, problems: _Collector) -> Iterator[tuple[int, str, Any]]:
    header: list[str] | None = None
    for record in reader:
        number = reader.line_num
        if not any(cell.strip() for cell in record):
            continue
        if header is None:
            header = [h.strip() for h in record]
            twice = sorted({h for h in header if header.count(h) > 1})
            if twice:
                problems.add(number, ",".join(record), f"column {twice[0]!r} appears twice in the header")
                return
            continue
        if len(record) != len(header):
            problems.add(
                number, ",".join(record), f"expected {len(header)} fields as in the header, got {len(record)}"
            )
            continue
        yield number, ",".join(record), dict(zip(header, record, strict=True))


def _decode_all(src: _Source, problems: _Collector) -> str | None:
    data = b"".join(src.blocks())
    data = data[3:] if data.startswith(_BOM) else data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.add(line, "", f"not valid UTF-8 (byte {exc.start + 1} of the file)")
        return None


def _normalize_records(rows: Iterable[tuple[int, str, Any]], kind: str, problems: _Collector) -> list[dict]:
    id_key = "doc_id" if kind == "corpus" else "query_id"
    seen: dict[str, int] = {}
    out = []
    for number, text, obj in rows:
        record = _normalize_record(obj, kind, id_key)
        if isinstance(record, str):
            problems.add(number, text, record)
            continue
        first = seen.setdefault(record[id_key], number)
        if first != number:
            problems.add(number, text, f"duplicate {id_key} {record[id_key]!r} (first on line {first})")
            continue
        out.append(record)
    return out


def _normalize_record(obj: Any, kind: str, id_key: str) -> dict | str:
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
        return f"{id_key} must be a non-empty string; got {record[id_key]!r}"
    if _ids.BAD_ID_CHARS.search(record[id_key]):
        return f"{id_key} must not contain spaces, tabs or line breaks; got {record[id_key]!r}"
    if "text" not in record:
        return "missing text"
    record.setdefault("title", "") if kind == "corpus" else None
    for field in ("title", "text"):
        if field in record and not isinstance(record[field], str):
            return f"{field} must be a string; got {type(record[field]).__name__}"
    return record


def write_jsonl(records: Iterable[dict] | pd.DataFrame, dest: Source) -> None:
    """Write records (dicts, or a DataFrame's rows) as UTF-8 JSON lines, non-ASCII kept as is."""
    if hasattr(records, "to_dict") and hasattr(records, "columns"):
        records = records.to_dict(orient="records")
    _write_lines(dest, (json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def read_chunk_map(source: Source) -> tuple[pa.Array, pa.Array]:
    """Read a chunk→document table (JSONL, CSV or TSV with ``chunk_id`` and ``doc_id``): (chunks, docs)."""
    src = _resolve(source)
    fmt = _record_format(src.name)
    problems = _Collector(src.name)
    rows = _jsonl_rows(src, problems) if fmt == TableFormat.JSONL else _delimited_rows(src, fmt, problems)
    seen: dict[str, int] = {}
    chunks, docs = [], []
    for number, text, obj in rows:
        chunk, doc = (obj.get("chunk_id"), obj.get("doc_id")) if isinstance(obj, dict) else (None, None)
        if not isinstance(chunk, str) or not chunk.strip() or not isinstance(doc, str) or not doc.strip():
            problems.add(number, text, "expected non-empty string fields chunk_id and doc_id")
        elif seen.setdefault(chunk, number) != number:
            problems.add(number, text, f"duplicate chunk_id {chunk!r} (first on line {seen[chunk]})")
        else:
            chunks.append(chunk)
            docs.append(doc)
    problems.check()
    return pa.array(chunks, pa.string()), pa.array(docs, pa.string())
