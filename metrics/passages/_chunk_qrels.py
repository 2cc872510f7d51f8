"""`chunk_qrels`: graded qrels for the chunks of any chunking, from character-level passages (private;
re-exported by `metrics.passages`)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from metrics import _ids
from metrics.data import Qrels
from metrics.errors import QrelForgeError, quoted
from metrics.passages import _intervals
from metrics.passages._inputs import Chunks, Passages, load

__all__ = ["chunk_qrels", "check_min_overlap", "qrels_of"]


def check_min_overlap(min_overlap: Any) -> float:
    if (
        isinstance(min_overlap, bool)
        or not isinstance(min_overlap, numbers.Real)
        or not 0 < float(min_overlap) <= 1
    ):
        raise QrelForgeError(f"min_overlap must be a number in (0, 1]; got {quoted(min_overlap)}")
    return float(min_overlap)


def chunk_qrels(passages: Any, chunks: Any, *, min_overlap: float = 0.5) -> Qrels:
    """Qrels of chunks: a chunk's grade for a query from the passages judged on its document.

    A chunk is relevant at grade g when it holds at least ``min_overlap`` (F) of a passage of grade g, or
    when such a passage covers at least F of the chunk; it takes the highest such grade::

        grade(q, c) = max{ g(p) : p passage of q on c's document, |p ∩ c| / |p| >= F or |p ∩ c| / |c| >= F }

    and 0 when there is none. Every chunk of every document that holds a passage of the query is listed
    (graded 0 or more); chunks of other documents are unjudged, as in any pool. The fractions are compared as
    floats (``3 / 10 >= 0.3`` holds).

    Args:
        passages: a PASSAGES file or a DataFrame with ``query_id``, ``doc_id``, ``start``, ``end``,
            ``grade``.
        chunks: a CHUNKS file with offsets or a DataFrame with ``chunk_id``, ``doc_id``, ``start``, ``end``.
        min_overlap: F, in (0, 1].

    Returns:
        `metrics.data.Qrels` whose document IDs are chunk IDs: score a chunk run with it
        (``evaluate(chunk_qrels(p, c), run, ["nDCG@10"])``) or write it with ``write_qrels``.

    Raises:
        FormatError: bad passages or chunks (`metrics.passages` lists the rules).
        QrelForgeError: ``min_overlap`` outside (0, 1].

    >>> import pandas as pd
    >>> p = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "start": [10], "end": [30], "grade": [2]})
    >>> c = pd.DataFrame({"chunk_id": ["a", "b", "c"], "doc_id": ["d1"] * 3,
    ...                   "start": [0, 18, 40], "end": [18, 40, 60]})
    >>> chunk_qrels(p, c).to_dict()  # b holds 12 of the passage's 20 characters; a only 8 (and 8/18 < 0.5)
    {'q1': {'a': 0, 'b': 2, 'c': 0}}
    """
    fraction = check_min_overlap(min_overlap)
    p, c = load(passages, chunks)
    return qrels_of(p, c, fraction)


def qrels_of(p: Passages, c: Chunks, fraction: float) -> Qrels:
    """`chunk_qrels` of passages and chunks already loaded (`metrics.passages._inputs.load`)."""
    query, chunk, grade = _grades(p, c, fraction)
    return Qrels(
        np.asarray(p.queries, dtype=object)[query].tolist() if len(query) else [],
        c.ids.take(_ids.indices(chunk)),
        grade,
        source="chunk_qrels",
        _validated=True,
    )


def _grades(p: Passages, c: Chunks, fraction: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query code, chunk row, grade) for every chunk of every document holding a passage of the query,
    ordered by query (first appearance), then document and start."""
    # the (query, document) pairs judged, and every chunk of their documents
    n_docs = int(max(p.doc.max(initial=-1), c.doc.max(initial=-1))) + 1
    pair_key = np.unique(p.query * n_docs + p.doc)
    pair_query, pair_doc = pair_key // n_docs, pair_key % n_docs
    order = np.lexsort((c.start, c.doc))
    first = np.searchsorted(c.doc[order], np.arange(n_docs), side="left")
    last = np.searchsorted(c.doc[order], np.arange(n_docs), side="right")
    at, owner = _intervals.ragged_arange(first[pair_doc], last[pair_doc])
    rows = order[at]
    query = pair_query[owner]
    grade = np.zeros(len(rows), dtype=np.int64)
    # the grade each passage gives each chunk it shares a character with
    i, j, shared = _intervals.overlapping_pairs((p.doc, p.start, p.end), (c.doc, c.start, c.end))
    enough = (shared / (p.end[i] - p.start[i]) >= fraction) | (shared / (c.end[j] - c.start[j]) >= fraction)
    i, j = i[enough], j[enough]
    if len(i):
        # position of (query of passage i, chunk j) among the listed rows: rows are unique per (query, chunk)
        listed = query * len(c) + rows
        where = np.argsort(listed, kind="stable")
        at_pair = where[np.searchsorted(listed[where], p.query[i] * len(c) + j)]
        np.maximum.at(grade, at_pair, p.grade[i])
    return query, rows, grade
