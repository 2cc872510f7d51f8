"""Import undo: what each import added carries its id, what it overwrote is kept, an undone import is marked.

- ``document_versions.import_id``, ``queries.import_id``, ``chunks.import_id``: the import that added the row
  (NULL on rows imported before this revision: those imports cannot be undone). A run and prior qrels are
  found by their name (``imports.source``).
- ``imports.replaced``: what the import overwrote (the previous text of the queries it changed).
- ``imports.undone_at``: when the import was undone (the record stays, as history).

Columns are added with ADD COLUMN (no table rebuild on SQLite, so the append-only triggers stay); the
``import_id`` columns are indexed plain integers, not foreign keys (an import record is never deleted).

Revision ID: 0005_import_undo
Revises: 0004_release_once
Create Date: 2026-12-01
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005_import_undo'
down_revision: str | None = '0004_release_once'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TAGGED = ("document_versions", "queries", "chunks")


def upgrade() -> None:
    for table in _TAGGED:
        op.add_column(table, sa.Column('import_id', sa.Integer(), nullable=True))
        op.create_index(f"ix_{table}_import_id", table, ["import_id"])
    op.add_column('imports', sa.Column('replaced', sa.JSON(), nullable=True))
    op.add_column('imports', sa.Column('undone_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column('imports', 'undone_at')
    op.drop_column('imports', 'replaced')
    for table in reversed(_TAGGED):
        op.drop_index(f"ix_{table}_import_id", table_name=table)
        op.drop_column(table, 'import_id')
