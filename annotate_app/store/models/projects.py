"""Projects, their guidelines versions and their members."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, CheckConstraint, Float, Integer, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from annotate_app.store.enums import AgreementMode, EvidenceMode, Statistic, Weights
from annotate_app.store.models._base import Base, UTCDateTime, fk, one_of

__all__ = ["Project", "Guidelines", "ProjectMember"]


class Project(Base):
    __tablename__ = "projects"
    __table_args__ = (
        CheckConstraint("annotators_per_pair BETWEEN 1 AND 50", name="annotators_per_pair"),
        CheckConstraint(one_of("statistic", Statistic), name="statistic"),
        CheckConstraint(one_of("agreement_mode", AgreementMode), name="agreement_mode"),
        CheckConstraint(one_of("weights", Weights), name="weights"),
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
    evidence: Mapped[str] = mapped_column(String(16), default=EvidenceMode.OFF.value, server_default="off")
    passage_threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    # bumped whenever a pair may become claimable: clears every "nothing left" marker (store/exhausted.py)
    queue_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # the project's "no free slot" marker: the queue_epoch at which a claim found every pair at N live claims,
    # and until when; it answers "nothing left" for every member (store/exhausted.py)
    full_epoch: Mapped[int | None] = mapped_column(Integer, nullable=True)
    full_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # share of each annotator's claims drawn from the gold pairs (store/gold.py); 0: no gold draws
    gold_rate: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    # qualification and pause on gold labels (services/qualification.py); NULL pairs: the rule is off
    qualify_pairs: Mapped[int | None] = mapped_column(Integer, nullable=True)
    qualify_accuracy: Mapped[float] = mapped_column(Float, default=0.8, server_default="0.8")
    pause_pairs: Mapped[int | None] = mapped_column(Integer, nullable=True)
    pause_accuracy: Mapped[float] = mapped_column(Float, default=0.5, server_default="0.5")
    # show the expected grade and explanation once a gold pair's label is saved
    gold_feedback: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Guidelines(Base):
    __tablename__ = "guidelines"
    __table_args__ = (UniqueConstraint("project_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"))
    version: Mapped[int] = mapped_column(Integer)
    markdown: Mapped[str] = mapped_column(Text)
    created_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ProjectMember(Base):
    """An annotator working on a project; ``quota`` caps how many pairs they take (None: no cap)."""

    __tablename__ = "project_members"

    project_id: Mapped[int] = mapped_column(fk("projects.id"), primary_key=True)
    user_id: Mapped[int] = mapped_column(fk("users.id"), primary_key=True, index=True)
    quota: Mapped[int | None] = mapped_column(Integer, nullable=True)
    added_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # "nothing left" marker: the queue_epoch at which a claim found nothing, and until when (store/exhausted)
    exhausted_epoch: Mapped[int | None] = mapped_column(Integer, nullable=True)
    exhausted_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # gold rules (services/qualification.py): when the member passed qualification and when they were
    # paused (NULL: not), and where their gold window starts (the last resume; NULL: their first label)
    qualified_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    paused_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    gold_since: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
