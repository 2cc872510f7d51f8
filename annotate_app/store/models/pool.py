"""The pool: pooling passes, the query-document pairs to annotate and where each came from."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, CheckConstraint, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from annotate_app.store.enums import PairOrigin
from annotate_app.store.models._base import Base, UTCDateTime, fk, one_of

__all__ = ["Pool", "Pair", "PairSource"]


class Pool(Base):
    """One pooling operation: depth, budget and the runs it drew from."""

    __tablename__ = "pools"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"), index=True)
    depth: Mapped[int] = mapped_column(Integer)
    budget: Mapped[int | None] = mapped_column(Integer, nullable=True)
    runs: Mapped[list] = mapped_column(JSON)
    n_added: Mapped[int] = mapped_column(Integer)
    created_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Pair(Base):
    """A query–document pair to judge. ``claimed`` counts the live slots (active or done assignments)."""

    __tablename__ = "pairs"
    __table_args__ = (
        UniqueConstraint("project_id", "query_id", "document_id"),
        CheckConstraint(one_of("origin", PairOrigin), name="origin"),
        CheckConstraint("claimed >= 0", name="claimed"),
        Index("ix_pairs_queue", "project_id", "excluded", "claimed", "query_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"))
    query_id: Mapped[int] = mapped_column(fk("queries.id"), index=True)
    document_id: Mapped[int] = mapped_column(fk("documents.id"), index=True)
    origin: Mapped[str] = mapped_column(String(16))
    pool_id: Mapped[int | None] = mapped_column(fk("pools.id"), nullable=True, index=True)
    added_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    note: Mapped[str] = mapped_column(Text, default="")
    claimed: Mapped[int] = mapped_column(Integer, default=0)
    excluded: Mapped[bool] = mapped_column(Boolean, default=False)
    excluded_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    excluded_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PairSource(Base):
    """A run that contributed a pair, at which rank, in which pooling operation."""

    __tablename__ = "pair_sources"

    pair_id: Mapped[int] = mapped_column(fk("pairs.id"), primary_key=True)
    run_id: Mapped[int] = mapped_column(fk("runs.id"), primary_key=True, index=True)
    rank: Mapped[int] = mapped_column(Integer)
    pool_id: Mapped[int] = mapped_column(fk("pools.id"), index=True)
