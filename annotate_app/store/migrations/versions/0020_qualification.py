"""Qualification, pause and training feedback on gold pairs.

- ``projects.qualify_pairs`` / ``qualify_accuracy``: a new annotator's labels count once their latest
  ``qualify_pairs`` gold labels reach ``qualify_accuracy`` (NULL: no qualification);
- ``projects.pause_pairs`` / ``pause_accuracy``: an annotator whose last ``pause_pairs`` gold labels fall
  below ``pause_accuracy`` is paused (NULL: never);
- ``projects.gold_feedback``: show the expected grade and explanation after a gold pair is saved;
- ``project_members.qualified_at``, ``paused_at`` and ``gold_since`` (the start of the gold window: the
  last resume).

ADD COLUMN only: no table rebuild on SQLite.

Revision ID: 0020_qualification
Revises: 0019_aggregation_gold_slots
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_qualification"
down_revision: str | None = "0019_aggregation_gold_slots"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PROJECT = ("qualify_pairs", "qualify_accuracy", "pause_pairs", "pause_accuracy", "gold_feedback")
_MEMBER = ("qualified_at", "paused_at", "gold_since")


def upgrade() -> None:
    op.add_column("projects", sa.Column("qualify_pairs", sa.Integer(), nullable=True))
    op.add_column("projects", sa.Column("qualify_accuracy", sa.Float(), server_default="0.8", nullable=False))
    op.add_column("projects", sa.Column("pause_pairs", sa.Integer(), nullable=True))
    op.add_column("projects", sa.Column("pause_accuracy", sa.Float(), server_default="0.5", nullable=False))
    op.add_column(
        "projects", sa.Column("gold_feedback", sa.Boolean(), server_default=sa.false(), nullable=False)
    )
    for name in _MEMBER:
        op.add_column("project_members", sa.Column(name, sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    """A plain DROP COLUMN on SQLite too (3.35+): rebuilding the tables would break their rows' foreign
    keys."""
    sqlite = op.get_bind().dialect.name == "sqlite"
    for table, names in (("project_members", _MEMBER), ("projects", _PROJECT)):
        for name in names:
            if sqlite:
                op.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
            else:
                op.drop_column(table, name)
