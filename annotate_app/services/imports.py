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

``source`` is a path, bytes (an upload) or a file
object. ``filename`` names an upload (bytes) for the format and messages. Documents carry ``doc_id`` (or ``_id``/``docid``/``id``), ``title``, ``text``, an optional ``version``
label and any extra fields (kept as metadata, e.g. ``title_en``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from sqlalchemy.orm import Session

from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.services.projects import ProjectRef, open_project
from annotate_app.services.types import ImportPreview, ImportReport
from annotate_app.store import corpus as q
from annotate_app.store.db import Database
from annotate_app.store.models import Project, utcnow
from metrics.errors import FormatError, Problem

__all__ = ["import_documents", "import_queries", "import_run", "import_qrels", "import_chunk_map", "preview",
           "list_runs", "Source"]

Source = str | os.PathLike | bytes | IO[Any]
_RESERVED_DOC = ("doc_id", "title", "text", "version")
MAX_ID = 255


@dataclass(frozen=True)
class _File:
    """An input read into memory once: its bytes, display name and sha256."""

    name: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def stream(self) -> io.BytesIO:
        stream = io.BytesIO(self.data)
        stream.name = self.name
        return stream


def _read(source: Source, name: str | None) -> _File:
    if isinstance(source, bytes | bytearray):
        return _File(name or "<upload>", bytes(source))
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise InvalidInput(f"{path}: no such file")
        return _File(name or str(path), path.read_bytes())
    if hasattr(source, "read"):
        content = source.read()
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        return _File(name or str(getattr(source, "name", "<stream>")), data)
    raise InvalidInput(f"source must be a path, bytes or a file object; got {type(source).__name__}")


def _parse(parse, file: _File, **kw: Any):
    try:
        return parse(file.stream(), **kw)
    except FormatError as exc:
        raise InvalidInput(str(exc.problems[0]), exc.problems) from None


def _fail(problems: list[Problem]) -> None:
    if problems:
        raise InvalidInput(str(problems[0]), problems)


def _sha(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------------ line numbers
def _row_lines(file: _File) -> list[tuple[int, str]]:
    """(line number, text) of each data row, in the order the readers return rows (JSONL/TREC: non-blank
    lines; CSV/TSV: records after the header, numbered by their last line as `metrics.formats` does)."""
    text = file.data.decode("utf-8", "replace").lstrip("\ufeff")
    lower = file.name.lower().removesuffix(".gz")
    if lower.endswith((".csv", ".tsv")):
        reader = csv.reader(io.StringIO(text, newline=""), delimiter="," if lower.endswith(".csv") else "\t")
        rows = [(reader.line_num, ",".join(r)) for r in reader if any(c.strip() for c in r)]
        return rows[1:]
    return [(i, line) for i, line in enumerate(text.splitlines(), 1) if line.strip(" \t\r")]


def _problem(file: _File, lines: list[tuple[int, str]], row: int, reason: str) -> Problem:
    line, text = lines[row] if row < len(lines) else (None, "")
    return Problem(file.name, line, text, reason)


# ----------------------------------------------------------------------------------------- documents
def _doc_records(file: _File) -> list[dict]:
    from metrics.formats import read_corpus

    frame = _parse(read_corpus, file)
    records = frame.to_dict(orient="records")
    problems = []
    lines = _row_lines(file) if any(len(r["doc_id"]) > MAX_ID for r in records) else []
    for i, rec in enumerate(records):
        if len(rec["doc_id"]) > MAX_ID:
            problems.append(_problem(file, lines, i, f"doc_id longer than {MAX_ID} characters"))
    _fail(problems)
    return [_doc_record(rec) for rec in records]


def _clean(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def _doc_record(rec: dict) -> dict:
    meta = {k: v for k, v in ((k, _clean(v)) for k, v in rec.items() if k not in _RESERVED_DOC) if v is not None}
    version = _clean(rec.get("version"))
    title, text = _clean(rec.get("title")) or "", rec["text"]
    return {"external_id": rec["doc_id"], "title": title, "text": text, "meta": meta,
            "source_version": None if version is None else str(version)[:255], "sha": _sha(title, text)}


def import_documents(db: Database, actor: Actor, project: ProjectRef, source: Source, *,
                     filename: str | None = None) -> ImportReport:
    """Import documents (admin): new IDs are added, changed ones get a new version, the rest is unchanged."""
    file = _read(source, filename)
    records = _doc_records(file)
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import documents")
        existing = q.doc_index(s, proj.id)
        new = [r for r in records if r["external_id"] not in existing]
        changed = [r for r in records if r["external_id"] in existing and existing[r["external_id"]][2] != r["sha"]]
        _add_documents(s, proj.id, new, file.name)
        stale = _change_documents(s, changed, existing, file.name)
        report = ImportReport("documents", file.name, Path(file.name).name, len(new), len(changed),
                              len(records) - len(new) - len(changed), stale)
        _record(s, actor, proj, "documents", file, report)
        return report


def _version_row(doc_id: int, version: int, rec: dict, source: str, now) -> dict:
    return {"document_id": doc_id, "version": version, "title": rec["title"], "text": rec["text"],
            "meta": rec["meta"], "source_version": rec["source_version"], "content_sha256": rec["sha"],
            "source": source[:1000], "created_at": now}


def _add_documents(s: Session, project_id: int, records: list[dict], source: str) -> None:
    if not records:
        return
    now = utcnow()
    ids = q.insert_documents(s, project_id, [{"project_id": project_id, "external_id": r["external_id"],
                                              "version": 1, "content_sha256": r["sha"], "updated_at": now}
                                             for r in records])
    q.insert_versions(s, [_version_row(ids[r["external_id"]], 1, r, source, now) for r in records])


def _change_documents(s: Session, records: list[dict], existing: dict, source: str) -> int:
    if not records:
        return 0
    now = utcnow()
    updates, versions = [], []
    for r in records:
        doc_id, version, _ = existing[r["external_id"]]
        updates.append({"b_id": doc_id, "version": version + 1, "content_sha256": r["sha"], "updated_at": now})
        versions.append(_version_row(doc_id, version + 1, r, source, now))
    q.update_documents(s, updates)
    q.insert_versions(s, versions)
    return q.mark_stale(s, [u["b_id"] for u in updates])


def _record(s: Session, actor: Actor, project: Project, kind: str, file: _File, report: ImportReport) -> None:
    counts = {"added": report.added, "changed": report.changed, "unchanged": report.unchanged,
              "stale_labels": report.stale_labels}
    q.record_import(s, project_id=project.id, kind=kind, source=report.name[:1000], file_sha256=file.sha256,
                    counts=counts, created_by=actor.user_id)
    audit(s, actor, f"import_{kind}", project_id=project.id, target=file.name, details=counts)


# ------------------------------------------------------------------------------------------- queries
def _query_records(file: _File) -> list[dict]:
    from metrics.formats import read_queries

    records = _parse(read_queries, file).to_dict(orient="records")
    problems = []
    lines = _row_lines(file) if any(len(r["query_id"]) > MAX_ID for r in records) else []
    for i, rec in enumerate(records):
        if len(rec["query_id"]) > MAX_ID:
            problems.append(_problem(file, lines, i, f"query_id longer than {MAX_ID} characters"))
    _fail(problems)
    out = []
    for rec in records:
        meta = {k: v for k, v in ((k, _clean(v)) for k, v in rec.items() if k not in ("query_id", "text"))
                if v is not None}
        out.append({"external_id": rec["query_id"], "text": rec["text"], "meta": meta, "sha": _sha(rec["text"])})
    return out


def import_queries(db: Database, actor: Actor, project: ProjectRef, source: Source, *,
                   filename: str | None = None) -> ImportReport:
    """Import queries (admin). A changed text is accepted only for a query without labels."""
    file = _read(source, filename)
    records = _query_records(file)
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import queries")
        existing = q.query_index(s, proj.id)
        new = [r for r in records if r["external_id"] not in existing]
        changed = [r for r in records if r["external_id"] in existing and existing[r["external_id"]][1] != r["sha"]]
        _refuse_labelled_changes(s, file, records, changed, existing)
        now = utcnow()
        q.insert_queries(s, [{"project_id": proj.id, "external_id": r["external_id"], "text": r["text"],
                              "meta": r["meta"], "content_sha256": r["sha"], "created_at": now} for r in new])
        q.update_queries(s, [{"b_id": existing[r["external_id"]][0], "text": r["text"], "meta": r["meta"],
                              "content_sha256": r["sha"]} for r in changed])
        report = ImportReport("queries", file.name, Path(file.name).name, len(new), len(changed),
                              len(records) - len(new) - len(changed))
        _record(s, actor, proj, "queries", file, report)
        return report


def _refuse_labelled_changes(s: Session, file: _File, records: list[dict], changed: list[dict],
                             existing: dict) -> None:
    labelled = q.queries_with_labels(s, [existing[r["external_id"]][0] for r in changed])
    if not labelled:
        return
    lines = _row_lines(file)
    row_of = {r["external_id"]: i for i, r in enumerate(records)}
    _fail([_problem(file, lines, row_of[r["external_id"]], f"query {r['external_id']!r} already has labels; "
                    "its text cannot change (import it under a new query_id)")
           for r in changed if existing[r["external_id"]][0] in labelled])


# ---------------------------------------------------------------------------------------------- runs
def _unknown(file: _File, queries: Sequence[str], docs: Sequence[str], qindex: dict, dindex: dict,
             doc_word: str = "document") -> list[Problem]:
    bad = [i for i, (qid, did) in enumerate(zip(queries, docs, strict=True)) if qid not in qindex or did not in dindex]
    if not bad:
        return []
    lines = _row_lines(file)
    return [_problem(file, lines, i, f"unknown query {queries[i]!r}" if queries[i] not in qindex
                     else f"unknown {doc_word} {docs[i]!r}") for i in bad[:1000]]


def _check_name(value: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID or any(c.isspace() for c in value):
        raise InvalidInput(f"{what} must be a non-empty name without spaces, at most {MAX_ID} characters; "
                           f"got {value!r}")
    return value


def import_run(db: Database, actor: Actor, project: ProjectRef, source: Source, *, name: str | None = None,
               chunks: bool = False, filename: str | None = None) -> ImportReport:
    """Import a TREC run (admin) under ``name`` (default: its tag). Every query and document must exist in the
    project; with ``chunks=True`` its document IDs are chunk IDs, mapped through the imported chunk map
    (each document keeps its best-ranked chunk)."""
    from metrics.formats import read_run

    file = _read(source, filename)
    run = _parse(read_run, file)
    run_name = _check_name(name or run.name or Path(file.name).name, "run name")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "import runs")
        old = q.find_run(s, proj.id, run_name)
        if old is not None:
            return _same_again(old.file_sha256, file, "run", run_name, old.n_entries)
        qindex, dindex = q.query_index(s, proj.id), q.doc_index(s, proj.id)
        frame = _run_frame(s, proj.id, run, file, qindex, dindex, chunks)
        run_id = q.insert_run(s, project_id=proj.id, name=run_name, source=file.name[:1000],
                              file_sha256=file.sha256, n_entries=len(frame), created_by=actor.user_id)
        q.insert_run_entries(s, [{"run_id": run_id, "query_id": qindex[qq][0], "document_id": dindex[d][0],
                                  "rank": int(r), "score": float(sc)} for qq, d, sc, r in frame.itertuples(index=False)])
        report = ImportReport("run", file.name, run_name, len(frame))
        _record(s, actor, proj, "run", file, report)
        return report


def _run_frame(s: Session, project_id: int, run, file: _File, qindex: dict, dindex: dict, chunks: bool):
    """The run's rows (query_id, doc_id, score, rank) after checking every ID against the project."""
    from metrics.evaluate import map_chunks

    queries, docs = run.query_id.to_pylist(), run.doc_id.to_pylist()
    if chunks:
        cindex = q.chunk_index(s, project_id)
        _fail(_unknown(file, queries, docs, qindex, cindex, "chunk"))
        external = {i: ext for ext, (i, _, _) in dindex.items()}
        run = map_chunks(run, {c: external[d] for c, d in cindex.items()})
    else:
        _fail(_unknown(file, queries, docs, qindex, dindex))
    return run.to_dataframe()[["query_id", "doc_id", "score", "rank"]]


def _same_again(old_sha: str, file: _File, kind: str, name: str, n: int) -> ImportReport:
    if old_sha != file.sha256:
        raise Conflict(f"{kind} {name!r} was already imported from a different file; import it under another name")
    return ImportReport(kind, file.name, name, 0, 0, n)


def list_runs(db: Database, actor: Actor, project: ProjectRef) -> list[tuple[str, int]]:
    """(name, number of entries) of each run of the project (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "list runs")
        return [(r.name, r.n_entries) for r in q.runs(s, proj.id)]


# ------------------------------------------------------------------------------------------- qrels
def import_qrels(db: Database, actor: Actor, project: ProjectRef, source: Source, *,
                 name: str | None = None, filename: str | None = None) -> ImportReport:
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
        queries, docs = qrels.query_id.to_pylist(), qrels.doc_id.to_pylist()
        _fail(_unknown(file, queries, docs, qindex, dindex))
        q.insert_prior(s, [{"project_id": proj.id, "source": prior_name, "query_id": qindex[a][0],
                            "document_id": dindex[b][0], "grade": int(g)}
                           for a, b, g in zip(queries, docs, qrels.relevance.tolist(), strict=True)])
        report = ImportReport("qrels", file.name, prior_name, len(queries))
        _record(s, actor, proj, "qrels", file, report)
        return report


# -------------------------------------------------------------------------------------------- chunks
def import_chunk_map(db: Database, actor: Actor, project: ProjectRef, source: Source, *,
                     filename: str | None = None) -> ImportReport:
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
        q.insert_chunks(s, [{"project_id": proj.id, "chunk_id": c, "document_id": dindex[d][0]} for c, d in new])
        report = ImportReport("chunks", file.name, Path(file.name).name, len(new), 0, len(chunk_ids) - len(new))
        _record(s, actor, proj, "chunks", file, report)
        return report


def _chunk_problems(file: _File, chunk_ids: list, doc_ids: list, dindex: dict, cindex: dict) -> list[Problem]:
    bad = []
    for i, (c, d) in enumerate(zip(chunk_ids, doc_ids, strict=True)):
        if d not in dindex:
            bad.append((i, f"unknown document {d!r}"))
        elif c in cindex and cindex[c] != dindex[d][0]:
            bad.append((i, f"chunk {c!r} is already mapped to another document"))
    lines = _row_lines(file) if bad else []
    return [_problem(file, lines, i, reason) for i, reason in bad[:1000]]


# ------------------------------------------------------------------------------------------- preview
_READERS = {"documents": "read_corpus", "queries": "read_queries", "run": "read_run", "qrels": "read_qrels",
            "chunks": "read_chunk_map"}


def preview(db: Database, actor: Actor, kind: str, source: Source, *, filename: str | None = None,
            limit: int = 5) -> ImportPreview:
    """Parse ``source`` as ``kind`` (documents, queries, run, qrels, chunks) without importing (admin):
    row count, columns, the first ``limit`` rows and every problem found by the parser."""
    import metrics.formats as formats

    if kind not in _READERS:
        raise InvalidInput(f"kind must be one of {', '.join(map(repr, _READERS))}; got {kind!r}")
    with db.read() as s:
        from annotate_app.services.auth import authorize

        authorize(s, actor, Role.ADMIN, "preview imports")
    file = _read(source, filename)
    try:
        parsed = getattr(formats, _READERS[kind])(file.stream())
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
