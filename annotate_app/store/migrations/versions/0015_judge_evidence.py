"""Machine labels keep their evidence: ``judge_labels.evidence``, the located passages (``[[start, end],
...]``, code points of the judged version's text, merged, disjoint), and ``judge_labels.evidence_quotes``,
each quote or span the judge gave, with where and how it was found (``quote``, ``start``, ``end``,
``method``, ``score``; a quote not located has no ``start`` and ``end``).

Revision ID: 0015_judge_evidence
Revises: 0013_run_models
Create Date: 2026-12-03
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_judge_evidence"
down_revision: str | None = "0013_run_models"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("evidence_quotes", "evidence")


def upgrade() -> None:
    for name in reversed(_COLUMNS):
        op.add_column("judge_labels", sa.Column(name, sa.JSON(), server_default=sa.text("'[]'"), nullable=False))


def downgrade() -> None:
    """A plain DROP COLUMN on SQLite too (3.35+): rebuilding ``judge_labels`` would break the foreign keys of
    the release qrels that point to it."""
    for name in _COLUMNS:
        if op.get_bind().dialect.name == "sqlite":
            op.execute(f"ALTER TABLE judge_labels DROP COLUMN {name}")
        else:
            op.drop_column("judge_labels", name)
