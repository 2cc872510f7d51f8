"""Adjudication of evidence passages (reviewer): the pairs whose annotators marked different passages, and
the reviewer's final passages for one of them, with a reason.

The pairs are those `passage_agreement` compares (two or more current labels, none stale, one at or above
the relevance cut-off) whose annotators' own passages differ. The reviewer sees each annotator's passages
and accepts their union, their intersection, one annotator's, or edited ones (`combine` computes the first
three); the final passages are checked as a label's are and must cite a reason (at least the project's
``min_reason_length`` characters). Adjudications are appended; the latest counts while the labels it saw are
current, and a release then takes its passages for the pair's qrel.

>>> combine({"a": ((0, 5), (8, 12)), "b": ((3, 10),)}, "intersection")
((3, 5), (8, 10))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project, pair_content, settings_of
from annotate_app.services._evidence import check_evidence, compared_pairs, union
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.services.inputs import check_int, check_reason
from annotate_app.store import annotation
from annotate_app.store.db import Database
from annotate_app.store.models import Project

__all__ = ["PassageDisagreement", "passage_disagreements", "adjudicate_passages", "combine", "HOW"]

Span = tuple[int, int]
HOW = ("union", "intersection")  # besides an annotator's name


@dataclass(frozen=True)
class PassageDisagreement:
    """A pair whose annotators marked different passages: ``spans`` and ``grades`` per annotator (name
    order), ``adjudicated``: the final passages of a valid adjudication, or None."""

    pair_id: int
    query_id: str
    query_text: str
    doc_id: str
    doc_title: str
    doc_text: str
    doc_version: int
    spans: dict[str, tuple[Span, ...]]
    grades: dict[str, int]
    adjudicated: tuple[Span, ...] | None


def combine(spans: Mapping[str, Sequence[Span]], how: str) -> tuple[Span, ...]:
    """The ``"union"`` or ``"intersection"`` of the annotators' passages, or one annotator's (``how`` = their
    name). Raises InvalidInput for anything else."""
    if how == "union":
        return tuple(union(s for marks in spans.values() for s in marks))
    if how == "intersection":
        sets = [union(marks) for marks in spans.values()]
        out = sets[0] if sets else []
        for other in sets[1:]:
            out = [(max(a, c), min(b, d)) for a, b in out for c, d in other if max(a, c) < min(b, d)]
        return tuple(sorted(out))
    if how in spans:
        return tuple(union(spans[how]))
    raise InvalidInput(f"how must be 'union', 'intersection' or an annotator of the pair; got {how!r}")


def _compared(s: Session, proj: Project) -> dict[int, dict[str, Any]]:
    """pair id → {"spans", "grades", "label_state", "doc_version"} of the pairs whose passages differ."""
    out = {}
    for pair, item in compared_pairs(s, proj.id, settings_of(proj).relevance_cutoff).items():
        spans = {name: tuple(sorted(own)) for _, name, _, own in item.labels}
        if len(set(spans.values())) > 1:
            out[pair] = {
                "spans": spans,
                "grades": {name: grade for _, name, grade, _ in item.labels},
                "label_state": ",".join(str(i) for i in sorted(i for i, *_ in item.labels)),
                "doc_version": item.doc_version,
            }
    return out


def passage_disagreements(db: Database, actor: Actor, project: ProjectRef) -> list[PassageDisagreement]:
    """The pairs whose annotators' passages differ, unadjudicated ones first, then by pair id (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "adjudicate passages")
        found = _compared(s, proj)
        done = annotation.latest_passage_adjudications(s, proj.id)
        out = []
        for pair, item in found.items():
            content = pair_content(s, pair)
            adj = done.get(pair)
            valid = adj is not None and adj["label_state"] == item["label_state"]
            out.append(
                PassageDisagreement(
                    pair_id=pair,
                    query_id=content["query_id"],
                    query_text=content["query_text"],
                    doc_id=content["doc_id"],
                    doc_title=content["doc_title"],
                    doc_text=content["doc_text"],
                    doc_version=item["doc_version"],
                    spans=item["spans"],
                    grades=item["grades"],
                    adjudicated=adj["spans"] if valid and adj is not None else None,
                )
            )
    return sorted(out, key=lambda d: (d.adjudicated is not None, d.pair_id))


def adjudicate_passages(
    db: Database, actor: Actor, project: ProjectRef, pair_id: int, *, spans: Sequence[Span], reason: str
) -> tuple[Span, ...]:
    """Record the final passages of a pair whose annotators' passages differ (reviewer). Returns them, sorted.

    Raises:
        Conflict: the pair's passages do not differ (or it is not compared: incomplete, stale, irrelevant).
        InvalidInput: a bad span (named with the document length) or a short reason.
    """
    check_int(pair_id, "pair_id")
    with db.write() as s:
        user, proj = open_project(s, actor, project, Role.REVIEWER, "adjudicate passages")
        text = check_reason(reason, settings_of(proj).min_reason_length)
        item = _compared(s, proj).get(pair_id)
        if item is None:
            raise Conflict(f"pair {pair_id} has no passage disagreement to adjudicate")
        length = annotation.text_length(s, pair_id, item["doc_version"]) or 0
        final = check_evidence(
            spans, text_length=length, doc_version=item["doc_version"], current_version=item["doc_version"]
        )
        annotation.insert_passage_adjudication(
            s,
            project_id=proj.id,
            pair_id=pair_id,
            reviewer_id=None if user is None else user.id,
            doc_version=item["doc_version"],
            spans=[list(x) for x in final],
            reason=text,
            label_state=item["label_state"],
        )
        return final
