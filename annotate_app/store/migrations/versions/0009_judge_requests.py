"""Machine labels keep their reasoning, the field the answer came from and the aspects of the reply.

- ``judge_labels.reasoning``: the reasoning that came with the answer (a reasoning field or a ``<think>``
  block), provenance only, never read for the grade;
- ``judge_labels.answer_field``: ``content``, or the reasoning field the answer was read from when the
  server left ``content`` empty;
- ``judge_labels.aspects``: what the reply said besides the grade (the ``aspects`` prompt's intent and
  trust), a JSON object.

A judge's request parameters and the adaptations to its server live in ``judges.params`` (JSON, present
since 0003). Columns are added with ADD COLUMN (no table rebuild on SQLite).

Revision ID: 0009_judge_requests
Revises: 0008_queue_full
Create Date: 2026-12-03
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0009_judge_requests'
down_revision: str | None = '0008_queue_full'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('judge_labels', sa.Column('reasoning', sa.Text(), server_default='', nullable=False))
    op.add_column(
        'judge_labels', sa.Column('answer_field', sa.String(length=32), server_default='content', nullable=False)
    )
    op.add_column('judge_labels', sa.Column('aspects', sa.JSON(), server_default=sa.text("'{}'"), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('judge_labels') as batch_op:
        batch_op.drop_column('aspects')
        batch_op.drop_column('answer_field')
        batch_op.drop_column('reasoning')
