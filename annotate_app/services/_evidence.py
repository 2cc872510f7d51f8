"""Evidence passages on labels: checking a save's spans, reading a label's spans, carrying them to a new
document version.

A passage is ``[start, end)`` in code points of the text of the label's document version. A save's spans are
non-empty, inside the text and disjoint; the project's ``evidence`` setting must allow them (``required``: at
least one at grades at or above the cut-off). On re-import a span moves to where its text occurs exactly
once (`metrics.passages.carry_spans`), else it is flagged stale. Details: docs/modules.md.

>>> check_evidence([(5, 9), (0, 5)], text_length=10, doc_version=1, current_version=1)
((0, 5), (5, 9))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from annotate_app.judges import merge_spans
from annotate_app.services.errors import DocumentChanged, InvalidInput
from annotate_app.services.types import ProjectSettings
from annotate_app.store import annotation
from annotate_app.store import judges as judges_store
from annotate_app.store.enums import EvidenceMode
from metrics.passages import SpanError, carry_spans, check_spans

__all__ = [
    "Evidence",
    "check_evidence",
    "check_policy",
    "evidence_of",
    "evidence_fields",
    "carry_evidence",
    "union",
    "qrel_passages",
    "judge_passages",
    "Compared",
    "compared_pairs",
    "NO_EVIDENCE",
]

Span = tuple[int, int]
Passage = tuple[str, str, int, int, int, int]  # query_id, doc_id, doc_version, start, end, grade


@dataclass(frozen=True)
class Evidence:
    """A label's passages on one document version: ``spans`` hold there; ``stale`` ones (old offsets) could
    not be carried to it."""

    spans: tuple[Span, ...] = ()
    version: int | None = None
    stale: tuple[Span, ...] = ()


NO_EVIDENCE = Evidence()


def check_evidence(
    evidence: Iterable[Sequence[int]] | None, *, text_length: int, doc_version: int, current_version: int
) -> tuple[Span, ...]:
    """The spans of a save, checked and sorted by start.

    Args:
        evidence: pairs ``(start, end)``, or None (no evidence).
        text_length: the length of the text of document version ``doc_version``.
        doc_version: the version the spans index (the one the annotator was shown).
        current_version: the document's current version.

    Returns:
        The spans as ``(start, end)`` tuples, sorted.

    Raises:
        InvalidInput: a span is not a pair of ints, empty, out of range or overlaps another; the message
            names the span and the document length.
        DocumentChanged: spans on a version that is no longer current.
    """
    if evidence is None:
        return ()
    if isinstance(evidence, str | bytes) or not isinstance(evidence, Iterable):
        raise InvalidInput(f"evidence must be a list of (start, end) pairs; got {evidence!r}")
    try:
        spans = tuple(check_spans(list(evidence), length=text_length))
    except SpanError as exc:
        raise InvalidInput(f"evidence: {exc}") from None
    if spans and doc_version < current_version:
        start, end = spans[0]
        raise DocumentChanged(
            f"evidence [{start}, {end}) is on version {doc_version} (document length {text_length}); "
            f"the document is now version {current_version}"
        )
    return spans


def check_policy(settings: ProjectSettings, project_name: str, grade: int, spans: Sequence[Span]) -> None:
    """Refuse spans the project's ``evidence`` setting does not allow (InvalidInput).

    ``off``: no spans at all; ``required``: at least one for a grade at or above the relevance cut-off."""
    if settings.evidence == EvidenceMode.OFF and spans:
        raise InvalidInput(
            f"project {project_name!r} does not collect evidence (its evidence setting is off)"
        )
    if settings.evidence == EvidenceMode.REQUIRED and not spans and grade >= settings.relevance_cutoff:
        raise InvalidInput(
            f"grade {grade} needs evidence: mark at least one passage (required for grades >= "
            f"{settings.relevance_cutoff})"
        )


def evidence_of(s: Session, labels: Sequence[tuple[int, int]]) -> dict[int, Evidence]:
    """label id → its evidence on the newest version up to the document's current one.

    Args:
        labels: (label id, the document's current version) pairs.
    """
    current = dict(labels)
    out: dict[int, Evidence] = {}
    for label_id, rows in annotation.evidence_rows(s, list(current)).items():
        shown = [r for r in rows if r.doc_version <= current[label_id]]
        if not shown:
            continue
        version = max(r.doc_version for r in shown)
        on = [r for r in shown if r.doc_version == version]
        out[label_id] = Evidence(
            spans=tuple((r.start, r.end) for r in on if not r.stale),
            version=version,
            stale=tuple((r.start, r.end) for r in on if r.stale),
        )
    return out


def evidence_fields(evidence: Evidence) -> dict[str, Any]:
    """The `LabelInfo` fields of a label's evidence."""
    return {
        "evidence": evidence.spans,
        "evidence_version": evidence.version,
        "stale_evidence": evidence.stale,
    }


def carry_evidence(s: Session, document_ids: Sequence[int]) -> int:
    """Carry the current labels' own spans on these (re-imported) documents to each one's current version.

    Returns:
        How many spans were flagged stale (their text is not found exactly once in the new version).
    """
    todo = [t for t in annotation.labels_to_carry(s, document_ids) if t[2] < t[3]]
    if not todo:
        return 0
    texts = annotation.version_texts(s, [(d, v) for _, d, old, new in todo for v in (old, new)])
    own = annotation.evidence_rows(s, [label_id for label_id, *_ in todo])
    stale = 0
    for label_id, doc, old, new in todo:
        spans = [(r.start, r.end) for r in own.get(label_id, []) if r.doc_version == old and not r.carried]
        if not spans or (doc, old) not in texts or (doc, new) not in texts:
            continue
        carried = carry_spans(texts[(doc, old)], texts[(doc, new)], spans)
        annotation.replace_carried(s, label_id, new)
        moved = [(c.start, c.end) for c in carried if c.start is not None and c.end is not None]
        lost = [span for span, c in zip(spans, carried, strict=True) if c.start is None]
        annotation.add_spans(s, label_id, new, moved, carried=True)
        annotation.add_spans(s, label_id, new, lost, stale=True)
        stale += len(lost)
    return stale


def union(spans: Iterable[Span]) -> list[Span]:
    """Sorted, disjoint spans covering the same characters as ``spans`` (touching ones merge).

    >>> union([(5, 9), (0, 3), (2, 5)])
    [(0, 9)]
    """
    return list(merge_spans(spans))


def qrel_passages(
    s: Session, qrels: Sequence[tuple[str, str, int, str | None, int]], adjudicated: Mapping[int, dict]
) -> list[Passage]:
    """The evidence of released qrels: for each (query_id, doc_id, grade, label_ids, pair_id), the passages
    of the pair's latest passage adjudication (``adjudicated``: pair id → its ``spans``, ``doc_version`` and
    ``label_state``) if it saw these labels, else the union of the own spans of its labels that gave that
    grade, on their document version.

    Returns:
        (query_id, doc_id, doc_version, start, end, grade) tuples, sorted.
    """
    ids = sorted({int(i) for _, _, _, label_ids, _ in qrels for i in (label_ids or "").split(",") if i})
    if not ids:
        return []
    labels = annotation.labels_by_id(s, ids)
    rows = annotation.evidence_rows(s, ids)
    out: list[Passage] = []
    for query_id, doc_id, grade, label_ids, pair_id in qrels:
        adj = adjudicated.get(pair_id)
        if adj is not None and adj["label_state"] == label_ids:
            out.extend((query_id, doc_id, adj["doc_version"], a, b, int(grade)) for a, b in adj["spans"])
            continue
        by_version: dict[int, list[Span]] = {}
        for i in (int(x) for x in (label_ids or "").split(",") if x):
            label = labels.get(i)
            if label is None or label["grade"] != grade:
                continue
            version = int(label["doc_version"])
            own = [(r.start, r.end) for r in rows.get(i, []) if r.doc_version == version and not r.carried]
            by_version.setdefault(version, []).extend(own)
        if by_version:
            version = max(by_version)  # one version: a release has no stale label
            out.extend((query_id, doc_id, version, a, b, int(grade)) for a, b in union(by_version[version]))
    return sorted(out)


def judge_passages(s: Session, qrels: Sequence[tuple[str, str, int, int]]) -> list[Passage]:
    """The evidence of qrels a machine judge's label fills: for each (query_id, doc_id, grade, judge label
    id), the located passages that label keeps (`annotate_app.judges.locate_evidence`), on the document
    version it judged.

    Returns:
        (query_id, doc_id, doc_version, start, end, grade) tuples, sorted.
    """
    found = judges_store.judge_labels_by_id(s, sorted({int(m) for *_, m in qrels}))
    out: list[Passage] = []
    for query_id, doc_id, grade, label_id in qrels:
        label = found.get(int(label_id))
        if label is not None:
            version = int(label["doc_version"])
            out.extend((query_id, doc_id, version, int(a), int(b), int(grade)) for a, b in label["evidence"])
    return sorted(out)


@dataclass(frozen=True)
class Compared:
    """A pair whose annotators' passages can be compared: ``labels`` are (label id, annotator, grade, own
    spans) in annotator-name order; ``length`` and ``doc_version``: its current text's."""

    labels: tuple[tuple[int, str, int, tuple[Span, ...]], ...]
    length: int
    doc_version: int


def _own(row: annotation.EvidenceRow, version: int) -> bool:
    """Whether an evidence row is one its label was saved with (on the label's version, not carried)."""
    return row.doc_version == version and not row.carried


def compared_pairs(s: Session, project_id: int, cutoff: int) -> dict[int, Compared]:
    """pair id → `Compared`, for the pairs with two or more current labels, none stale, one of them at or
    above the relevance ``cutoff``; each label with its own spans (on its version, never carried ones). The
    labels that do not count (gold draws', and those of members who have not passed the project's
    qualification) are left out, as from the gate's."""
    judged = annotation.judged_texts(s, project_id)
    rows = annotation.evidence_rows(s, [label_id for _, label_id, *_ in judged])
    by_pair: dict[int, list[tuple]] = {}
    for row in judged:
        by_pair.setdefault(row[0], []).append(row)
    out = {}
    for pair, labels in by_pair.items():
        if len(labels) < 2 or any(r[4] != r[5] for r in labels) or not any(r[3] >= cutoff for r in labels):
            continue
        own = [
            (
                label_id,
                name,
                grade,
                tuple(
                    (r.start, r.end) for r in rows.get(label_id, []) if r.doc_version == v and not r.carried
                ),
            )
            for _, label_id, name, grade, v, *_ in labels
        ]
        out[pair] = Compared(labels=tuple(own), length=labels[0][6], doc_version=labels[0][5])
    return out
