"""The schema's base: the declarative `Base` with its naming convention, the UTC datetime type, the value
lists CHECK constraints use, and `table_of`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, MetaData, Table, TypeDecorator
from sqlalchemy.orm import DeclarativeBase

from annotate_app.store.enums import AssignmentStatus, QrelKind

__all__ = [
    "ROLES",
    "ASSIGNMENT_STATUSES",
    "QREL_KINDS",
    "IMMUTABLE_TABLES",
    "JUDGE_IMMUTABLE_TABLES",
    "PASSAGE_IMMUTABLE_TABLES",
    "NAMING",
    "utcnow",
    "UTCDateTime",
    "Base",
    "table_of",
    "fk",
    "one_of",
]


ROLES = ("annotator", "reviewer", "admin")


ASSIGNMENT_STATUSES = tuple(s.value for s in AssignmentStatus)


QREL_KINDS = tuple(k.value for k in QrelKind)


IMMUTABLE_TABLES = ("labels", "releases", "release_qrels", "audit_log")


JUDGE_IMMUTABLE_TABLES = ("judge_prompts", "judge_labels")  # append-only too (migration 0003_judges)


PASSAGE_IMMUTABLE_TABLES = ("release_passages", "passage_adjudications")  # append-only too (migration 0016)
"""Append-only like `IMMUTABLE_TABLES`. ``label_evidence`` is too, but for the rows a re-import derived
(``carried`` or ``stale``), which it may delete and write again: the database refuses every UPDATE of it and
the DELETE of a label's own passages."""


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


def fk(target: str, **kw: Any) -> ForeignKey:
    return ForeignKey(target, **kw)


def one_of(column: str, values: Iterable[str]) -> str:
    """A CHECK that ``column`` holds one of ``values`` (plain strings or a StrEnum's members).

    >>> from annotate_app.store.enums import Weights
    >>> one_of("weights", Weights)
    "weights IN ('linear', 'quadratic')"
    """
    return f"{column} IN ({', '.join(repr(str(v)) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def table_of(model: type[Base]) -> Table:
    """The Core table of a model, for bulk statements (``Model.__table__`` is typed as a mere FromClause)."""
    return Base.metadata.tables[model.__tablename__]
