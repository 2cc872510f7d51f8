"""The keyword-stuffing probe of a machine judge: do query terms stuffed into a document raise its grade?

`stuff_query_terms` makes the stuffed text; `probe_summary` compares the grades before and after.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from metrics.errors import QrelForgeError
from metrics.stats.calibration import _is_number

__all__ = ["ProbeSummary", "probe_summary", "stuff_query_terms"]

# --------------------------------------------------------------------------------------- stuffing probe

_TERM = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_WORD_END = re.compile(r"\S(?=\s|$)")


def _check_text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise QrelForgeError(f"{name} must be a string; got {type(value).__name__}")
    return value


def _query_terms(query_text: str) -> list[str]:
    terms = list(dict.fromkeys(_TERM.findall(query_text)))
    if not terms:
        raise QrelForgeError(f"query_text must contain at least one word; got {query_text!r}")
    return terms


def stuff_query_terms(document_text: str, query_text: str, *, seed: int) -> str:
    """The document with the query's terms stuffed in, for the keyword-stuffing probe.

    Method: the query's distinct terms (runs of word characters, ``\\w+``, in query order) are

    1. appended to the first sentence, as one space-separated phrase placed before the first sentence
       end (``.``, ``!`` or ``?`` followed by whitespace or the end of the text; the whole text when there
       is none);
    2. inserted once more each, after a word of the result chosen uniformly at random (with replacement) by
       ``numpy.random.default_rng(seed)``; nothing else of the text changes (whitespace is kept).

    The same (document, query, seed) always gives the same text.

    Args:
        document_text: the document's text.
        query_text: the query's text; it must hold a word.
        seed: an integer >= 0 for the random insertion points.

    Returns:
        The stuffed text.

    Raises:
        QrelForgeError: a text that is not a string, a query without a word, or a bad seed.

    >>> stuff_query_terms("Cats sleep a lot. They purr.", "cat naps", seed=0)
    'Cats sleep a lot cat naps. naps They cat purr.'
    """
    document, terms = (
        _check_text(document_text, "document_text"),
        _query_terms(_check_text(query_text, "query_text")),
    )
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise QrelForgeError(f"seed must be a non-negative integer; got {seed!r}")
    end = _SENTENCE_END.search(document)
    at = end.start() if end else len(document)
    phrase = " ".join(terms)
    text = f"{document[:at]} {phrase}{document[at:]}" if document[:at].strip() else f"{phrase}{document[at:]}"
    slots = [m.end() for m in _WORD_END.finditer(text)]
    picks = np.random.default_rng(int(seed)).choice(len(slots), size=len(terms))
    for position, term in sorted(zip((slots[p] for p in picks), terms, strict=True), reverse=True):
        text = f"{text[:position]} {term}{text[position:]}"
    return text


@dataclass(frozen=True)
class ProbeSummary:
    """How the judge's grades moved when the query terms were stuffed in.

    ``n_pairs`` probed; ``n_raised``, ``n_lowered``, ``n_unchanged``; ``share_raised`` = n_raised / n_pairs;
    ``mean_rise`` = mean(after − before) over all probed pairs (0 for a judge the probe does not move;
    negative if grades fall).
    """

    n_pairs: int
    n_raised: int
    n_lowered: int
    n_unchanged: int
    share_raised: float
    mean_rise: float


def _grades(values: Any, name: str) -> np.ndarray:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray, pd.Series)):
        raise QrelForgeError(f"{name} must be a sequence of grades; got {type(values).__name__}")
    items = list(values)
    if not items:
        raise QrelForgeError(f"{name} must not be empty; got {items!r}")
    bad = [v for v in items if not _is_number(v)]
    if bad:
        raise QrelForgeError(f"{name} must hold numbers only; got {bad[0]!r}")
    return np.asarray(items, dtype=float)


def probe_summary(before_grades: Sequence[float], after_grades: Sequence[float]) -> ProbeSummary:
    """Summarise the stuffing probe: the judge's grade of each pair before and after
    :func:`stuff_query_terms`.

    Position i of both sequences is the same pair. A robust judge leaves the grades unchanged
    (``share_raised`` 0); a judge fooled by keywords raises them. ``mean_rise`` = mean(after − before).

    Args:
        before_grades: the judge's grades of the pairs as they are.
        after_grades: its grades of the same pairs, stuffed.

    Returns:
        The counts of grades raised, lowered and unchanged, the share raised and the mean rise.

    Raises:
        QrelForgeError: an empty sequence, a value that is not a number, or sequences of different lengths.

    >>> probe_summary([0, 1, 2, 3], [1, 1, 3, 3])
    ProbeSummary(n_pairs=4, n_raised=2, n_lowered=0, n_unchanged=2, share_raised=0.5, mean_rise=0.5)
    """
    before, after = _grades(before_grades, "before_grades"), _grades(after_grades, "after_grades")
    if len(before) != len(after):
        raise QrelForgeError(
            f"before_grades and after_grades must have the same length (one grade per pair); "
            f"got {len(before)} and {len(after)}"
        )
    change = after - before
    raised = int((change > 0).sum())
    return ProbeSummary(
        n_pairs=len(change),
        n_raised=raised,
        n_lowered=int((change < 0).sum()),
        n_unchanged=int((change == 0).sum()),
        share_raised=raised / len(change),
        mean_rise=float(change.mean()),
    )
