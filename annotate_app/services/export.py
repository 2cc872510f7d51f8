"""Exports: a release as TREC qrels, BEIR TSV or JSONL with reasons and provenance; all labels as CSV.

Every export is UTF-8 bytes. The TREC export is checked against the release's content hash (`Conflict` on a
mismatch); TREC and BEIR keep IDs exact; the labels CSV is safe against formula injection. Every label
carries its source (``human:USERNAME`` or ``judge:NAME``). The JSONL fields: docs/modules.md.
The passages export: one JSON object per evidence passage (`metrics.formats.write_passages`), with an
excerpt of at most `EXCERPT` characters.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable

import pandas as pd
from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, load_release, open_project
from annotate_app.services.aggregations import canonical_aggregation
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.services.release_formats import ReleaseFormat
from annotate_app.services.releases import canonical_passages, canonical_trec, sha256_text
from annotate_app.store import annotation, judges, pool, release_passages
from annotate_app.store import releases as releases_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction
from annotate_app.store.models import Release
from metrics.report.render import csv_safe

__all__ = ["export_release", "export_labels_csv", "FORMATS"]

FORMATS = tuple(f.value for f in ReleaseFormat)
"""The release formats, from `ReleaseFormat`; each has its writer in `_WRITERS`."""
EXCERPT = 300  # characters of a passage an export of passages shows


def export_release(
    db: Database, actor: Actor, project: ProjectRef, version: int | None = None, *, format: str = "trec"
) -> bytes:
    """A release (default: the latest) as the bytes of ``format``, one of `FORMATS` (reviewer)."""
    if format not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(map(repr, FORMATS))}; got {format!r}")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "export releases")
        release = load_release(s, proj, version)
        rows = sorted(tuple(r) for r in releases_store.qrel_rows(s, release.id))
        data = _WRITERS[format](s, rows, release)
        audit(
            s,
            actor,
            AuditAction.RELEASE_EXPORTED,
            project_id=proj.id,
            target=f"{proj.name} v{release.version}",
            details={"format": format},
        )
    return data.encode("utf-8")


def _trec(s: Session, rows: list[tuple], release: Release) -> str:
    text = canonical_trec([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    passages = release_passages.passage_rows(s, release.id)
    model = canonical_aggregation(release.aggregation, releases_store.qrel_confidences(s, release.id))
    if sha256_text(text + canonical_passages(passages) + model) != release.content_hash:
        raise Conflict("release integrity check failed: its qrels no longer match the stored content hash")
    return text


def _beir(s: Session, rows: list[tuple], release: Release) -> str:
    return "query-id\tcorpus-id\tscore\n" + "".join(f"{a}\t{b}\t{g}\n" for a, b, g, *_ in rows)


def _passages(s: Session, rows: list[tuple], release: Release) -> str:
    """PASSAGES lines of the release's evidence passages, each with an excerpt of its text; the passages of a
    qrel a machine judge filled are marked with its source, ``judge:NAME`` (the humans' have no source)."""
    from metrics.formats import write_passages

    def excerpt(text: str | None, start: int, end: int) -> str | None:
        if text is None:
            return None
        piece = text[start:end]
        return piece if len(piece) <= EXCERPT else piece[: EXCERPT - 1] + "…"

    passages = release_passages.passage_rows(s, release.id, texts=True)
    names = ["query_id", "doc_id", "doc_version", "start", "end", "grade"]
    frame = pd.DataFrame([r[:6] for r in passages], columns=names)
    frame["text"] = [excerpt(r[6], r[3], r[4]) for r in passages]
    qrel_sources = judges.qrel_sources(s, release.id)
    machine = {
        (r[0], r[1]): source
        for r in rows
        if (source := qrel_sources.get(r[6], ("human", None))[0]).startswith("judge:")
    }
    frame["source"] = [machine.get((r[0], r[1])) for r in passages]  # a judge's evidence: judge:NAME
    buffer = io.StringIO()
    write_passages(frame, buffer)
    return buffer.getvalue()


def _jsonl(s: Session, rows: list[tuple], release: Release) -> str:
    version, qrel_sources = release.version, judges.qrel_sources(s, release.id)
    label_ids = [int(i) for r in rows for i in r[4].split(",") if i]
    labels = {
        i: {**x, "source": f"human:{x['annotator']}"}
        for i, x in annotation.labels_by_id(s, label_ids).items()
    }
    machine = judges.judge_labels_by_id(s, [j for _, j in qrel_sources.values() if j is not None])
    adjudications = annotation.adjudications_by_id(s, [r[5] for r in rows if r[5] is not None])
    pair_ids = [r[6] for r in rows]
    sources, origins = pool.pair_sources(s, pair_ids), annotation.pair_origins(s, pair_ids)
    out = []
    for qid, did, grade, kind, ids, adj, pair in rows:
        record = {
            "query_id": qid,
            "doc_id": did,
            "relevance": grade,
            "kind": kind,
            "release": version,
            "origin": origins.get(pair),
            "sources": [{"run": n, "rank": r} for n, r in sources.get(pair, [])],
            "labels": [labels[int(i)] for i in ids.split(",") if i],
            "adjudication": adjudications.get(adj) if adj is not None else None,
        }
        source, judge_label = qrel_sources.get(pair, ("human", None))
        record["source"] = source
        record["judge_label"] = machine.get(judge_label) if judge_label is not None else None
        out.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(out)


_WRITERS: dict[str, Callable[[Session, list[tuple], Release], str]] = {  # a `ReleaseFormat` each
    ReleaseFormat.TREC: _trec,
    ReleaseFormat.BEIR: _beir,
    ReleaseFormat.JSONL: _jsonl,
    ReleaseFormat.PASSAGES: _passages,
}


def export_labels_csv(db: Database, actor: Actor, project: ProjectRef) -> bytes:
    """Every label version of the project (history included) as CSV, formula-injection safe (reviewer)."""
    header = [
        "query_id",
        "doc_id",
        "annotator",
        "version",
        "grade",
        "reason",
        "unsure",
        "seconds",
        "doc_version",
        "current_doc_version",
        "guidelines_version",
        "created_at",
        "source",
    ]
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "export labels")
        rows = annotation.all_label_rows(s, proj.id)
        machine = judges.judge_label_rows(s, proj.id)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        cells = [*row[:-1], row[-1].isoformat(), f"human:{row[2]}"]
        writer.writerow([csv_safe("" if c is None else str(c)) for c in cells])
    for qid, did, name, n, grade, reason, _, latency, doc_version, current, at in machine:
        cells = [qid, did, name, n, grade, reason, None, latency, doc_version, current, None, at.isoformat()]
        writer.writerow([csv_safe("" if c is None else str(c)) for c in [*cells, f"judge:{name}"]])
    return buffer.getvalue().encode("utf-8")
