"""Ensemble judges: the backend CHECK of ``judges`` admits ``ensemble`` (an ensemble's members and rule live
in ``judges.params``).

On SQLite the table is rebuilt (batch mode); foreign keys are deferred to the end of the transaction, when
the rebuilt table holds every row the labels and prompts point to again.

Revision ID: 0012_ensemble_judges
Revises: 0011_gold_pairs
Create Date: 2026-12-03
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_ensemble_judges"
down_revision: str | None = "0011_gold_pairs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD = "backend IN ('openai', 'replay', 'lexical')"
_NEW = "backend IN ('openai', 'replay', 'lexical', 'ensemble')"


def _backend_check(check: str) -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("PRAGMA defer_foreign_keys = ON")
    with op.batch_alter_table("judges", recreate="always" if sqlite else "auto") as batch_op:
        batch_op.drop_constraint(op.f("ck_judges_backend"), type_="check")
        batch_op.create_check_constraint(op.f("ck_judges_backend"), sa.text(check))


def upgrade() -> None:
    _backend_check(_NEW)


def downgrade() -> None:
    """Refused by the CHECK while an ensemble judge exists: remove those judges first."""
    _backend_check(_OLD)
