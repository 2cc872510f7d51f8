"""A stored text of any size, written straight into the database (past every check of the services): what
the pages must still show without freezing a tab (`annotate_app.ui.components.widgets.shown`)."""

from __future__ import annotations

from typing import Any

__all__ = ["HUGE", "store_reason"]

HUGE = 15_000_000
"""The size of the reason that froze the Adjudicate page: 15 MB."""


def store_reason(db: Any, username: str, pair_id: int, reason: str) -> int:
    """Add a label version with ``reason`` to ``username``'s done claim of the pair, in SQL (as a tool writing
    into the database would: labels are append-only, so a new version, made current); returns its id."""
    from sqlalchemy import text

    from annotate_app.store.models import utcnow

    with db.write() as s:
        a = s.execute(
            text(
                "SELECT a.id, a.version, a.grade, l.doc_version FROM assignments a JOIN users u "
                "ON u.id = a.annotator_id JOIN labels l ON l.id = a.label_id "
                "WHERE u.username = :user AND a.pair_id = :pair"
            ),
            {"user": username, "pair": pair_id},
        ).one()
        label_id = s.execute(
            text(
                "INSERT INTO labels (assignment_id, pair_id, annotator_id, version, grade, reason, unsure, "
                "doc_version, created_at) SELECT :a, :pair, annotator_id, :v, :g, :reason, false, :doc, :at "
                "FROM assignments WHERE id = :a RETURNING id"
            ),
            {
                "a": a.id,
                "pair": pair_id,
                "v": a.version + 1,
                "g": a.grade,
                "reason": reason,
                "doc": a.doc_version,
                "at": utcnow().replace(tzinfo=None).isoformat(sep=" "),
            },
        ).scalar_one()
        s.execute(
            text("UPDATE assignments SET version = :v, label_id = :label WHERE id = :a"),
            {"v": a.version + 1, "label": label_id, "a": a.id},
        )
    return int(label_id)
