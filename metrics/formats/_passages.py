"""Evidence passages and chunkings (private; re-exported by `metrics.formats`): `read_passages` reads a
PASSAGES file, `read_chunks` a CHUNKS file, `write_passages` writes one.

Offsets are ``[start, end)`` in characters of the document's text (Python ``str`` indices). Both readers
return a DataFrame whose ``attrs`` hold ``source`` (the file name) and ``lines`` (the line of each row), so
that a later error about a row can name its line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from metrics import _ids
from metrics.errors import FormatError, Problem, quoted
from metrics.formats._lines import Source, _Collector, _resolve, _write_lines
from metrics.formats._tables import TableFormat, _delimited_rows, _jsonl_rows, _limits, _record_format

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_passages", "read_chunks", "write_passages", "PASSAGE_FIELDS", "CHUNK_FIELDS"]

PASSAGE_FIELDS = ("query_id", "doc_id", "doc_version", "start", "end", "grade")
OPTIONAL_FIELDS = ("text", "source")  # an excerpt; who gave it, when not the humans (judge:NAME)
CHUNK_FIELDS = ("chunk_id", "doc_id", "start", "end")
_DIGITS = re.compile(r"[0-9]+")


def read_passages(
    source: Source, *, max_inflated_mb: float | None = None, max_line_mb: float | None = None
) -> pd.DataFrame:
    """Read a PASSAGES file: JSONL, one passage a line, as a release exports it.

    Fields: ``query_id``, ``doc_id`` (IDs as every reader takes them), ``doc_version`` (int >= 1),
    ``start`` and ``end`` (ints, ``0 <= start < end``), ``grade`` (int >= 0), and optionally ``text`` (an
    excerpt of the passage, kept as given); other fields are ignored. Passages of one query on one document
    version may not overlap, nor appear twice.

    Args:
        source: the file (path or file object; gzip is detected).
        max_inflated_mb, max_line_mb: the limits, as in `metrics.formats.read_run`.

    Returns:
        A DataFrame with the six fields (and ``text`` when a line has it), in file order.

    Raises:
        FormatError: listing every bad line as ``file:line: reason: 'line'``; nothing is returned then.

    >>> import io
    >>> line = b'{"query_id": "q1", "doc_id": "d1", "doc_version": 1, "start": 4, "end": 9, "grade": 2}'
    >>> read_passages(io.BytesIO(line)).to_dict("records")
    [{'query_id': 'q1', 'doc_id': 'd1', 'doc_version': 1, 'start': 4, 'end': 9, 'grade': 2}]
    """
    import pandas as pd

    src = _resolve(source, _limits(max_inflated_mb, max_line_mb))
    problems = _Collector(src.name)
    records, lines, raw = [], [], {}
    spans: dict[tuple[str, str, int], list[tuple[int, int, int]]] = {}
    for number, text, obj in _jsonl_rows(src, problems):
        record = _passage(obj)
        if isinstance(record, str):
            problems.add(number, text, record)
            continue
        key = (record["query_id"], record["doc_id"], record["doc_version"])
        spans.setdefault(key, []).append((record["start"], record["end"], number))
        records.append(record)
        lines.append(number)
        raw[number] = text
    clashes = _Collector(src.name, limit=None)
    for (query, doc, _), found in spans.items():
        _check_overlaps(found, query, doc, clashes, raw)
    for problem in sorted(clashes.problems, key=lambda p: p.line or 0):
        problems.add(problem.line or 0, problem.text, problem.reason)
    problems.check()
    columns = [*PASSAGE_FIELDS, *(["text"] if any("text" in r for r in records) else [])]
    frame = pd.DataFrame.from_records(records, columns=columns)
    for name in ("doc_version", "start", "end", "grade"):
        frame[name] = frame[name].astype("int64")
    if "text" in frame.columns:
        frame["text"] = frame["text"].astype(object).where(frame["text"].notna(), None)
    return _with_lines(frame, src.name, lines)


def _passage(obj: Any) -> dict | str:
    """The passage of a JSON line, or why it is not one."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    absent = [f for f in PASSAGE_FIELDS if f not in obj]
    if absent:
        return f"missing field{'s' if len(absent) > 1 else ''} {', '.join(absent)}"
    for name in ("query_id", "doc_id"):
        if not isinstance(obj[name], str):
            return f"{name} must be a string; got {quoted(obj[name])}"
        reason = _ids.id_problem(obj[name], name)
        if reason:
            return reason
    for name, low in (("doc_version", 1), ("start", 0), ("end", 1), ("grade", 0)):
        value = obj[name]
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            return f"{name} must be an int >= {low}; got {quoted(value)}"
    if obj["end"] <= obj["start"]:
        what = "is empty" if obj["end"] == obj["start"] else "ends before it starts"
        return f"span [{obj['start']}, {obj['end']}) {what}"
    if "text" in obj and not isinstance(obj["text"], str):
        return f"text must be a string; got {type(obj['text']).__name__}"
    return {k: obj[k] for k in (*PASSAGE_FIELDS, "text") if k in obj}


def _check_overlaps(
    found: list[tuple[int, int, int]], query: str, doc: str, problems: _Collector, raw: dict[int, str]
) -> None:
    """Problems for the passages of one (query, document version) that repeat or overlap an earlier one."""
    found.sort()
    reach = (-1, -1, 0)  # the passage reaching furthest so far: (start, end, line)
    for s2, e2, n2 in found:
        s1, e1, n1 = reach
        if (s1, e1) == (s2, e2):
            problems.add(n2, raw[n2], f"duplicate passage (first on line {n1})")
        elif s2 < e1:
            problems.add(
                n2,
                raw[n2],
                f"span [{s2}, {e2}) overlaps span [{s1}, {e1}) of line {n1} (query {quoted(query)}, "
                f"document {quoted(doc)})",
            )
        if e2 > e1:
            reach = (s2, e2, n2)


def _with_lines(frame: pd.DataFrame, name: str, lines: list[int]) -> pd.DataFrame:
    frame.attrs["source"] = name
    frame.attrs["lines"] = lines
    return frame


def read_chunks(
    source: Source,
    *,
    corpus: Any = None,
    format: str = TableFormat.AUTO,
    max_inflated_mb: float | None = None,
    max_line_mb: float | None = None,
) -> pd.DataFrame:
    """Read a CHUNKS file (JSONL, CSV or TSV): how a chunker cut the documents.

    Each record has ``chunk_id`` and ``doc_id``, and either ``start`` and ``end`` (ints, ``0 <= start <
    end``) or ``text``, the chunk's text, which is located in the document's text from ``corpus``: at its
    first occurrence after the start of the previous chunk of the same document (chunkers write a document's
    chunks in order), else at its first occurrence in the document. Chunk IDs are unique.

    Args:
        source: the file (path or file object; gzip is detected).
        corpus: the documents, needed for chunks given by text and used to check offsets: a mapping
            ``{doc_id: text}``, a DataFrame with ``doc_id`` and ``text``, or a corpus file (`read_corpus`).
        format: ``auto`` (from the file name: ``.csv``, ``.tsv``, else JSONL), ``jsonl``, ``csv`` or ``tsv``.
        max_inflated_mb, max_line_mb: the limits, as in `metrics.formats.read_run`.

    Returns:
        A DataFrame with ``chunk_id``, ``doc_id``, ``start``, ``end``, in file order.

    Raises:
        FormatError: every bad line, e.g. ``chunks.jsonl:7: chunk text not found in document 'd1': '...'``.

    >>> import io
    >>> data = io.BytesIO(b'{"chunk_id": "c1", "doc_id": "d1", "text": "cat"}\\n')
    >>> read_chunks(data, corpus={"d1": "a cat"}).to_dict("records")
    [{'chunk_id': 'c1', 'doc_id': 'd1', 'start': 2, 'end': 5}]
    """
    import pandas as pd

    if format not in tuple(TableFormat):
        raise FormatError(
            Problem("<input>", None, repr(format), "format must be 'auto', 'jsonl', 'csv' or 'tsv'")
        )
    texts = _corpus_texts(corpus)
    src = _resolve(source, _limits(max_inflated_mb, max_line_mb))
    fmt = TableFormat(format) if format != TableFormat.AUTO else _record_format(src.name)
    fast = _fast_chunks(src, texts) if fmt == TableFormat.JSONL else None
    if fast is not None:
        return fast
    problems = _Collector(src.name)
    rows = _jsonl_rows(src, problems) if fmt == TableFormat.JSONL else _delimited_rows(src, fmt, problems)
    records, lines = [], []
    for number, record in _chunk_records(rows, texts, problems, delimited=fmt != TableFormat.JSONL):
        records.append(record)
        lines.append(number)
    problems.check()
    frame = pd.DataFrame.from_records(records, columns=list(CHUNK_FIELDS))
    frame[["start", "end"]] = frame[["start", "end"]].astype("int64")
    return _with_lines(frame, src.name, lines)


def _fast_chunks(src: Any, texts: Mapping[str, str] | None) -> pd.DataFrame | None:
    """A JSONL file of chunks with offsets, read whole by Arrow and checked column by column; None (read it
    line by line, which names each problem) unless every line is a valid chunk with offsets: a file on disk,
    not gzip, no blank line nor one over the line limit, every ``start``/``end`` an int (never a float,
    string or bool), IDs valid and unique, spans non-empty and, with ``texts``, within their document."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.json as pajson

    if src.path is None or src.gzipped or src.size() > src.limits.inflated:
        return None
    schema = pa.schema([(n, pa.string() if n.endswith("_id") else pa.int64()) for n in CHUNK_FIELDS])
    options = pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        with src.arrow_stream() as stream:
            table = pajson.read_json(
                stream, read_options=pajson.ReadOptions(use_threads=False), parse_options=options
            )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError):
        return None
    n = table.num_rows
    with open(src.path, "rb") as f:
        data = np.frombuffer(f.read(), dtype=np.uint8)
    ends = np.flatnonzero(data == ord("\n"))
    if len(data) and data[-1] != ord("\n"):
        ends = np.r_[ends, len(data)]
    longest = int(np.diff(ends, prepend=-1).max(initial=0)) - 1
    if n == 0 or len(ends) != n or longest > src.limits.line or bytes(data[:3]) == b"\xef\xbb\xbf":
        return None  # a blank line (rows and lines would not match), a line over the limit, a BOM
    if any(table.column(c).null_count for c in CHUNK_FIELDS):
        return None
    ids, docs = table.column("chunk_id"), table.column("doc_id")
    start, end = (table.column(c).to_numpy() for c in ("start", "end"))
    if len(_ids.invalid_id_rows(ids)) or len(_ids.invalid_id_rows(docs)) or (start < 0).any():
        return None
    if (end <= start).any() or len(_ids.encode(ids)[1]) != n:
        return None
    if texts is not None:
        names = docs.to_pylist()
        lengths = np.array([len(texts[d]) if d in texts else -1 for d in names], dtype=np.int64)
        if (lengths < 0).any() or (end > lengths).any():
            return None
    frame = table.to_pandas()
    return _with_lines(frame, src.name, list(range(1, n + 1)))


def _chunk_records(
    rows: Iterable[tuple[int, str, Any]],
    texts: Mapping[str, str] | None,
    problems: _Collector,
    *,
    delimited: bool,
) -> Iterator[tuple[int, tuple[str, str, int, int]]]:
    seen: dict[str, int] = {}
    last_start: dict[str, int] = {}
    for number, text, obj in rows:
        record = _chunk(obj, texts, last_start, delimited=delimited)
        if isinstance(record, str):
            problems.add(number, text, record)
            continue
        chunk = record[0]
        if seen.setdefault(chunk, number) != number:
            problems.add(number, text, f"duplicate chunk_id {quoted(chunk)} (first on line {seen[chunk]})")
            continue
        yield number, record


def _chunk(
    obj: Any, texts: Mapping[str, str] | None, last_start: dict[str, int], *, delimited: bool
) -> tuple[str, str, int, int] | str:
    """The chunk of a record, or why it is not one."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    for name in ("chunk_id", "doc_id"):
        value = obj.get(name)
        if not isinstance(value, str):
            return f"missing {name}" if value is None else f"{name} must be a string; got {quoted(value)}"
        reason = _ids.id_problem(value, name)
        if reason:
            return reason
    chunk, doc = obj["chunk_id"], obj["doc_id"]
    has_offsets = any(obj.get(k) not in (None, "") for k in ("start", "end"))
    if has_offsets:
        span = _offsets(obj, delimited)
        if isinstance(span, str):
            return span
        start, end = span
        if texts is not None:
            if doc not in texts:
                return f"document {quoted(doc)} is not in the corpus"
            if end > len(texts[doc]):
                return f"span [{start}, {end}) is out of range (document length {len(texts[doc])})"
        return chunk, doc, start, end
    if obj.get("text") in (None, ""):
        return "expected start and end, or text"
    if not isinstance(obj["text"], str):
        return f"text must be a string; got {type(obj['text']).__name__}"
    if texts is None:
        return "chunk given by its text, but no corpus to locate it in (pass corpus=)"
    if doc not in texts:
        return f"document {quoted(doc)} is not in the corpus"
    start = _locate(texts[doc], obj["text"], last_start.get(doc))
    if start < 0:
        return f"chunk text not found in document {quoted(doc)}"
    last_start[doc] = start
    return chunk, doc, start, start + len(obj["text"])


def _locate(document: str, piece: str, after: int | None) -> int:
    if after is not None:
        found = document.find(piece, after + 1)
        if found >= 0:
            return found
    return document.find(piece)


def _offsets(obj: dict, delimited: bool) -> tuple[int, int] | str:
    values = []
    for name in ("start", "end"):
        value = obj.get(name)
        if delimited and isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
            value = int(value.strip())
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"{name} must be an int >= 0; got {quoted(value)}"
        values.append(value)
    start, end = values
    if end <= start:
        return (
            f"span [{start}, {end}) is empty"
            if end == start
            else f"span [{start}, {end}) ends before it starts"
        )
    return start, end


def _corpus_texts(corpus: Any) -> Mapping[str, str] | None:
    """``{doc_id: text}`` from a mapping, a DataFrame or a corpus file; None without a corpus."""
    if corpus is None:
        return None
    if isinstance(corpus, Mapping):
        return corpus
    if isinstance(corpus, str | os.PathLike) or hasattr(corpus, "read"):
        from metrics.formats._tables import read_corpus

        corpus = read_corpus(corpus)
    if hasattr(corpus, "columns") and {"doc_id", "text"} <= set(corpus.columns):
        return dict(zip(corpus["doc_id"], corpus["text"], strict=True))
    raise FormatError(
        Problem(
            "<input>",
            None,
            type(corpus).__name__,
            "corpus must be a mapping {doc_id: text}, a DataFrame with doc_id and text, or a corpus file",
        )
    )


def write_passages(passages: pd.DataFrame, dest: Source) -> None:
    """Write passages as a PASSAGES file: one JSON object a line, non-ASCII kept as is.

    Args:
        passages: a DataFrame with the PASSAGES fields, and those of `OPTIONAL_FIELDS` it has (written too;
            an optional field that is not a string in a row is left out of that line).
        dest: a path or an open text file.

    Raises:
        FormatError: ``passages`` lacks one of the PASSAGES fields.
    """
    import json

    columns = [*PASSAGE_FIELDS, *(c for c in OPTIONAL_FIELDS if c in passages.columns)]
    absent = [c for c in PASSAGE_FIELDS if c not in passages.columns]
    if absent:
        raise FormatError(
            Problem(
                "passages",
                None,
                repr(list(passages.columns)),
                f"missing column{'s' * (len(absent) > 1)} {absent}",
            )
        )
    rows = passages[columns].to_dict(orient="records")
    _write_lines(dest, (json.dumps(_plain(r), ensure_ascii=False) + "\n" for r in rows))


def _plain(record: dict) -> dict:
    """Plain JSON values; a missing optional field (no excerpt, no source) is left out."""
    out = {k: (v.item() if hasattr(v, "item") else v) for k, v in record.items()}
    for name in OPTIONAL_FIELDS:
        if name in out and not isinstance(out[name], str):
            del out[name]
    return out
