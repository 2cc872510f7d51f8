"""The stored vocabulary: every status, kind, mode and action the database holds, as `StrEnum`s.

A member equals the string stored in the database (``AssignmentStatus.DONE == "done"``), so the enums change
nothing in the stored content; the schema's CHECK constraints are built from them. Plain Python (no
SQLAlchemy), so that the services can re-export them (`annotate_app.services.types`).

>>> AssignmentStatus.DONE == "done", str(QrelKind.MAJORITY), AgreementMode("binary") is AgreementMode.BINARY
(True, 'majority', True)
"""

from __future__ import annotations

from enum import StrEnum

from annotate_app.judges._model import Backend

__all__ = [
    "AssignmentStatus",
    "GoldSource",
    "PairOrigin",
    "Statistic",
    "AgreementMode",
    "EvidenceMode",
    "Weights",
    "QrelKind",
    "ImportKind",
    "AuditAction",
    "LoginMethod",
    "JudgeBackend",
    "QueueOrder",
    "ClaimDraw",
]


class AssignmentStatus(StrEnum):
    """Where an annotator's claim on a pair stands: ``active`` (shown, not labelled yet), ``done`` (labelled;
    edits keep it done), ``skipped`` (given back with a reason) or ``expired`` (freed after the timeout)."""

    ACTIVE = "active"
    DONE = "done"
    SKIPPED = "skipped"
    EXPIRED = "expired"

    @classmethod
    def live(cls) -> tuple[AssignmentStatus, ...]:
        """The statuses that hold a slot of the pair."""
        return (cls.ACTIVE, cls.DONE)


class PairOrigin(StrEnum):
    """How a pair entered the pool: depth-k ``pool``ing of runs, or added by hand (``manual``)."""

    POOL = "pool"
    MANUAL = "manual"


class Statistic(StrEnum):
    """The agreement statistic a project's gate uses."""

    COHEN = "cohen"
    FLEISS = "fleiss"
    KRIPPENDORFF = "krippendorff"


class AgreementMode(StrEnum):
    """``binary``: grades at or above the relevance cut-off are relevant; ``weighted``: the whole scale."""

    BINARY = "binary"
    WEIGHTED = "weighted"


class EvidenceMode(StrEnum):
    """Whether annotators mark evidence passages: ``off``; ``optional``; ``required`` for the grades at or
    above the relevance cut-off."""

    OFF = "off"
    OPTIONAL = "optional"
    REQUIRED = "required"


class Weights(StrEnum):
    """The disagreement weights of weighted kappa."""

    LINEAR = "linear"
    QUADRATIC = "quadratic"


class QrelKind(StrEnum):
    """How a released qrel's grade was reached."""

    UNANIMOUS = "unanimous"
    MAJORITY = "majority"
    ADJUDICATED = "adjudicated"
    JUDGE = "judge"  # a pair no human judged, filled by a calibrated machine judge (a project setting)

    @classmethod
    def human(cls) -> tuple[QrelKind, ...]:
        """The kinds of qrels reached from human labels."""
        return (cls.UNANIMOUS, cls.MAJORITY, cls.ADJUDICATED)


class ImportKind(StrEnum):
    """What a file imports (the import records' ``kind``)."""

    DOCUMENTS = "documents"
    QUERIES = "queries"
    RUN = "run"
    QRELS = "qrels"
    CHUNKS = "chunks"
    LABELS = "labels"

    @property
    def action(self) -> AuditAction:
        """The audit action of an import of this kind."""
        return AuditAction(f"import_{self.value}")


class AuditAction(StrEnum):
    """The ``action`` of an audit entry."""

    LOGIN_FAILED = "login_failed"
    LOGIN_SSO = "login_sso"
    LOGIN_LOCKED = "login_locked"
    USER_ADDED = "user_added"
    ROLE_CHANGED = "role_changed"
    PASSWORD_RESET = "password_reset"
    PASSWORD_CHANGED = "password_changed"
    USER_ACTIVATED = "user_activated"
    USER_DEACTIVATED = "user_deactivated"
    USER_UNLOCKED = "user_unlocked"
    PROJECT_CREATED = "project_created"
    SETTINGS_CHANGED = "settings_changed"
    GUIDELINES_CHANGED = "guidelines_changed"
    MEMBERS_ASSIGNED = "members_assigned"
    MEMBER_REMOVED = "member_removed"
    IMPORT_DOCUMENTS = "import_documents"
    IMPORT_QUERIES = "import_queries"
    IMPORT_RUN = "import_run"
    IMPORT_QRELS = "import_qrels"
    IMPORT_CHUNKS = "import_chunks"
    IMPORT_LABELS = "import_labels"
    IMPORT_UNDONE = "import_undone"
    POOLED = "pooled"
    PAIR_ADDED = "pair_added"
    PAIR_EXCLUDED = "pair_excluded"
    PAIR_INCLUDED = "pair_included"
    PAIRS_QUEUED = "pairs_queued"
    CLAIMS_FREED = "claims_freed"
    ADJUDICATED = "adjudicated"
    RELEASE_CREATED = "release_created"
    RELEASE_EXPORTED = "release_exported"
    BACKUP_CREATED = "backup_created"
    BACKUP_RESTORED = "backup_restored"
    JUDGE_ADDED = "judge_added"
    JUDGE_RUN = "judge_run"
    JUDGE_IMPORTED = "judge_imported"
    JUDGE_PROBED = "judge_probed"
    JUDGE_SETTINGS_CHANGED = "judge_settings_changed"
    GOLD_ADDED = "gold_added"
    GOLD_REMOVED = "gold_removed"
    ANNOTATOR_QUALIFIED = "annotator_qualified"
    ANNOTATOR_PAUSED = "annotator_paused"
    ANNOTATOR_RESUMED = "annotator_resumed"


class GoldSource(StrEnum):
    """Where a gold pair's expected grade came from (``gold_pairs.source``)."""

    HAND = "hand"
    ADJUDICATION = "adjudication"
    PRIOR = "prior"


class LoginMethod(StrEnum):
    """How a stored login session was opened."""

    PASSWORD = "password"
    SSO = "sso"


JudgeBackend = Backend
"""Where a machine judge's grades come from: `annotate_app.judges.Backend`, the one list of backends (the
``judges.backend`` CHECK constraint is built from it)."""


class QueueOrder(StrEnum):
    """How the judging queue orders the pairs an annotator may take: ``default`` (least-covered first, then by
    query), ``uncertainty`` (the machine judges' least confident pairs first: low confidence, split samples,
    judges disagreeing) or ``run_weight`` (pairs in the top k of the most runs first)."""

    DEFAULT = "default"
    UNCERTAINTY = "uncertainty"
    RUN_WEIGHT = "run_weight"


class ClaimDraw(StrEnum):
    """How a claim's pair was drawn from the queue (``assignments.draw``, set at claim time): ``random``
    (the calibration share's uniformly random draw), ``gold`` (a gold pair mixed into the annotator's stream
    at the project's gold rate: scored against gold, never counted in agreement or releases), else the
    `QueueOrder` in force: ``default``, ``uncertainty`` or ``run_weight``. NULL in the table: not a claim of
    the queue (imported labels) or a claim made before the column existed. ``uncertainty`` and
    ``run_weight`` are steered by the judges' labels or the runs."""

    RANDOM = "random"
    DEFAULT = "default"
    UNCERTAINTY = "uncertainty"
    RUN_WEIGHT = "run_weight"
    GOLD = "gold"

    @classmethod
    def steered(cls) -> tuple[ClaimDraw, ...]:
        """The draws that choose pairs by what the judges or the runs say (a biased calibration sample)."""
        return (cls.UNCERTAINTY, cls.RUN_WEIGHT)
