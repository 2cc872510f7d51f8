"""The project's "no free slot" marker (store/exhausted.py).

- ``projects.full_epoch`` / ``full_until``: the queue epoch and time at which a claim found every pair of the
  project at N live claims; while the epoch is unchanged (and for at most 60 s) "nothing left" is answered to
  every member without a scan, not only to the member who asked.

Columns are added with ADD COLUMN (no table rebuild on SQLite).

Revision ID: 0008_queue_full
Revises: 0007_claim_draw
Create Date: 2026-12-02
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0008_queue_full'
down_revision: str | None = '0007_claim_draw'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('projects', sa.Column('full_epoch', sa.Integer(), nullable=True))
    op.add_column('projects', sa.Column('full_until', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column('projects', 'full_until')
    op.drop_column('projects', 'full_epoch')
