"""Evidence passages of labels: writing a label's spans, reading the spans each label holds on a document
version, and what a re-import needs to carry them (the labels with evidence on some documents, and texts).

Rows are only inserted, except the derived rows of a version that a re-import writes again (`replace_carried`:
an undone import's version number can come back with another text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, func, select
from sqlalchemy import text as sql_text
from sqlalchemy.orm import Session

from annotate_app.store.bulk import bulk_insert
from annotate_app.store.models import (
    Assignment,
    Document,
    DocumentVersion,
    Label,
    LabelEvidence,
    Pair,
    PassageAdjudication,
    User,
    table_of,
    utcnow,
)
from annotate_app.store.qualification import counted_sql

__all__ = [
    "EvidenceRow",
    "insert_passage_adjudication",
    "latest_passage_adjudications",
    "text_length",
    "add_spans",
    "evidence_rows",
    "labels_to_carry",
    "version_texts",
    "replace_carried",
]


@dataclass(frozen=True)
class EvidenceRow:
    """One stored passage of a label on one document version."""

    label_id: int
    doc_version: int
    start: int
    end: int
    carried: bool
    stale: bool


def text_length(s: Session, pair_id: int, doc_version: int) -> int | None:
    """The length in characters of the text of version ``doc_version`` of the pair's document (None: no such
    version)."""
    stmt = (
        select(func.length(DocumentVersion.text))
        .join(Pair, Pair.document_id == DocumentVersion.document_id)
        .where(Pair.id == pair_id, DocumentVersion.version == doc_version)
    )
    value = s.scalar(stmt)
    return None if value is None else int(value)


def judged_texts(s: Session, project_id: int) -> list[tuple[Any, ...]]:
    """Every current label that counts (`store.qualification.counted_sql`: no gold draw's, none of a member
    who waits for qualification) of the project's non-excluded pairs: (pair id, label id, annotator name,
    grade, the label's document version, the document's current version, the length of its current text), by
    pair then annotator."""
    stmt = (
        select(
            Label.pair_id,
            Label.id,
            User.username,
            Label.grade,
            Label.doc_version,
            Document.version,
            func.length(DocumentVersion.text),
        )
        .join(Assignment, Assignment.label_id == Label.id)
        .join(User, User.id == Label.annotator_id)
        .join(Pair, Pair.id == Label.pair_id)
        .join(Document, Document.id == Pair.document_id)
        .join(
            DocumentVersion,
            and_(DocumentVersion.document_id == Document.id, DocumentVersion.version == Document.version),
        )
        .where(Pair.project_id == project_id, Pair.excluded.is_(False))
        .order_by(Label.pair_id, User.username)
    )
    counts = sql_text(counted_sql(Assignment.__tablename__, ":counted_project"))
    stmt = stmt.where(counts.bindparams(counted_project=project_id))
    return [
        (int(a), int(b), str(c), int(d), int(e), int(f), int(g)) for a, b, c, d, e, f, g in s.execute(stmt)
    ]


def add_spans(
    s: Session,
    label_id: int,
    doc_version: int,
    spans: Sequence[tuple[int, int]],
    *,
    carried: bool = False,
    stale: bool = False,
) -> None:
    """Insert the spans of a label on one document version."""
    rows = [
        {
            "label_id": label_id,
            "doc_version": doc_version,
            "start_char": start,
            "end_char": end,
            "carried": carried,
            "stale": stale,
        }
        for start, end in spans
    ]
    bulk_insert(s, table_of(LabelEvidence), rows)


def evidence_rows(s: Session, label_ids: Sequence[int]) -> dict[int, list[EvidenceRow]]:
    """label id → its evidence rows on every version, ordered by version then start (chunks of 5000 IDs)."""
    out: dict[int, list[EvidenceRow]] = {}
    ids = sorted(set(label_ids))
    for first in range(0, len(ids), 5000):
        stmt = (
            select(
                LabelEvidence.label_id,
                LabelEvidence.doc_version,
                LabelEvidence.start_char,
                LabelEvidence.end_char,
                LabelEvidence.carried,
                LabelEvidence.stale,
            )
            .where(LabelEvidence.label_id.in_(ids[first : first + 5000]))
            .order_by(LabelEvidence.label_id, LabelEvidence.doc_version, LabelEvidence.start_char)
        )
        for row in s.execute(stmt):
            out.setdefault(row[0], []).append(
                EvidenceRow(row[0], row[1], row[2], row[3], bool(row[4]), bool(row[5]))
            )
    return out


def labels_to_carry(s: Session, document_ids: Sequence[int]) -> list[tuple[int, int, int, int]]:
    """The current labels with evidence on these documents' pairs: (label id, document id, the label's
    document version, the document's current version), 500 documents a statement."""
    out: list[tuple[int, int, int, int]] = []
    for first in range(0, len(document_ids), 500):
        ids = list(document_ids[first : first + 500])
        has_evidence = select(LabelEvidence.id).where(LabelEvidence.label_id == Label.id).exists()
        stmt = (
            select(Label.id, Document.id, Label.doc_version, Document.version)
            .join(Assignment, Assignment.label_id == Label.id)
            .join(Pair, Pair.id == Label.pair_id)
            .join(Document, Document.id == Pair.document_id)
            .where(Document.id.in_(ids), has_evidence)
        )
        out.extend((int(a), int(b), int(c), int(d)) for a, b, c, d in s.execute(stmt))
    return out


def version_texts(s: Session, wanted: Sequence[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """(document id, version) → that version's text."""
    out: dict[tuple[int, int], str] = {}
    want = set(wanted)
    keys = sorted(want)
    for first in range(0, len(keys), 500):
        part = keys[first : first + 500]
        docs = sorted({d for d, _ in part})
        stmt = select(DocumentVersion.document_id, DocumentVersion.version, DocumentVersion.text).where(
            DocumentVersion.document_id.in_(docs)
        )
        for doc, version, text in s.execute(stmt):
            if (doc, version) in want:
                out[(doc, version)] = text
    return out


def replace_carried(s: Session, label_id: int, doc_version: int) -> None:
    """Delete the rows a re-import derived for the label on ``doc_version`` (never the label's own)."""
    s.execute(
        delete(LabelEvidence).where(
            and_(
                LabelEvidence.label_id == label_id,
                LabelEvidence.doc_version == doc_version,
                (LabelEvidence.carried.is_(True)) | (LabelEvidence.stale.is_(True)),
            )
        ),
        execution_options={"synchronize_session": False},
    )


def insert_passage_adjudication(s: Session, **fields: Any) -> None:
    """Append a reviewer's final passages of a pair (the `PassageAdjudication` columns but id, created_at)."""
    s.add(PassageAdjudication(created_at=utcnow(), **fields))
    s.flush()


def latest_passage_adjudications(s: Session, project_id: int) -> dict[int, dict[str, Any]]:
    """pair id → its latest passage adjudication: ``spans`` (sorted (start, end) tuples), ``doc_version``,
    ``reason``, ``label_state``."""
    stmt = (
        select(
            PassageAdjudication.pair_id,
            PassageAdjudication.spans,
            PassageAdjudication.doc_version,
            PassageAdjudication.reason,
            PassageAdjudication.label_state,
        )
        .where(PassageAdjudication.project_id == project_id)
        .order_by(PassageAdjudication.id)
    )
    return {
        int(pair): {
            "spans": tuple(sorted((int(a), int(b)) for a, b in spans)),
            "doc_version": int(version),
            "reason": reason,
            "label_state": state,
        }
        for pair, spans, version, reason, state in s.execute(stmt)
    }
