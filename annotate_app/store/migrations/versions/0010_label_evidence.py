"""Evidence passages on labels, and the project setting that asks for them.

- ``label_evidence``: one row per passage ``[start_char, end_char)`` of a label, on one document version
  (the label's own, or a later one the passage was carried to, or flagged stale on, by a re-import);
- ``projects.evidence``: ``off`` (the default), ``optional`` or ``required``; ``projects.passage_threshold``:
  the unitizing alpha a release needs (NULL: no such gate);
- ``release_passages``: the evidence passages of a release's qrels, with their document versions.

Revision ID: 0010_label_evidence
Revises: 0009_judge_requests
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_label_evidence"
down_revision: str | None = "0009_judge_requests"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "projects", sa.Column("evidence", sa.String(length=16), server_default="off", nullable=False)
    )
    op.add_column("projects", sa.Column("passage_threshold", sa.Float(), nullable=True))
    op.create_table(
        "label_evidence",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_id", sa.Integer(), nullable=False),
        sa.Column("doc_version", sa.Integer(), nullable=False),
        sa.Column("start_char", sa.Integer(), nullable=False),
        sa.Column("end_char", sa.Integer(), nullable=False),
        sa.Column("carried", sa.Boolean(), nullable=False),
        sa.Column("stale", sa.Boolean(), nullable=False),
        sa.CheckConstraint("start_char >= 0 AND end_char > start_char", name=op.f("ck_label_evidence_span")),
        sa.ForeignKeyConstraint(["label_id"], ["labels.id"], name=op.f("fk_label_evidence_label_id_labels")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_label_evidence")),
    )
    op.create_index("ix_label_evidence_label_id_doc_version", "label_evidence", ["label_id", "doc_version"])
    op.create_table(
        "release_passages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("release_id", sa.Integer(), nullable=False),
        sa.Column("query_external", sa.String(length=255), nullable=False),
        sa.Column("doc_external", sa.String(length=255), nullable=False),
        sa.Column("doc_version", sa.Integer(), nullable=False),
        sa.Column("start_char", sa.Integer(), nullable=False),
        sa.Column("end_char", sa.Integer(), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["release_id"], ["releases.id"], name=op.f("fk_release_passages_release_id_releases")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_release_passages")),
    )
    op.create_index("ix_release_passages_release_id", "release_passages", ["release_id"])
    op.create_table(
        "passage_adjudications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("pair_id", sa.Integer(), nullable=False),
        sa.Column("reviewer_id", sa.Integer(), nullable=True),
        sa.Column("doc_version", sa.Integer(), nullable=False),
        sa.Column("spans", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("label_state", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["pair_id"], ["pairs.id"], name=op.f("fk_passage_adjudications_pair_id_pairs")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_passage_adjudications_project_id_projects")
        ),
        sa.ForeignKeyConstraint(
            ["reviewer_id"], ["users.id"], name=op.f("fk_passage_adjudications_reviewer_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_passage_adjudications")),
    )
    for column in ("project_id", "pair_id", "reviewer_id"):
        op.create_index(f"ix_passage_adjudications_{column}", "passage_adjudications", [column])


def downgrade() -> None:
    op.drop_table("passage_adjudications")
    op.drop_index("ix_release_passages_release_id", table_name="release_passages")
    op.drop_table("release_passages")
    op.drop_index("ix_label_evidence_label_id_doc_version", table_name="label_evidence")
    op.drop_table("label_evidence")
    # a plain DROP COLUMN on SQLite too (3.35+): rebuilding ``projects`` would break its rows' foreign keys
    for column in ("passage_threshold", "evidence"):
        if op.get_bind().dialect.name == "sqlite":
            op.execute(f"ALTER TABLE projects DROP COLUMN {column}")
        else:
            op.drop_column("projects", column)
