"""Releases and their qrels (immutable), and the audit log."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, CheckConstraint, Float, Index, Integer, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from annotate_app.store.models._base import QREL_KINDS, Base, UTCDateTime, fk, one_of

__all__ = ["Release", "ReleaseQrel", "AuditEntry"]


class Release(Base):
    """A frozen qrels snapshot. ``content_key`` is its ``content_hash`` (NULL on releases made before the
    rule), unique per project: one content, one release, whoever clicks at the same time."""

    __tablename__ = "releases"
    __table_args__ = (
        UniqueConstraint("project_id", "version"),
        Index("uq_releases_project_id_content_key", "project_id", "content_key", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"))
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
    # how the labels became grades: {"name": an `Aggregation` value, "parameters": {...}, ...}; NULL: majority
    aggregation: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    created_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    created_by_name: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ReleaseQrel(Base):
    __tablename__ = "release_qrels"
    __table_args__ = (
        UniqueConstraint("release_id", "query_external", "doc_external"),
        CheckConstraint(one_of("kind", QREL_KINDS), name="kind"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    release_id: Mapped[int] = mapped_column(fk("releases.id"))
    pair_id: Mapped[int] = mapped_column(fk("pairs.id"), index=True)
    query_external: Mapped[str] = mapped_column(String(255))
    doc_external: Mapped[str] = mapped_column(String(255))
    grade: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    label_ids: Mapped[str] = mapped_column(Text)
    adjudication_id: Mapped[int | None] = mapped_column(fk("adjudications.id"), nullable=True, index=True)
    source: Mapped[str] = mapped_column(String(80), default="human", server_default="human")
    judge_label_id: Mapped[int | None] = mapped_column(fk("judge_labels.id"), nullable=True, index=True)
    # a model aggregation's posterior probability of ``grade`` (NULL: majority vote, adjudicated, judge)
    confidence: Mapped[float | None] = mapped_column(Float, nullable=True)


class PassageAdjudication(Base):
    """A reviewer's final evidence passages of a pair (``spans``: [[start, end], ...] on ``doc_version``) and
    why. Appended, never changed; the latest counts while the labels it saw (``label_state``) are current."""

    __tablename__ = "passage_adjudications"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"), index=True)
    pair_id: Mapped[int] = mapped_column(fk("pairs.id"), index=True)
    reviewer_id: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    doc_version: Mapped[int] = mapped_column(Integer)
    spans: Mapped[list] = mapped_column(JSON)
    reason: Mapped[str] = mapped_column(Text)
    label_state: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ReleasePassage(Base):
    """An evidence passage of a released qrel: ``[start_char, end_char)`` in the text of version
    ``doc_version`` of the document, with the qrel's grade. Written with its release, never changed."""

    __tablename__ = "release_passages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    release_id: Mapped[int] = mapped_column(fk("releases.id"), index=True)
    query_external: Mapped[str] = mapped_column(String(255))
    doc_external: Mapped[str] = mapped_column(String(255))
    doc_version: Mapped[int] = mapped_column(Integer)
    start_char: Mapped[int] = mapped_column(Integer)
    end_char: Mapped[int] = mapped_column(Integer)
    grade: Mapped[int] = mapped_column(Integer)


class AuditEntry(Base):
    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_project_id_at", "project_id", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    actor_id: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    actor_name: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    project_id: Mapped[int | None] = mapped_column(fk("projects.id"), nullable=True)
    target: Mapped[str] = mapped_column(String(1000), default="")
    details: Mapped[dict] = mapped_column(JSON, default=dict)
