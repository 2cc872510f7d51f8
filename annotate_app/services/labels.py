"""Labels: saving a judgment (append-only versions), one's own recent labels, and a pair's history.

`save_label` adds a version to the caller's claim; nothing is updated or deleted. A save for a document
version since replaced raises `DocumentChanged` and stores nothing. Saves are idempotent: the same label
again changes nothing, and a ``request_id`` makes a retry return the label first stored.
A label may carry evidence: passages ``[start, end)`` of the text of the document version it records
(`annotate_app.services._evidence`); an edit that changes only the passages is a new version.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from annotate_app.services._context import (
    ProjectRef,
    annotator_context,
    check_grade,
    open_project,
    pair_content,
    settings_of,
)
from annotate_app.services._evidence import (
    NO_EVIDENCE,
    check_evidence,
    check_policy,
    evidence_fields,
    evidence_of,
)
from annotate_app.services._gold_rules import after_gold_label
from annotate_app.services._records import label_info
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import Conflict, DocumentChanged, InvalidInput, NotFound, PermissionDenied
from annotate_app.services.inputs import MAX_REASON, check_count, check_int, check_reason, check_request_id
from annotate_app.services.types import LabelInfo
from annotate_app.store import annotation, projects
from annotate_app.store.db import Database
from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.models import Label, User

__all__ = ["save_label", "my_labels", "count_my_labels", "pair_history", "MAX_SECONDS"]

MAX_SECONDS = 24 * 3600.0


def _check_seconds(seconds: float | None) -> float | None:
    if seconds is None:
        return None
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, numbers.Real)
        or math.isnan(seconds)
        or not 0 <= seconds <= MAX_SECONDS
    ):
        raise InvalidInput(f"seconds must be a number in [0, {MAX_SECONDS:.0f}] or None; got {seconds!r}")
    return float(seconds)


@dataclass(frozen=True)
class _Save:
    """One validated save request."""

    pair_id: int
    grade: object
    reason: object
    unsure: bool
    seconds: float | None
    expected_version: int | None
    request_id: str | None
    doc_version: int | None = None
    evidence: Any = None


def save_label(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    pair_id: int,
    *,
    grade: int,
    reason: str,
    unsure: bool = False,
    seconds: float | None = None,
    expected_version: int | None = None,
    request_id: str | None = None,
    doc_version: int | None = None,
    evidence: Sequence[tuple[int, int]] | None = None,
) -> LabelInfo:
    """Save the caller's judgment of a pair they hold (first label) or labelled before (an edit).

    ``expected_version``: the label version the caller was looking at (0 for a fresh pair); a different
    current version (an edit from another tab) raises Conflict instead of silently overwriting it.
    Raises NotFound for a pair not assigned to the caller, Conflict for a skipped or expired claim.

    Idempotent: saving what already is the current version (same grade, reason, unsure flag, on the current
    document version) adds nothing and returns it. ``request_id``: the client's key for this save (unique per
    annotator); a retry with the same key returns the label the first attempt stored — also when that
    attempt committed and only its reply was lost.

    ``doc_version``: the document version the caller was shown (``PairView.doc_version``); it is the version
    the label records. An older version than the current one (the document was re-imported meanwhile) raises
    `DocumentChanged` and stores nothing; None (scripts) records the current version.

    ``evidence``: passages ``[(start, end), ...]`` of that version's text (None: none), as the project's
    evidence setting allows; bad spans raise InvalidInput naming the span and the document length.

    On a gold pair, the save applies the project's gold rules (they may qualify or pause the caller,
    `services.qualification`); with ``gold_feedback`` on, the answer carries the pair's expected grade and
    explanation (``gold_grade``, ``gold_explanation``): after the save, never before.
    """
    check_int(pair_id, "pair_id")
    check_int(expected_version, "expected_version", 0, optional=True)
    check_int(doc_version, "doc_version", optional=True)
    if not isinstance(unsure, bool):
        raise InvalidInput(f"unsure must be a bool; got {unsure!r}")
    req = _Save(
        pair_id=pair_id,
        grade=grade,
        reason=reason,
        unsure=unsure,
        seconds=_check_seconds(seconds),
        expected_version=expected_version,
        request_id=check_request_id(request_id),
        doc_version=doc_version,
        evidence=evidence,
    )
    try:
        with db.write() as s:
            return _save(s, actor, project, req)
    except IntegrityError:
        if req.request_id is None:
            raise
    with db.read() as s:  # a concurrent attempt with the same key committed first
        user, _ = annotator_context(s, actor, project, "label pairs")
        label = annotation.label_by_request(s, user.id, req.request_id)
        if label is None:
            raise Conflict(f"pair {pair_id}: a concurrent save failed; reload it") from None
        return _replay(s, label, req, user.username)


def _save(s: Session, actor: Actor, project: ProjectRef, req: _Save) -> LabelInfo:
    user, proj = annotator_context(s, actor, project, "label pairs")
    value, text = check_grade(proj, req.grade), check_reason(req.reason, proj.min_reason_length)
    earlier = _earlier(s, user, req)
    if earlier is not None:
        return earlier
    target = _live_target(s, req.pair_id, user, proj.id)
    spans = _spans(s, req, target.doc_version)
    check_policy(settings_of(proj), proj.name, value, spans)
    a, doc_version = target.assignment, _shown_version(req, target.doc_version)
    current = None if a.label_id is None else annotation.label_by_id(s, a.label_id)
    same = current is not None and _same(current, value, text, req.unsure, doc_version)
    if current is not None and same and _own_spans(s, current) == spans:
        return _label_info(s, current, user.username)  # nothing new to save
    version = annotation.mark_done(s, a.id, value, req.expected_version)
    if version is None:
        # on PostgreSQL the UPDATE waited for a concurrent save: this save's first attempt, maybe
        earlier = _earlier(s, user, req)
        if earlier is not None:
            return earlier
        raise Conflict(
            f"pair {req.pair_id}: your claim changed meanwhile (edited elsewhere, skipped or expired); "
            "reload it"
        )
    judged: dict[str, Any] = {  # what the label stores and the answer shows
        "version": version,
        "grade": value,
        "reason": text,
        "unsure": req.unsure,
        "seconds": req.seconds,
        "doc_version": doc_version,
    }
    label_id, created_at = annotation.add_label(
        s,
        project_id=proj.id,
        assignment_id=a.id,
        pair_id=req.pair_id,
        annotator_id=user.id,
        request_id=req.request_id,
        **judged,
    )
    annotation.set_label_id(s, a.id, label_id)
    annotation.add_spans(s, label_id, doc_version, spans)
    feedback: dict[str, Any] = {}
    if target.gold is not None:  # a gold pair: the gold rules may qualify or pause the caller
        member = projects.member(s, proj.id, user.id)  # loaded with the caller: no statement
        if member is not None:
            after_gold_label(s, actor, proj, member, user.username)
        if proj.gold_feedback:
            feedback = {"gold_grade": target.gold[0], "gold_explanation": target.gold[1]}
    title = target.doc_title if target.doc_title is not None else pair_content(s, req.pair_id)["doc_title"]
    return LabelInfo(
        **feedback,
        pair_id=req.pair_id,
        query_id=target.query_id,
        doc_id=target.doc_id,
        annotator=user.username,
        stale=False,  # judged on the current version, share-locked until commit
        created_at=created_at,
        doc_title=title,
        label_id=label_id,
        evidence=spans,
        evidence_version=doc_version if spans else None,
        **judged,
    )


def _spans(s: Session, req: _Save, current: int) -> tuple[tuple[int, int], ...]:
    """The save's evidence, checked against the text of the version shown (the current one if unsaid)."""
    if req.evidence is None:
        return ()
    shown = current if req.doc_version is None else req.doc_version
    length = annotation.text_length(s, req.pair_id, shown) or 0
    return check_evidence(req.evidence, text_length=length, doc_version=shown, current_version=current)


def _own_spans(s: Session, label: Label) -> tuple[tuple[int, int], ...]:
    """The spans a label was saved with (on its own document version)."""
    rows = annotation.evidence_rows(s, [label.id]).get(label.id, [])
    return tuple((r.start, r.end) for r in rows if r.doc_version == label.doc_version and not r.carried)


def _earlier(s: Session, user: User, req: _Save) -> LabelInfo | None:
    """The label an earlier attempt of this save (same request_id) stored, if any."""
    label = None if req.request_id is None else annotation.label_by_request(s, user.id, req.request_id)
    return None if label is None else _replay(s, label, req, user.username)


def _shown_version(req: _Save, current: int) -> int:
    """The document version the label records: the one shown, which must still be the ``current`` one."""
    if req.doc_version is None:
        return current
    if req.doc_version < current:
        raise DocumentChanged()
    if req.doc_version > current:
        raise InvalidInput(
            f"doc_version must be a version of the document of pair {req.pair_id} (at most {current}); "
            f"got {req.doc_version}"
        )
    return req.doc_version


def _same(label: Label, grade: int, reason: str, unsure: bool, doc_version: int) -> bool:
    return (label.grade, label.reason, bool(label.unsure), label.doc_version) == (
        grade,
        reason,
        unsure,
        doc_version,
    )


def _live_target(s: Session, pair_id: int, user: User, project_id: int) -> annotation.SaveTarget:
    target = annotation.save_target(s, pair_id, user.id)
    if target is None or target.assignment.project_id != project_id:
        raise NotFound(f"pair {pair_id} is not assigned to {user.username}")
    if target.assignment.status not in AssignmentStatus.live():
        raise Conflict(
            f"pair {pair_id} is no longer assigned to {user.username} ({target.assignment.status}); "
            "ask for the next pair"
        )
    return target


def _replay(s: Session, label: Label, req: _Save, username: str) -> LabelInfo:
    """The label an earlier attempt with the same request_id stored."""
    if label.pair_id != req.pair_id:
        raise Conflict(
            f"request_id {req.request_id!r} was already used to save pair {label.pair_id}, not pair "
            f"{req.pair_id}; use a new request_id for every save"
        )
    return _label_info(s, label, username)


def _label_info(s: Session, label: Label, username: str) -> LabelInfo:
    content = pair_content(s, label.pair_id)
    found = evidence_of(s, [(label.id, content["doc_version"])]).get(label.id, NO_EVIDENCE)
    return LabelInfo(
        pair_id=label.pair_id,
        query_id=content["query_id"],
        doc_id=content["doc_id"],
        annotator=username,
        version=label.version,
        grade=label.grade,
        reason=label.reason,
        unsure=bool(label.unsure),
        seconds=label.seconds,
        doc_version=label.doc_version,
        stale=label.doc_version != content["doc_version"],
        created_at=label.created_at,
        doc_title=content["doc_title"],
        label_id=label.id,
        **evidence_fields(found),
    )


def my_labels(
    db: Database, actor: Actor, project: ProjectRef, *, limit: int = 50, offset: int = 0
) -> list[LabelInfo]:
    """The caller's current labels, most recently saved first (to review or edit them); page with ``offset``
    (labels to skip) and `count_my_labels`."""
    check_count(limit, "limit")
    check_count(offset, "offset", 0)
    with db.read() as s:
        user, proj = annotator_context(s, actor, project, "list their labels")
        rows = annotation.label_rows(
            s,
            project_id=proj.id,
            annotator_id=user.id,
            current_only=True,
            limit=limit,
            offset=offset,
            reason_chars=MAX_REASON,
        )
        return _infos(s, rows)


def count_my_labels(db: Database, actor: Actor, project: ProjectRef) -> int:
    """How many current labels the caller has in the project (the rows `my_labels` pages through)."""
    with db.read() as s:
        user, proj = annotator_context(s, actor, project, "count their labels")
        return annotation.own_label_count(s, project_id=proj.id, annotator_id=user.id, current_only=True)


def pair_history(db: Database, actor: Actor, project: ProjectRef, pair_id: int) -> list[LabelInfo]:
    """Every label version of a pair, newest first: an annotator sees only their own; reviewers see all."""
    check_int(pair_id, "pair_id")
    with db.read() as s:
        user, proj = open_project(s, actor, project, Role.ANNOTATOR, "see label history")
        own_only = None  # reviewers (and the system actor) see every annotator's labels
        if user is not None and user.role == Role.ANNOTATOR:
            if projects.member(s, proj.id, user.id) is None:
                raise PermissionDenied(f"{user.username} is not an annotator of project {proj.name!r}")
            own_only = user.id
        rows = annotation.label_rows(
            s, project_id=proj.id, pair_id=pair_id, annotator_id=own_only, reason_chars=MAX_REASON
        )
        return _infos(s, rows)


def _infos(s: Session, rows: list[dict[str, Any]]) -> list[LabelInfo]:
    """`label_rows` rows as labels, with their evidence (on the newest version up to the current one)."""
    found = evidence_of(s, [(r["label_id"], r["current_doc_version"]) for r in rows])
    return [
        dataclasses.replace(label_info(r), **evidence_fields(found.get(r["label_id"], NO_EVIDENCE)))
        for r in rows
    ]
