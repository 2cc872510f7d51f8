"""Importing TREC runs, piece by piece (`RUN_PIECE_ROWS` rows at a time, in one transaction), and listing
them. A chunk-level run is mapped to documents through the imported chunk map (each document keeps its
best-ranked chunk)."""

from __future__ import annotations

import contextlib
import itertools
import time
import uuid
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role
from annotate_app.services.imports._common import (
    Ids,
    Source,
    SourceFile,
    check_name,
    fail,
    invalid,
    lock_imports,
    problems,
    read_source,
    record_import,
    same_again,
    start_import,
    unknown_rows,
)
from annotate_app.services.types import ImportReport
from annotate_app.store import corpus
from annotate_app.store.db import Database
from annotate_app.store.enums import ImportKind
from annotate_app.store.models import utcnow
from metrics.errors import FormatError

__all__ = ["import_run", "list_runs", "RUN_PIECE_ROWS"]


RUN_PIECE_ROWS = 100_000  # rows of a run file checked and written at a time (read in pieces of ~4 MB)
SQLITE_PIECE_ROWS = 10_000  # on SQLite: rows per transaction, short enough for other writers to get in
SQLITE_PAUSE_S = 0.05  # on SQLite: the pause between two of them (other processes' busy handlers poll)


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
    (each document keeps its best-ranked chunk). The file is read, checked and written `RUN_PIECE_ROWS` rows
    at a time in one transaction (see `_RunWriter` and the module doc on memory)."""
    file = read_source(source, filename)
    with contextlib.closing(
        _run_pieces(file, SQLITE_PIECE_ROWS if db.is_sqlite else RUN_PIECE_ROWS)
    ) as pieces:
        first = next(pieces)  # named by its first line's tag; a bad first piece fails before the transaction
        run_name = check_name(name or first.name, "run name")
        if db.is_sqlite:
            return _import_staged(
                db, actor, project, file, run_name, itertools.chain([first], pieces), chunks
            )
        with db.write() as s:
            _, proj = open_project(s, actor, project, Role.ADMIN, "import runs")
            lock_imports(s, proj)
            old = corpus.find_run(s, proj.id, run_name)
            if old is not None:
                return same_again(old.file_sha256, file, ImportKind.RUN, run_name, old.n_entries)
            import_id = start_import(s, actor, proj, file, ImportKind.RUN, run_name)
            report = _store_run(s, actor, proj.id, run_name, file, itertools.chain([first], pieces), chunks)
            record_import(s, actor, proj, file, report, import_id)
            return report


# ------------------------------------------------------------------------------------ SQLite: staged
STAGED_LEFTOVER = timedelta(hours=24)  # a staged run this old belongs to an import that died
_DROP_QUERIES = 200  # queries' entries deleted per transaction when a staged run is dropped


def _import_staged(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    file: SourceFile,
    run_name: str,
    pieces: Iterator,
    chunks: bool,
) -> ImportReport:
    """A run import on SQLite in short transactions, so that other processes' writes (an annotator's label)
    get in between: the entries go, piece by piece, under a staged run (a name no run can have, invisible to
    every reader); one last transaction names it and records the import (all visible at once); on any error
    the staged rows are deleted, again in short transactions."""
    run_id, target, leftovers = _stage(db, actor, project, file, run_name, chunks)
    for old in leftovers:
        _drop_staged(db, old)
    if run_id is None:
        return target
    try:
        n = _write_staged(db, _RunWriter(None, run_id, target), file, pieces)
        report = _publish(db, actor, project, file, run_name, run_id, n)
    except BaseException:
        _drop_staged(db, run_id)
        raise
    if report.added == 0 and report.unchanged:  # imported meanwhile by someone else: ours goes
        _drop_staged(db, run_id)
    return report


def _stage(db: Database, actor: Actor, project: ProjectRef, file: SourceFile, run_name: str, chunks: bool):
    """(staged run id, its target, staged leftovers to drop); (None, the report, leftovers) when the run
    exists."""
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import runs")
        leftovers = corpus.staged_runs(s, proj.id, utcnow() - STAGED_LEFTOVER)
        old = corpus.find_run(s, proj.id, run_name)
        if old is not None:
            return None, same_again(old.file_sha256, file, ImportKind.RUN, run_name, old.n_entries), leftovers
        run_id = corpus.insert_run(
            s,
            project_id=proj.id,
            name=f"{corpus.STAGING}{uuid.uuid4().hex} {run_name}"[:255],
            source=file.name[:1000],
            file_sha256=file.sha256,
            n_entries=0,
            created_by=actor.user_id,
        )
        return run_id, _RunTarget.load(s, proj.id, chunks), leftovers


def _write_staged(db: Database, writer: _RunWriter, file: SourceFile, pieces: Iterator) -> int:
    """`_write_run`, one transaction per piece (the file is read and checked outside them)."""
    bad: list[tuple[int, str]] = []
    offset = 0
    for run in pieces:
        bad += writer.target.unknown_rows(run, offset)[: 1000 - len(bad)]
        if not bad:
            with db.write() as s:
                writer.s = s
                writer.add(run)
            time.sleep(SQLITE_PAUSE_S)  # SQLite's busy handler polls: leave a waiting writer a gap to get in
        offset += len(run)
    fail(problems(file, bad))
    with db.write() as s:
        writer.s = s
        return writer.finish(file)


def _publish(
    db: Database, actor: Actor, project: ProjectRef, file: SourceFile, run_name: str, run_id: int, n: int
) -> ImportReport:
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import runs")
        old = corpus.find_run(s, proj.id, run_name)
        if old is not None:
            return same_again(old.file_sha256, file, ImportKind.RUN, run_name, old.n_entries)
        corpus.publish_run(s, run_id, run_name, n)
        import_id = start_import(s, actor, proj, file, ImportKind.RUN, run_name)
        report = ImportReport(kind=ImportKind.RUN, source=file.name, name=run_name, added=n)
        record_import(s, actor, proj, file, report, import_id)
        return report


def _drop_staged(db: Database, run_id: int) -> None:
    """Delete a staged run, a few queries' entries per transaction."""
    while True:
        with db.write() as s:
            if not corpus.delete_run_piece(s, run_id, _DROP_QUERIES):
                return


def _store_run(
    s: Session, actor: Actor, project_id: int, run_name: str, file: SourceFile, pieces: Iterator, chunks: bool
) -> ImportReport:
    run_id = corpus.insert_run(
        s,
        project_id=project_id,
        name=run_name,
        source=file.name[:1000],
        file_sha256=file.sha256,
        n_entries=0,
        created_by=actor.user_id,
    )
    n = _write_run(_RunWriter(s, run_id, _RunTarget.load(s, project_id, chunks)), file, pieces)
    corpus.set_run_size(s, run_id, n)
    return ImportReport(kind=ImportKind.RUN, source=file.name, name=run_name, added=n)


def _run_pieces(file: SourceFile, rows: int = RUN_PIECE_ROWS) -> Generator[Any, None, None]:
    """The run's pieces (`metrics.formats.iter_run_chunks`, `RUN_PIECE_ROWS` rows each); a bad file raises
    `InvalidInput` listing its bad lines."""
    from metrics.formats import iter_run_chunks

    try:
        yield from iter_run_chunks(file.reader_input(), rows=rows)
    except FormatError as exc:
        raise invalid(file, exc) from None


def _write_run(writer: _RunWriter, file: SourceFile, pieces: Iterator) -> int:
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
    fail(problems(file, bad))
    return writer.finish(file)


@dataclass(frozen=True)
class _RunTarget:
    """What a run's IDs are checked against and mapped to: the project's queries and documents, and for a
    chunk-level run its chunk map (``chunks``: chunk IDs; ``chunk_docs``: the external ID of each one's
    document, aligned with ``chunks.keys``; ``chunk_rows``: the ``chunks.id`` of each, likewise)."""

    queries: Ids
    docs: Ids
    chunks: Ids | None = None
    chunk_docs: Any = None
    chunk_rows: Any = None

    @classmethod
    def load(cls, s: Session, project_id: int, chunks: bool) -> _RunTarget:
        import pyarrow as pa

        dindex = corpus.doc_index(s, project_id)
        queries, docs = Ids.of(corpus.query_index(s, project_id)), Ids.of(dindex)
        if not chunks:
            return cls(queries, docs)
        cindex = corpus.chunk_index(s, project_id)
        rows = corpus.chunk_row_ids(s, project_id)
        external = {i: ext for ext, (i, _, _) in dindex.items()}
        return cls(
            queries,
            docs,
            Ids.of(cindex),
            pa.array([external[d] for d in cindex.values()], pa.string()),
            np.fromiter((rows[c] for c in cindex), np.int64, len(cindex)),
        )

    def unknown_rows(self, run, offset: int) -> list[tuple[int, str]]:
        refs, word = (self.docs, "document") if self.chunks is None else (self.chunks, "chunk")
        return unknown_rows(run.query_id, run.doc_id, self.queries, refs, word, offset)

    def columns(self, run) -> dict[str, np.ndarray]:
        """The entries of ``run`` (whole queries) in evaluation order as columns: internal query and document
        ids, rank (1-based within the query), score. A chunk-level run first keeps each document's best-ranked
        chunk (`metrics.evaluate.best_chunks`), whose ``chunks.id`` is the column ``chunk_id``."""
        from metrics.evaluate import best_chunks
        from metrics.measures.ranking import position_within, trec_order

        kept = None
        if self.chunks is not None:
            run, kept = best_chunks(run, self._chunk_map(run.doc_id))
        codes = run.query_codes()[0]
        order = trec_order(codes, run.score, run.doc_id)  # an index, not a second copy of the ID columns
        columns = {
            "query_id": self.queries.internal(run.query_id)[order],
            "document_id": self.docs.internal(run.doc_id)[order],
            "rank": position_within(codes[order]) + 1,
            "score": run.score[order],
        }
        if self.chunks is not None:
            columns["chunk_id"] = self.chunk_rows[self.chunks.positions(kept)][order]
        return columns

    def _chunk_map(self, chunk_ids) -> dict[str, str]:
        """chunk ID → document ID, for the chunks of ``chunk_ids`` only."""
        from metrics._ids import indices

        chunks = self.chunks
        if chunks is None:  # a document-level run maps no chunks
            return {}
        at = indices(np.unique(chunks.positions(chunk_ids)))
        return dict(zip(chunks.keys.take(at).to_pylist(), self.chunk_docs.take(at).to_pylist(), strict=True))


class _RunWriter:
    """Writes a run's entries piece by piece inside the caller's transaction.

    A query is ranked with all its entries, so the entries of the query a piece ends with wait for the next
    piece (files list each query's entries together, as trec_eval and its peers write them: then each query is
    written once, and memory stays at about one piece). A query met again after it was written (a file whose
    queries are interleaved) is "split": its entries are deleted at the end and written again from a second
    read of the file restricted to the split queries (memory: their entries).
    """

    def __init__(self, s: Session | None, run_id: int, target: _RunTarget):
        self.s, self.run_id, self.target = s, run_id, target
        self.pending = None  # the rows of the last query of the pieces so far
        self.written = np.zeros(len(target.queries.ids), dtype=bool)  # by query position
        self.split = np.zeros(len(target.queries.ids), dtype=bool)
        self.n = 0

    def session(self) -> Session:
        """The transaction the writer writes in (on SQLite a new one per piece: see `_write_staged`)."""
        if self.s is None:
            raise RuntimeError("the run writer has no transaction")
        return self.s

    def add(self, run) -> None:
        run = _joined(self.pending, run)
        if len(run):
            last = _ids_mask(run.query_id, run.query_id[-1])
            self.pending = _subset(run, last)
            self._write(_subset(run, ~last))

    def finish(self, file: SourceFile) -> int:
        """Write what is pending and rewrite the split queries; returns the number of entries of the run."""
        if self.pending is not None:
            self._write(self.pending)
        if self.split.any():
            self.n -= corpus.delete_run_entries(
                self.session(), self.run_id, self.target.queries.ids[self.split].tolist()
            )
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
            corpus.insert_run_columns(
                self.session(),
                self.run_id,
                query_id=columns["query_id"],
                document_id=columns["document_id"],
                rank=columns["rank"],
                score=columns["score"],
                chunk_id=columns.get("chunk_id"),
            )
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


def list_runs(db: Database, actor: Actor, project: ProjectRef) -> list[tuple[str, int]]:
    """(name, number of entries) of each run of the project (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "list runs")
        return [(r.name, r.n_entries) for r in corpus.runs(s, proj.id)]
