"""The line and error machinery every reader shares (private): resolving a source (path, gzip, file object)
into bytes or a stream of lines (`_Source`), collecting bad lines into one `FormatError` (`_Collector`),
splitting and decoding lines, the duplicate-pair check of the line readers (`_Pairs`), grades and scores as
text, writing lines, and `line_of_row` (a row's line number, for messages)."""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pyarrow as pa

from metrics.errors import FormatError, Problem

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

    def _open(self) -> io.BufferedIOBase:
        if self.path is None:
            return io.BytesIO(self.data or b"")
        if self.gzipped:
            return gzip.open(self.path, "rb")
        return open(self.path, "rb")  # noqa: SIM115

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
            return len(self.data or b"")
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


class _Collector:
    """Gathers problems; raises them all at the end (or once there are ``limit`` of them, too many to be
    useful; ``limit=None``: never, for a scratch pass that only asks whether there are any)."""

    def __init__(self, name: str, limit: int | None = MAX_PROBLEMS):
        self.name, self.limit = name, limit
        self.problems: list[Problem] = []

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


def _open_out(dest: Source) -> tuple[IO[str], bool]:
    if not isinstance(dest, str | os.PathLike):  # a file object (it has ``write``)
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
