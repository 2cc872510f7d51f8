"""Machine judges: raters with provenance, their prompt versions, their append-only labels and a
project's rules for them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Float,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from annotate_app.store.enums import JudgeBackend, QueueOrder
from annotate_app.store.models._base import Base, UTCDateTime, fk, one_of

__all__ = ["MachineJudge", "JudgePrompt", "JudgeLabel", "JudgeSettings"]


class MachineJudge(Base):
    """A machine judge of a project: a rater with provenance (backend, model and its version, settings), never
    a user; its prompt template is versioned in ``judge_prompts``."""

    __tablename__ = "judges"
    __table_args__ = (
        UniqueConstraint("project_id", "name"),
        CheckConstraint(one_of("backend", JudgeBackend), name="backend"),
        CheckConstraint("samples >= 1", name="samples"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"))
    name: Mapped[str] = mapped_column(String(64))
    backend: Mapped[str] = mapped_column(String(16))
    base_url: Mapped[str] = mapped_column(String(1000), default="")
    model: Mapped[str] = mapped_column(String(255), default="")
    model_version: Mapped[str] = mapped_column(String(255), default="")
    temperature: Mapped[float] = mapped_column(Float, default=0.0)
    samples: Mapped[int] = mapped_column(Integer, default=1)
    params: Mapped[dict] = mapped_column(JSON, default=dict)
    created_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class JudgePrompt(Base):
    """One version of a judge's prompt template (append-only): its text and sha256."""

    __tablename__ = "judge_prompts"
    __table_args__ = (
        UniqueConstraint("judge_id", "version"),
        CheckConstraint("version >= 1", name="version"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    judge_id: Mapped[int] = mapped_column(fk("judges.id"))
    version: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    created_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class JudgeLabel(Base):
    """One machine label (append-only): a grade, or a failure with its raw text, with its provenance.

    ``cache_key`` (`annotate_app.judges.cache_key`: judge, prompt hash and settings, query, document version)
    is unique per judge, so a rerun finds its answers and adds nothing; failures a rerun retries have none.
    ``reasoning`` (provenance, never read for the grade), ``answer_field`` and ``aspects``: see
    `annotate_app.judges.JudgeResult`. ``evidence``: the passages the judge's evidence was located at in the
    text of ``doc_version`` (``[[start, end], ...]``, merged, disjoint); ``evidence_quotes``: each quote or
    span it gave, with where and how it was found (`annotate_app.judges.QuoteEvidence`; a quote not located
    keeps its text and no span). ``probe`` marks the answers of the stuffing probe (a stuffed document,
    never a label of the pair)."""

    __tablename__ = "judge_labels"
    __table_args__ = (
        UniqueConstraint("judge_id", "cache_key"),
        CheckConstraint("(grade IS NULL) <> (failure IS NULL)", name="grade_or_failure"),
        Index("ix_judge_labels_judge_id_pair_id", "judge_id", "pair_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    judge_id: Mapped[int] = mapped_column(fk("judges.id"))
    pair_id: Mapped[int] = mapped_column(fk("pairs.id"), index=True)
    prompt_id: Mapped[int | None] = mapped_column(fk("judge_prompts.id"), nullable=True, index=True)
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
    evidence: Mapped[list] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    evidence_quotes: Mapped[list] = mapped_column(JSON, default=list, server_default=text("'[]'"))


class JudgeSettings(Base):
    """A project's rules for machine judges (one row per project; absent: the defaults).

    ``fill_judge_id``: the judge whose labels may fill pairs no human judged, only while it passes calibration
    (kappa against the humans >= the project's threshold on at least ``min_calibration_pairs`` randomly
    sampled human pairs, see ``assignments.draw``);
    ``queue_order`` and ``calibration_share`` (share of every annotator's queue kept uniformly random);
    ``human_budget``: human judgments the project may spend (None: no cap)."""

    __tablename__ = "judge_settings"
    __table_args__ = (
        CheckConstraint(one_of("queue_order", QueueOrder), name="queue_order"),
        CheckConstraint("calibration_share BETWEEN 0 AND 1", name="calibration_share"),
        CheckConstraint("min_calibration_pairs >= 1", name="min_calibration_pairs"),
    )

    project_id: Mapped[int] = mapped_column(fk("projects.id"), primary_key=True)
    fill_judge_id: Mapped[int | None] = mapped_column(fk("judges.id"), nullable=True, index=True)
    min_calibration_pairs: Mapped[int] = mapped_column(Integer, default=30)
    queue_order: Mapped[str] = mapped_column(String(16), default=QueueOrder.DEFAULT.value)
    calibration_share: Mapped[float] = mapped_column(Float, default=0.1)
    human_budget: Mapped[int | None] = mapped_column(Integer, nullable=True)
    updated_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
