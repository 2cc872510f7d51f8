"""A judge's evidence against the humans': the character-overlap F1 of their passages on the pairs both
graded (the calibration's shared pairs).

Each (pair, human label) the judge shares is one item: the human's own passages on the pair's current
document version (a label made on an older version is left out, as in the passage agreement) against the
judge's located passages (`annotate_app.judges.locate_evidence`) on that version. An item where neither
marked anything is left out and counted (``n_without_evidence``); the others pool into one F1 =
2·|A ∩ B| / (|A| + |B|) summed over the items (`metrics.agreement.pairwise_span_f1`), so an item where one
side marked nothing adds that side's characters and no overlap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlalchemy.orm import Session

from annotate_app.store import annotation
from annotate_app.store import judges as judges_store

__all__ = ["SpanCalibration", "span_calibrations"]

Span = tuple[int, int]


@dataclass(frozen=True)
class SpanCalibration:
    """One judge's passages against the humans' (see the module doc): ``span_f1`` (None: no item where
    either marked a passage), ``n_pairs`` the (pair, human label) items compared, ``n_without_evidence``
    those left out because neither marked anything."""

    span_f1: float | None
    n_pairs: int
    n_without_evidence: int


def span_calibrations(
    s: Session, project_id: int, judge_ids: Mapping[str, int]
) -> dict[str, SpanCalibration]:
    """judge name → its `SpanCalibration` against the project's current human labels."""
    from metrics.agreement import pairwise_span_f1

    humans = _human_spans(s, project_id)
    grades = judges_store.current_grades(s, project_id, list(judge_ids.values()))
    machine = judges_store.judge_evidence(s, [int(g["label_id"]) for g in grades])
    out = {}
    for name in judge_ids:
        rows: list[tuple[Any, ...]] = []
        without = 0
        for g in (g for g in grades if g["judge"] == name):
            mine = machine.get(int(g["label_id"]), ())
            for annotator, theirs in humans.get(int(g["pair_id"]), ()):
                if not mine and not theirs:
                    without += 1
                    continue
                item = f"{g['pair_id']}/{annotator}"
                rows += [(item, "human", a, b) for a, b in theirs] or [(item, "human", None, None)]
                rows += [(item, "judge", a, b) for a, b in mine] or [(item, "judge", None, None)]
        n_items = len({r[0] for r in rows})
        if not rows:
            out[name] = SpanCalibration(None, 0, without)
            continue
        table = pd.DataFrame(rows, columns=["item", "rater", "start", "end"])
        f1 = pairwise_span_f1(table.astype({"start": "Int64", "end": "Int64"}))
        out[name] = SpanCalibration(f1.pooled, n_items, without)
    return out


def _human_spans(s: Session, project_id: int) -> dict[int, list[tuple[str, tuple[Span, ...]]]]:
    """pair id → (annotator, own spans) of its current human labels that count, made on the current document
    version."""
    judged = [r for r in annotation.judged_texts(s, project_id) if r[4] == r[5]]
    rows = annotation.evidence_rows(s, [label_id for _, label_id, *_ in judged])
    out: dict[int, list[tuple[str, tuple[Span, ...]]]] = {}
    for pair, label_id, name, _, version, *_ in judged:
        own = tuple(
            (r.start, r.end) for r in rows.get(label_id, []) if r.doc_version == version and not r.carried
        )
        out.setdefault(pair, []).append((name, own))
    return out
