"""How a release aggregated its labels: ``releases.aggregation`` (the aggregation's name and parameters, JSON;
NULL on releases made before it: majority vote) and ``release_qrels.confidence`` (a model aggregation's
posterior probability of the released grade; NULL under majority vote, for adjudicated and judge-filled qrels).

ADD COLUMN only: no table rebuild on SQLite.

Revision ID: 0019_release_aggregation
Revises: 0013_run_models
Create Date: 2026-12-03
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_release_aggregation"
down_revision: str | None = "0013_run_models"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("releases", sa.Column("aggregation", sa.JSON(), nullable=True))
    op.add_column("release_qrels", sa.Column("confidence", sa.Float(), nullable=True))


def downgrade() -> None:
    """A plain DROP COLUMN on SQLite too (3.35+): rebuilding the tables would break their foreign keys."""
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE release_qrels DROP COLUMN confidence")
        op.execute("ALTER TABLE releases DROP COLUMN aggregation")
        return
    op.drop_column("release_qrels", "confidence")
    op.drop_column("releases", "aggregation")
