"""A simulated project where majority vote and Dawid–Skene release different grades in a known way.

40 pairs (queries q0–q3 × documents D0–D9), N = 3, labels imported as JSONL. ann and ben are always right;
xia is one grade high on every third pair; cal (careless) guesses in a fixed cycle that never sides with
xia's slips, except on the four `TARGETS` (true grade 2), where ann says 2 and xia and cal say 3: majority
vote releases 3 there, Dawid–Skene (which learns that cal guesses and xia slips) releases 2. `build` also
adjudicates every disagreement to the truth but one (`build`'s answer), which the reviewer grades with a
grade none of its labels gave.
"""

from __future__ import annotations

import json

from store_fixtures import synthetic_project

from annotate_app.services import adjudication, gate, imports
from annotate_app.services.auth import SYSTEM

__all__ = ["TARGETS", "truth", "build"]

QUERIES, DOCS = 4, 10  # 40 pairs, N = 3
TARGETS = [("q3", f"D{i}") for i in range(6, 10)]  # truth 2; ann says 2, xia and cal say 3
TRIPLES = [("ann", "ben", "cal"), ("ann", "xia", "cal"), ("ben", "xia", "cal"), ("ann", "ben", "xia")]


def truth(query: str, doc: str) -> int:
    """The true grade of a pair."""
    return 2 if (query, doc) in TARGETS else (int(query[1:]) + int(doc[1:])) % 4


def _grade(who: str, query: str, doc: str, k: int) -> int:
    """The grade ``who`` gives the ``k``-th pair (see the module doc)."""
    if (query, doc) in TARGETS:
        return 2 if who == "ann" else 3
    right = truth(query, doc)
    if who == "xia" and k % 3 == 0:
        return min(right + 1, 3)
    guess = (7 * k + 1) % 4
    if who == "cal":  # but never sides with xia's slips: only on the targets does that tip the vote
        return (guess + 2) % 4 if k % 3 == 0 and guess == min(right + 1, 3) != right else guess
    return right


def _labels() -> bytes:
    lines = []
    pairs = [(f"q{j}", f"D{i}") for j in range(QUERIES) for i in range(DOCS)]
    for k, (query, doc) in enumerate(pairs):
        triple = ("ann", "xia", "cal") if (query, doc) in TARGETS else TRIPLES[k % len(TRIPLES)]
        for who in triple:
            record = {"query_id": query, "doc_id": doc, "annotator": who, "grade": _grade(who, query, doc, k)}
            lines.append(json.dumps({**record, "reason": "simulated label"}) + "\n")
    return "".join(lines).encode()


def build(db) -> tuple[tuple[str, str], int]:
    """Make the project ``agg`` in ``db``; every disagreement is adjudicated to the truth except the first,
    which the reviewer grades with a grade none of its labels gave: that pair and grade are returned."""
    synthetic_project(db, "agg", queries=QUERIES, docs=DOCS, n=3)
    imports.import_labels(db, SYSTEM, "agg", _labels(), fmt="jsonl", filename="labels.jsonl")
    odd = None
    for item in gate.disagreements(db, SYSTEM, "agg", limit=100):
        grade = truth(item.query_id, item.doc_id)
        if odd is None:  # the reviewer's grade, which no model of the labels would give
            grade = min(set(range(4)) - {label.grade for label in item.labels})
            odd = (item.query_id, item.doc_id), grade
        adjudication.adjudicate(db, SYSTEM, "agg", item.pair_id, grade=grade, reason="checked the text")
    assert odd is not None
    return odd
