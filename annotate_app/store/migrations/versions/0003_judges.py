"""Machine judges: judges, their prompt versions and labels (append-only), judge settings; releases record
the source of every qrel (``release_qrels.source``, ``judge_label_id``, kind ``judge``) and count them
(``releases.sources``).

Revision ID: 0003_judges
Revises: 0002_sessions
Create Date: 2026-12-14
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_judges"
down_revision: str | None = "0002_sessions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JUDGE_IMMUTABLE_TABLES = ("judge_prompts", "judge_labels")
_OLD_KINDS = "kind IN ('unanimous', 'majority', 'adjudicated')"
_NEW_KINDS = "kind IN ('unanimous', 'majority', 'adjudicated', 'judge')"


def _sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def _immutable(table: str) -> None:
    """The append-only triggers of ``table`` (as in 0001; on PostgreSQL its function qrelforge_immutable)."""
    for event in ("UPDATE", "DELETE"):
        name = f"{table}_no_{event.lower()}"
        if _sqlite():
            op.execute(f"CREATE TRIGGER {name} BEFORE {event} ON {table} BEGIN "
                       f"SELECT RAISE(ABORT, 'qrelforge: {table} rows are immutable (append-only)'); END")
        else:
            op.execute(f"CREATE TRIGGER {name} BEFORE {event} ON {table} "
                       "FOR EACH ROW EXECUTE FUNCTION qrelforge_immutable()")


def _drop_immutable(table: str) -> None:
    for event in ("update", "delete"):
        op.execute(f"DROP TRIGGER IF EXISTS {table}_no_{event}" + ("" if _sqlite() else f" ON {table}"))


def upgrade() -> None:
    op.create_table(
        "judges",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("backend", sa.String(length=16), nullable=False),
        sa.Column("base_url", sa.String(length=1000), nullable=False),
        sa.Column("model", sa.String(length=255), nullable=False),
        sa.Column("model_version", sa.String(length=255), nullable=False),
        sa.Column("temperature", sa.Float(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("backend IN ('openai', 'replay', 'lexical')", name=op.f("ck_judges_backend")),
        sa.CheckConstraint("samples >= 1", name=op.f("ck_judges_samples")),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], name=op.f("fk_judges_created_by_users")),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_judges_project_id_projects")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judges")),
        sa.UniqueConstraint("project_id", "name", name=op.f("uq_judges_project_id_name")),
    )
    op.create_index(op.f("ix_judges_created_by"), "judges", ["created_by"], unique=False)

    op.create_table(
        "judge_prompts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("judge_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("version >= 1", name=op.f("ck_judge_prompts_version")),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], name=op.f("fk_judge_prompts_created_by_users")),
        sa.ForeignKeyConstraint(["judge_id"], ["judges.id"], name=op.f("fk_judge_prompts_judge_id_judges")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judge_prompts")),
        sa.UniqueConstraint("judge_id", "version", name=op.f("uq_judge_prompts_judge_id_version")),
    )
    op.create_index(op.f("ix_judge_prompts_created_by"), "judge_prompts", ["created_by"], unique=False)

    op.create_table(
        "judge_labels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("judge_id", sa.Integer(), nullable=False),
        sa.Column("pair_id", sa.Integer(), nullable=False),
        sa.Column("prompt_id", sa.Integer(), nullable=True),
        sa.Column("cache_key", sa.String(length=64), nullable=True),
        sa.Column("probe", sa.Boolean(), nullable=False),
        sa.Column("doc_version", sa.Integer(), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("sample_grades", sa.JSON(), nullable=False),
        sa.Column("failure", sa.String(length=32), nullable=True),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("prompt_hash", sa.String(length=64), nullable=False),
        sa.Column("raw_response", sa.Text(), nullable=False),
        sa.Column("model", sa.String(length=255), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("(grade IS NULL) <> (failure IS NULL)", name=op.f("ck_judge_labels_grade_or_failure")),
        sa.ForeignKeyConstraint(["judge_id"], ["judges.id"], name=op.f("fk_judge_labels_judge_id_judges")),
        sa.ForeignKeyConstraint(["pair_id"], ["pairs.id"], name=op.f("fk_judge_labels_pair_id_pairs")),
        sa.ForeignKeyConstraint(["prompt_id"], ["judge_prompts.id"],
                                name=op.f("fk_judge_labels_prompt_id_judge_prompts")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judge_labels")),
        sa.UniqueConstraint("judge_id", "cache_key", name=op.f("uq_judge_labels_judge_id_cache_key")),
    )
    op.create_index("ix_judge_labels_judge_id_pair_id", "judge_labels", ["judge_id", "pair_id"], unique=False)
    op.create_index(op.f("ix_judge_labels_pair_id"), "judge_labels", ["pair_id"], unique=False)
    op.create_index(op.f("ix_judge_labels_prompt_id"), "judge_labels", ["prompt_id"], unique=False)

    op.create_table(
        "judge_settings",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("fill_judge_id", sa.Integer(), nullable=True),
        sa.Column("min_calibration_pairs", sa.Integer(), nullable=False),
        sa.Column("queue_order", sa.String(length=16), nullable=False),
        sa.Column("calibration_share", sa.Float(), nullable=False),
        sa.Column("human_budget", sa.Integer(), nullable=True),
        sa.Column("updated_by", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("queue_order IN ('default', 'uncertainty', 'run_weight')",
                           name=op.f("ck_judge_settings_queue_order")),
        sa.CheckConstraint("calibration_share BETWEEN 0 AND 1", name=op.f("ck_judge_settings_calibration_share")),
        sa.CheckConstraint("min_calibration_pairs >= 1", name=op.f("ck_judge_settings_min_calibration_pairs")),
        sa.ForeignKeyConstraint(["fill_judge_id"], ["judges.id"],
                                name=op.f("fk_judge_settings_fill_judge_id_judges")),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"],
                                name=op.f("fk_judge_settings_project_id_projects")),
        sa.ForeignKeyConstraint(["updated_by"], ["users.id"], name=op.f("fk_judge_settings_updated_by_users")),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_judge_settings")),
    )
    op.create_index(op.f("ix_judge_settings_fill_judge_id"), "judge_settings", ["fill_judge_id"], unique=False)
    op.create_index(op.f("ix_judge_settings_updated_by"), "judge_settings", ["updated_by"], unique=False)

    for table in JUDGE_IMMUTABLE_TABLES:
        _immutable(table)

    if _sqlite():  # the batch rebuilds the table on SQLite, dropping its triggers
        _drop_immutable("releases")
    with op.batch_alter_table("releases") as batch_op:
        batch_op.add_column(sa.Column("sources", sa.JSON(), server_default=sa.text("'{}'"), nullable=False))
    if _sqlite():
        _immutable("releases")
    _release_qrels(_NEW_KINDS, add=True)


def _release_qrels(kinds: str, *, add: bool) -> None:
    """Add (or drop) the source columns of ``release_qrels`` and set its kinds CHECK. On SQLite the table is
    rebuilt (batch mode), which drops its append-only triggers: they are made again."""
    if _sqlite():
        _drop_immutable("release_qrels")
    with op.batch_alter_table("release_qrels", recreate="always" if _sqlite() else "auto") as batch_op:
        batch_op.drop_constraint(op.f("ck_release_qrels_kind"), type_="check")
        if add:
            batch_op.add_column(
                sa.Column("source", sa.String(length=80), server_default="human", nullable=False)
            )
            batch_op.add_column(sa.Column("judge_label_id", sa.Integer(), nullable=True))
            batch_op.create_foreign_key(
                op.f("fk_release_qrels_judge_label_id_judge_labels"), "judge_labels", ["judge_label_id"], ["id"]
            )
            batch_op.create_index("ix_release_qrels_judge_label_id", ["judge_label_id"], unique=False)
        else:
            batch_op.drop_index("ix_release_qrels_judge_label_id")
            batch_op.drop_constraint(op.f("fk_release_qrels_judge_label_id_judge_labels"), type_="foreignkey")
            batch_op.drop_column("judge_label_id")
            batch_op.drop_column("source")
        batch_op.create_check_constraint(op.f("ck_release_qrels_kind"), sa.text(kinds))
    if _sqlite():
        _immutable("release_qrels")


def downgrade() -> None:
    _release_qrels(_OLD_KINDS, add=False)
    if _sqlite():
        _drop_immutable("releases")
    with op.batch_alter_table("releases") as batch_op:
        batch_op.drop_column("sources")
    if _sqlite():
        _immutable("releases")
    for table in JUDGE_IMMUTABLE_TABLES:
        _drop_immutable(table)
    op.drop_index(op.f("ix_judge_settings_updated_by"), table_name="judge_settings")
    op.drop_index(op.f("ix_judge_settings_fill_judge_id"), table_name="judge_settings")
    op.drop_table("judge_settings")
    op.drop_index(op.f("ix_judge_labels_prompt_id"), table_name="judge_labels")
    op.drop_index(op.f("ix_judge_labels_pair_id"), table_name="judge_labels")
    op.drop_index("ix_judge_labels_judge_id_pair_id", table_name="judge_labels")
    op.drop_table("judge_labels")
    op.drop_index(op.f("ix_judge_prompts_created_by"), table_name="judge_prompts")
    op.drop_table("judge_prompts")
    op.drop_index(op.f("ix_judges_created_by"), table_name="judges")
    op.drop_table("judges")
