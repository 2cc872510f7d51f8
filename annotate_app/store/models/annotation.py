"""Annotation: claims (assignments), append-only labels and adjudications."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, CheckConstraint, Float, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from annotate_app.store.enums import AssignmentStatus
from annotate_app.store.models._base import ASSIGNMENT_STATUSES, Base, UTCDateTime, fk, one_of

__all__ = ["Assignment", "Label", "Adjudication"]


class Assignment(Base):
    """A claim of a pair by an annotator; mutable workflow state (labels themselves never change)."""

    __tablename__ = "assignments"
    __table_args__ = (
        UniqueConstraint("pair_id", "annotator_id"),
        UniqueConstraint("pair_id", "slot"),
        CheckConstraint("slot IS NULL OR slot >= 1", name="slot"),
        CheckConstraint(one_of("status", ASSIGNMENT_STATUSES), name="status"),
        CheckConstraint(
            f"({one_of('status', AssignmentStatus.live())}) = (slot IS NOT NULL)", name="slot_status"
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
    project_id: Mapped[int] = mapped_column(fk("projects.id"))
    pair_id: Mapped[int] = mapped_column(fk("pairs.id"))
    annotator_id: Mapped[int] = mapped_column(fk("users.id"))
    slot: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=AssignmentStatus.ACTIVE.value)
    version: Mapped[int] = mapped_column(Integer, default=0)
    label_id: Mapped[int | None] = mapped_column(
        fk("labels.id", use_alter=True, deferrable=True, initially="IMMEDIATE"), nullable=True, index=True
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
    assignment_id: Mapped[int] = mapped_column(fk("assignments.id"))
    pair_id: Mapped[int] = mapped_column(fk("pairs.id"), index=True)
    annotator_id: Mapped[int] = mapped_column(fk("users.id"))
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
    project_id: Mapped[int] = mapped_column(fk("projects.id"), index=True)
    pair_id: Mapped[int] = mapped_column(fk("pairs.id"), index=True)
    reviewer_id: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    grade: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text)
    label_state: Mapped[str] = mapped_column(Text)
    request_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
