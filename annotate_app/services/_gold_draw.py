"""The queue's gold draw: with probability ``gold_rate`` (a project setting), a claim takes a gold pair.

The decision is made in Python from the project row the claim already holds; only a draw that comes up gold
sends a statement (`store.gold.seek_gold`, one indexed UPDATE), which replaces the ordinary seek when it finds
a gold pair the annotator never had. A gold claim looks exactly like any other: the view carries no mark.
"""

from __future__ import annotations

import random

from sqlalchemy.orm import Session

from annotate_app.store import gold as gold_store
from annotate_app.store.models import Project

__all__ = ["gold_draw"]


def gold_draw(s: Session, project: Project, annotator_id: int, *, always: bool = False) -> int | None:
    """The gold pair this claim takes (its slot already counted), or None: an ordinary claim. ``always``:
    draw gold whatever the rate (a qualifying annotator's claims)."""
    rate = 1.0 if always else project.gold_rate or 0.0
    if rate <= 0 or random.random() >= rate:  # noqa: S311 - sampling, not security
        return None
    return gold_store.seek_gold(s, project.id, annotator_id)
