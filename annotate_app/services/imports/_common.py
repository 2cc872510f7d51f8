"""What the import modules share: reading a source (`SourceFile`), turning parser errors and bad rows into
`InvalidInput` problems with their line numbers, ID lookups (`Ids`), names, and the import record.

Private to `annotate_app.services.imports`; its names are public within the package only.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import functools
import gc
import gzip
import hashlib
import io
import json
import math
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from sqlalchemy.orm import Session

from annotate_app.services.auth import Actor, audit
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.services.types import ImportReport
from annotate_app.store import undo
from annotate_app.store.db import unstorable
from annotate_app.store.enums import ImportKind
from annotate_app.store.models import Project
from metrics.errors import FormatError, Problem

__all__ = [
    "Source",
    "MAX_ID",
    "SourceFile",
    "Ids",
    "read_source",
    "display_name",
    "suffix_kind",
    "parse",
    "invalid",
    "fail",
    "sha",
    "row_lines",
    "problems",
    "record_problems",
    "record_format",
    "cleaned",
    "record_import",
    "start_import",
    "lock_imports",
    "collector_paused",
    "already_imported",
    "internal",
    "unknown_rows",
    "unknown",
    "check_name",
    "same_again",
]


Source = str | os.PathLike | bytes | IO[Any]


MAX_ID = 255


@dataclass(frozen=True)
class SourceFile:
    """An input: a file on disk (``path``, streamed, never read whole) or bytes in memory (``data``, an
    upload); ``name`` is what messages and the import record show."""

    name: str
    data: bytes | None = None
    path: Path | None = None

    @functools.cached_property
    def sha256(self) -> str:
        if self.path is None:
            return hashlib.sha256(self.content()).hexdigest()
        with open(self.path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()

    def content(self) -> bytes:
        """The whole content, as given (an upload) or read from the file."""
        if self.data is not None:
            return self.data
        if self.path is None:
            raise InvalidInput(f"{self.name}: no content")
        return self.path.read_bytes()

    def reader_input(self) -> Path | io.BytesIO:
        """What `metrics.formats` reads: the path itself (streamed) — unless an upload name changes the format
        the reader would infer from the path's suffix — else the bytes."""
        if self.path is not None and suffix_kind(self.name) == suffix_kind(str(self.path)):
            return self.path
        stream = io.BytesIO(self.content())
        stream.name = self.name
        return stream

    def open(self) -> gzip.GzipFile | io.BytesIO | io.BufferedReader:
        """The content as a binary stream (gzip decompressed)."""
        if self.path is None:
            data = self.content()
            raw = io.BytesIO(data)
            return gzip.GzipFile(fileobj=raw) if data[:2] == b"\x1f\x8b" else raw
        with open(self.path, "rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
        return gzip.open(self.path, "rb") if gzipped else open(self.path, "rb")  # noqa: SIM115


def suffix_kind(name: str) -> str:
    lower = name.lower().removesuffix(".gz")
    return "csv" if lower.endswith(".csv") else "tsv" if lower.endswith(".tsv") else "other"


def display_name(name: str) -> str:
    """The name without control characters (an upload's name is user input, and it is stored)."""
    return "".join(c if c.isprintable() and not unstorable(c) else "?" for c in name) or "?"


def read_source(source: Source, name: str | None) -> SourceFile:
    if name is not None and not isinstance(name, str):
        raise InvalidInput(f"filename must be a string or None; got {type(name).__name__}")
    if isinstance(source, bytes | bytearray):
        return SourceFile(display_name(name or "<upload>"), bytes(source))
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        _check_regular(path)
        return SourceFile(display_name(name or str(path)), path=path)
    if hasattr(source, "read"):
        content = source.read()
        data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else bytes(content)
        return SourceFile(display_name(name or str(getattr(source, "name", "<stream>"))), data)
    raise InvalidInput(f"source must be a path, bytes or a file object; got {type(source).__name__}")


def _check_regular(path: Path) -> None:
    """A path to import must be a regular file: a directory, a FIFO (which would block) or a device such as
    /dev/null is named for what it is, never opened."""
    shown = display_name(str(path))
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError, ValueError):  # ValueError: a NUL in the path
        raise InvalidInput(f"{shown}: no such file") from None
    except OSError as exc:
        raise InvalidInput(f"{shown}: cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(mode):
        raise InvalidInput(f"{shown}: is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise InvalidInput(f"{shown}: is not a regular file")


def parse(parse, file: SourceFile, **kw: Any):
    try:
        return parse(file.reader_input(), **kw)
    except FormatError as exc:
        raise invalid(file, exc) from None


def invalid(file: SourceFile, exc: FormatError) -> InvalidInput:
    """The reader's problems as `InvalidInput`, naming the file as the caller named it."""
    problems = [
        p if p.source == file.name else dataclasses.replace(p, source=file.name) for p in exc.problems
    ]
    return InvalidInput(str(problems[0]), problems)


def fail(problems: list[Problem]) -> None:
    if problems:
        raise InvalidInput(str(problems[0]), problems)


def sha(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------------ line numbers
def row_lines(file: SourceFile, rows: Iterator[int] | set[int]) -> dict[int, tuple[int, str]]:
    """row → (line number, text) of the wanted data rows, in the order the readers return rows (JSONL/TREC:
    non-blank lines; CSV/TSV: records after the header, numbered by their last line as `metrics.formats`
    does). Streams the file and stops after the last wanted row."""
    wanted = set(rows)
    out: dict[int, tuple[int, str]] = {}
    if not wanted:
        return out
    last = max(wanted)
    with file.open() as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="")
        for row, (line, shown) in enumerate(_data_lines(text, suffix_kind(file.name))):
            if row in wanted:
                out[row] = (line, shown)
            if row >= last:
                break
    return out


def _data_lines(text: IO[str], kind: str) -> Iterator[tuple[int, str]]:
    if kind == "other":
        for number, line in enumerate(text, 1):
            if line.strip(" \t\r\n"):
                yield number, line.rstrip("\r\n")
        return
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
    reader = csv.reader(text, delimiter="," if kind == "csv" else "\t")
    records = ((reader.line_num, ",".join(r)) for r in reader if any(c.strip() for c in r))
    next(records, None)  # the header
    yield from records


def _problem(file: SourceFile, lines: dict[int, tuple[int, str]], row: int, reason: str) -> Problem:
    line, text = lines.get(row, (None, ""))
    return Problem(file.name, line, text, reason)


def problems(file: SourceFile, bad: list[tuple[int, str]]) -> list[Problem]:
    """Problems for (row, reason) pairs, with their lines (at most the first 1000)."""
    bad = bad[:1000]
    lines = row_lines(file, {row for row, _ in bad})
    return [_problem(file, lines, row, reason) for row, reason in bad]


def record_problems(records: list[dict], id_key: str) -> list[tuple[int, str]]:
    """(row, reason) of each record whose ID is too long, whose text cannot be stored, or whose metadata is
    not strict JSON."""
    bad = []
    for i, rec in enumerate(records):
        reason = _record_problem(rec, id_key)
        if reason:
            bad.append((i, reason))
    return bad


def _record_problem(rec: dict, id_key: str) -> str | None:
    if len(rec[id_key]) > MAX_ID:
        return f"{id_key} longer than {MAX_ID} characters"
    for key in (id_key, "title", "text"):
        value = rec.get(key)
        reason = unstorable(value) if isinstance(value, str) else None
        if reason:
            return f"{key} {reason}"
    try:
        json.dumps({k: v for k, v in rec.items() if k not in (id_key, "title", "text")}, allow_nan=False)
    except ValueError:
        return "a metadata field holds NaN or infinity (not valid JSON)"
    return None


def record_format(name: str) -> str:
    kind = suffix_kind(name)
    return "jsonl" if kind == "other" else kind


def cleaned(rec: dict) -> dict:
    """The record without the NaN that pandas puts in the fields a row lacks."""
    return {k: v for k, v in rec.items() if not (isinstance(v, float) and math.isnan(v))}


def start_import(
    s: Session, actor: Actor, project: Project, file: SourceFile, kind: ImportKind, name: str
) -> int:
    """The import record of an import about to write (its counts come with `record_import`); returns its id,
    which the rows it adds carry (``import_id``) so that `undo_import` can find them."""
    return undo.begin_import(
        s,
        project_id=project.id,
        kind=kind,
        source=name[:1000],
        file_sha256=file.sha256,
        created_by=actor.user_id,
    )


def lock_imports(s: Session, project: Project) -> None:
    """Wait for the project's other imports and undos (see `store.undo.lock_imports`): two concurrent imports
    of one file then end as one import and one "already imported"."""
    undo.lock_imports(s, project.id)


def record_import(
    s: Session,
    actor: Actor,
    project: Project,
    file: SourceFile,
    report: ImportReport,
    import_id: int,
    replaced: dict | None = None,
) -> None:
    """Fill in the import record's counts (and what it overwrote, ``replaced``) and audit the import."""
    counts = {
        "added": report.added,
        "changed": report.changed,
        "unchanged": report.unchanged,
        "stale_labels": report.stale_labels,
    }
    undo.finish_import(s, import_id, counts, replaced)
    audit(
        s,
        actor,
        report.kind.action,
        project_id=project.id,
        target=file.name,
        details={**counts, "import_id": import_id},
    )


def already_imported(
    s: Session, project: Project, file: SourceFile, report: ImportReport, import_id: int
) -> ImportReport:
    """The report, naming the earlier import of the same file (not undone) when this one changed nothing."""
    if report.added or report.changed:
        return report
    earlier = undo.same_file_import(s, project.id, report.kind, file.sha256, before=import_id)
    return report if earlier is None else dataclasses.replace(report, already_imported=earlier)


@dataclass(frozen=True)
class Ids:
    """A project's external IDs (an Arrow string array) and the internal id of each, for vectorized
    lookups."""

    keys: Any
    ids: np.ndarray

    @classmethod
    def of(cls, index: dict) -> Ids:
        """From an index ``external ID → internal id`` (or a tuple whose first item is the internal id)."""
        import pyarrow as pa

        ids = np.fromiter((v[0] if isinstance(v, tuple) else v for v in index.values()), np.int64, len(index))
        return cls(pa.array(list(index), pa.string()), ids)

    def positions(self, values) -> np.ndarray:
        """Position of each ID (an Arrow string column) among the keys, -1 where unknown."""
        import pyarrow.compute as pc

        found = pc.index_in(values, value_set=self.keys)
        return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)

    def internal(self, values) -> np.ndarray:
        """The internal ids of known IDs, as an int64 column."""
        return self.ids[self.positions(values)]


def internal(values, index: dict) -> np.ndarray:
    return Ids.of(index).internal(values)


def unknown_rows(
    queries, docs, qids: Ids, dids: Ids, doc_word: str = "document", offset: int = 0
) -> list[tuple[int, str]]:
    """(row + ``offset``, reason) of the first 1000 rows (of Arrow columns ``queries``/``docs``) naming an
    unknown query or document."""
    qpos, dpos = qids.positions(queries), dids.positions(docs)
    rows = np.flatnonzero((qpos < 0) | (dpos < 0))[:1000].tolist()
    return [
        (
            offset + i,
            f"unknown query {queries[i].as_py()!r}"
            if qpos[i] < 0
            else f"unknown {doc_word} {docs[i].as_py()!r}",
        )
        for i in rows
    ]


def unknown(
    file: SourceFile, queries, docs, qindex: dict, dindex: dict, doc_word: str = "document"
) -> list[Problem]:
    """A problem for each row (of Arrow columns ``queries``/``docs``) naming an unknown query or document."""
    return problems(file, unknown_rows(queries, docs, Ids.of(qindex), Ids.of(dindex), doc_word))


def check_name(value: str, what: str) -> str:
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > MAX_ID
        or any(c.isspace() or not c.isprintable() for c in value)
        or unstorable(value)
    ):
        raise InvalidInput(
            f"{what} must be a non-empty name without spaces or control characters, at most "
            f"{MAX_ID} characters; got {value!r}"
        )
    return value


def same_again(old_sha: str, file: SourceFile, kind: ImportKind, name: str, n: int) -> ImportReport:
    """The report of an import already made from the same file (nothing changes); Conflict for another file
    under the same name."""
    if old_sha != file.sha256:
        raise Conflict(
            f"{kind} {name!r} was already imported from a different file; import it under another name"
        )
    return ImportReport(kind=kind, source=file.name, name=name, added=0, unchanged=n)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for a bulk step, on again afterwards (if it was on): a step that
    builds hundreds of thousands of rows, tuples and dicts, none of them in a cycle, would otherwise start a
    collection every few hundred allocations, each walking the objects still alive. Reference counting frees
    everything as usual; only cycles wait for the end of the step. Process-wide: steps of several threads
    overlap harmlessly (the collector is on again once the one that turned it off ends)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
