"""Context measures for retrieval-augmented generation (RAG) from human qrels; registered in
`metrics.measures`.

- ``ContextPrecision@k`` (``CtxP``): CtxP@k = Σ_{i <= k} P@i · rel_i / (relevant in the top k); 0 when none
  of the relevant documents is in the top k, undefined when the query has none;
- ``ContextRecall@k`` (``CtxR``): relevant in the top k / relevant judged, which is R@k.

Relevant means a grade >= ``rel`` (default 1); unjudged counts as non-relevant. How these relate to RAGAS:
docs/modules.md.

>>> from metrics import evaluate
>>> r = evaluate({"q1": {"D1": 1, "D2": 1, "D3": 0}}, {"q1": ["D1", "D3", "D2"]}, ["CtxP@3", "CtxR@3"])
>>> {k: round(v, 4) for k, v in r.mean.items()}
{'ContextPrecision@3': 0.8333, 'ContextRecall@3': 1.0}
"""

from __future__ import annotations

import numpy as np

from metrics.measures.ranking import Params, Ranked, cumsum_within, recall

__all__ = ["context_precision", "context_recall"]


def context_precision(r: Ranked, m: Params) -> np.ndarray:
    """ContextPrecision@k per query: Σ P@i over relevant ranks i <= k / relevant documents in the top k.

    0 for a query with no relevant document in its top k.

    Args:
        r: the run ranked against the qrels (`metrics.measures.ranking.rank_run`).
        m: the measure's parameters: ``cutoff`` (k) and ``rel`` (the lowest relevant grade).

    Returns:
        One float per query of ``r``, in its query order.
    """
    relevant = (r.grade >= m.rel) & (r.pos < m.cutoff)
    precision_at = cumsum_within(relevant, r.qidx) / (r.pos + 1.0)
    total = np.bincount(r.qidx, weights=np.where(relevant, precision_at, 0.0), minlength=r.nq)
    found = np.bincount(r.qidx, weights=relevant, minlength=r.nq)
    return np.where(found > 0, total / np.maximum(found, 1), 0.0)


def context_recall(r: Ranked, m: Params) -> np.ndarray:
    """ContextRecall@k per query: relevant documents in the top k / relevant documents judged (R@k).

    Args:
        r: the run ranked against the qrels (`metrics.measures.ranking.rank_run`).
        m: the measure's parameters: ``cutoff`` (k) and ``rel`` (the lowest relevant grade).

    Returns:
        One float per query of ``r``, in its query order.
    """
    return recall(r, m)
