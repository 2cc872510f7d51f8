"""One release per content, idempotent saves, the self-adjudication setting.

- ``releases.content_key`` (the content hash of every release made from now on) with UNIQUE(project_id,
  content_key): two reviewers creating the same release at once get one. Releases made before this revision
  keep NULL there (NULLs never collide), so a database that already holds duplicates (v1, v2, v3 with one
  content hash) still migrates; releases are immutable, so nothing rewrites them.
- ``labels.request_id`` and ``adjudications.request_id``: the client's idempotency key of a save, unique per
  annotator (reviewer); a retry with the same key finds the row its first attempt stored.
- ``projects.allow_self_adjudication``: whether a reviewer may adjudicate a pair they labelled.

Columns are added with ADD COLUMN and the unique rules are unique indexes (CREATE UNIQUE INDEX), so that SQLite
never rebuilds a table: a rebuild would drop the triggers that keep ``labels`` and ``releases`` append-only.

Revision ID: 0004_release_once
Revises: 0003_judges
Create Date: 2026-12-02
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0004_release_once'
down_revision: str | None = '0003_judges'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UNIQUE = (
    ("uq_releases_project_id_content_key", "releases", ["project_id", "content_key"]),
    ("uq_labels_annotator_id_request_id", "labels", ["annotator_id", "request_id"]),
    ("uq_adjudications_reviewer_id_request_id", "adjudications", ["reviewer_id", "request_id"]),
)


def upgrade() -> None:
    op.add_column('releases', sa.Column('content_key', sa.String(length=64), nullable=True))
    op.add_column('labels', sa.Column('request_id', sa.String(length=64), nullable=True))
    op.add_column('adjudications', sa.Column('request_id', sa.String(length=64), nullable=True))
    op.add_column('projects', sa.Column('allow_self_adjudication', sa.Boolean(), nullable=False,
                                        server_default=sa.false()))
    for name, table, columns in _UNIQUE:
        op.create_index(name, table, columns, unique=True)


def downgrade() -> None:
    for name, table, _ in reversed(_UNIQUE):
        op.drop_index(name, table_name=table)
    # DROP COLUMN: SQLite >= 3.35 drops it in place (no table rebuild, the triggers stay)
    op.drop_column('projects', 'allow_self_adjudication')
    op.drop_column('adjudications', 'request_id')
    op.drop_column('labels', 'request_id')
    op.drop_column('releases', 'content_key')
