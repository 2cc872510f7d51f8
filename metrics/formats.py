"""Readers and writers: TREC qrels and runs, BEIR TSV qrels, JSONL/CSV/TSV corpora and queries.

Every reader accepts a path (plain or gzip-compressed, detected by its magic bytes) or a file object (text or
binary), reads UTF-8 (a leading BOM is dropped; CRLF line ends are fine), and either returns the whole file or
raises `FormatError` listing every bad line as ``file:line: reason: 'text'``. Nothing is half-read.

TREC layouts (fields separated by any run of spaces or tabs):

- qrels: ``qid iter docid rel`` (exactly four fields; ``rel`` an integer, negative allowed);
- runs: ``qid Q0 docid rank score tag`` (fields after the sixth are ignored, as trec_eval ignores them; the
  rank column is not read, order comes from the score).

Large well-formed files take a vectorized path (Arrow's CSV reader); anything unusual, and every error, goes
through the line-by-line reader, which is the reference for what is accepted.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from metrics import _ids
from metrics.data import Qrels, Run
from metrics.errors import FormatError, Problem

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "read_qrels",
    "read_run",
    "read_beir_qrels",
    "write_qrels",
    "write_run",
    "read_corpus",
    "read_queries",
    "write_jsonl",
    "read_chunk_map",
    "line_of_row",
    "iter_run_chunks",
]

Source = str | os.PathLike | IO[Any]
MAX_PROBLEMS = 1000
_BOM = b"\xef\xbb\xbf"
_SEP = re.compile(r"[ \t]+")
_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity)", re.IGNORECASE | re.ASCII)
_INT = re.compile(r"[+-]?\d+", re.ASCII)
_INT64 = (-(2**63), 2**63 - 1)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# CSV/TSV fields may be as long as a document: raise the csv module's 128 KiB default once (process-wide; it
# only ever grows, so other readers are not restricted by it).
_CSV_FIELD_LIMIT = 2**31 - 1
_SCAN = 1 << 20
_THREADED_ABOVE = 64 << 20  # smaller files parse as fast on one thread, with less memory
_MIN_RUN_LINE = (
    11  # "q Q0 d 1 1 t": the shortest run line, so a file of n bytes holds at most n // 11 + 1 rows
)
_MERGE_BLOCK = 1 << 16


# ----------------------------------------------------------------------------------------------- sources
@dataclass
class _Source:
    """A resolved input: a file on disk (plain or gzip, streamed) or the whole content in memory.

    ``first_line`` numbers the first line of ``data`` when it is a piece of a larger input (see
    `iter_run_chunks`); a BOM is dropped only from line 1.
    """

    name: str
    path: Path | None = None
    data: bytes | None = None
    gzipped: bool = False
    first_line: int = 1

    def _open(self) -> IO[bytes]:
        if self.path is None:
            return io.BytesIO(self.data)
        return gzip.open(self.path, "rb") if self.gzipped else open(self.path, "rb")  # noqa: SIM115

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(line number, raw bytes without the line end) for every line."""
        with self._open() as stream, _gzip_errors(self.name):
            for number, raw in enumerate(stream, self.first_line):
                if number == 1 and raw.startswith(_BOM):
                    raw = raw[3:]
                yield number, raw[:-1] if raw.endswith(b"\n") else raw

    def arrow_stream(self) -> pa.NativeFile:
        with self._open() as probe, _gzip_errors(self.name):
            bom = probe.read(3) == _BOM and self.first_line == 1
        if self.path is None:
            stream = pa.BufferReader(self.data)
        elif self.gzipped:
            stream = pa.CompressedInputStream(pa.OSFile(str(self.path)), "gzip")
        else:
            stream = pa.OSFile(str(self.path))
        if bom:
            stream.read(3)
        return stream

    def size(self) -> int:
        """Bytes of content (estimated ×4 for a gzip file)."""
        if self.path is None:
            return len(self.data)
        return self.path.stat().st_size * (4 if self.gzipped else 1)

    def blocks(self) -> Iterator[bytes]:
        with self._open() as f, _gzip_errors(self.name):
            while block := f.read(_SCAN):
                yield block


@contextmanager
def _gzip_errors(name: str) -> Iterator[None]:
    try:
        yield
    except (OSError, EOFError, zlib.error) as exc:
        raise FormatError(Problem(name, None, "", f"not a valid gzip file ({exc})")) from None


def _resolve(source: Source) -> _Source:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise FormatError(Problem(str(path), None, str(path), "no such file"))
        with open(path, "rb") as f:
            magic = f.read(2)
        return _Source(str(path), path=path, gzipped=magic == b"\x1f\x8b")
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<stream>"))
        content = source.read()
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        return _Source(name, data=_gunzip(data, name) if data[:2] == b"\x1f\x8b" else data)
    raise FormatError(Problem("<input>", None, repr(source), "expected a path or a file object"))


def _gunzip(data: bytes, name: str) -> bytes:
    with _gzip_errors(name):
        return gzip.decompress(data)


def _plain_layout(src: _Source) -> bool:
    """True when Arrow's reader sees the file as we do: no tabs, no lone carriage returns."""
    tail = b""
    for block in src.blocks():
        if b"\t" in block:
            return False
        if b"\r" in block:
            joined = tail + block
            if joined.count(b"\r") != joined.count(b"\r\n") + joined.endswith(b"\r"):
                return False
        tail = block[-1:]
    return not tail.endswith(b"\r")


# ----------------------------------------------------------------------------------------- line reader
class _Collector:
    """Gathers problems; raises them all at the end (or once there are ``limit`` of them, too many to be useful;
    ``limit=None``: never, for a scratch pass that only asks whether there are any)."""

    def __init__(self, name: str, limit: int | None = MAX_PROBLEMS):
        self.name, self.problems, self.limit = name, [], limit

    def add(self, line: int, text: str, reason: str) -> None:
        self.problems.append(Problem(self.name, line, text, reason))
        if self.limit is not None and len(self.problems) >= self.limit:
            raise FormatError(self.problems)

    def check(self) -> None:
        if self.problems:
            raise FormatError(self.problems)


def _split_lines(src: _Source, problems: _Collector) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, text, fields) of every non-blank, decodable line."""
    for number, raw in src.lines():
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(number, raw.decode("utf-8", "replace"), f"not valid UTF-8 (byte {exc.start + 1})")
            continue
        if "\r" in text:
            problems.add(number, text, "carriage return inside a line")
            continue
        stripped = text.strip(" \t")
        if stripped:
            yield number, text, _SEP.split(stripped)


def _parse_score(field: str) -> float | None:
    return float(field) if _NUMBER.fullmatch(field) else None


class _Pairs:
    """Tracks (query, document) pairs to report duplicates with the line of the first occurrence; ``seen``
    starts it with pairs read earlier (by `iter_run_chunks`, from earlier pieces) and their lines."""

    def __init__(self, seen: dict[tuple[str, str], int] | None = None) -> None:
        self.seen: dict[tuple[str, str], int] = dict(seen or {})

    def check(self, problems: _Collector, number: int, text: str, qid: str, doc: str) -> bool:
        first = self.seen.setdefault((qid, doc), number)
        if first != number:
            problems.add(
                number, text, f"duplicate document {doc!r} for query {qid!r} (first on line {first})"
            )
            return False
        return True


def _slow_run(src: _Source, problems: _Collector, pairs: _Pairs) -> Run:
    """The run read line by line (the reference reader); bad lines go to ``problems``, which the caller raises."""
    qids, docs, scores = [], [], []
    for number, text, fields in _split_lines(src, problems):
        if len(fields) < 6:
            problems.add(number, text, f"expected 6 fields (qid Q0 docid rank score tag), got {len(fields)}")
            continue
        score = _parse_score(fields[4])
        if score is None:
            problems.add(number, text, f"score is not a number: {fields[4]!r}")
            continue
        if pairs.check(problems, number, text, fields[0], fields[2]):
            qids.append(fields[0])
            docs.append(fields[2])
            scores.append(score)
    return Run(qids, docs, np.array(scores, dtype=np.float64), source=src.name, _validated=True)


def _slow_qrels(src: _Source) -> tuple[list[str], list[str], list[int]]:
    problems, pairs = _Collector(src.name), _Pairs()
    qids, docs, grades = [], [], []
    for number, text, fields in _split_lines(src, problems):
        if len(fields) != 4:
            problems.add(number, text, f"expected 4 fields (qid iter docid rel), got {len(fields)}")
            continue
        reason = _grade_problem(fields[3])
        if reason:
            problems.add(number, text, reason)
            continue
        if pairs.check(problems, number, text, fields[0], fields[2]):
            qids.append(fields[0])
            docs.append(fields[2])
            grades.append(int(fields[3]))
    problems.check()
    return qids, docs, grades


# ----------------------------------------------------------------------------------------- fast reader
def _fast_table(src: _Source, names: list[str], types: dict[str, pa.DataType]) -> pa.Table | None:
    """The file as an Arrow table when it is cleanly single-space separated; None to use the line reader."""
    import pyarrow.csv as pacsv

    if not _plain_layout(src):
        return None
    threaded = src.size() > _THREADED_ABOVE
    read = pacsv.ReadOptions(
        column_names=names, block_size=(16 if threaded else 1) << 20, use_threads=threaded
    )
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=True)
    convert = pacsv.ConvertOptions(
        column_types=types,
        include_columns=list(types),
        null_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    try:
        with src.arrow_stream() as stream:
            return pacsv.read_csv(stream, read_options=read, parse_options=parse, convert_options=convert)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError):
        return None


def _fast_run(src: _Source) -> Run | None:
    names = ["qid", "q0", "docid", "rank", "score", "tag"]
    table = _fast_table(src, names, {"qid": pa.string(), "docid": pa.string(), "score": pa.float64()})
    if table is None:
        return None
    score = _ids.to_numpy(table.column("score"))
    if np.isnan(score).any():
        return None
    return _checked(Run(table.column("qid"), table.column("docid"), score, source=src.name, _validated=True))


def _fast_qrels(src: _Source) -> Qrels | None:
    names = ["qid", "iter", "docid", "rel"]
    table = _fast_table(src, names, {"qid": pa.string(), "docid": pa.string(), "rel": pa.int64()})
    if table is None:
        return None
    return _checked(
        Qrels(
            table.column("qid"),
            table.column("docid"),
            _ids.to_numpy(table.column("rel")),
            source=src.name,
            _validated=True,
        )
    )


def _checked(rows: Qrels | Run) -> Qrels | Run | None:
    """The rows, or None when a duplicate pair needs the line reader to be reported."""
    codes, _ = rows.query_codes()
    return None if len(_ids.duplicate_rows(codes, rows.doc_id)) else rows


# ------------------------------------------------------------------------------------------ public API
def read_run(source: Source, *, name: str | None = None) -> Run:
    """Read a TREC run (``qid Q0 docid rank score tag``).

    The run's name is ``name``, else the tag of its first line, else the file name. Errors: fewer than six
    fields, a score that is not a number (NaN included), a document listed twice for one query.

    >>> import io
    >>> read_run(io.StringIO("q1 Q0 D1 1 0.9 bm25\\nq1 Q0 D2 2 0.5 bm25\\n")).name
    'bm25'
    """
    src = _resolve(source)
    run = _fast_run(src)
    if run is None:
        problems = _Collector(src.name)
        run = _slow_run(src, problems, _Pairs())
        problems.check()
    run.name = name or _first_tag(src) or Path(src.name).name
    return run


def _first_tag(src: _Source) -> str | None:
    for _, raw in src.lines():
        fields = _SEP.split(raw.decode("utf-8", "replace").strip(" \t\r"))
        if len(fields) >= 6:
            return fields[5]
        if fields != [""]:
            return None
    return None


# ------------------------------------------------------------------------------------------ chunked runs
def iter_run_chunks(source: Source, *, rows: int = 1_000_000, name: str | None = None) -> Iterator[Run]:
    """Read a TREC run piece by piece: a `Run` for every ``rows`` lines (blank lines count; the last piece may
    be shorter, an input without lines gives one empty piece), named as `read_run` names the whole run.

    Concatenated, the pieces hold exactly `read_run`'s rows in file order, and a bad file raises the same
    `FormatError` (same rules, same problems with the same line numbers, the same whitespace, CRLF, BOM and
    gzip handling), once the input has been read through or at 1000 problems. No piece is yielded after the
    one holding the first bad line; the pieces yielded before it belong to a bad file, so a caller that writes
    them must do so in a transaction it rolls back on the error.

    Memory: one piece (its bytes and columns), plus 8 bytes per row read — a sorted array of 64-bit hashes of
    the (query, document) pairs, to find a duplicate across pieces. A hash met again is confirmed by re-reading
    the lines before the piece (which also finds the line of the first occurrence), so a hash collision never
    raises an error.

    >>> import io
    >>> text = "q1 Q0 D1 1 0.9 bm25\\nq1 Q0 D2 2 0.5 bm25\\nq2 Q0 D1 1 0.7 bm25\\n"
    >>> [(len(p), p.name) for p in iter_run_chunks(io.StringIO(text), rows=2)]
    [(2, 'bm25'), (1, 'bm25')]
    """
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise ValueError(f"rows must be an int >= 1; got {rows!r}")
    return _run_chunks(_resolve(source), rows, name)


def _run_chunks(src: _Source, rows: int, name: str | None) -> Iterator[Run]:
    name = name or _first_tag(src) or Path(src.name).name
    problems, seen = _Collector(src.name), _PairHashes(src.size() // _MIN_RUN_LINE + 1)
    for piece in _pieces(src, rows):
        run = _piece_run(src, piece, problems, seen)
        del piece  # not held while the caller works on the run
        if not problems.problems:
            run.name = name
            yield run
    problems.check()


def _pieces(src: _Source, lines: int) -> Iterator[_Source]:
    """The input cut into pieces of ``lines`` whole lines (the last one: the rest, yielded if not empty or if it
    is the only piece), each numbered from its first line."""
    first, parts, count = 1, [], 0
    for block in src.blocks():
        parts.append(block)
        count += block.count(b"\n")
        if count < lines:
            continue
        data = b"".join(parts)
        ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)[lines - 1 :: lines] + 1
        for start, end in zip([0, *ends[:-1].tolist()], ends.tolist(), strict=True):
            yield _Source(src.name, data=data[start:end], first_line=first)
            first += lines
        parts, count = [data[ends[-1] :]], count - lines * len(ends)
    rest = b"".join(parts)
    if rest or first == 1:
        yield _Source(src.name, data=rest, first_line=first)


def _piece_run(src: _Source, piece: _Source, problems: _Collector, seen: _PairHashes) -> Run:
    """The rows of one piece (fast reader if it can, else the line reader), checked against the (query,
    document) pairs of the pieces before it (``seen``, which then takes this piece's pairs). When the piece has
    a bad line or repeats an earlier pair, the line reader reads it again, reporting to ``problems``."""
    run = _fast_run(piece)
    clean = run is not None
    if run is None:
        scratch = _Collector(src.name, limit=None)
        run = _slow_run(piece, scratch, _Pairs())
        clean = not scratch.problems
    keys = _pair_keys(run)
    earlier = _earlier_lines(src, piece.first_line, run, seen.hits(keys))
    if earlier or not clean:
        run = _slow_run(piece, problems, _Pairs(earlier))
        keys = _pair_keys(run)
    seen.add(keys)
    return run


def _pair_keys(run: Run) -> np.ndarray:
    """A 64-bit hash of each row's (query, document) pair (equal pairs, equal hashes)."""
    return _ids.hash_strings(run.doc_id, seed=_ids.hash_strings(run.query_id))


def _earlier_lines(src: _Source, before: int, run: Run, rows: np.ndarray) -> dict[tuple[str, str], int]:
    """(query, document) → line of its first accepted row before line ``before``, for the pairs of ``rows`` (of
    ``run``) that really were read there: the exact check behind a hash hit. Re-reads the input up to ``before``
    with the line reader's rules (a row is accepted with six fields and a numeric score)."""
    if not len(rows):
        return {}
    take = _ids.indices(rows)
    wanted = set(zip(run.query_id.take(take).to_pylist(), run.doc_id.take(take).to_pylist(), strict=True))
    found: dict[tuple[str, str], int] = {}
    for number, _, fields in _split_lines(src, _Collector(src.name, limit=None)):
        if number >= before:
            break
        if len(fields) >= 6 and (fields[0], fields[2]) in wanted and _parse_score(fields[4]) is not None:
            found.setdefault((fields[0], fields[2]), number)
    return found


class _PairHashes:
    """The 64-bit (query, document) hashes of the rows read so far, kept sorted: 8 bytes a row.

    ``capacity`` rows are reserved at once (memory that is never written costs nothing); past it the array
    doubles, copying once (a gzip input, whose size is only estimated). `add` merges in place: the held hashes
    move towards the end block by block, last block first, so no second array of all of them is ever made.
    """

    def __init__(self, capacity: int):
        self._keys, self._n = np.empty(max(capacity, 1), dtype=np.uint64), 0

    def hits(self, keys: np.ndarray) -> np.ndarray:
        """The positions in ``keys`` of the hashes held already."""
        if not self._n or not len(keys):
            return np.zeros(0, dtype=np.int64)
        held = self._keys[: self._n]
        at = np.minimum(np.searchsorted(held, keys), self._n - 1)
        return np.flatnonzero(held[at] == keys)

    def add(self, keys: np.ndarray) -> None:
        """Hold ``keys`` too (equal hashes are all kept)."""
        new, n = np.sort(keys), self._n
        if len(self._keys) < n + len(new):
            grown = np.empty(n + max(n, len(new)), dtype=np.uint64)
            grown[:n] = self._keys[:n]
            self._keys = grown
        before = np.searchsorted(self._keys[:n], new, side="right")  # held hashes <= each new one
        for hi in range(n, 0, -_MERGE_BLOCK):
            self._move_back(max(hi - _MERGE_BLOCK, 0), hi, before)
        self._keys[before + np.arange(len(new))] = new
        self._n = n + len(new)

    def _move_back(self, lo: int, hi: int, before: np.ndarray) -> None:
        """Move held hashes ``lo:hi`` back by how many new hashes sort below each: held hash ``i`` has
        ``#{j: before[j] <= i}`` of them (``before`` is sorted)."""
        a, b = np.searchsorted(before, [lo, hi])
        shift = a + np.cumsum(np.bincount(before[a:b] - lo, minlength=hi - lo))
        block = self._keys[lo:hi].copy()
        self._keys[np.arange(lo, hi) + shift] = block


def read_qrels(source: Source, *, format: str = "auto") -> Qrels:
    """Read qrels: TREC (``qid iter docid rel``) or BEIR TSV (``query-id corpus-id score`` with a header).

    ``format="auto"`` picks BEIR for ``.tsv`` files and for content whose first line has three tab-separated
    fields, TREC otherwise. Errors: a wrong number of fields, a grade that is not an integer, a document
    judged twice for one query.
    """
    if format not in ("auto", "trec", "beir"):
        raise FormatError(Problem("<input>", None, repr(format), "format must be 'auto', 'trec' or 'beir'"))
    src = _resolve(source)
    if format == "beir" or (format == "auto" and _looks_beir(src)):
        return _read_beir(src)
    qrels = _fast_qrels(src)
    if qrels is None:
        qids, docs, grades = _slow_qrels(src)
        qrels = Qrels(qids, docs, np.array(grades, dtype=np.int64), source=src.name, _validated=True)
    return qrels


def read_beir_qrels(source: Source) -> Qrels:
    """Read BEIR-style TSV qrels: a header line, then ``query-id<TAB>corpus-id<TAB>score`` rows."""
    return read_qrels(source, format="beir")


def _looks_beir(src: _Source) -> bool:
    if src.name.lower().removesuffix(".gz").endswith(".tsv"):
        return True
    for _, raw in src.lines():
        if raw.strip():
            return raw.rstrip(b"\r").count(b"\t") == 2 and b" " not in raw.strip()
    return False


def _read_beir(src: _Source) -> Qrels:
    problems, pairs = _Collector(src.name), _Pairs()
    qids, docs, grades, header = [], [], [], None
    for number, raw in src.lines():
        text = _decode(raw[:-1] if raw.endswith(b"\r") else raw, number, problems)
        if text is None or not text.strip(" \t"):
            continue
        fields = [f.strip(" ") for f in text.split("\t")]
        if header is None:
            header = fields
            if len(fields) == 3 and _INT.fullmatch(fields[2]):
                problems.add(number, text, "missing header line 'query-id<TAB>corpus-id<TAB>score'")
            continue
        reason = _beir_problem(fields)
        if reason:
            problems.add(number, text, reason)
        elif pairs.check(problems, number, text, fields[0], fields[1]):
            qids.append(fields[0])
            docs.append(fields[1])
            grades.append(int(fields[2]))
    problems.check()
    return Qrels(qids, docs, np.array(grades, dtype=np.int64), source=src.name, _validated=True)


def _beir_problem(fields: list[str]) -> str | None:
    if len(fields) != 3:
        return f"expected 3 tab-separated fields (query-id corpus-id score), got {len(fields)}"
    for value, what in ((fields[0], "query-id"), (fields[1], "corpus-id")):
        if not value:
            return f"empty {what}"
        if _ids.BAD_ID_CHARS.search(value):
            return f"{what} contains a space, tab or line break: {value!r}"
    return _grade_problem(fields[2])


def _grade_problem(field: str) -> str | None:
    """Why ``field`` is not a relevance grade (an integer in the signed 64-bit range), or None.

    >>> _grade_problem("2"), _grade_problem("1.5"), _grade_problem("9" * 30)[:26]
    (None, "relevance grade is not an integer: '1.5'", 'relevance grade out of the')
    """
    if not _INT.fullmatch(field):
        return f"relevance grade is not an integer: {field!r}"
    if len(field.lstrip("+-")) > 19 or not _INT64[0] <= int(field) <= _INT64[1]:
        return f"relevance grade out of the 64-bit integer range: {field[:30]!r}"
    return None


def _decode(raw: bytes, number: int, problems: _Collector) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.add(number, raw.decode("utf-8", "replace"), f"not valid UTF-8 (byte {exc.start + 1})")
        return None


# ------------------------------------------------------------------------------------------------ writers
def _open_out(dest: Source) -> tuple[IO[str], bool]:
    if hasattr(dest, "write"):
        return dest, False
    path = str(dest)
    if path.endswith(".gz"):
        return gzip.open(path, "wt", encoding="utf-8", newline="\n"), True
    return open(path, "w", encoding="utf-8", newline="\n"), True  # noqa: SIM115


def _write_lines(dest: Source, lines: Iterable[str]) -> None:
    out, close = _open_out(dest)
    try:
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) >= 65536:
                out.write("".join(batch))
                batch.clear()
        out.write("".join(batch))
    finally:
        if close:
            out.close()


def write_run(run: Run, dest: Source, *, tag: str | None = None) -> None:
    """Write a TREC run in evaluation order, ranks 1..n per query, scores in shortest round-trip form."""
    frame = run.ranked()
    tag = tag or run.name or "qrelforge"
    if _SEP.search(tag) or not tag:
        raise FormatError(
            Problem("<write_run>", None, tag, "tag must be a non-empty string without spaces or tabs")
        )
    ranks = (_ids.position_within(frame.query_codes()[0]) + 1).tolist()
    rows = zip(frame.query_id.to_pylist(), frame.doc_id.to_pylist(), ranks, frame.score.tolist(), strict=True)
    _write_lines(dest, (f"{q} Q0 {d} {r} {s!r} {tag}\n" for q, d, r, s in rows))


def write_qrels(qrels: Qrels, dest: Source, *, format: str = "trec") -> None:
    """Write qrels as TREC (``qid 0 docid rel``) or BEIR TSV (with its header)."""
    if format not in ("trec", "beir"):
        raise FormatError(Problem("<write_qrels>", None, repr(format), "format must be 'trec' or 'beir'"))
    rows = zip(qrels.query_id.to_pylist(), qrels.doc_id.to_pylist(), qrels.relevance.tolist(), strict=True)
    if format == "trec":
        _write_lines(dest, (f"{q} 0 {d} {g}\n" for q, d, g in rows))
    else:
        _write_lines(dest, ["query-id\tcorpus-id\tscore\n", *(f"{q}\t{d}\t{g}\n" for q, d, g in rows)])


# ------------------------------------------------------------------------------- corpora and queries
_ID_KEYS = {"corpus": ("doc_id", "_id", "docid", "id"), "queries": ("query_id", "_id", "qid", "id")}


def read_corpus(source: Source, *, format: str = "auto") -> pd.DataFrame:
    """Read documents from JSONL, CSV or TSV into a DataFrame with ``doc_id``, ``title``, ``text`` and extras.

    The ID may be called ``doc_id``, ``_id`` (BEIR), ``docid`` or ``id``; ``title`` defaults to "". Errors:
    invalid JSON, a missing or empty ID, a duplicate ID, a missing ``text``, a non-string field.
    """
    return _read_records(source, format, kind="corpus")


def read_queries(source: Source, *, format: str = "auto") -> pd.DataFrame:
    """Read queries from JSONL, CSV or TSV into a DataFrame with ``query_id``, ``text`` and extras."""
    return _read_records(source, format, kind="queries")


def _read_records(source: Source, format: str, *, kind: str) -> pd.DataFrame:
    import pandas as pd

    if format not in ("auto", "jsonl", "csv", "tsv"):
        raise FormatError(
            Problem("<input>", None, repr(format), "format must be 'auto', 'jsonl', 'csv' or 'tsv'")
        )
    src = _resolve(source)
    fmt = format if format != "auto" else _record_format(src.name)
    problems = _Collector(src.name)
    rows = _jsonl_rows(src, problems) if fmt == "jsonl" else _delimited_rows(src, fmt, problems)  # streamed
    records = _normalize_records(rows, kind, problems)
    problems.check()
    id_key = "doc_id" if kind == "corpus" else "query_id"
    columns = [id_key, "title", "text"] if kind == "corpus" else [id_key, "text"]
    frame = pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=columns)
    rest = [c for c in frame.columns if c not in columns]
    return frame[columns + rest]


def _record_format(name: str) -> str:
    lower = name.lower().removesuffix(".gz")
    return "csv" if lower.endswith(".csv") else "tsv" if lower.endswith(".tsv") else "jsonl"


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
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="," if fmt == "csv" else "\t")
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
    rows = _jsonl_rows(src, problems) if fmt == "jsonl" else _delimited_rows(src, fmt, problems)
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


def line_of_row(source: str, row: int) -> int | None:
    """The line number of the ``row``-th (0-based) non-blank line of a file, or None if it is not a file."""
    try:
        src = _resolve(source)
    except FormatError:
        return None
    seen = -1
    for number, raw in src.lines():
        if raw.strip(b" \t\r"):
            seen += 1
            if seen == row:
                return number
    return None
