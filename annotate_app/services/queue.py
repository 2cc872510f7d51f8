"""The annotator's queue: `next_pair`, `get_pair`, `skip`, progress, and freeing abandoned claims.

`next_pair` returns the caller's open claim, else a stale label to re-judge, else a new pair least-covered
first (freeing expired claims if none is free), else None. A pair is never shown twice to one annotator,
never to more than N at once, and never with another's label. The caller must be a member; ``quota`` caps
their claims. The order in detail: docs/modules.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from annotate_app.services._context import (
    ProjectRef,
    annotator_context,
    open_project,
    pair_content,
    settings_of,
)
from annotate_app.services._evidence import NO_EVIDENCE, evidence_fields, evidence_of
from annotate_app.services._gold_draw import gold_draw
from annotate_app.services._gold_rules import qualifying
from annotate_app.services._judge_state import over_budget, queue_order_by
from annotate_app.services._records import annotator_progress, label_info
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, NotFound
from annotate_app.services.inputs import check_count, check_int, check_reason
from annotate_app.services.types import AnnotatorProgress, PairView, RetrievedChunk
from annotate_app.store import annotation, exhausted, judges, projects
from annotate_app.store.db import Database
from annotate_app.store.enums import AssignmentStatus, AuditAction, ClaimDraw
from annotate_app.store.models import Assignment, JudgeSettings, Project, User, utcnow

__all__ = [
    "next_pair",
    "get_pair",
    "skip",
    "my_progress",
    "release_stale_claims",
    "MAX_ATTEMPTS",
    "MAX_CLAIM_AGE",
    "CANDIDATES",
]

MAX_ATTEMPTS = 20
MAX_CLAIM_AGE = 100 * 365 * 24 * 60  # minutes: older_than_minutes beyond a century would not be a date
CANDIDATES = 8


# --------------------------------------------------------------------------------------------- next_pair
@dataclass(frozen=True, kw_only=True)
class _Claim:
    """What the view needs of a claim: a new claim's fields are known without reading its row back."""

    id: int
    pair_id: int
    annotator_id: int
    version: int
    doc_changed: bool  # an unlabelled claim whose document a re-import replaced

    @classmethod
    def of(cls, a: Assignment) -> _Claim:
        return cls(
            id=a.id,
            pair_id=a.pair_id,
            annotator_id=a.annotator_id,
            version=a.version,
            doc_changed=a.status == AssignmentStatus.ACTIVE and bool(a.stale),
        )


def next_pair(db: Database, actor: Actor, project: ProjectRef) -> PairView | None:
    """The next pair for the caller to judge, or None when there is nothing left (see the module doc).

    On SQLite the claim commits before the pair's contents are read (in a read transaction of their own), so
    the database's one write lock is held for the claim's few statements only. On PostgreSQL the contents
    are read in the claim's transaction: two indexed reads while the claimed pair's row stays locked (other
    claims skip it) cost less than a second transaction's round trips. Should the separate read fail, the
    claim stands, and the next call returns it (step 1)."""
    for _ in range(MAX_ATTEMPTS):
        try:
            with db.write() as s:
                user, proj = annotator_context(s, actor, project, "judge pairs")
                claim = _next(s, user, proj)
                if claim is None:
                    return None
                if not db.is_sqlite:
                    return _view(s, proj, claim)
                project_id = proj.id
            break
        except IntegrityError:
            continue  # a concurrent claim took the slot first: look again
        except OperationalError as exc:  # PostgreSQL deadlock or serialization failure: retry
            if "deadlock" not in str(exc).lower() and "serializ" not in str(exc).lower():
                raise
    else:
        raise Conflict(f"could not claim a pair after {MAX_ATTEMPTS} attempts (heavy contention); try again")
    with db.read() as s:
        return _view(s, s.get_one(Project, project_id), claim)


def _next(s: Session, user: User, proj: Project) -> _Claim | None:
    """The caller's claim to show: their open one, else a new one; None when nothing is left."""
    member = projects.member(
        s, proj.id, user.id
    )  # loaded with the caller (`annotator_context`): no statement
    if member is not None and member.paused_at is not None:
        return None  # paused by the gold rules until a reviewer resumes them (`services.qualification`)
    mine = annotation.open_claim(s, proj.id, user.id)
    if mine is not None:
        return _Claim.of(mine)
    if exhausted.is_full(proj) or exhausted.is_exhausted(member, proj):
        return None  # a "nothing left" marker stands: no pair became claimable since the last empty claim
    rules = judges.settings_row(s, proj.id)  # read once: the budget and the queue order both need it
    if _over_quota(s, proj, user) or over_budget(s, proj, row=rules):
        return None
    epoch = proj.queue_epoch  # read before the seek: a pair freed after this read moves the epoch on
    always_gold = qualifying(proj, member)  # a new annotator's claims draw gold until they qualify
    claimed = _claim(s, user, proj, rules, always_gold=always_gold)
    if claimed is None:
        cutoff = utcnow() - timedelta(minutes=proj.claim_timeout_minutes)
        if annotation.expire_claims(s, proj.id, older_than=cutoff):
            claimed = _claim(s, user, proj, rules, always_gold=always_gold)
    if claimed is None:
        exhausted.mark_exhausted(s, proj.id, user.id, epoch, proj.claim_timeout_minutes)
    return claimed


def _over_quota(s: Session, proj: Project, user: User) -> bool:
    quota = _quota(s, proj, user)
    return quota is not None and annotation.own_count(s, proj.id, user.id) >= quota


def _quota(s: Session, proj: Project, user: User) -> int | None:
    """The member's cap on claims and labels (None: no cap, or not a member)."""
    member = projects.member(s, proj.id, user.id)
    return None if member is None else member.quota


def _claim(
    s: Session, user: User, proj: Project, rules: JudgeSettings | None, *, always_gold: bool = False
) -> _Claim | None:
    """Take a slot: one seeking statement (`store.annotation.claims.seek_slot`), under the project's shared
    claim lock so that N is the one in force until commit (a settings change lowering N waits for it; the
    seek reads N itself). If the seek finds nothing, pairs that concurrent claims were taking (skipped by SKIP
    LOCKED) are looked at once more, waiting for their locks, so that None means nothing is left. The claim
    row then takes the pair's lowest free slot in its INSERT (`store.annotation.claims.insert_claim`).
    ``always_gold``: draw a gold pair whatever the gold rate (a qualifying annotator), if one is left."""
    annotation.claim_lock(s, proj.id)
    gold_pair = gold_draw(s, proj, user.id, always=always_gold)
    if gold_pair is not None:
        claim_id = annotation.insert_claim(s, proj.id, gold_pair, user.id, draw=ClaimDraw.GOLD)
        return _Claim(id=claim_id, pair_id=gold_pair, annotator_id=user.id, version=0, doc_changed=False)
    order, draw = queue_order_by(s, proj, row=rules)
    pair_id = annotation.seek_slot(s, proj.id, user.id, order_by=order)
    if pair_id is None:
        n = annotation.current_n(s, proj.id)
        pair_id = next(
            (
                p
                for p in annotation.candidates(s, proj.id, user.id, n, CANDIDATES, order_by=order)
                if annotation.take_slot(s, p, n)
            ),
            None,
        )
    if pair_id is None:
        return None
    claim_id = annotation.insert_claim(s, proj.id, pair_id, user.id, draw=draw)
    return _Claim(id=claim_id, pair_id=pair_id, annotator_id=user.id, version=0, doc_changed=False)


def _view(s: Session, proj: Project, a: _Claim) -> PairView:
    content = pair_content(s, a.pair_id, guidelines=True)
    settings = settings_of(proj)
    current = None
    if a.version > 0:
        rows = annotation.label_rows(
            s, project_id=proj.id, annotator_id=a.annotator_id, pair_id=a.pair_id, limit=1
        )
        current = label_info(rows[0]) if rows else None
        if current is not None and current.label_id is not None:
            found = evidence_of(s, [(current.label_id, content["doc_version"])])
            current = dataclasses.replace(
                current, **evidence_fields(found.get(current.label_id, NO_EVIDENCE))
            )
    return PairView(
        pair_id=a.pair_id,
        project=proj.name,
        query_id=content["query_id"],
        query_text=content["query_text"],
        query_meta=dict(content["query_meta"]),
        doc_id=content["doc_id"],
        doc_title=content["doc_title"],
        doc_text=content["doc_text"],
        doc_meta=dict(content["doc_meta"]),
        doc_version=content["doc_version"],
        grade_scale=settings.grade_scale,
        min_reason_length=settings.min_reason_length,
        guidelines_version=content["guidelines_version"],
        guidelines=content["guidelines"] or "",
        current=current,
        doc_changed=a.doc_changed,
        evidence=settings.evidence,
        relevance_cutoff=settings.relevance_cutoff,
        retrieved=_retrieved(s, a.pair_id, content["doc_version"]) if content["chunk_retrieved"] else None,
    )


def _retrieved(s: Session, pair_id: int, doc_version: int) -> RetrievedChunk | None:
    found = annotation.retrieved_chunk(s, pair_id, doc_version)
    return None if found is None else RetrievedChunk(*found)


def get_pair(db: Database, actor: Actor, project: ProjectRef, pair_id: int) -> PairView:
    """A pair the caller holds or labelled (to edit their label); others' pairs are NotFound."""
    check_int(pair_id, "pair_id")
    with db.read() as s:
        user, proj = annotator_context(s, actor, project, "judge pairs")
        a = annotation.own_assignment(s, pair_id, user.id)
        if a is None or a.project_id != proj.id or a.status not in AssignmentStatus.live():
            raise NotFound(f"pair {pair_id} is not assigned to {user.username}")
        return _view(s, proj, _Claim.of(a))


# ------------------------------------------------------------------------------------------------- skip
def skip(db: Database, actor: Actor, project: ProjectRef, pair_id: int, *, reason: str) -> None:
    """Give a claimed, unlabelled pair back with a reason (≥ the project's minimum length, at least 1); its
    slot goes to another annotator and the caller never sees the pair again."""
    check_int(pair_id, "pair_id")
    with db.write() as s:
        user, proj = annotator_context(s, actor, project, "skip pairs")
        text = check_reason(reason, proj.min_reason_length, "skip reason")
        a = annotation.own_assignment(s, pair_id, user.id)
        if a is None or a.project_id != proj.id:
            raise NotFound(f"pair {pair_id} is not assigned to {user.username}")
        if a.status == AssignmentStatus.DONE:
            raise Conflict(f"pair {pair_id} is already labelled; edit the label instead of skipping")
        if not annotation.skip(s, a.id, text):
            raise Conflict(f"pair {pair_id} is no longer assigned to {user.username} (skipped or expired)")
        if a.draw != ClaimDraw.GOLD:  # a gold draw holds no counted slot (`store.gold`)
            annotation.release_slot(s, pair_id)


# --------------------------------------------------------------------------------------------- progress
def my_progress(db: Database, actor: Actor, project: ProjectRef) -> AnnotatorProgress:
    """The caller's own counts: done, active (claimed, unlabelled), skipped, stale, quota, still available."""
    with db.read() as s:
        user, proj = annotator_context(s, actor, project, "see progress")
        return annotator_progress(s, proj, user.id, user.username, _quota(s, proj, user))


def release_stale_claims(
    db: Database, actor: Actor, project: ProjectRef, *, older_than_minutes: int | None = None
) -> int:
    """Free unlabelled claims older than ``older_than_minutes`` (default: the project's claim timeout), for
    reviewers who do not want to wait for the queue to run dry. Returns how many were freed."""
    check_count(older_than_minutes, "older_than_minutes", 0, optional=True)
    check_int(older_than_minutes, "older_than_minutes", 0, MAX_CLAIM_AGE, optional=True)
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "free claims")
        minutes = proj.claim_timeout_minutes if older_than_minutes is None else older_than_minutes
        freed = annotation.expire_claims(s, proj.id, older_than=utcnow() - timedelta(minutes=minutes))
        audit(
            s,
            actor,
            AuditAction.CLAIMS_FREED,
            project_id=proj.id,
            target=proj.name,
            details={"older_than_minutes": minutes, "freed": freed},
        )
        return freed
