"""The values services return: small frozen dataclasses (and DataFrames for tables), never ORM objects, and
the vocabulary they use (`annotate_app.store.enums`: statuses, statistics, modes, kinds, audit actions, as
`StrEnum`s equal to the stored strings).

Pages can keep them in session state, compare them, and render them; nothing in them touches the database.
Build them with keyword arguments.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from annotate_app.store.enums import (
    AgreementMode,
    AssignmentStatus,
    AuditAction,
    EvidenceMode,
    ImportKind,
    PairOrigin,
    QrelKind,
    Statistic,
    Weights,
)

_GATE_TYPES = ("AgreementSummary", "Blockers", "Confusion", "Disagreement")  # defined next to the gate

__all__ = [
    "GradeScale",
    "RetrievedChunk",
    "UserInfo",
    "ProjectSettings",
    "ProjectInfo",
    "GuidelinesInfo",
    "MemberInfo",
    "ImportPreview",
    "AnnotatorLabels",
    "LabelImportPreview",
    "ImportReport",
    "ImportInfo",
    "UndoReport",
    "PoolReport",
    "PairInfo",
    "LabelInfo",
    "PairView",
    "Progress",
    "AnnotatorProgress",
    "ProjectStatus",
    "AdjudicationInfo",
    "ReleaseInfo",
    "AuditInfo",
    "DEFAULT_GRADE_SCALE",
    "AgreementMode",
    "AssignmentStatus",
    "AuditAction",
    "ImportKind",
    "PairOrigin",
    "QrelKind",
    "Statistic",
    "EvidenceMode",
    "Weights",
    *_GATE_TYPES,
]

GradeScale = tuple[tuple[int, str], ...]
DEFAULT_GRADE_SCALE: GradeScale = (
    (0, "Not relevant"),
    (1, "Related, does not answer"),
    (2, "Partly answers"),
    (3, "Fully answers"),
)


@dataclass(frozen=True)
class UserInfo:
    id: int
    username: str
    display_name: str
    role: str
    active: bool
    locked_until: datetime | None
    last_login_at: datetime | None
    created_at: datetime


@dataclass(frozen=True)
class ProjectSettings:
    """A project's judging and agreement rules (validated by `projects.check_settings`).

    ``grade_scale``: (grade, label) pairs in increasing grade order. ``annotators_per_pair``: N distinct
    annotators judge each pair. ``statistic``: ``"cohen"`` (mean pairwise Cohen's kappa; with two annotators
    exactly Cohen's kappa), ``"fleiss"`` or ``"krippendorff"`` (alpha, nominal in binary mode, ordinal in
    weighted mode), which must reach ``threshold``. ``agreement_mode``: ``"binary"`` (grades ≥
    ``relevance_cutoff`` are relevant) or ``"weighted"`` (kappa with ``weights`` over the whole scale).
    ``min_reason_length``: characters a reason (or a skip reason) needs. ``claim_timeout_minutes``: an
    unlabelled claim older than this is given to someone else when the queue runs dry.
    ``qualify_pairs`` / ``qualify_accuracy``: a new annotator's labels count once their latest
    ``qualify_pairs`` gold labels reach that exact accuracy (None: no qualification). ``pause_pairs`` /
    ``pause_accuracy``: an annotator whose last ``pause_pairs`` gold labels fall below that accuracy gets no
    new pairs until a reviewer resumes them (None: never paused). ``gold_feedback``: after saving a label on a
    gold pair, the annotator sees its expected grade and explanation (`services.qualification`).
    """

    grade_scale: GradeScale = DEFAULT_GRADE_SCALE
    annotators_per_pair: int = 2
    statistic: Statistic = Statistic.COHEN
    threshold: float = 0.7
    relevance_cutoff: int = 1
    agreement_mode: AgreementMode = AgreementMode.BINARY
    weights: Weights = Weights.LINEAR
    min_reason_length: int = 5
    claim_timeout_minutes: int = 60
    allow_self_adjudication: bool = False  # a reviewer may adjudicate a pair they labelled (audited)
    evidence: EvidenceMode = EvidenceMode.OFF  # passages: off, optional, required (grades >= cut-off)
    passage_threshold: float | None = None  # the passages' unitizing alpha a release needs (None: no gate)
    qualify_pairs: int | None = None  # gold labels a new annotator must pass (None: no qualification)
    qualify_accuracy: float = 0.8  # exact accuracy on them, in (0, 1]
    pause_pairs: int | None = None  # the window of latest gold labels the pause rule reads (None: off)
    pause_accuracy: float = 0.5  # pause below this exact accuracy on the window, in (0, 1]
    gold_feedback: bool = False  # training feedback: expected grade and explanation after a gold label

    @property
    def grades(self) -> tuple[int, ...]:
        return tuple(g for g, _ in self.grade_scale)


@dataclass(frozen=True)
class ProjectInfo:
    id: int
    name: str
    title: str
    settings: ProjectSettings
    guidelines_version: int | None
    created_at: datetime


@dataclass(frozen=True)
class GuidelinesInfo:
    version: int
    markdown: str
    author: str
    created_at: datetime


@dataclass(frozen=True)
class MemberInfo:
    username: str
    role: str
    quota: int | None


@dataclass(frozen=True)
class ImportPreview:
    """What a file would import: row count, columns, the first rows, and every problem (nothing written)."""

    kind: ImportKind
    source: str
    n_rows: int
    columns: tuple[str, ...]
    sample: tuple[dict, ...]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class AnnotatorLabels:
    """What a label import would do for one annotator (the username the labels go to): how many labels,
    how many are new, change the annotator's current label (a new version) or equal it; ``new_account``:
    the import creates this user, deactivated and without a password."""

    username: str
    labels: int
    added: int
    changed: int
    unchanged: int
    new_account: bool


@dataclass(frozen=True)
class LabelImportPreview:
    """What a label file would import (`imports.preview_labels`; nothing written): its labels per annotator
    (sorted by username) and ``left_out``, the answers of the file that are not labels
    (``"4 left out: 3 rejected, 1 without a choice"``, or ``""``). The Data page and ``qrelforge import labels
    --dry-run`` show it with `headline`, `rows` and `accounts_note`."""

    source: str
    annotators: tuple[AnnotatorLabels, ...]
    left_out: str = ""

    @property
    def n_labels(self) -> int:
        return sum(a.labels for a in self.annotators)

    @property
    def new_accounts(self) -> tuple[str, ...]:
        return tuple(a.username for a in self.annotators if a.new_account)

    @property
    def headline(self) -> str:
        """``"prodigy.jsonl: 12 labels by 2 annotators; 4 left out: 3 rejected, 1 without a choice."``"""
        n, who = self.n_labels, len(self.annotators)
        rest = f"; {self.left_out}" if self.left_out else ""
        return f"{self.source}: {n} label{'s' * (n != 1)} by {who} annotator{'s' * (who != 1)}{rest}."

    def rows(self) -> list[dict[str, Any]]:
        """One row per annotator: annotator, labels, new, changed, unchanged, account (new or exists)."""
        return [
            {
                "annotator": a.username,
                "labels": a.labels,
                "new": a.added,
                "changed": a.changed,
                "unchanged": a.unchanged,
                "account": "new (disabled)" if a.new_account else "exists",
            }
            for a in self.annotators
        ]

    @property
    def accounts_note(self) -> str:
        """What to do about the accounts the import creates, or ``""`` when it creates none."""
        if not self.new_accounts:
            return ""
        return (
            f"New accounts, created disabled (no password): {', '.join(self.new_accounts)}. "
            "Enable one on the Users page (reactivate, then set its password)."
        )


@dataclass(frozen=True)
class ImportReport:
    """What an import did. ``added``/``changed``/``unchanged`` count rows; ``stale_labels`` counts labels made
    on a document version that this import replaced; ``left_out``: a label file's answers that are not labels
    (``"2 left out: 2 ignored"``, or ``""``)."""

    kind: ImportKind
    source: str
    name: str
    added: int
    changed: int = 0
    unchanged: int = 0
    stale_labels: int = 0
    already_imported: int | None = None
    left_out: str = ""

    def __str__(self) -> str:
        if self.already_imported is not None:
            return (
                f"{self.kind} {self.name}: already imported (import {self.already_imported}); "
                f"{self.unchanged} unchanged"
            )
        extra = f", {self.stale_labels} labels now stale" if self.stale_labels else ""
        rest = f"; {self.left_out}" if self.left_out else ""
        return (
            f"{self.kind} {self.name}: {self.added} added, {self.changed} changed, "
            f"{self.unchanged} unchanged{extra}{rest}"
        )


@dataclass(frozen=True)
class ImportInfo:
    """One import of a project: its id, kind, name (file, run or qrels name), counts, who and when;
    ``undone_at``: when it was undone (None: it stands)."""

    import_id: int
    kind: ImportKind
    name: str
    counts: dict[str, int]
    by: str
    at: datetime
    undone_at: datetime | None = None

    @property
    def summary(self) -> str:
        """The counts as a phrase ("6 added, 0 changed, 0 unchanged")."""
        c = self.counts
        return f"{c.get('added', 0)} added, {c.get('changed', 0)} changed, {c.get('unchanged', 0)} unchanged"


@dataclass(frozen=True)
class UndoReport:
    """What undoing an import did: rows ``removed`` (documents, versions, queries, run entries, prior
    judgments or chunk mappings), documents or queries ``restored`` to what they were before it, pairs
    ``pairs_removed`` (nothing was judged on them) and ``pairs_excluded`` (judged: excluded instead, with what
    they depend on kept). ``already_undone``: it was undone before, nothing changed."""

    import_id: int
    kind: ImportKind
    name: str
    removed: int = 0
    restored: int = 0
    pairs_removed: int = 0
    pairs_excluded: int = 0
    already_undone: bool = False

    def __str__(self) -> str:
        head = f"import {self.import_id} ({self.kind} {self.name})"
        if self.already_undone:
            return f"{head} was already undone"
        parts = [f"{self.removed} {_ROWS[self.kind][self.removed != 1]} removed"]
        if self.restored:
            parts.append(f"{self.restored} restored to their previous version")
        if self.pairs_removed:
            parts.append(f"{self.pairs_removed} unjudged pair{'s' * (self.pairs_removed != 1)} removed")
        if self.pairs_excluded:
            parts.append(f"{self.pairs_excluded} judged pair{'s' * (self.pairs_excluded != 1)} excluded")
        return f"{head} undone: {', '.join(parts)}"


_ROWS = {  # what an undo removes, per kind: (one, several)
    ImportKind.DOCUMENTS: ("document version", "document versions"),
    ImportKind.QUERIES: ("query", "queries"),
    ImportKind.RUN: ("run entry", "run entries"),
    ImportKind.QRELS: ("prior judgment", "prior judgments"),
    ImportKind.CHUNKS: ("chunk mapping", "chunk mappings"),
}


@dataclass(frozen=True)
class PoolReport:
    runs: tuple[str, ...]
    depth: int
    budget: int | None
    added: int
    already_pooled: int
    over_budget: int
    per_query: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        return (
            f"pooled {', '.join(self.runs)} at depth {self.depth}: {self.added} new pairs, "
            f"{self.already_pooled} already in the pool, {self.over_budget} over the budget"
        )


@dataclass(frozen=True)
class PairInfo:
    pair_id: int
    query_id: str
    doc_id: str
    origin: PairOrigin
    excluded: bool
    sources: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class LabelInfo:
    """One label version. ``stale``: judged on an older version of the document than the current one."""

    pair_id: int
    query_id: str
    doc_id: str
    annotator: str
    version: int
    grade: int
    reason: str
    unsure: bool
    seconds: float | None
    doc_version: int
    stale: bool
    created_at: datetime
    doc_title: str = ""
    label_id: int | None = None
    evidence: tuple[tuple[int, int], ...] = ()  # passages [start, end) in the text of ``evidence_version``
    evidence_version: int | None = None  # the document version the spans index (None: no evidence)
    stale_evidence: tuple[tuple[int, int], ...] = ()  # spans a re-import could not carry (old offsets)
    # training feedback (the project's ``gold_feedback``), on the answer to saving a label on a gold pair
    # only: its expected grade and explanation (None: no feedback); never another annotator's label
    gold_grade: int | None = None
    gold_explanation: str | None = None


@dataclass(frozen=True)
class RetrievedChunk:
    """The chunk a chunk-level run retrieved for a pair: ``[start, end)`` in the text of the document version
    shown, the best-ranked chunk of the document in ``run``; ``rank``: the document's rank there (the best
    over the project's chunk-level runs)."""

    chunk_id: str
    start: int
    end: int
    run: str
    rank: int


@dataclass(frozen=True)
class PairView:
    """Everything the judging screen shows for one pair — and nothing about other annotators' labels.

    ``current``: the caller's own latest label when re-judging (edit or stale); None for a fresh pair.
    ``doc_version``: the document version shown, which `labels.save_label` is given back (``doc_version=``).
    ``doc_changed``: the document was re-imported while the caller held this unlabelled claim (they were shown
    an older version); the card asks them to judge it again.
    ``retrieved``: the chunk a chunk-level run retrieved (its place known in the version shown), where the
    card opens; None for a pair only document-level runs (or none) ranked.
    """

    pair_id: int
    project: str
    query_id: str
    query_text: str
    query_meta: dict[str, Any]
    doc_id: str
    doc_title: str
    doc_text: str
    doc_meta: dict[str, Any]
    doc_version: int
    grade_scale: tuple[tuple[int, str], ...]
    min_reason_length: int
    guidelines_version: int | None
    guidelines: str
    current: LabelInfo | None = None
    doc_changed: bool = False
    evidence: EvidenceMode = EvidenceMode.OFF  # the project's evidence setting (passages on the card)
    relevance_cutoff: int = 1
    retrieved: RetrievedChunk | None = None

    @property
    def stale(self) -> bool:
        return self.current is not None and self.current.doc_version != self.doc_version


@dataclass(frozen=True)
class Progress:
    """``done`` of ``total`` (``fraction`` in [0, 1]; 1.0 when there is nothing to do)."""

    done: int
    total: int

    @property
    def fraction(self) -> float:
        return 1.0 if self.total == 0 else self.done / self.total


@dataclass(frozen=True)
class AnnotatorProgress:
    username: str
    done: int
    active: int
    skipped: int
    stale: int
    quota: int | None
    available: int

    @property
    def progress(self) -> Progress:
        """Own labels against what this annotator could still take (bounded by the quota)."""
        total = self.done + self.active + self.available
        return Progress(self.done, total if self.quota is None else min(total, self.quota))


@dataclass(frozen=True)
class ProjectStatus:
    """Where a project stands. ``labels``: current labels (slots done) of ``slots`` = pairs × N."""

    project: str
    pairs: int
    excluded: int
    complete: int
    in_progress: int
    untouched: int
    labels: int
    slots: int
    stale: int
    disagreements: int
    adjudicated: int
    releases: int
    annotators: tuple[AnnotatorProgress, ...]

    @property
    def progress(self) -> Progress:
        return Progress(self.labels, self.slots)


@dataclass(frozen=True)
class AdjudicationInfo:
    pair_id: int
    reviewer: str
    grade: int
    reason: str
    created_at: datetime
    valid: bool


@dataclass(frozen=True)
class ReleaseInfo:
    project: str
    version: int
    created_by: str
    created_at: datetime
    statistic: Statistic
    agreement_value: float | None
    threshold: float
    justification: str | None
    content_hash: str
    corpus_hash: str
    guidelines_version: int | None
    n_qrels: int
    counts: dict[str, int]
    annotators: tuple[str, ...]
    agreement: dict[str, Any]
    note: str = ""
    sources: dict[str, int] = field(default_factory=dict)  # qrels by source: "human", "judge:NAME"
    # how labels became grades: {"name": an `aggregations.Aggregation` value, "parameters": {...}, ...}
    aggregation: dict[str, Any] = field(default_factory=lambda: {"name": "majority", "parameters": {}})
    unchanged: bool = False  # create_release made nothing: the qrels are identical to this release

    @property
    def below_threshold(self) -> bool:
        return self.agreement_value is None or self.agreement_value < self.threshold


@dataclass(frozen=True)
class AuditInfo:
    id: int
    at: datetime
    actor: str
    action: str
    project_id: int | None
    target: str
    details: dict[str, Any]
    project: str | None = None  # the project's name (None: not about a project)


def __getattr__(name: str) -> Any:
    """The gate's result types (`_GATE_TYPES`), defined next to the gate, stay importable from here. They are
    loaded on first use, so that this module (imported by every service) imports none of the gate's."""
    if name in _GATE_TYPES:
        return getattr(importlib.import_module("annotate_app.services._gate_types"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
