"""Storing a checked label import: planned against the claims first, then written in bulk, a piece at a time.

Each label is stored as `services.labels.save_label` stores one (a claim and a new version; an equal label
adds nothing). Every problem is raised before anything is written; a plan the app invalidates meanwhile is
made again, at most `PLAN_ATTEMPTS` times, then `Conflict`. Importing a file twice adds nothing.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Protocol

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict
from annotate_app.services.imports._common import SourceFile, fail, lock_imports, record_import, start_import
from annotate_app.services.types import AnnotatorLabels, ImportReport
from annotate_app.store import doc_staging, label_import, projects, undo
from annotate_app.store import users as users_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AssignmentStatus, AuditAction, ClaimDraw, ImportKind
from annotate_app.store.models import Assignment, Label, Project, utcnow
from metrics.errors import Problem

__all__ = [
    "CheckedLabel",
    "Checker",
    "store_labels",
    "preview",
    "PUBLISH_PIECE",
    "SQLITE_PAUSE_S",
    "PLAN_ATTEMPTS",
]

PUBLISH_PIECE = 5_000  # on SQLite: labels written per transaction, whole pairs (a fraction of a second)
SQLITE_PAUSE_S = 0.12  # on SQLite: the least pause after each, over a waiting writer's 0.1 s between polls
SQLITE_PAUSE_SHARE = 0.5  # ... and at least this share of the piece's time (a busy machine wakes them late)
PLAN_ATTEMPTS = 3  # plans made before giving up on a project whose claims keep changing under the import
_PG_PIECE = 50_000  # on PostgreSQL: labels per bulk statement (memory: one piece of rows)


class CheckedLabel(Protocol):
    """A label that passed every check of the file: its pair and annotator's name resolved."""

    @property
    def line(self) -> int: ...
    @property
    def pair_id(self) -> int: ...
    @property
    def username(self) -> str: ...
    @property
    def grade(self) -> int: ...
    @property
    def reason(self) -> str: ...


Checker = Callable[[Session, Project], Sequence[CheckedLabel]]
"""Checks the file's labels against the project (in the caller's transaction); raises `InvalidInput`."""


def store_labels(
    db: Database, actor: Actor, project: ProjectRef, file: SourceFile, check: Checker, *, left_out: str = ""
) -> ImportReport:
    """Check (``check``), plan and store a label import (admin; see the module doc); returns how many labels
    were added, changed (a new version) and unchanged, and ``left_out`` (what the file held that is not a
    label). A bad file raises `InvalidInput` and writes nothing. Raises `Conflict` if the annotators' claims
    kept changing under `PLAN_ATTEMPTS` plans."""
    if db.is_sqlite:
        with doc_staging.hold_imports(db):
            report = _Pieces(db, actor, project, file).store(check)
        return dataclasses.replace(report, left_out=left_out)
    for _ in range(PLAN_ATTEMPTS):
        try:
            with db.write() as s:
                return dataclasses.replace(_store_at_once(s, actor, project, file, check), left_out=left_out)
        except (_PlanChanged, IntegrityError):  # a claim changed (or was taken) under the plan
            continue
    raise _gave_up(file)


class _PlanChanged(Exception):
    """A claim the plan was made against changed before it was written."""


def _gave_up(file: SourceFile) -> Conflict:
    return Conflict(
        f"{file.name}: the annotators' claims kept changing during the import ({PLAN_ATTEMPTS} attempts); "
        "import it again"
    )


# ---------------------------------------------------------------------------------------------- the plan
class _Row(NamedTuple):
    """A label to store: one of the versions an annotator's claim of a pair gets, ``version``.
    ``annotator_id`` None: an account the import creates. ``assignment_id`` None: a new claim, at ``slot``;
    else the claim at version ``base_version`` with current label ``base_label_id``. ``last``: the claim's
    last new version (the claim is made or moved to it); ``added``: its first label (else a change).
    ``label_key``, ``claim_key``: the ordinals of the new label and claim (1, 2, ...; the versions of one new
    claim share its ordinal) that `_Plan.ids` turns into ids. ``gold``: the existing claim is a gold draw's,
    which holds no counted slot; the import makes it an ordinary claim (one more on the pair's count)."""

    line: int
    pair_id: int
    annotator_id: int | None
    username: str
    grade: int
    reason: str
    doc_version: int
    version: int
    last: bool
    added: bool
    assignment_id: int | None = None
    base_version: int = 0
    base_label_id: int | None = None
    slot: int | None = None
    label_key: int = 0
    claim_key: int = 0  # a new claim's
    gold: bool = False  # the claim moved is a gold draw's: the import makes it an ordinary, counted claim


@dataclass
class _Plan:
    """What an import will write: the labels to store in pair order, the accounts to create, the labels left
    unchanged; per annotator, [labels, added, changed, unchanged]."""

    rows: list[_Row] = field(default_factory=list)
    new_names: list[str] = field(default_factory=list)
    unchanged: int = 0
    counts: dict[str, list[int]] = field(default_factory=dict)
    claims: int = 0  # new claims
    reserved: tuple[list[int], list[int]] | None = None  # PostgreSQL: the ids of the labels and new claims

    def reserve(self, s: Session) -> None:
        """On PostgreSQL, draw the ids of the new labels and claims from the sequences (`reserve_ids`); on
        SQLite nothing: a piece's rows take the ids after the largest when written (`largest_ids`)."""
        labels, claims = (
            label_import.reserve_ids(s, Label, len(self.rows)),
            label_import.reserve_ids(s, Assignment, self.claims),
        )
        self.reserved = None if labels is None or claims is None else (labels, claims)

    def spans(self, size: int) -> list[tuple[int, int]]:
        """[start, end) of pieces of at least ``size`` rows (the last may be smaller), whole pairs each."""
        out, start, rows = [], 0, self.rows
        for i in range(1, len(rows) + 1):
            if i == len(rows) or (i - start >= size and rows[i].pair_id != rows[i - 1].pair_id):
                out.append((start, i))
                start = i
        return out


def _plan(
    s: Session, proj: Project, file: SourceFile, checked: Sequence[CheckedLabel], *, numbered: bool = True
) -> _Plan:
    """Plan the import of the checked labels against the claims as they are now. An annotator's labels of a
    pair (several when the file holds versions, in file order) are unchanged up to the last one equal to the
    current label (grade, reason, made on the current document version); the ones after it become the next
    versions. A label for a claim that is over (skipped or expired in the app) raises `InvalidInput` naming
    its line; one for a gold draw's claim makes it an ordinary claim (the label counts, once). ``numbered``:
    reserve the new rows' ids (`_Plan.reserve`; not in a read-only transaction)."""
    users = {
        name: user.id for name, user in users_store.by_names(s, sorted({c.username for c in checked})).items()
    }
    states = label_import.claim_states(s, proj.id, list(users.values()))
    slots = label_import.pair_slots(s, proj.id)
    groups: dict[tuple[int, str], list[CheckedLabel]] = {}
    for c in checked:
        groups.setdefault((c.pair_id, c.username), []).append(c)
    plan, refused = _Plan(), []
    new_claims: dict[int, int] = {}  # pair id → new claims planned on it
    for (pair_id, name), labels in sorted(groups.items(), key=lambda item: item[0][0]):  # stable: file order
        user_id = users.get(name)
        state = None if user_id is None else states.get((pair_id, user_id))
        doc_version, held = slots[pair_id]
        if state is not None and state.status not in AssignmentStatus.live():
            refused += [_refused(file, c, state.status) for c in labels]
            continue
        current = None if state is None or state.doc_version != doc_version else (state.grade, state.reason)
        equal = [i for i, c in enumerate(labels) if (c.grade, c.reason) == current]
        first_new = equal[-1] + 1 if equal else 0
        plan.unchanged += first_new
        new = labels[first_new:]
        has_label = state is not None and state.label_id is not None
        counts = plan.counts.setdefault(name, [0, 0, 0, 0])
        first_added = int(bool(new) and not has_label)
        for i, value in enumerate((len(labels), first_added, len(new) - first_added, first_new)):
            counts[i] += value
        if not new:
            continue
        assignment_id, base, base_label, slot, claim_key, gold = None, 0, None, None, 0, False
        if state is not None:
            assignment_id, base, base_label = state.assignment_id, state.version, state.label_id
            gold = state.draw == ClaimDraw.GOLD
        else:  # a new claim, past every slot held and the annotators per pair
            new_claims[pair_id] = n = new_claims.get(pair_id, 0) + 1
            slot = max(held, proj.annotators_per_pair) + n
            plan.claims += 1
            claim_key = plan.claims
        for k, c in enumerate(new):
            last, added = k == len(new) - 1, k == 0 and not has_label
            row = (c.line, pair_id, user_id, name, c.grade, c.reason, doc_version, base + 1 + k, last, added)
            keys = (len(plan.rows) + 1, claim_key, gold)
            plan.rows.append(_Row(*row, assignment_id, base, base_label, slot, *keys))
    fail(sorted(refused, key=lambda p: p.line or 0)[:1000])
    plan.new_names = sorted({c.username for c in checked} - set(users))
    if numbered:
        plan.reserve(s)
    return plan


def preview(
    s: Session, proj: Project, file: SourceFile, checked: Sequence[CheckedLabel]
) -> list[AnnotatorLabels]:
    """What importing the checked labels would do now, per annotator (by username): labels, added, changed,
    unchanged, and whether the import creates the account; `InvalidInput` as the import would raise it."""
    plan = _plan(s, proj, file, checked, numbered=False)
    return [
        AnnotatorLabels(
            username=name,
            labels=n,
            added=added,
            changed=changed,
            unchanged=unchanged,
            new_account=name in plan.new_names,
        )
        for name, (n, added, changed, unchanged) in sorted(plan.counts.items())
    ]


def _refused(file: SourceFile, c: CheckedLabel, status: str) -> Problem:
    reason = f"{c.username} has {status} this pair in the app; it cannot be labelled by import"
    return Problem(file.name, c.line, f"{c.username} {c.grade}", reason)


# ---------------------------------------------------------------------------------------------- writing
def _check_claims(s: Session, rows: Sequence[_Row], user_ids: dict[str, int]) -> None:
    """`_PlanChanged` unless every claim of ``rows`` is as planned: a new one still absent and its slot free,
    an existing one still live at the version planned against, with the label planned against."""
    held = {}  # (pair id, annotator id) → (assignment id, version, label id, live)
    slots = set()
    for pair_id, annotator_id, assignment_id, version, label_id, slot in label_import.claims_on(
        s, [row.pair_id for row in rows]
    ):
        held[(pair_id, annotator_id)] = (assignment_id, version, label_id, slot is not None)
        if slot is not None:
            slots.add((pair_id, slot))
    for row in rows:
        now = held.get((row.pair_id, user_ids[row.username]))
        planned = None
        if row.assignment_id is not None:
            planned = (row.assignment_id, row.base_version, row.base_label_id, True)
        if now != planned or (row.assignment_id is None and (row.pair_id, row.slot) in slots):
            raise _PlanChanged()


def _write(s: Session, proj: Project, plan: _Plan, start: int, end: int, user_ids: dict[str, int]) -> None:
    """Write the plan's rows from ``start`` to ``end`` in the caller's transaction: new claims, label
    versions, claims moved, claim counts; `_PlanChanged` if a claim is no longer as planned (on PostgreSQL,
    whose import is one transaction, only the claims to move are checked here: a claim taken meanwhile makes
    an insert fail, `IntegrityError`)."""
    rows = plan.rows[start:end]
    if plan.reserved is not None:
        label_ids, claim_ids = plan.reserved
        label_of, claim_of = (lambda key: label_ids[key - 1]), (lambda key: claim_ids[key - 1])
    else:  # SQLite: the ids after the largest, in the order of the ordinals
        _check_claims(s, rows, user_ids)
        largest_label, largest_claim = label_import.largest_ids(s)
        labels_after = largest_label - rows[0].label_key + 1
        first_claim = min((row.claim_key for row in rows if row.assignment_id is None), default=1)
        claims_after = largest_claim - first_claim + 1
        label_of, claim_of = (lambda key: labels_after + key), (lambda key: claims_after + key)
    now, guidelines = utcnow(), projects.guidelines_version(s, proj.id)
    claims: list[tuple] = []
    labels: list[tuple] = []
    moves: list[tuple[int, int, int, int, int]] = []
    counts: dict[int, int] = {}
    for row in rows:
        annotator, label_id = user_ids[row.username], label_of(row.label_key)
        assignment_id = row.assignment_id if row.assignment_id is not None else claim_of(row.claim_key)
        labels.append(
            (label_id, assignment_id, row.pair_id, annotator, row.version, row.grade, row.reason)
            + (row.doc_version, guidelines)
        )
        if not row.last:
            continue
        if row.assignment_id is not None:
            moves.append((row.assignment_id, row.base_version, row.version, row.grade, label_id))
            if row.gold:  # now an ordinary claim: it counts on the pair
                counts[row.pair_id] = counts.get(row.pair_id, 0) + 1
        else:
            claims.append(
                (assignment_id, proj.id, row.pair_id, annotator, row.slot, row.version, label_id, row.grade)
            )
            counts[row.pair_id] = counts.get(row.pair_id, 0) + 1
    label_import.defer_label_links(s)
    label_import.insert_claims(s, claims, now)
    label_import.insert_labels(s, labels, now)
    if label_import.move_claims(s, moves, now) != len(moves):
        raise _PlanChanged()  # PostgreSQL: a save got in between the check and the update
    label_import.add_claims(s, counts)


def _accounts(s: Session, actor: Actor, proj: Project, names: Sequence[str]) -> dict[str, int]:
    """Accounts for these names, which cannot log in (deactivated, no password), each one audited; name →
    user id. `_PlanChanged` if one exists already (added meanwhile)."""
    if names and users_store.by_names(s, list(names)):
        raise _PlanChanged()
    out = {}
    for name in names:
        user = users_store.insert_user(
            s, username=name, display_name=name, role=Role.ANNOTATOR.value, password_hash=""
        )
        users_store.set_fields(s, user.id, active=False)
        audit(
            s,
            actor,
            AuditAction.USER_ADDED,
            project_id=proj.id,
            target=name,
            details={"role": Role.ANNOTATOR.value, "imported": True, "can_login": False},
        )
        out[name] = user.id
    return out


def _user_ids(plan: _Plan, created: dict[str, int]) -> dict[str, int]:
    return {row.username: row.annotator_id for row in plan.rows if row.annotator_id is not None} | created


def _report(file: SourceFile, added: int, changed: int, unchanged: int) -> ImportReport:
    return ImportReport(
        kind=ImportKind.LABELS,
        source=file.name,
        name=Path(file.name).name,
        added=added,
        changed=changed,
        unchanged=unchanged,
    )


def _added(rows: Sequence[_Row]) -> int:
    """The rows that add a first label of their annotator on the pair (the others change one)."""
    return sum(row.added for row in rows)


# ---------------------------------------------------------------------------------------- PostgreSQL
def _store_at_once(
    s: Session, actor: Actor, project: ProjectRef, file: SourceFile, check: Checker
) -> ImportReport:
    _, proj = open_project(s, actor, project, Role.ADMIN, "import labels")
    lock_imports(s, proj)  # a double click: the second import waits, then finds every label unchanged
    plan = _plan(s, proj, file, check(s, proj))
    import_id = start_import(s, actor, proj, file, ImportKind.LABELS, Path(file.name).name)
    user_ids = _user_ids(plan, _accounts(s, actor, proj, plan.new_names))
    for start in range(0, len(plan.rows), _PG_PIECE):
        _write(s, proj, plan, start, min(start + _PG_PIECE, len(plan.rows)), user_ids)
    added = _added(plan.rows)
    report = _report(file, added, len(plan.rows) - added, plan.unchanged)
    record_import(s, actor, proj, file, report, import_id)
    return report


# ---------------------------------------------------------------------------------------- SQLite: pieces
class _Pieces:
    """A label import on SQLite, a piece per transaction (see the module doc); call `store` holding
    `doc_staging.hold_imports`."""

    def __init__(self, db: Database, actor: Actor, project: ProjectRef, file: SourceFile):
        self.db, self.actor, self.project, self.file = db, actor, project, file
        self.import_id: int | None = None  # recorded with the first piece
        self.added = self.changed = 0  # written so far

    def store(self, check: Checker) -> ImportReport:
        for _ in range(PLAN_ATTEMPTS):
            with self.db.read() as s:
                proj = self._project(s)
                plan = _plan(s, proj, self.file, check(s, proj))
            try:
                return self._write(plan)
            except _PlanChanged:  # plan what is left again
                continue
        raise _gave_up(self.file)

    def _project(self, s: Session) -> Project:
        return open_project(s, self.actor, self.project, Role.ADMIN, "import labels")[1]

    def _write(self, plan: _Plan) -> ImportReport:
        spans = plan.spans(PUBLISH_PIECE) or [(0, 0)]
        user_ids = _user_ids(plan, {})
        for k, (start, end) in enumerate(spans):
            last, began = k == len(spans) - 1, time.monotonic()
            with self.db.write() as s:
                proj = self._project(s)
                import_id = self.import_id
                if import_id is None:
                    name = Path(self.file.name).name
                    import_id = start_import(s, self.actor, proj, self.file, ImportKind.LABELS, name)
                if k == 0:
                    user_ids |= _accounts(s, self.actor, proj, plan.new_names)
                rows = plan.rows[start:end]
                if rows:
                    _write(s, proj, plan, start, end, user_ids)
                added = self.added + _added(rows)
                changed = self.changed + len(rows) - _added(rows)
                report = _report(self.file, added, changed, len(plan.rows) + plan.unchanged - added - changed)
                if last:
                    record_import(s, self.actor, proj, self.file, report, import_id)
                else:  # what is written so far
                    undo.finish_import(s, import_id, _counts(report), None)
            self.import_id, self.added, self.changed = import_id, added, changed
            if last:
                return report
            # SQLite's busy handler polls: leave a waiting writer a gap to get in, longer on a busy machine
            time.sleep(max(SQLITE_PAUSE_S, SQLITE_PAUSE_SHARE * (time.monotonic() - began)))
        raise AssertionError("unreachable: the last piece returns")


def _counts(report: ImportReport) -> dict[str, int]:
    return {
        "added": report.added,
        "changed": report.changed,
        "unchanged": report.unchanged,
        "stale_labels": 0,
    }
