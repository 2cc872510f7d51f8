"""The per-annotator "nothing left" marker (store/exhausted.py).

- ``projects.queue_epoch``: bumped whenever a pair may become claimable (clears every marker of the project).
- ``project_members.exhausted_epoch`` / ``exhausted_until``: the epoch and time at which a claim by this member
  found nothing; while the epoch is unchanged (and for at most 60 s) "nothing left" is answered without a scan.

Columns are added with ADD COLUMN (no table rebuild on SQLite).

Revision ID: 0006_queue_exhausted
Revises: 0005_import_undo
Create Date: 2026-12-01
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006_queue_exhausted'
down_revision: str | None = '0005_import_undo'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('projects', sa.Column('queue_epoch', sa.Integer(), nullable=False, server_default='0'))
    op.add_column('project_members', sa.Column('exhausted_epoch', sa.Integer(), nullable=True))
    op.add_column('project_members', sa.Column('exhausted_until', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column('project_members', 'exhausted_until')
    op.drop_column('project_members', 'exhausted_epoch')
    op.drop_column('projects', 'queue_epoch')
