"""How the queue drew each claim: ``assignments.draw`` (`enums.ClaimDraw`), set at claim time.

``random``: the calibration share's uniformly random draw; else the queue order in force (``default``,
``uncertainty``, ``run_weight``). The fill-in gate counts the human pairs of random draws only, once a
project's queue has been steered by the judges or the runs (services/_judge_state.py).

Existing claims are not known: those of projects whose queue order is ``uncertainty`` or ``run_weight`` now
get that order (they may have been steered, so they do not count as random draws); the others stay NULL (a
project never steered: every shared pair counts). ADD COLUMN, no table rebuild on SQLite.

Revision ID: 0007_claim_draw
Revises: 0006_queue_exhausted
Create Date: 2026-12-01
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007_claim_draw'
down_revision: str | None = '0006_queue_exhausted'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('assignments', sa.Column('draw', sa.String(length=16), nullable=True))
    op.execute(
        "UPDATE assignments SET draw = (SELECT js.queue_order FROM judge_settings js "
        "WHERE js.project_id = assignments.project_id) "
        "WHERE project_id IN (SELECT project_id FROM judge_settings "
        "WHERE queue_order IN ('uncertainty', 'run_weight'))"
    )


def downgrade() -> None:
    op.drop_column('assignments', 'draw')
