"""A run records the model that made it (``runs.model``, "" when unknown), so calibration can flag the runs
of a judge's own model family.

Revision ID: 0013_run_models
Revises: 0012_ensemble_judges
Create Date: 2026-12-03
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_run_models"
down_revision: str | None = "0012_ensemble_judges"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("model", sa.String(length=255), server_default="", nullable=False))


def downgrade() -> None:
    """A plain DROP COLUMN on SQLite too (3.35+): rebuilding ``runs`` would break its entries' foreign keys."""
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE runs DROP COLUMN model")
        return
    op.drop_column("runs", "model")
