"""The schema: SQLAlchemy 2 typed models. Alembic migrations (``store/migrations``) create exactly these
tables.

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

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from annotate_app.store.enums import (
    AgreementMode,
    AssignmentStatus,
    JudgeBackend,
    LoginMethod,
    PairOrigin,
    QrelKind,
    QueueOrder,
    Statistic,
    Weights,
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

ROLES = ("annotator", "reviewer", "admin")
ASSIGNMENT_STATUSES = tuple(s.value for s in AssignmentStatus)
QREL_KINDS = tuple(k.value for k in QrelKind)
IMMUTABLE_TABLES = ("labels", "releases", "release_qrels", "audit_log")
JUDGE_IMMUTABLE_TABLES = ("judge_prompts", "judge_labels")  # append-only too (migration 0003_judges)

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator):
    """An aware UTC datetime on both databases (SQLite stores it naive, in UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"datetimes must be timezone-aware; got {value!r}")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _fk(target: str, **kw: Any) -> ForeignKey:
    return ForeignKey(target, **kw)


def _in(column: str, values: Iterable[str]) -> str:
    """A CHECK that ``column`` holds one of ``values`` (plain strings or a StrEnum's members).

    >>> _in("weights", Weights)
    "weights IN ('linear', 'quadratic')"
    """
    return f"{column} IN ({', '.join(repr(str(v)) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def table_of(model: type[Base]) -> Table:
    """The Core table of a model, for bulk statements (``Model.__table__`` is typed as a mere FromClause)."""
    return Base.metadata.tables[model.__tablename__]


# ------------------------------------------------------------------------------------------------ people
class User(Base):
    __tablename__ = "users"
    __table_args__ = (CheckConstraint(_in("role", ROLES), name="role"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str] = mapped_column(String(255))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    session_version: Mapped[int] = mapped_column(Integer, default=1)
    password_changed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class LoginSession(Base):
    """A login: the browser's cookie holds a random id whose sha256 is ``token_sha256`` (the id itself is
    never stored). It ends at ``expires_at`` or when revoked (log out; for every session of the user: a
    password change or reset, a role change, a deactivation). ``session_version`` is the user's at login: a
    session outlives no bump of it either."""

    __tablename__ = "sessions"
    __table_args__ = (CheckConstraint(_in("method", LoginMethod), name="method"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(_fk("users.id"), index=True)
    session_version: Mapped[int] = mapped_column(Integer)
    method: Mapped[str] = mapped_column(String(16), default=LoginMethod.PASSWORD.value)
    user_agent: Mapped[str] = mapped_column(String(300), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class LoginThrottle(Base):
    """Failed logins of a name that is no active user (``name_sha256``: the sha256 of the typed name), so
    that unknown names are throttled like accounts without storing what was typed."""

    __tablename__ = "login_throttle"

    name_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_failed_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


# ---------------------------------------------------------------------------------------------- projects
class Project(Base):
    __tablename__ = "projects"
    __table_args__ = (
        CheckConstraint("annotators_per_pair BETWEEN 1 AND 50", name="annotators_per_pair"),
        CheckConstraint(_in("statistic", Statistic), name="statistic"),
        CheckConstraint(_in("agreement_mode", AgreementMode), name="agreement_mode"),
        CheckConstraint(_in("weights", Weights), name="weights"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(200), default="")
    grade_scale: Mapped[list] = mapped_column(JSON)
    annotators_per_pair: Mapped[int] = mapped_column(Integer, default=2)
    statistic: Mapped[str] = mapped_column(String(16), default=Statistic.COHEN.value)
    threshold: Mapped[float] = mapped_column(Float, default=0.7)
    relevance_cutoff: Mapped[int] = mapped_column(Integer, default=1)
    agreement_mode: Mapped[str] = mapped_column(String(16), default=AgreementMode.BINARY.value)
    weights: Mapped[str] = mapped_column(String(16), default=Weights.LINEAR.value)
    min_reason_length: Mapped[int] = mapped_column(Integer, default=5)
    claim_timeout_minutes: Mapped[int] = mapped_column(Integer, default=60)
    allow_self_adjudication: Mapped[bool] = mapped_column(Boolean, default=False)
    # bumped whenever a pair may become claimable: clears every "nothing left" marker (store/exhausted.py)
    queue_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # the project's "no free slot" marker: the queue_epoch at which a claim found every pair at N live claims,
    # and until when; it answers "nothing left" for every member (store/exhausted.py)
    full_epoch: Mapped[int | None] = mapped_column(Integer, nullable=True)
    full_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Guidelines(Base):
    __tablename__ = "guidelines"
    __table_args__ = (UniqueConstraint("project_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"))
    version: Mapped[int] = mapped_column(Integer)
    markdown: Mapped[str] = mapped_column(Text)
    created_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ProjectMember(Base):
    """An annotator working on a project; ``quota`` caps how many pairs they take (None: no cap)."""

    __tablename__ = "project_members"

    project_id: Mapped[int] = mapped_column(_fk("projects.id"), primary_key=True)
    user_id: Mapped[int] = mapped_column(_fk("users.id"), primary_key=True, index=True)
    quota: Mapped[int | None] = mapped_column(Integer, nullable=True)
    added_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # "nothing left" marker: the queue_epoch at which a claim found nothing, and until when (store/exhausted)
    exhausted_epoch: Mapped[int | None] = mapped_column(Integer, nullable=True)
    exhausted_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


# ------------------------------------------------------------------------------------ corpus and queries
class Document(Base):
    """A document of a project; its content lives in ``document_versions`` (``version`` is the current
    one)."""

    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("project_id", "external_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"))
    external_id: Mapped[str] = mapped_column(String(255))
    version: Mapped[int] = mapped_column(Integer, default=1)
    content_sha256: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class DocumentVersion(Base):
    __tablename__ = "document_versions"
    __table_args__ = (UniqueConstraint("document_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(_fk("documents.id"))
    version: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text)
    meta: Mapped[dict] = mapped_column(JSON, default=dict)
    source_version: Mapped[str | None] = mapped_column(String(255), nullable=True)
    content_sha256: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(1000), default="")
    import_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Chunk(Base):
    """The chunk→document map: a chunk-level run is scored and pooled by document."""

    __tablename__ = "chunks"
    __table_args__ = (UniqueConstraint("project_id", "chunk_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"))
    chunk_id: Mapped[str] = mapped_column(String(255))
    document_id: Mapped[int] = mapped_column(_fk("documents.id"), index=True)
    import_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)


class Query(Base):
    __tablename__ = "queries"
    __table_args__ = (UniqueConstraint("project_id", "external_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"))
    external_id: Mapped[str] = mapped_column(String(255))
    text: Mapped[str] = mapped_column(Text)
    meta: Mapped[dict] = mapped_column(JSON, default=dict)
    content_sha256: Mapped[str] = mapped_column(String(64))
    import_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ImportRecord(Base):
    """One import of a file. What it added carries its id (``document_versions``, ``queries`` and ``chunks``:
    ``import_id``; a run and prior qrels by their name, ``source``); ``replaced`` keeps what it overwrote (the
    previous text of changed queries), so that `services.imports.undo_import` can take it back.
    ``undone_at``: when it was undone (an undone import is kept, as history)."""

    __tablename__ = "imports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    source: Mapped[str] = mapped_column(String(1000))
    file_sha256: Mapped[str] = mapped_column(String(64))
    counts: Mapped[dict] = mapped_column(JSON)
    replaced: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    created_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    undone_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


# -------------------------------------------------------------------------------------- runs and priors
class Run(Base):
    __tablename__ = "runs"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"))
    name: Mapped[str] = mapped_column(String(255))
    source: Mapped[str] = mapped_column(String(1000))
    file_sha256: Mapped[str] = mapped_column(String(64))
    n_entries: Mapped[int] = mapped_column(Integer)
    model: Mapped[str] = mapped_column(String(255), default="", server_default="")  # made by; "" unknown
    created_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class RunEntry(Base):
    __tablename__ = "run_entries"
    __table_args__ = (Index("ix_run_entries_run_id_rank", "run_id", "rank"),)

    run_id: Mapped[int] = mapped_column(_fk("runs.id"), primary_key=True)
    query_id: Mapped[int] = mapped_column(_fk("queries.id"), primary_key=True, index=True)
    document_id: Mapped[int] = mapped_column(_fk("documents.id"), primary_key=True, index=True)
    rank: Mapped[int] = mapped_column(Integer)
    score: Mapped[float] = mapped_column(Float)


class PriorJudgment(Base):
    """A judgment imported from existing qrels (``source`` names the import); shown, never released as is."""

    __tablename__ = "prior_judgments"
    __table_args__ = (UniqueConstraint("project_id", "source", "query_id", "document_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"))
    source: Mapped[str] = mapped_column(String(255))
    query_id: Mapped[int] = mapped_column(_fk("queries.id"), index=True)
    document_id: Mapped[int] = mapped_column(_fk("documents.id"), index=True)
    grade: Mapped[int] = mapped_column(Integer)


# -------------------------------------------------------------------------------------------- the pool
class Pool(Base):
    """One pooling operation: depth, budget and the runs it drew from."""

    __tablename__ = "pools"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"), index=True)
    depth: Mapped[int] = mapped_column(Integer)
    budget: Mapped[int | None] = mapped_column(Integer, nullable=True)
    runs: Mapped[list] = mapped_column(JSON)
    n_added: Mapped[int] = mapped_column(Integer)
    created_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Pair(Base):
    """A query–document pair to judge. ``claimed`` counts the live slots (active or done assignments)."""

    __tablename__ = "pairs"
    __table_args__ = (
        UniqueConstraint("project_id", "query_id", "document_id"),
        CheckConstraint(_in("origin", PairOrigin), name="origin"),
        CheckConstraint("claimed >= 0", name="claimed"),
        Index("ix_pairs_queue", "project_id", "excluded", "claimed", "query_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"))
    query_id: Mapped[int] = mapped_column(_fk("queries.id"), index=True)
    document_id: Mapped[int] = mapped_column(_fk("documents.id"), index=True)
    origin: Mapped[str] = mapped_column(String(16))
    pool_id: Mapped[int | None] = mapped_column(_fk("pools.id"), nullable=True, index=True)
    added_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    note: Mapped[str] = mapped_column(Text, default="")
    claimed: Mapped[int] = mapped_column(Integer, default=0)
    excluded: Mapped[bool] = mapped_column(Boolean, default=False)
    excluded_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    excluded_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PairSource(Base):
    """A run that contributed a pair, at which rank, in which pooling operation."""

    __tablename__ = "pair_sources"

    pair_id: Mapped[int] = mapped_column(_fk("pairs.id"), primary_key=True)
    run_id: Mapped[int] = mapped_column(_fk("runs.id"), primary_key=True, index=True)
    rank: Mapped[int] = mapped_column(Integer)
    pool_id: Mapped[int] = mapped_column(_fk("pools.id"), index=True)


# ------------------------------------------------------------------------------------------- judging
class Assignment(Base):
    """A claim of a pair by an annotator; mutable workflow state (labels themselves never change)."""

    __tablename__ = "assignments"
    __table_args__ = (
        UniqueConstraint("pair_id", "annotator_id"),
        UniqueConstraint("pair_id", "slot"),
        CheckConstraint("slot IS NULL OR slot >= 1", name="slot"),
        CheckConstraint(_in("status", ASSIGNMENT_STATUSES), name="status"),
        CheckConstraint(
            f"({_in('status', AssignmentStatus.live())}) = (slot IS NOT NULL)", name="slot_status"
        ),
        Index("ix_assignments_annotator_queue", "annotator_id", "project_id", "status", "stale"),
        # covering index of the agreement scan (one sequential index read of the current labels); also serves
        # the search for expired claims (status 'active': few rows)
        Index(
            "ix_assignments_gate",
            "project_id",
            "status",
            "pair_id",
            "annotator_id",
            "grade",
            "stale",
            "label_id",
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"))
    pair_id: Mapped[int] = mapped_column(_fk("pairs.id"))
    annotator_id: Mapped[int] = mapped_column(_fk("users.id"))
    slot: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=AssignmentStatus.ACTIVE.value)
    version: Mapped[int] = mapped_column(Integer, default=0)
    label_id: Mapped[int | None] = mapped_column(
        _fk("labels.id", use_alter=True, deferrable=True, initially="IMMEDIATE"), nullable=True, index=True
    )
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    stale: Mapped[bool] = mapped_column(Boolean, default=False)
    skip_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    # how the queue drew the pair (`enums.ClaimDraw`); NULL: imported, or claimed before migration 0007
    draw: Mapped[str | None] = mapped_column(String(16), nullable=True)
    assigned_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Label(Base):
    """One saved judgment (append-only): an edit adds ``version`` + 1. ``request_id``: the client's
    idempotency key of the save (unique per annotator), so a retry finds the label its first attempt
    stored."""

    __tablename__ = "labels"
    __table_args__ = (
        UniqueConstraint("assignment_id", "version"),
        CheckConstraint("version >= 1", name="version"),
        Index("ix_labels_annotator_id_created_at", "annotator_id", "created_at"),
        Index("uq_labels_annotator_id_request_id", "annotator_id", "request_id", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assignment_id: Mapped[int] = mapped_column(_fk("assignments.id"))
    pair_id: Mapped[int] = mapped_column(_fk("pairs.id"), index=True)
    annotator_id: Mapped[int] = mapped_column(_fk("users.id"))
    version: Mapped[int] = mapped_column(Integer)
    grade: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text)
    unsure: Mapped[bool] = mapped_column(Boolean, default=False)
    seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    doc_version: Mapped[int] = mapped_column(Integer)
    guidelines_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    request_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Adjudication(Base):
    """A reviewer's final grade for a disagreement. ``label_state`` fingerprints the labels it saw: an edit
    made afterwards invalidates it. ``request_id``: the client's idempotency key (unique per reviewer)."""

    __tablename__ = "adjudications"
    __table_args__ = (
        Index("uq_adjudications_reviewer_id_request_id", "reviewer_id", "request_id", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"), index=True)
    pair_id: Mapped[int] = mapped_column(_fk("pairs.id"), index=True)
    reviewer_id: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    grade: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text)
    label_state: Mapped[str] = mapped_column(Text)
    request_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


# ----------------------------------------------------------------------------------------- machine judges
class MachineJudge(Base):
    """A machine judge of a project: a rater with provenance (backend, model and its version, settings), never
    a user; its prompt template is versioned in ``judge_prompts``."""

    __tablename__ = "judges"
    __table_args__ = (
        UniqueConstraint("project_id", "name"),
        CheckConstraint(_in("backend", JudgeBackend), name="backend"),
        CheckConstraint("samples >= 1", name="samples"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"))
    name: Mapped[str] = mapped_column(String(64))
    backend: Mapped[str] = mapped_column(String(16))
    base_url: Mapped[str] = mapped_column(String(1000), default="")
    model: Mapped[str] = mapped_column(String(255), default="")
    model_version: Mapped[str] = mapped_column(String(255), default="")
    temperature: Mapped[float] = mapped_column(Float, default=0.0)
    samples: Mapped[int] = mapped_column(Integer, default=1)
    params: Mapped[dict] = mapped_column(JSON, default=dict)
    created_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class JudgePrompt(Base):
    """One version of a judge's prompt template (append-only): its text and sha256."""

    __tablename__ = "judge_prompts"
    __table_args__ = (
        UniqueConstraint("judge_id", "version"),
        CheckConstraint("version >= 1", name="version"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    judge_id: Mapped[int] = mapped_column(_fk("judges.id"))
    version: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    created_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class JudgeLabel(Base):
    """One machine label (append-only): a grade, or a failure with its raw text, with its provenance.

    ``cache_key`` (`annotate_app.judges.cache_key`: judge, prompt hash and settings, query, document version)
    is unique per judge, so a rerun finds its answers and adds nothing; failures a rerun retries have none.
    ``reasoning`` (provenance, never read for the grade), ``answer_field`` and ``aspects``: see
    `annotate_app.judges.JudgeResult`. ``probe`` marks the answers of the stuffing probe (a stuffed document,
    never a label of the pair)."""

    __tablename__ = "judge_labels"
    __table_args__ = (
        UniqueConstraint("judge_id", "cache_key"),
        CheckConstraint("(grade IS NULL) <> (failure IS NULL)", name="grade_or_failure"),
        Index("ix_judge_labels_judge_id_pair_id", "judge_id", "pair_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    judge_id: Mapped[int] = mapped_column(_fk("judges.id"))
    pair_id: Mapped[int] = mapped_column(_fk("pairs.id"), index=True)
    prompt_id: Mapped[int | None] = mapped_column(_fk("judge_prompts.id"), nullable=True, index=True)
    cache_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    probe: Mapped[bool] = mapped_column(Boolean, default=False)
    doc_version: Mapped[int] = mapped_column(Integer)
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    confidence: Mapped[float | None] = mapped_column(Float, nullable=True)
    sample_grades: Mapped[list] = mapped_column(JSON, default=list)
    failure: Mapped[str | None] = mapped_column(String(32), nullable=True)
    error: Mapped[str] = mapped_column(Text, default="")
    prompt_hash: Mapped[str] = mapped_column(String(64), default="")
    raw_response: Mapped[str] = mapped_column(Text, default="")
    model: Mapped[str] = mapped_column(String(255), default="")
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    samples: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    reasoning: Mapped[str] = mapped_column(Text, default="", server_default="")
    answer_field: Mapped[str] = mapped_column(String(32), default="content", server_default="content")
    aspects: Mapped[dict] = mapped_column(JSON, default=dict, server_default=text("'{}'"))


class JudgeSettings(Base):
    """A project's rules for machine judges (one row per project; absent: the defaults).

    ``fill_judge_id``: the judge whose labels may fill pairs no human judged, only while it passes calibration
    (kappa against the humans >= the project's threshold on at least ``min_calibration_pairs`` randomly
    sampled human pairs, see ``assignments.draw``);
    ``queue_order`` and ``calibration_share`` (share of every annotator's queue kept uniformly random);
    ``human_budget``: human judgments the project may spend (None: no cap)."""

    __tablename__ = "judge_settings"
    __table_args__ = (
        CheckConstraint(_in("queue_order", QueueOrder), name="queue_order"),
        CheckConstraint("calibration_share BETWEEN 0 AND 1", name="calibration_share"),
        CheckConstraint("min_calibration_pairs >= 1", name="min_calibration_pairs"),
    )

    project_id: Mapped[int] = mapped_column(_fk("projects.id"), primary_key=True)
    fill_judge_id: Mapped[int | None] = mapped_column(_fk("judges.id"), nullable=True, index=True)
    min_calibration_pairs: Mapped[int] = mapped_column(Integer, default=30)
    queue_order: Mapped[str] = mapped_column(String(16), default=QueueOrder.DEFAULT.value)
    calibration_share: Mapped[float] = mapped_column(Float, default=0.1)
    human_budget: Mapped[int | None] = mapped_column(Integer, nullable=True)
    updated_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


# ---------------------------------------------------------------------------------------------- releases
class Release(Base):
    """A frozen qrels snapshot. ``content_key`` is its ``content_hash`` (NULL on releases made before the
    rule), unique per project: one content, one release, whoever clicks at the same time."""

    __tablename__ = "releases"
    __table_args__ = (
        UniqueConstraint("project_id", "version"),
        Index("uq_releases_project_id_content_key", "project_id", "content_key", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(_fk("projects.id"))
    version: Mapped[int] = mapped_column(Integer)
    note: Mapped[str] = mapped_column(Text, default="")
    statistic: Mapped[str] = mapped_column(String(16))
    agreement_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    threshold: Mapped[float] = mapped_column(Float)
    agreement: Mapped[dict] = mapped_column(JSON)
    annotators: Mapped[list] = mapped_column(JSON)
    counts: Mapped[dict] = mapped_column(JSON)
    corpus_hash: Mapped[str] = mapped_column(String(64))
    guidelines_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    justification: Mapped[str | None] = mapped_column(Text, nullable=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    content_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    n_qrels: Mapped[int] = mapped_column(Integer)
    sources: Mapped[dict] = mapped_column(JSON, default=dict, server_default=text("'{}'"))
    created_by: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    created_by_name: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ReleaseQrel(Base):
    __tablename__ = "release_qrels"
    __table_args__ = (
        UniqueConstraint("release_id", "query_external", "doc_external"),
        CheckConstraint(_in("kind", QREL_KINDS), name="kind"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    release_id: Mapped[int] = mapped_column(_fk("releases.id"))
    pair_id: Mapped[int] = mapped_column(_fk("pairs.id"), index=True)
    query_external: Mapped[str] = mapped_column(String(255))
    doc_external: Mapped[str] = mapped_column(String(255))
    grade: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    label_ids: Mapped[str] = mapped_column(Text)
    adjudication_id: Mapped[int | None] = mapped_column(_fk("adjudications.id"), nullable=True, index=True)
    source: Mapped[str] = mapped_column(String(80), default="human", server_default="human")
    judge_label_id: Mapped[int | None] = mapped_column(_fk("judge_labels.id"), nullable=True, index=True)


class AuditEntry(Base):
    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_project_id_at", "project_id", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    actor_id: Mapped[int | None] = mapped_column(_fk("users.id"), nullable=True, index=True)
    actor_name: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    project_id: Mapped[int | None] = mapped_column(_fk("projects.id"), nullable=True)
    target: Mapped[str] = mapped_column(String(1000), default="")
    details: Mapped[dict] = mapped_column(JSON, default=dict)
