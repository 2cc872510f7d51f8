"""The line and error machinery every reader shares (private): resolving a source (path, gzip, file object)
into bytes or a stream of lines (`_Source`), collecting bad lines into one `FormatError` (`_Collector`),
splitting and decoding lines, the duplicate-pair check of the line readers (`_Pairs`), grades and scores as
text, writing lines, and `line_of_row` (a row's line number, for messages)."""

from __future__ import annotations

import gzip
import io
import numbers
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from metrics._lazy import lazy
from metrics.errors import FormatError, Problem, QrelForgeError, quoted

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy("pyarrow")

Source = str | os.PathLike | IO[Any]
MAX_PROBLEMS = 1000
_BOM = b"\xef\xbb\xbf"
_SEP = re.compile(r"[ \t]+")
_SEP_BYTES = re.compile(rb"[ \t]+")  # `_SEP`, for bytes
_LONG_LINE = 1 << 20  # `_split_lines` splits an ASCII line longer than this before decoding it
_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity)", re.IGNORECASE | re.ASCII)
_INT = re.compile(r"[+-]?\d+", re.ASCII)
# A relevance grade: an integer, or one written as a float with nothing but zeros after the point (``3.0``,
# ``-1.00``, ``2.``), which trec_eval reads as that integer (it parses grades with ``atol``).
_GRADE = re.compile(r"[+-]?\d+(?:\.0*)?", re.ASCII)
_INT64 = (-(2**63), 2**63 - 1)
_COMMENT_LINE = re.compile(rb"^[ \t]*#", re.MULTILINE)
_BLANK_LINES = re.compile(rb"(?:[ \t]*\r?\n)+")  # lines of blanks, each ending in LF or CRLF
_BLANK_START = frozenset(b" \t\r\n")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# CSV/TSV fields may be as long as a document: raise the csv module's 128 KiB default once (process-wide; it
# only ever grows, so other readers are not restricted by it).
_CSV_FIELD_LIMIT = 2**31 - 1
_SCAN = 1 << 20
_BIG_FILE = 64 << 20  # Arrow reads bigger files in 2 MiB blocks (fewer chunks), smaller ones in 1 MiB
_MIN_RUN_LINE = (
    11  # "q Q0 d 1 1 t": the shortest run line, so a file of n bytes holds at most n // 11 + 1 rows
)
_MERGE_BLOCK = 1 << 16


MAX_INFLATED_MB = 4096
MAX_LINE_MB = 16
MAX_COLUMNS = 1000
_MB = 1 << 20
# Bytes that break a line for `str.splitlines` but not for Arrow's reader (VT, FF, FS, GS, RS) and the
# UTF-8 of NEL, U+2028 and U+2029: a file holding one takes the line reader, which refuses such IDs.
_ODD_ASCII = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")
_ODD_UTF8 = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


@dataclass(frozen=True)
class _Limits:
    """How far a reader goes: bytes of gzip content once inflated, and bytes of one line (or CSV record)."""

    inflated: int
    line: int
    inflated_mb: float = MAX_INFLATED_MB  # as given, for messages
    line_mb: float = MAX_LINE_MB


def reader_limits(*, max_inflated_mb: float | None = None, max_line_mb: float | None = None) -> _Limits:
    """The readers' limits: each keyword if given, else its environment variable
    (``QRELFORGE_MAX_INFLATED_MB``, ``QRELFORGE_MAX_LINE_MB``), else the default (4096 MB of inflated gzip
    content, 16 MB a line)."""
    inflated_mb = _megabytes(max_inflated_mb, "max_inflated_mb", "QRELFORGE_MAX_INFLATED_MB", MAX_INFLATED_MB)
    line_mb = _megabytes(max_line_mb, "max_line_mb", "QRELFORGE_MAX_LINE_MB", MAX_LINE_MB)
    return _Limits(
        inflated=max(int(inflated_mb * _MB), 1),
        line=max(int(line_mb * _MB), 1),
        inflated_mb=inflated_mb,
        line_mb=line_mb,
    )


def _megabytes(value: float | None, name: str, variable: str, default: int) -> float:
    """The limit in megabytes (MiB): ``value``, else the environment variable, else ``default``."""
    if value is None:
        raw = os.environ.get(variable, "").strip()
        if not raw:
            return default
        try:
            value = float(raw)
        except ValueError:
            value, name = -1, variable
        if not value > 0 or value == float("inf"):
            raise QrelForgeError(f"{variable} must be a number of megabytes > 0; got {raw!r}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < float("inf"):
        raise QrelForgeError(f"{name} must be a number of megabytes > 0; got {value!r}")
    return float(value)


def _line_too_long(name: str, number: int, start: bytes, limits: _Limits, unit: str = "line") -> FormatError:
    return FormatError(
        Problem(
            name,
            number,
            start[:200].decode("utf-8", "replace"),
            f"{unit} longer than {limits.line_mb:g} MB (raise the limit with max_line_mb= or "
            "QRELFORGE_MAX_LINE_MB)",
        )
    )


class _Inflating:
    """A gzip stream that refuses to inflate past ``limit`` bytes (a small file may hold gigabytes)."""

    def __init__(self, stream: gzip.GzipFile, name: str, limits: _Limits, raw: IO[bytes]):
        self._stream, self._name, self._limits, self._read, self._raw = stream, name, limits, 0, raw
        self._limit = limits.inflated

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size if size >= 0 else self._limit - self._read + 1)
        self._read += len(data)
        if self._read > self._limit:
            raise FormatError(
                Problem(
                    self._name,
                    None,
                    self._name,
                    f"gzip content inflates to more than {self._limits.inflated_mb:g} MB (raise the limit "
                    "with max_inflated_mb= or QRELFORGE_MAX_INFLATED_MB)",
                )
            )
        return data

    def close(self) -> None:
        self._stream.close()
        self._raw.close()  # GzipFile does not close a file object it was given

    def __enter__(self) -> _Inflating:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _Source:
    """A resolved input: a file on disk (plain or gzip, streamed) or the whole content in memory.

    ``first_line`` numbers the first line of ``data`` when it is a piece of a larger input (see
    `iter_run_chunks`); a BOM is dropped only from line 1. ``newlines`` is the number of newlines in
    ``data`` once a reader has counted them (`_plain` does), so that `_pieces.pieces` need not count again.
    """

    name: str
    path: Path | None = None
    data: bytes | None = None
    gzipped: bool = False
    first_line: int = 1
    limits: _Limits = _Limits(inflated=MAX_INFLATED_MB * _MB, line=MAX_LINE_MB * _MB)
    newlines: int | None = None

    def _open(self) -> Any:
        if self.path is None:
            stream: Any = io.BytesIO(self.data or b"")
        else:
            stream = open(self.path, "rb")  # noqa: SIM115
        if not self.gzipped:
            return stream
        return _Inflating(gzip.GzipFile(fileobj=stream), self.name, self.limits, stream)

    def piece(self, data: bytes, first_line: int) -> _Source:
        """A piece of this input (its bytes, numbered from ``first_line``), read with the same limits."""
        return _Source(self.name, data=data, first_line=first_line, limits=self.limits)

    def lines(self, *, skip_blank: bool = True) -> Iterator[tuple[int, bytes]]:
        """(line number, raw bytes without the ``\\n``) for every line; with ``skip_blank``, some lines of
        only spaces, tabs and CRLF ends are left out (every reader skips those), so that a file of a billion
        empty lines is read at the speed of its blocks. A line is joined only once it is known to be within
        the line limit (`blocks` checks every line before it is yielded)."""
        if self.path is None and not self.gzipped:
            yield from self._memory_lines(skip_blank)
            return
        number, tail, first = self.first_line, [], self.first_line == 1
        for block in self.blocks():
            if first and block.startswith(_BOM):
                block = block[3:]
            first = False
            end = block.rfind(b"\n")
            if end < 0:
                tail.append(block)
                continue
            if skip_blank and _blank(block) and all(map(_only_blanks, tail)):
                number += _newlines(block, len(block))
                tail = [block[end + 1 :]]
                continue
            parts = block[:end].split(b"\n")
            if tail:
                parts[0] = b"".join([*tail, parts[0]])
            tail = [block[end + 1 :]]
            parts.reverse()
            while parts:  # each line is let go once yielded (a long one is not held twice)
                yield number, parts.pop()
                number += 1
        rest = b"".join(tail)
        if rest:
            yield number, rest

    def _memory_lines(self, skip_blank: bool) -> Iterator[tuple[int, bytes]]:
        """`lines` of content held in memory: each line cut from it once (no blocks to join), checked
        against the line limit first; runs of blank lines are skipped at once."""
        data, number, limit = self.data or b"", self.first_line, self.limits.line
        at = 3 if number == 1 and data.startswith(_BOM) else 0
        while at < len(data):
            if skip_blank and data[at] in _BLANK_START and (run := _BLANK_LINES.match(data, at)):
                number += data.count(b"\n", at, run.end())
                at = run.end()
                continue
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end
            if end - at > limit:
                raise _line_too_long(self.name, number, data[at : at + 200], self.limits)
            yield number, data[at:end]
            number, at = number + 1, end + 1

    def arrow_stream(self) -> pa.NativeFile:
        with self._open() as probe, _gzip_errors(self.name):
            bom = probe.read(3) == _BOM and self.first_line == 1
        stream = pa.BufferReader(self.data or b"") if self.path is None else pa.OSFile(str(self.path))
        if self.gzipped:  # only after `_plain_layout` has inflated it whole within the limit
            stream = pa.CompressedInputStream(stream, "gzip")
        if bom:
            stream.read(3)
        return stream

    def size(self) -> int:
        """Bytes of content (estimated ×4 for a gzip file)."""
        size = len(self.data or b"") if self.path is None else self.path.stat().st_size
        return size * (4 if self.gzipped else 1)

    def blocks(self) -> Iterator[bytes]:
        """The content in blocks of 1 MiB; raises as soon as a line is seen to pass the line limit: a line
        still open when it passes it, or a line that ends in the block (so a caller never joins the pieces
        of a line over the limit)."""
        limit, number, tail, start = self.limits.line, self.first_line, 0, b""
        with self._open() as f, _gzip_errors(self.name):
            while block := f.read(_SCAN):
                end = block.rfind(b"\n")
                if end < 0:
                    start = start if tail else block[:200]
                    tail += len(block)
                    if tail > limit:
                        raise _line_too_long(self.name, number, start, self.limits)
                    yield block
                    continue
                first = block.find(b"\n")
                if tail + first > limit:
                    raise _line_too_long(self.name, number, start if tail else block[:200], self.limits)
                if limit < end - first:  # a limit below the block size: the lines inside it too
                    at, begin, length = _longest_line(block, end)
                    if length > limit:
                        raise _line_too_long(self.name, number + at, block[begin : begin + 200], self.limits)
                number += _newlines(block, end) + 1
                tail, start = len(block) - end - 1, block[end + 1 : end + 201]
                if tail > limit:
                    raise _line_too_long(self.name, number, start, self.limits)
                yield block


def _longest_line(block: bytes, end: int) -> tuple[int, int, int]:
    """(index counted from the block's first line, start, length) of the longest line that begins after the
    block's first newline and ends at or before ``end`` (its last newline)."""
    ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8, count=end + 1) == ord("\n"))
    lengths = np.diff(ends) - 1
    at = int(np.argmax(lengths))
    return at + 1, int(ends[at]) + 1, int(lengths[at])


def _newlines(block: bytes, end: int) -> int:
    """``block.count(b"\\n", 0, end)``, with numpy's vectorized compare."""
    return int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8, count=end) == ord("\n")))


def _blank(block: bytes) -> bool:
    """True when ``block`` holds only spaces, tabs, line ends and CRLF pairs (no lone CR)."""
    if block[:256].translate(None, b" \t\r\n"):  # content near the start: no need to look further
        return False
    if b"\r" in block:
        block = block.replace(b"\r\n", b"\n")
    return not block.translate(None, b" \t\n")


@contextmanager
def _gzip_errors(name: str) -> Iterator[None]:
    try:
        yield
    except (OSError, EOFError, zlib.error) as exc:
        raise FormatError(Problem(name, None, "", f"not a valid gzip file ({exc})")) from None


def _resolve(source: Source, limits: _Limits | None = None) -> _Source:
    """The input as a `_Source`: a path is streamed; a file object is read (as given: a gzip upload stays
    compressed in memory and is inflated as it is read, within ``limits``)."""
    limits = limits or reader_limits()
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        _check_regular(path)
        with open(path, "rb") as f:
            magic = f.read(2)
        return _Source(str(path), path=path, gzipped=magic == b"\x1f\x8b", limits=limits)
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<stream>"))
        content = source.read()
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        return _Source(name, data=data, gzipped=data[:2] == b"\x1f\x8b", limits=limits)
    raise FormatError(Problem("<input>", None, repr(source), "expected a path or a file object"))


def _check_regular(path: Path) -> None:
    """Refuse what is not a regular file, saying what it is (a FIFO or a device is never opened)."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError, ValueError):  # ValueError: a NUL in the path
        raise FormatError(Problem(str(path), None, str(path), "no such file")) from None
    except OSError as exc:
        raise FormatError(Problem(str(path), None, str(path), f"cannot be read ({exc.strerror})")) from None
    if stat.S_ISDIR(mode):
        raise FormatError(Problem(str(path), None, str(path), "is a directory, not a file"))
    if not stat.S_ISREG(mode):
        raise FormatError(
            Problem(str(path), None, str(path), f"is not a regular file (a {_file_kind(mode)})")
        )


def _file_kind(mode: int) -> str:
    kinds = {
        stat.S_ISFIFO: "FIFO",
        stat.S_ISCHR: "character device",
        stat.S_ISBLK: "block device",
        stat.S_ISSOCK: "socket",
    }
    return next((kind for test, kind in kinds.items() if test(mode)), "special file")


def _plain_layout(src: _Source) -> bool:
    """True when Arrow's reader sees the file as we do: no tabs, no two spaces in a row (an empty field to
    Arrow), no lone carriage returns, no comment line (a line that may be one, where a block starts, counts).
    """
    tail = b""
    for block in src.blocks():
        if b"\t" in block or b"  " in block or _odd_bytes(block):  # Arrow would split these otherwise
            return False
        if b"#" in block and _COMMENT_LINE.search(block):
            return False
        if b"\r" in block:
            joined = tail + block
            if joined.count(b"\r") != joined.count(b"\r\n") + joined.endswith(b"\r"):
                return False
        tail = block[-1:]
    return not tail.endswith(b"\r")


def _odd_bytes(block: bytes) -> bool:
    return any(b in block for b in _ODD_ASCII) or (not block.isascii() and any(b in block for b in _ODD_UTF8))


class _Collector:
    """Gathers problems; raises them all at the end (or once there are ``limit`` of them, too many to be
    useful; ``limit=None``: never, for a scratch pass that only asks whether there are any)."""

    def __init__(self, name: str, limit: int | None = MAX_PROBLEMS):
        self.name, self.limit = name, limit
        self.problems: list[Problem] = []

    def add(self, line: int, text: str | bytes, reason: str) -> None:
        """Record a problem of ``line``; ``text`` given as bytes is decoded (UTF-8, bad bytes replaced)."""
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        self.problems.append(Problem(self.name, line, shown, reason))
        if self.limit is not None and len(self.problems) >= self.limit:
            raise FormatError(self.problems)

    def check(self) -> None:
        if self.problems:
            raise FormatError(self.problems)


def _split_lines(src: _Source, problems: _Collector) -> Iterator[tuple[int, str | bytes, list[str]]]:
    """(line number, text, fields) of every non-blank, decodable line. An ASCII line longer than
    `_LONG_LINE` is split before it is decoded and its text stays bytes (`_Collector.add` decodes it only if
    a problem names it): a long line is held once, as bytes, never as bytes and text at once."""
    for number, raw in src.lines():
        if _comment(raw):
            continue
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > _LONG_LINE and raw.isascii():
            if b"\r" in raw:
                problems.add(number, raw, "carriage return inside a line")
            elif fields := _ascii_fields(raw):
                yield number, raw, fields
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(number, raw.decode("utf-8", "replace"), f"not valid UTF-8 (byte {exc.start + 1})")
            continue
        del raw  # not held beside its text (a line may be megabytes long)
        if "\r" in text:
            problems.add(number, text, "carriage return inside a line")
            continue
        stripped = _strip_blanks(text)
        if stripped:
            yield number, text, _SEP.split(stripped)


def _ascii_fields(raw: bytes) -> list[str]:
    """The fields of the ASCII line ``raw`` (none for a line of blanks), as ``_SEP.split`` of its text
    stripped of spaces and tabs gives them, split before anything is decoded or copied whole."""
    fields = _SEP_BYTES.split(raw)
    start, stop = fields[0] == b"", len(fields) - (fields[-1] == b"")
    return [field.decode("ascii") for field in fields[start:stop]]


def _comment(raw: bytes) -> bool:
    """True for a comment line of a TREC file: its first byte other than a space or tab is ``#`` (trec_eval
    10 skips these in runs and qrels; a ``#`` inside a field, as in ``doc#4_12``, is part of the field)."""
    if raw[:1] in (b" ", b"\t"):
        rest = raw.lstrip()  # whitespace: much faster than ``lstrip(b" \t")`` on a long run of blanks
        head = len(raw) - len(rest)
        if raw.count(b" ", 0, head) + raw.count(b"\t", 0, head) != head:  # other whitespace among them
            rest = raw.lstrip(b" \t")
        return rest[:1] == b"#"
    return raw[:1] == b"#"


def _only_blanks(raw: bytes) -> bool:
    """True when ``raw`` holds nothing but spaces and tabs."""
    return not raw.translate(None, b" \t")


def _strip_blanks(text: str) -> str:
    """``text.strip(" \\t")``, fast on long runs of blanks (``str.strip`` with a set of characters looks each
    one up; this strips all whitespace and keeps the result when only spaces and tabs were removed)."""
    right = text.rstrip()
    left = right.lstrip()
    cut_right, cut_left = len(text) - len(right), len(right) - len(left)
    blanks = text.count(" ", len(right)) + text.count("\t", len(right))
    blanks += right.count(" ", 0, cut_left) + right.count("\t", 0, cut_left)
    return left if blanks == cut_right + cut_left else text.strip(" \t")  # else: other whitespace too


def _parse_score(field: str) -> float | None:
    return float(field) if _NUMBER.fullmatch(field) else None


def _score_problem(field: str, score: float | None) -> str | None:
    """Why ``field`` (parsed as ``score``) is not a score, or None: not a number, or a finite-looking number
    beyond the float64 range (``1e400``; the words ``inf`` and ``infinity`` are scores)."""
    if score is None:
        return f"score is not a number: {quoted(field)}"
    if score in (float("inf"), float("-inf")) and "inf" not in field.lower():
        return f"score out of the float64 range: {quoted(field)}"
    return None


class _Pairs:
    """Tracks (query, document) pairs to report duplicates with the line of the first occurrence; ``seen``
    starts it with pairs read earlier (by `iter_run_chunks`, from earlier pieces) and their lines."""

    def __init__(self, seen: dict[tuple[str, str], int] | None = None) -> None:
        self.seen: dict[tuple[str, str], int] = dict(seen or {})

    def check(self, problems: _Collector, number: int, text: str | bytes, qid: str, doc: str) -> bool:
        first = self.seen.setdefault((qid, doc), number)
        if first != number:
            problems.add(
                number,
                text,
                f"duplicate document {quoted(doc)} for query {quoted(qid)} (first on line {first})",
            )
            return False
        return True


def _grade_problem(field: str) -> str | None:
    """Why ``field`` is not a relevance grade, or None: a grade is an integer in the signed 64-bit range,
    written as such or as a float with only zeros after the point (``3.0``, as Quepid writes them).

    >>> _grade_problem("2"), _grade_problem("3.0"), _grade_problem("1.5"), _grade_problem("9" * 30)[:26]
    (None, None, "relevance grade is not an integer: '1.5'", 'relevance grade out of the')
    """
    if not _GRADE.fullmatch(field):
        return f"relevance grade is not an integer: {quoted(field)}"
    digits = field.partition(".")[0]
    if len(digits.lstrip("+-")) > 19 or not _INT64[0] <= int(digits) <= _INT64[1]:
        return f"relevance grade out of the 64-bit integer range: {quoted(field, 30)}"
    return None


def _grade(field: str) -> int:
    """The grade ``field`` holds (checked by `_grade_problem` already): ``3.0`` is 3.

    >>> _grade("2"), _grade("-1.0"), _grade("3.")
    (2, -1, 3)
    """
    return int(field.partition(".")[0])


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
    """The line number of a file's ``row``-th line that is neither blank nor a comment.

    Args:
        source: a path.
        row: the 0-based index among the lines that hold data.

    Returns:
        The 1-based line number, or None when ``source`` is not a readable file or has fewer rows.
    """
    try:
        src = _resolve(source)
    except FormatError:
        return None
    seen = -1
    for number, raw in src.lines():
        if raw.strip(b" \t\r") and not _comment(raw):
            seen += 1
            if seen == row:
                return number
    return None
