"""Exports: a release as TREC qrels, BEIR TSV or JSONL with reasons and provenance; all labels as CSV.

Every export returns bytes (UTF-8). The TREC export is the release's canonical text, checked against its
stored content hash (a mismatch raises Conflict: the stored rows were tampered with). TREC and BEIR exports
are machine formats read back by `metrics.read_qrels` and scored by `metrics.evaluate`, so their IDs are
written exactly; the labels CSV, meant for spreadsheets, passes every cell through `metrics.render.csv_safe`
against formula injection.

JSONL: one object per qrel: ``query_id``, ``doc_id``, ``relevance``, ``kind``, ``release``, ``origin``,
``sources`` ([{run, rank}]), ``labels`` ([{annotator, grade, reason, unsure, seconds, version, doc_version,
guidelines_version, created_at, source}]), ``adjudication`` ({reviewer, grade, reason, created_at} or null),
``source`` (where the qrel's grade came from: ``human``, or ``judge:NAME`` for a pair a calibrated machine
judge filled) and ``judge_label`` (that machine label's provenance, or null).

Passages: the release's evidence passages as a PASSAGES file (`metrics.formats.write_passages`): one JSON
object per passage, ``query_id, doc_id, doc_version, start, end, grade`` and ``text``, an excerpt of the
passage (at most `EXCERPT` characters; left out if the document version is gone).

Every label carries its source, ``human:USERNAME`` or ``judge:NAME``: in the JSONL export and in the labels
CSV (its last column), which lists the machine labels after the human ones.
"""

from __future__ import annotations

import csv
import io
import json

import pandas as pd

from annotate_app.services._context import ProjectRef, load_release, open_project
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.services.releases import canonical_passages, canonical_trec, sha256_text
from annotate_app.store import annotation
from annotate_app.store import judges as mq
from annotate_app.store import pool as pq
from annotate_app.store import release_passages as rp
from annotate_app.store import releases as rq
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction
from metrics.render import csv_safe

__all__ = ["export_release", "export_labels_csv", "FORMATS"]

FORMATS = ("trec", "beir", "jsonl", "passages")
EXCERPT = 300  # characters of a passage an export of passages shows


def export_release(
    db: Database, actor: Actor, project: ProjectRef, version: int | None = None, *, format: str = "trec"
) -> bytes:
    """A release (default: the latest) as ``"trec"``, ``"beir"``, ``"jsonl"`` or ``"passages"`` bytes
    (reviewer)."""
    if format not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(map(repr, FORMATS))}; got {format!r}")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "export releases")
        release = load_release(s, proj, version)
        rows = sorted(tuple(r) for r in rq.qrel_rows(s, release.id))
        if format == "trec":
            data = _trec(rows, release.content_hash, rp.passage_rows(s, release.id))
        elif format == "passages":
            data = _passages(rp.passage_rows(s, release.id, texts=True))
        elif format == "beir":
            data = "query-id\tcorpus-id\tscore\n" + "".join(f"{a}\t{b}\t{g}\n" for a, b, g, *_ in rows)
        else:
            data = _jsonl(s, rows, release.version, mq.qrel_sources(s, release.id))
        audit(
            s,
            actor,
            AuditAction.RELEASE_EXPORTED,
            project_id=proj.id,
            target=f"{proj.name} v{release.version}",
            details={"format": format},
        )
    return data.encode("utf-8")


def _trec(rows: list[tuple], content_hash: str, passages: list[tuple]) -> str:
    text = canonical_trec([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    if sha256_text(text + canonical_passages(passages)) != content_hash:
        raise Conflict("release integrity check failed: its qrels no longer match the stored content hash")
    return text


def _passages(rows: list[tuple]) -> str:
    """PASSAGES lines of (query_id, doc_id, doc_version, start, end, grade, text) rows."""
    from metrics.formats import write_passages

    def excerpt(text: str | None, start: int, end: int) -> str | None:
        if text is None:
            return None
        piece = text[start:end]
        return piece if len(piece) <= EXCERPT else piece[: EXCERPT - 1] + "…"

    names = ["query_id", "doc_id", "doc_version", "start", "end", "grade"]
    frame = pd.DataFrame([r[:6] for r in rows], columns=names)
    frame["text"] = [excerpt(r[6], r[3], r[4]) for r in rows]
    buffer = io.StringIO()
    write_passages(frame, buffer)
    return buffer.getvalue()


def _jsonl(s, rows: list[tuple], version: int, qrel_sources: dict[int, tuple[str, int | None]]) -> str:
    label_ids = [int(i) for r in rows for i in r[4].split(",") if i]
    labels = {
        i: {**x, "source": f"human:{x['annotator']}"}
        for i, x in annotation.labels_by_id(s, label_ids).items()
    }
    machine = mq.judge_labels_by_id(s, [j for _, j in qrel_sources.values() if j is not None])
    adjudications = annotation.adjudications_by_id(s, [r[5] for r in rows if r[5] is not None])
    pair_ids = [r[6] for r in rows]
    sources, origins = pq.pair_sources(s, pair_ids), annotation.pair_origins(s, pair_ids)
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
        machine = mq.judge_label_rows(s, proj.id)
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
