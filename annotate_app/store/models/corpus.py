"""Documents (versioned), chunks, queries and the imports that brought them; runs and prior judgments."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Float, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from annotate_app.store.models._base import Base, UTCDateTime, fk

__all__ = [
    "Document",
    "DocumentVersion",
    "Chunk",
    "Query",
    "ImportRecord",
    "Run",
    "RunEntry",
    "PriorJudgment",
]


class Document(Base):
    """A document of a project; its content lives in ``document_versions`` (``version`` is the current
    one)."""

    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("project_id", "external_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"))
    external_id: Mapped[str] = mapped_column(String(255))
    version: Mapped[int] = mapped_column(Integer, default=1)
    content_sha256: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class DocumentVersion(Base):
    __tablename__ = "document_versions"
    __table_args__ = (UniqueConstraint("document_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(fk("documents.id"))
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
    """The chunk→document map: a chunk-level run is scored and pooled by document. ``start_char``,
    ``end_char``: where the chunk lies in the text of version ``doc_version`` of its document, when the map
    gave offsets (all three NULL otherwise)."""

    __tablename__ = "chunks"
    __table_args__ = (UniqueConstraint("project_id", "chunk_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"))
    chunk_id: Mapped[str] = mapped_column(String(255))
    document_id: Mapped[int] = mapped_column(fk("documents.id"), index=True)
    import_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    start_char: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end_char: Mapped[int | None] = mapped_column(Integer, nullable=True)
    doc_version: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Query(Base):
    __tablename__ = "queries"
    __table_args__ = (UniqueConstraint("project_id", "external_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"))
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
    project_id: Mapped[int] = mapped_column(fk("projects.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    source: Mapped[str] = mapped_column(String(1000))
    file_sha256: Mapped[str] = mapped_column(String(64))
    counts: Mapped[dict] = mapped_column(JSON)
    replaced: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    created_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    undone_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Run(Base):
    __tablename__ = "runs"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"))
    name: Mapped[str] = mapped_column(String(255))
    source: Mapped[str] = mapped_column(String(1000))
    file_sha256: Mapped[str] = mapped_column(String(64))
    n_entries: Mapped[int] = mapped_column(Integer)
    model: Mapped[str] = mapped_column(String(255), default="", server_default="")  # made by; "" unknown
    created_by: Mapped[int | None] = mapped_column(fk("users.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class RunEntry(Base):
    """A document's place in a run. ``chunk_id``: for a chunk-level run, the ``chunks.id`` of the chunk the
    entry kept (the document's best-ranked one); None for a document-level run, or once the chunk map that
    added the chunk is undone (a plain integer, not a foreign key)."""

    __tablename__ = "run_entries"
    __table_args__ = (Index("ix_run_entries_run_id_rank", "run_id", "rank"),)

    run_id: Mapped[int] = mapped_column(fk("runs.id"), primary_key=True)
    query_id: Mapped[int] = mapped_column(fk("queries.id"), primary_key=True, index=True)
    document_id: Mapped[int] = mapped_column(fk("documents.id"), primary_key=True, index=True)
    rank: Mapped[int] = mapped_column(Integer)
    score: Mapped[float] = mapped_column(Float)
    chunk_id: Mapped[int | None] = mapped_column(Integer, nullable=True)


class PriorJudgment(Base):
    """A judgment imported from existing qrels (``source`` names the import); shown, never released as is."""

    __tablename__ = "prior_judgments"
    __table_args__ = (UniqueConstraint("project_id", "source", "query_id", "document_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(fk("projects.id"))
    source: Mapped[str] = mapped_column(String(255))
    query_id: Mapped[int] = mapped_column(fk("queries.id"), index=True)
    document_id: Mapped[int] = mapped_column(fk("documents.id"), index=True)
    grade: Mapped[int] = mapped_column(Integer)
