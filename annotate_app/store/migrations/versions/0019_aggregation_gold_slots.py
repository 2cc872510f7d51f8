"""How a release aggregated its labels, and gold draws out of the pairs' slot counts.

``releases.aggregation``: the aggregation's name and parameters (JSON; NULL on releases made before it:
majority vote). ``release_qrels.confidence``: a model aggregation's posterior probability of the released
grade (NULL under majority vote, for adjudicated and judge-filled qrels).

``pairs.claimed`` counts the ordinary live claims only: a gold draw's claim is no longer counted (N governs
the ordinary claims; a gold pair is shown to every annotator beyond N). The upgrade recounts the pairs that
have gold claims; the downgrade counts their live gold claims back in.

ADD COLUMN and UPDATE only: no table rebuild on SQLite.

Revision ID: 0019_aggregation_gold_slots
Revises: 0016_chunk_spans_append_only
Create Date: 2026-12-03
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_aggregation_gold_slots"
down_revision: str | None = "0016_chunk_spans_append_only"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LIVE = "a.status IN ('active', 'done')"
_GOLD_PAIRS = "id IN (SELECT pair_id FROM assignments WHERE draw = 'gold')"


def _recount(counted: str) -> None:
    op.execute(
        f"UPDATE pairs SET claimed = (SELECT COUNT(*) FROM assignments a WHERE a.pair_id = pairs.id AND {_LIVE}"
        f"{counted}) WHERE {_GOLD_PAIRS}"
    )


def upgrade() -> None:
    op.add_column("releases", sa.Column("aggregation", sa.JSON(), nullable=True))
    op.add_column("release_qrels", sa.Column("confidence", sa.Float(), nullable=True))
    _recount(" AND (a.draw IS NULL OR a.draw <> 'gold')")


def downgrade() -> None:
    """A plain DROP COLUMN on SQLite too (3.35+): rebuilding the tables would break their foreign keys."""
    _recount("")
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE release_qrels DROP COLUMN confidence")
        op.execute("ALTER TABLE releases DROP COLUMN aggregation")
        return
    op.drop_column("release_qrels", "confidence")
    op.drop_column("releases", "aggregation")
