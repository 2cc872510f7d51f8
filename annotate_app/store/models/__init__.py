"""The schema: SQLAlchemy 2 typed models, one module per area. Alembic migrations (``store/migrations``)
create exactly these tables; this package re-exports every model.

Rules the schema itself enforces (on SQLite and PostgreSQL alike):

- ``assignments``: UNIQUE(pair_id, annotator_id) — an annotator gets a pair at most once, ever (a skipped or
  expired claim keeps its row, so the pair is never shown again); UNIQUE(pair_id, slot) with slot in 1..N —
  two annotators can never hold the same slot, so a pair never has more than N live claims. A skipped or
  expired claim frees its slot (``slot`` NULL; NULLs do not collide).
- ``labels`` are append-only: UNIQUE(assignment_id, version); database triggers reject UPDATE and DELETE.
  The current label of an assignment is ``assignments.label_id`` (its highest version); ``assignments.grade``
  caches its grade so that agreement reads one table.
- ``releases``, ``release_qrels`` and ``audit_log`` are immutable too (triggers reject UPDATE and DELETE).
  UNIQUE(project_id, content_key): one release per content (``content_key`` = the content hash).
- ``labels`` and ``adjudications``: UNIQUE(annotator_id / reviewer_id, request_id), the client's idempotency
  key of a save.
- Machine judges (``judges``) are raters with provenance, never users: they cannot log in and their labels
  (``judge_labels``, append-only like ``labels``, with their prompt versions ``judge_prompts``) live apart
  from the human ones, so no machine label can reach the agreement gate. ``judge_settings`` holds a
  project's rules for them (fill, calibration, queue order, human budget).
- Every foreign key column is indexed; ``ix_pairs_queue`` serves ``next_pair``.
"""

from __future__ import annotations

from annotate_app.store.models._base import (
    ASSIGNMENT_STATUSES,
    IMMUTABLE_TABLES,
    JUDGE_IMMUTABLE_TABLES,
    NAMING,
    QREL_KINDS,
    ROLES,
    Base,
    UTCDateTime,
    table_of,
    utcnow,
)
from annotate_app.store.models.annotation import Adjudication, Assignment, Label
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
from annotate_app.store.models.releases import AuditEntry, Release, ReleaseQrel

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
    "Adjudication",
    "MachineJudge",
    "JudgePrompt",
    "JudgeLabel",
    "JudgeSettings",
    "Release",
    "ReleaseQrel",
    "AuditEntry",
    "utcnow",
    "table_of",
    "ROLES",
    "ASSIGNMENT_STATUSES",
    "QREL_KINDS",
    "IMMUTABLE_TABLES",
    "JUDGE_IMMUTABLE_TABLES",
    "NAMING",
    "UTCDateTime",
]
