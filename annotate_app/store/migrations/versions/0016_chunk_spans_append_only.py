"""Where a retrieved chunk lies, and the evidence tables append-only in the database itself.

- ``chunks.start_char`` / ``end_char`` / ``doc_version``: the chunk's ``[start, end)`` in the text of that
  version of its document, when the imported chunk map gave offsets (NULL otherwise);
- ``run_entries.chunk_id``: for a chunk-level run, the ``chunks.id`` of the chunk the document's entry kept
  (its best-ranked one); NULL for a document-level run. A plain integer, not a foreign key (undoing a chunk
  import sets it to NULL where it named one of its chunks, then deletes them);
- triggers refusing UPDATE and DELETE on ``release_passages`` and ``passage_adjudications`` (as 0001 does for
  ``labels``), and on ``label_evidence`` refusing every UPDATE and the DELETE of a label's own passages: only
  the rows a re-import derived (``carried`` or ``stale``) are ever written again.

ADD COLUMN only (no table rebuild on SQLite); the downgrade drops the triggers and the columns in place.

Revision ID: 0016_chunk_spans_append_only
Revises: 0015_judge_evidence
Create Date: 2026-12-03
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_chunk_spans_append_only"
down_revision: str | None = "0015_judge_evidence"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = ("release_passages", "passage_adjudications")
_OWN_ROWS = "NOT OLD.carried AND NOT OLD.stale"  # the label's own passages on label_evidence
_COLUMNS = (("chunks", "start_char"), ("chunks", "end_char"), ("chunks", "doc_version"), ("run_entries", "chunk_id"))


def _sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def _trigger(table: str, event: str, when: str | None = None) -> None:
    """The trigger ``<table>_no_<event>`` refusing ``event`` (on rows matching ``when``), as in 0001."""
    name = f"{table}_no_{event.lower()}"
    if _sqlite():
        condition = f" WHEN {when}" if when else ""
        op.execute(f"CREATE TRIGGER {name} BEFORE {event} ON {table}{condition} BEGIN "
                   f"SELECT RAISE(ABORT, 'qrelforge: {table} rows are immutable (append-only)'); END")
    else:
        condition = f" WHEN ({when})" if when else ""
        op.execute(f"CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW{condition} "
                   "EXECUTE FUNCTION qrelforge_immutable()")


def upgrade() -> None:
    for table, column in _COLUMNS:
        op.add_column(table, sa.Column(column, sa.Integer(), nullable=True))
    for table in APPEND_ONLY:
        _trigger(table, "UPDATE")
        _trigger(table, "DELETE")
    _trigger("label_evidence", "UPDATE")
    _trigger("label_evidence", "DELETE", _OWN_ROWS)


def downgrade() -> None:
    for table in (*APPEND_ONLY, "label_evidence"):
        for event in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_{event}" + ("" if _sqlite() else f" ON {table}"))
    # a plain DROP COLUMN on SQLite too (3.35+): rebuilding these tables would break their foreign keys
    for table, column in reversed(_COLUMNS):
        if _sqlite():
            op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        else:
            op.drop_column(table, column)
