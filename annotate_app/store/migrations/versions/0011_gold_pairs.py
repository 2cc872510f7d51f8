"""Gold pairs: ``gold_pairs`` (a pair's expected grade and explanation, set by a reviewer) and
``projects.gold_rate`` (the share of each annotator's claims drawn from them; 0: none).

A gold draw is recorded on the claim as ``assignments.draw = 'gold'`` (no CHECK on that column). ADD COLUMN
and CREATE TABLE: no table rebuild on SQLite.

Revision ID: 0011_gold_pairs
Revises: 0010_label_evidence
Create Date: 2026-12-03
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0011_gold_pairs'
down_revision: str | None = '0010_label_evidence'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('projects', sa.Column('gold_rate', sa.Float(), server_default='0', nullable=False))
    op.create_table(
        'gold_pairs',
        sa.Column('pair_id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('grade', sa.Integer(), nullable=False),
        sa.Column('explanation', sa.Text(), nullable=False),
        sa.Column('source', sa.String(length=16), nullable=False),
        sa.Column('created_by', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("source IN ('hand', 'adjudication', 'prior')", name=op.f('ck_gold_pairs_source')),
        sa.ForeignKeyConstraint(['created_by'], ['users.id'], name=op.f('fk_gold_pairs_created_by_users')),
        sa.ForeignKeyConstraint(['pair_id'], ['pairs.id'], name=op.f('fk_gold_pairs_pair_id_pairs')),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_gold_pairs_project_id_projects')),
        sa.PrimaryKeyConstraint('pair_id', name=op.f('pk_gold_pairs')),
    )
    op.create_index('ix_gold_pairs_project_id_pair_id', 'gold_pairs', ['project_id', 'pair_id'])
    op.create_index(op.f('ix_gold_pairs_created_by'), 'gold_pairs', ['created_by'])


def downgrade() -> None:
    op.drop_index(op.f('ix_gold_pairs_created_by'), table_name='gold_pairs')
    op.drop_index('ix_gold_pairs_project_id_pair_id', table_name='gold_pairs')
    op.drop_table('gold_pairs')
    # a plain DROP COLUMN on SQLite too (3.35+): rebuilding ``projects`` would break its rows' foreign keys
    if op.get_bind().dialect.name == 'sqlite':
        op.execute('ALTER TABLE projects DROP COLUMN gold_rate')
    else:
        op.drop_column('projects', 'gold_rate')
