"""The schema: SQLAlchemy 2 typed models, one module per area; this package re-exports every model.

The Alembic migrations create exactly these tables. The schema itself enforces the invariants: one claim per
annotator and pair, at most N live slots, append-only labels and immutable releases and audit log (triggers),
one release per content, idempotent saves by ``request_id``. The list: docs/modules.md.
"""

from __future__ import annotations

from annotate_app.store.models._base import (
    ASSIGNMENT_STATUSES,
    IMMUTABLE_TABLES,
    JUDGE_IMMUTABLE_TABLES,
    NAMING,
    PASSAGE_IMMUTABLE_TABLES,
    QREL_KINDS,
    ROLES,
    Base,
    UTCDateTime,
    table_of,
    utcnow,
)
from annotate_app.store.models.annotation import Adjudication, Assignment, GoldPair, Label, LabelEvidence
from annotate_app.store.models.corpus import (
    Chunk,
    Document,
    DocumentVersion,
    ImportRecord,
    PriorJudgment,
    Query,
    Run,
    RunEntry,
)
from annotate_app.store.models.judges import JudgeLabel, JudgePrompt, JudgeSettings, MachineJudge
from annotate_app.store.models.people import LoginSession, LoginThrottle, User
from annotate_app.store.models.pool import Pair, PairSource, Pool
from annotate_app.store.models.projects import Guidelines, Project, ProjectMember
from annotate_app.store.models.releases import (
    AuditEntry,
    PassageAdjudication,
    Release,
    ReleasePassage,
    ReleaseQrel,
)

__all__ = [
    "Base",
    "User",
    "LoginSession",
    "LoginThrottle",
    "Project",
    "Guidelines",
    "ProjectMember",
    "Document",
    "DocumentVersion",
    "Chunk",
    "Query",
    "ImportRecord",
    "Run",
    "RunEntry",
    "PriorJudgment",
    "Pool",
    "Pair",
    "PairSource",
    "Assignment",
    "Label",
    "LabelEvidence",
    "Adjudication",
    "GoldPair",
    "MachineJudge",
    "JudgePrompt",
    "JudgeLabel",
    "JudgeSettings",
    "Release",
    "ReleaseQrel",
    "ReleasePassage",
    "PassageAdjudication",
    "AuditEntry",
    "utcnow",
    "table_of",
    "ROLES",
    "ASSIGNMENT_STATUSES",
    "QREL_KINDS",
    "IMMUTABLE_TABLES",
    "JUDGE_IMMUTABLE_TABLES",
    "PASSAGE_IMMUTABLE_TABLES",
    "NAMING",
    "UTCDateTime",
]
