"""Imports: documents and queries (JSONL, CSV or TSV), runs (TREC), prior qrels (TREC or BEIR TSV) and the
chunk→document map. `metrics.formats` parses; this module checks the rows against the project and writes them.

Rules:

- Each import is one transaction. A bad file imports nothing and raises `InvalidInput` whose ``problems``
  list every bad line as ``file:line: reason: 'text'`` (parse errors, unknown query or document IDs, ...).
- Re-importing the same file changes nothing. A document whose title or text changed gets a new version (the
  old one is kept); the labels made on the old version are flagged stale (`ImportReport.stale_labels`) and the
  annotators get the pair back to re-judge. A query's text may change only while it has no labels.
- A run or prior-qrels name (default: the run's tag / the file name) is imported once; the same content again
  is a no-op, different content under the same name is a Conflict.
- `preview` parses a file and returns its first rows and all its problems without writing anything.

``source`` is a path, bytes (an upload) or a file object. ``filename`` names an upload (bytes) for the format
and messages. Documents carry ``doc_id`` (or ``_id``/``docid``/``id``), ``title``, ``text``, an optional
``version`` label and any extra fields (kept as metadata, e.g. ``title_en``). Every text must be storable
(`services.inputs.check_text`: no NUL, no lone surrogate) and metadata must be strict JSON (no NaN or infinity).

Memory: a path is never read whole. `metrics.formats` streams it (plain or gzip), its sha256 is computed
block by block, and a run is read, checked and written `RUN_PIECE_ROWS` lines at a time
(`metrics.formats.iter_run_chunks`) inside one transaction: peak memory is about one piece (a few MB) plus
8 bytes per line read (the hashes that find a duplicate pair across pieces), whatever the file size. A bad
line in any piece rolls the whole import back. Bytes and file objects (uploads) are held in memory once; the
app caps their size.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import functools
import gzip
import hashlib
import io
import itertools
import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from sqlalchemy.orm import Session

from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.services.projects import ProjectRef, open_project
from annotate_app.services.types import ImportPreview, ImportReport
from annotate_app.store import corpus as q
from annotate_app.store.db import Database, unstorable
from annotate_app.store.models import Project, utcnow
from metrics.errors import FormatError, Problem

__all__ = [
    "import_documents",
    "import_queries",
    "import_run",
    "import_qrels",
    "import_chunk_map",
    "preview",
    "list_runs",
    "Source",
]

Source = str | os.PathLike | bytes | IO[Any]
_RESERVED_DOC = ("doc_id", "title", "text", "version")
MAX_ID = 255


@dataclass(frozen=True)
class _File:
    """An input: a file on disk (``path``, streamed, never read whole) or bytes in memory (``data``, an upload);
    ``name`` is what messages and the import record show."""

    name: str
    data: bytes | None = None
    path: Path | None = None

    @functools.cached_property
    def sha256(self) -> str:
        if self.path is None:
            return hashlib.sha256(self.data).hexdigest()
        with open(self.path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()

    def reader_input(self) -> Path | io.BytesIO:
        """What `metrics.formats` reads: the path itself (streamed) — unless an upload name changes the format
        the reader would infer from the path's suffix — else the bytes."""
        if self.path is not None and _suffix_kind(self.name) == _suffix_kind(str(self.path)):
            return self.path
        stream = io.BytesIO(self.data if self.data is not None else self.path.read_bytes())
        stream.name = self.name
        return stream

    def open(self) -> IO[bytes]:
        """The content as a binary stream (gzip decompressed)."""
        if self.path is None:
            raw = io.BytesIO(self.data)
            return gzip.GzipFile(fileobj=raw) if self.data[:2] == b"\x1f\x8b" else raw
        with open(self.path, "rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
        return gzip.open(self.path, "rb") if gzipped else open(self.path, "rb")  # noqa: SIM115


def _suffix_kind(name: str) -> str:
    lower = name.lower().removesuffix(".gz")
    return "csv" if lower.endswith(".csv") else "tsv" if lower.endswith(".tsv") else "other"


def _display_name(name: str) -> str:
    """The name without control characters (an upload's name is user input, and it is stored)."""
    return "".join(c if c.isprintable() and not unstorable(c) else "?" for c in name) or "?"


def _read(source: Source, name: str | None) -> _File:
    if name is not None and not isinstance(name, str):
        raise InvalidInput(f"filename must be a string or None; got {type(name).__name__}")
    if isinstance(source, bytes | bytearray):
        return _File(_display_name(name or "<upload>"), bytes(source))
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise InvalidInput(f"{_display_name(str(path))}: no such file")
        return _File(_display_name(name or str(path)), path=path)
    if hasattr(source, "read"):
        content = source.read()
        data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else bytes(content)
        return _File(_display_name(name or str(getattr(source, "name", "<stream>"))), data)
    raise InvalidInput(f"source must be a path, bytes or a file object; got {type(source).__name__}")


def _parse(parse, file: _File, **kw: Any):
    try:
        return parse(file.reader_input(), **kw)
    except FormatError as exc:
        raise _invalid(file, exc) from None


def _invalid(file: _File, exc: FormatError) -> InvalidInput:
    """The reader's problems as `InvalidInput`, naming the file as the caller named it."""
    problems = [
        p if p.source == file.name else dataclasses.replace(p, source=file.name) for p in exc.problems
    ]
    return InvalidInput(str(problems[0]), problems)


def _fail(problems: list[Problem]) -> None:
    if problems:
        raise InvalidInput(str(problems[0]), problems)


def _sha(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------------ line numbers
def _row_lines(file: _File, rows: Iterator[int] | set[int]) -> dict[int, tuple[int, str]]:
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
        for row, (line, shown) in enumerate(_data_lines(text, _suffix_kind(file.name))):
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


def _problem(file: _File, lines: dict[int, tuple[int, str]], row: int, reason: str) -> Problem:
    line, text = lines.get(row, (None, ""))
    return Problem(file.name, line, text, reason)


def _problems(file: _File, bad: list[tuple[int, str]]) -> list[Problem]:
    """Problems for (row, reason) pairs, with their lines (at most the first 1000)."""
    bad = bad[:1000]
    lines = _row_lines(file, {row for row, _ in bad})
    return [_problem(file, lines, row, reason) for row, reason in bad]


def _record_problems(records: list[dict], id_key: str) -> list[tuple[int, str]]:
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


# ----------------------------------------------------------------------------------------- documents
def _doc_records(file: _File) -> list[dict]:
    from metrics.formats import read_corpus

    records = _parse(read_corpus, file, format=_record_format(file.name)).to_dict(orient="records")
    for i, rec in enumerate(records):  # in place: each row's older dict is freed as it is replaced
        records[i] = _cleaned(rec)
    _fail(_problems(file, _record_problems(records, "doc_id")))
    for i, rec in enumerate(records):
        records[i] = _doc_record(rec)
    return records


def _record_format(name: str) -> str:
    kind = _suffix_kind(name)
    return "jsonl" if kind == "other" else kind


def _cleaned(rec: dict) -> dict:
    """The record without the NaN that pandas puts in the fields a row lacks."""
    return {k: v for k, v in rec.items() if not (isinstance(v, float) and math.isnan(v))}


def _doc_record(rec: dict) -> dict:
    meta = {k: v for k, v in rec.items() if k not in _RESERVED_DOC and v is not None}
    version = rec.get("version")
    title, text = rec.get("title") or "", rec["text"]
    return {
        "external_id": rec["doc_id"],
        "title": title,
        "text": text,
        "meta": meta,
        "source_version": None if version is None else str(version)[:255],
        "sha": _sha(title, text),
    }


def import_documents(
    db: Database, actor: Actor, project: ProjectRef, source: Source, *, filename: str | None = None
) -> ImportReport:
    """Import documents (admin): new IDs are added, changed ones get a new version, the rest is unchanged."""
    file = _read(source, filename)
    records = _doc_records(file)
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import documents")
        existing = q.doc_index(s, proj.id)
        new = [r for r in records if r["external_id"] not in existing]
        changed = [
            r for r in records if r["external_id"] in existing and existing[r["external_id"]][2] != r["sha"]
        ]
        _add_documents(s, proj.id, new, file.name)
        stale = _change_documents(s, changed, existing, file.name)
        report = ImportReport(
            "documents",
            file.name,
            Path(file.name).name,
            len(new),
            len(changed),
            len(records) - len(new) - len(changed),
            stale,
        )
        _record(s, actor, proj, "documents", file, report)
        return report


def _version_row(doc_id: int, version: int, rec: dict, source: str, now) -> dict:
    return {
        "document_id": doc_id,
        "version": version,
        "title": rec["title"],
        "text": rec["text"],
        "meta": rec["meta"],
        "source_version": rec["source_version"],
        "content_sha256": rec["sha"],
        "source": source[:1000],
        "created_at": now,
    }


def _add_documents(s: Session, project_id: int, records: list[dict], source: str) -> None:
    if not records:
        return
    now = utcnow()
    ids = q.insert_documents(
        s,
        project_id,
        [
            {
                "project_id": project_id,
                "external_id": r["external_id"],
                "version": 1,
                "content_sha256": r["sha"],
                "updated_at": now,
            }
            for r in records
        ],
    )
    q.insert_versions(s, [_version_row(ids[r["external_id"]], 1, r, source, now) for r in records])


def _change_documents(s: Session, records: list[dict], existing: dict, source: str) -> int:
    if not records:
        return 0
    now = utcnow()
    updates, versions = [], []
    for r in records:
        doc_id, version, _ = existing[r["external_id"]]
        updates.append(
            {"b_id": doc_id, "version": version + 1, "content_sha256": r["sha"], "updated_at": now}
        )
        versions.append(_version_row(doc_id, version + 1, r, source, now))
    q.update_documents(s, updates)
    q.insert_versions(s, versions)
    return q.mark_stale(s, [u["b_id"] for u in updates])


def _record(s: Session, actor: Actor, project: Project, kind: str, file: _File, report: ImportReport) -> None:
    counts = {
        "added": report.added,
        "changed": report.changed,
        "unchanged": report.unchanged,
        "stale_labels": report.stale_labels,
    }
    q.record_import(
        s,
        project_id=project.id,
        kind=kind,
        source=report.name[:1000],
        file_sha256=file.sha256,
        counts=counts,
        created_by=actor.user_id,
    )
    audit(s, actor, f"import_{kind}", project_id=project.id, target=file.name, details=counts)


# ------------------------------------------------------------------------------------------- queries
def _query_records(file: _File) -> list[dict]:
    from metrics.formats import read_queries

    records = [
        _cleaned(r)
        for r in _parse(read_queries, file, format=_record_format(file.name)).to_dict(orient="records")
    ]
    _fail(_problems(file, _record_problems(records, "query_id")))
    out = []
    for rec in records:
        meta = {k: v for k, v in rec.items() if k not in ("query_id", "text") and v is not None}
        out.append(
            {"external_id": rec["query_id"], "text": rec["text"], "meta": meta, "sha": _sha(rec["text"])}
        )
    return out


def import_queries(
    db: Database, actor: Actor, project: ProjectRef, source: Source, *, filename: str | None = None
) -> ImportReport:
    """Import queries (admin). A changed text is accepted only for a query without labels."""
    file = _read(source, filename)
    records = _query_records(file)
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import queries")
        existing = q.query_index(s, proj.id)
        new = [r for r in records if r["external_id"] not in existing]
        changed = [
            r for r in records if r["external_id"] in existing and existing[r["external_id"]][1] != r["sha"]
        ]
        _refuse_labelled_changes(s, file, records, changed, existing)
        now = utcnow()
        q.insert_queries(
            s,
            [
                {
                    "project_id": proj.id,
                    "external_id": r["external_id"],
                    "text": r["text"],
                    "meta": r["meta"],
                    "content_sha256": r["sha"],
                    "created_at": now,
                }
                for r in new
            ],
        )
        q.update_queries(
            s,
            [
                {
                    "b_id": existing[r["external_id"]][0],
                    "text": r["text"],
                    "meta": r["meta"],
                    "content_sha256": r["sha"],
                }
                for r in changed
            ],
        )
        report = ImportReport(
            "queries",
            file.name,
            Path(file.name).name,
            len(new),
            len(changed),
            len(records) - len(new) - len(changed),
        )
        _record(s, actor, proj, "queries", file, report)
        return report


def _refuse_labelled_changes(
    s: Session, file: _File, records: list[dict], changed: list[dict], existing: dict
) -> None:
    labelled = q.queries_with_labels(s, [existing[r["external_id"]][0] for r in changed])
    if not labelled:
        return
    row_of = {r["external_id"]: i for i, r in enumerate(records)}
    _fail(
        _problems(
            file,
            [
                (
                    row_of[r["external_id"]],
                    f"query {r['external_id']!r} already has labels; its text "
                    "cannot change (import it under a new query_id)",
                )
                for r in changed
                if existing[r["external_id"]][0] in labelled
            ],
        )
    )


# ---------------------------------------------------------------------------------------------- runs
RUN_PIECE_ROWS = 100_000  # lines of a run file read, checked and written at a time (a few MB)


@dataclass(frozen=True)
class _Ids:
    """A project's external IDs (an Arrow string array) and the internal id of each, for vectorized lookups."""

    keys: Any
    ids: np.ndarray

    @classmethod
    def of(cls, index: dict) -> _Ids:
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


def _positions(values, index: dict) -> np.ndarray:
    return _Ids.of(index).positions(values)


def _internal(values, index: dict) -> np.ndarray:
    return _Ids.of(index).internal(values)


def _unknown_rows(
    queries, docs, qids: _Ids, dids: _Ids, doc_word: str = "document", offset: int = 0
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


def _unknown(
    file: _File, queries, docs, qindex: dict, dindex: dict, doc_word: str = "document"
) -> list[Problem]:
    """A problem for each row (of Arrow columns ``queries``/``docs``) naming an unknown query or document."""
    return _problems(file, _unknown_rows(queries, docs, _Ids.of(qindex), _Ids.of(dindex), doc_word))


def _check_name(value: str, what: str) -> str:
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


def import_run(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    source: Source,
    *,
    name: str | None = None,
    chunks: bool = False,
    filename: str | None = None,
) -> ImportReport:
    """Import a TREC run (admin) under ``name`` (default: its tag). Every query and document must exist in the
    project; with ``chunks=True`` its document IDs are chunk IDs, mapped through the imported chunk map
    (each document keeps its best-ranked chunk). The file is read, checked and written `RUN_PIECE_ROWS` lines
    at a time in one transaction (see `_RunWriter` and the module doc on memory)."""
    file = _read(source, filename)
    with contextlib.closing(_run_pieces(file)) as pieces:
        first = next(pieces)  # named by its first line's tag; a bad first piece fails before the transaction
        run_name = _check_name(name or first.name, "run name")
        with db.write() as s:
            _, proj = open_project(s, actor, project, Role.ADMIN, "import runs")
            old = q.find_run(s, proj.id, run_name)
            if old is not None:
                return _same_again(old.file_sha256, file, "run", run_name, old.n_entries)
            report = _store_run(s, actor, proj.id, run_name, file, itertools.chain([first], pieces), chunks)
            _record(s, actor, proj, "run", file, report)
            return report


def _store_run(
    s: Session, actor: Actor, project_id: int, run_name: str, file: _File, pieces: Iterator, chunks: bool
) -> ImportReport:
    run_id = q.insert_run(
        s,
        project_id=project_id,
        name=run_name,
        source=file.name[:1000],
        file_sha256=file.sha256,
        n_entries=0,
        created_by=actor.user_id,
    )
    n = _write_run(_RunWriter(s, run_id, _RunTarget.load(s, project_id, chunks)), file, pieces)
    q.set_run_size(s, run_id, n)
    return ImportReport("run", file.name, run_name, n)


def _run_pieces(file: _File) -> Iterator:
    """The run's pieces (`metrics.formats.iter_run_chunks`, `RUN_PIECE_ROWS` lines each); a bad file raises
    `InvalidInput` listing its bad lines."""
    from metrics.formats import iter_run_chunks

    try:
        yield from iter_run_chunks(file.reader_input(), rows=RUN_PIECE_ROWS)
    except FormatError as exc:
        raise _invalid(file, exc) from None


def _write_run(writer: _RunWriter, file: _File, pieces: Iterator) -> int:
    """Check every piece's IDs and write the pieces; returns the number of entries written. Unknown IDs raise
    `InvalidInput` (at most 1000 problems) once the whole file is read, so that a format error further on is
    reported instead, as for a file read whole."""
    bad: list[tuple[int, str]] = []
    offset = 0
    for run in pieces:
        bad += writer.target.unknown_rows(run, offset)[: 1000 - len(bad)]
        if not bad:
            writer.add(run)
        offset += len(run)
    _fail(_problems(file, bad))
    return writer.finish(file)


@dataclass(frozen=True)
class _RunTarget:
    """What a run's IDs are checked against and mapped to: the project's queries and documents, and for a
    chunk-level run its chunk map (``chunks``: chunk IDs; ``chunk_docs``: the external ID of each one's
    document, aligned with ``chunks.keys``)."""

    queries: _Ids
    docs: _Ids
    chunks: _Ids | None = None
    chunk_docs: Any = None

    @classmethod
    def load(cls, s: Session, project_id: int, chunks: bool) -> _RunTarget:
        import pyarrow as pa

        dindex = q.doc_index(s, project_id)
        queries, docs = _Ids.of(q.query_index(s, project_id)), _Ids.of(dindex)
        if not chunks:
            return cls(queries, docs)
        cindex = q.chunk_index(s, project_id)
        external = {i: ext for ext, (i, _, _) in dindex.items()}
        return cls(
            queries, docs, _Ids.of(cindex), pa.array([external[d] for d in cindex.values()], pa.string())
        )

    def unknown_rows(self, run, offset: int) -> list[tuple[int, str]]:
        refs, word = (self.docs, "document") if self.chunks is None else (self.chunks, "chunk")
        return _unknown_rows(run.query_id, run.doc_id, self.queries, refs, word, offset)

    def columns(self, run) -> dict[str, np.ndarray]:
        """The entries of ``run`` (whole queries) in evaluation order as columns: internal query and document
        ids, rank (1-based within the query), score. A chunk-level run first keeps each document's best-ranked
        chunk (`metrics.evaluate.map_chunks`)."""
        from metrics.evaluate import map_chunks
        from metrics.ranking import position_within, trec_order

        if self.chunks is not None:
            run = map_chunks(run, self._chunk_map(run.doc_id))
        codes = run.query_codes()[0]
        order = trec_order(codes, run.score, run.doc_id)  # an index, not a second copy of the ID columns
        return {
            "query_id": self.queries.internal(run.query_id)[order],
            "document_id": self.docs.internal(run.doc_id)[order],
            "rank": position_within(codes[order]) + 1,
            "score": run.score[order],
        }

    def _chunk_map(self, chunk_ids) -> dict[str, str]:
        """chunk ID → document ID, for the chunks of ``chunk_ids`` only."""
        from metrics._ids import indices

        at = indices(np.unique(self.chunks.positions(chunk_ids)))
        return dict(
            zip(self.chunks.keys.take(at).to_pylist(), self.chunk_docs.take(at).to_pylist(), strict=True)
        )


class _RunWriter:
    """Writes a run's entries piece by piece inside the caller's transaction.

    A query is ranked with all its entries, so the entries of the query a piece ends with wait for the next
    piece (files list each query's entries together, as trec_eval and its peers write them: then each query is
    written once, and memory stays at about one piece). A query met again after it was written (a file whose
    queries are interleaved) is "split": its entries are deleted at the end and written again from a second
    read of the file restricted to the split queries (memory: their entries).
    """

    def __init__(self, s: Session, run_id: int, target: _RunTarget):
        self.s, self.run_id, self.target = s, run_id, target
        self.pending = None  # the rows of the last query of the pieces so far
        self.written = np.zeros(len(target.queries.ids), dtype=bool)  # by query position
        self.split = np.zeros(len(target.queries.ids), dtype=bool)
        self.n = 0

    def add(self, run) -> None:
        run = _joined(self.pending, run)
        if len(run):
            last = _ids_mask(run.query_id, run.query_id[-1])
            self.pending = _subset(run, last)
            self._write(_subset(run, ~last))

    def finish(self, file: _File) -> int:
        """Write what is pending and rewrite the split queries; returns the number of entries of the run."""
        if self.pending is not None:
            self._write(self.pending)
        if self.split.any():
            self.n -= q.delete_run_entries(self.s, self.run_id, self.target.queries.ids[self.split].tolist())
            self._insert(
                _joined_all(_subset(p, _in(p.query_id, self._split_ids())) for p in _run_pieces(file))
            )
        return self.n

    def _split_ids(self):
        from metrics._ids import indices

        return self.target.queries.keys.take(indices(np.flatnonzero(self.split)))

    def _write(self, run) -> None:
        """Write the rows of queries not written before; mark the others split."""
        at = self.target.queries.positions(run.query_id)
        again = self.written[at]
        self.split[at[again]] = True
        self.written[at] = True
        self._insert(_subset(run, ~again) if again.any() else run)

    def _insert(self, run) -> None:
        if run is not None and len(run):
            columns = self.target.columns(run)
            q.insert_run_columns(self.s, self.run_id, **columns)
            self.n += len(columns["rank"])


def _ids_mask(column, value) -> np.ndarray:
    """Rows of an Arrow string column equal to ``value``, as a numpy bool array."""
    import pyarrow.compute as pc

    from metrics._ids import to_numpy

    return to_numpy(pc.equal(column, value))


def _in(column, values) -> np.ndarray:
    import pyarrow.compute as pc

    from metrics._ids import to_numpy

    return to_numpy(pc.is_in(column, value_set=values))


def _subset(run, mask: np.ndarray):
    """The rows of ``run`` where ``mask`` is true."""
    from metrics import Run
    from metrics._ids import indices

    take = indices(np.flatnonzero(mask))
    return Run(
        run.query_id.take(take), run.doc_id.take(take), run.score[mask], source=run.source, _validated=True
    )


def _joined(first, second):
    """``first`` (or None) followed by ``second``, the Arrow columns chained without copying."""
    return second if first is None or not len(first) else _joined_all([first, second])


def _joined_all(runs: Iterable) -> Any:
    """The runs' rows one after the other (None if there are none)."""
    from metrics import Run

    runs = [r for r in runs if r is not None and len(r)]
    if not runs:
        return None
    return Run(
        _chained(r.query_id for r in runs),
        _chained(r.doc_id for r in runs),
        np.concatenate([r.score for r in runs]),
        source=runs[0].source,
        _validated=True,
    )


def _chained(columns: Iterable) -> Any:
    """Arrow string columns (plain or chunked) as one chunked array, without copying."""
    import pyarrow as pa

    return pa.chunked_array([c for col in columns for c in getattr(col, "chunks", [col])], pa.string())


def _same_again(old_sha: str, file: _File, kind: str, name: str, n: int) -> ImportReport:
    if old_sha != file.sha256:
        raise Conflict(
            f"{kind} {name!r} was already imported from a different file; import it under another name"
        )
    return ImportReport(kind, file.name, name, 0, 0, n)


def list_runs(db: Database, actor: Actor, project: ProjectRef) -> list[tuple[str, int]]:
    """(name, number of entries) of each run of the project (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "list runs")
        return [(r.name, r.n_entries) for r in q.runs(s, proj.id)]


# ------------------------------------------------------------------------------------------- qrels
def import_qrels(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    source: Source,
    *,
    name: str | None = None,
    filename: str | None = None,
) -> ImportReport:
    """Import existing qrels as prior judgments (admin) under ``name`` (default: the file name). They are shown
    to reviewers next to disagreements and can keep pooling from re-judging pairs; they are never released."""
    from metrics.formats import read_qrels

    file = _read(source, filename)
    qrels = _parse(read_qrels, file)
    prior_name = _check_name(name or Path(file.name).name, "qrels name")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import qrels")
        known = q.prior_sources(s, proj.id)
        if prior_name in known:
            old = q.find_import(s, proj.id, "qrels", prior_name)
            return _same_again(old.file_sha256 if old else "", file, "qrels", prior_name, known[prior_name])
        qindex, dindex = q.query_index(s, proj.id), q.doc_index(s, proj.id)
        _fail(_unknown(file, qrels.query_id, qrels.doc_id, qindex, dindex))
        columns = zip(
            _internal(qrels.query_id, qindex).tolist(),
            _internal(qrels.doc_id, dindex).tolist(),
            qrels.relevance.tolist(),
            strict=True,
        )
        q.insert_prior(
            s,
            [
                {
                    "project_id": proj.id,
                    "source": prior_name,
                    "query_id": a,
                    "document_id": b,
                    "grade": int(g),
                }
                for a, b, g in columns
            ],
        )
        report = ImportReport("qrels", file.name, prior_name, len(qrels))
        _record(s, actor, proj, "qrels", file, report)
        return report


# -------------------------------------------------------------------------------------------- chunks
def import_chunk_map(
    db: Database, actor: Actor, project: ProjectRef, source: Source, *, filename: str | None = None
) -> ImportReport:
    """Import a chunk→document map (admin): ``chunk_id`` and ``doc_id`` per row (JSONL, CSV or TSV). A chunk
    already mapped to another document is an error."""
    from metrics.formats import read_chunk_map

    file = _read(source, filename)
    chunk_ids, doc_ids = (a.to_pylist() for a in _parse(read_chunk_map, file))
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import chunk maps")
        dindex, cindex = q.doc_index(s, proj.id), q.chunk_index(s, proj.id)
        problems = _chunk_problems(file, chunk_ids, doc_ids, dindex, cindex)
        _fail(problems)
        new = [(c, d) for c, d in zip(chunk_ids, doc_ids, strict=True) if c not in cindex]
        q.insert_chunks(
            s, [{"project_id": proj.id, "chunk_id": c, "document_id": dindex[d][0]} for c, d in new]
        )
        report = ImportReport(
            "chunks", file.name, Path(file.name).name, len(new), 0, len(chunk_ids) - len(new)
        )
        _record(s, actor, proj, "chunks", file, report)
        return report


def _chunk_problems(file: _File, chunk_ids: list, doc_ids: list, dindex: dict, cindex: dict) -> list[Problem]:
    bad = []
    for i, (c, d) in enumerate(zip(chunk_ids, doc_ids, strict=True)):
        if len(c) > MAX_ID or unstorable(c):
            bad.append((i, f"chunk_id {unstorable(c) or f'longer than {MAX_ID} characters'}"))
        elif d not in dindex:
            bad.append((i, f"unknown document {d!r}"))
        elif c in cindex and cindex[c] != dindex[d][0]:
            bad.append((i, f"chunk {c!r} is already mapped to another document"))
    return _problems(file, bad)


# ------------------------------------------------------------------------------------------- preview
_READERS = {
    "documents": "read_corpus",
    "queries": "read_queries",
    "run": "read_run",
    "qrels": "read_qrels",
    "chunks": "read_chunk_map",
}


def preview(
    db: Database, actor: Actor, kind: str, source: Source, *, filename: str | None = None, limit: int = 5
) -> ImportPreview:
    """Parse ``source`` as ``kind`` (documents, queries, run, qrels, chunks) without importing (admin):
    row count, columns, the first ``limit`` rows and every problem found by the parser."""
    import metrics.formats as formats

    if not isinstance(kind, str) or kind not in _READERS:
        raise InvalidInput(f"kind must be one of {', '.join(map(repr, _READERS))}; got {kind!r}")
    with db.read() as s:
        from annotate_app.services.auth import authorize

        authorize(s, actor, Role.ADMIN, "preview imports")
    file = _read(source, filename)
    try:
        parsed = getattr(formats, _READERS[kind])(file.reader_input())
    except FormatError as exc:
        return ImportPreview(kind, file.name, 0, (), (), tuple(str(p) for p in exc.problems))
    frame = _as_frame(parsed)
    sample = tuple(json.loads(frame.head(limit).to_json(orient="records", force_ascii=False)))
    return ImportPreview(kind, file.name, len(frame), tuple(map(str, frame.columns)), sample, ())


def _as_frame(parsed: Any):
    import pandas as pd

    if isinstance(parsed, tuple):
        return pd.DataFrame({"chunk_id": parsed[0].to_pylist(), "doc_id": parsed[1].to_pylist()})
    if hasattr(parsed, "columns"):
        return parsed
    frame = parsed.to_dataframe()
    return frame
