"""Context measures for retrieval-augmented generation (RAG), computed from human qrels.

Their kernels (built on those of `metrics.measures.ranking`) are registered in `metrics.measures`.

A RAG system hands the top k retrieved passages (its *context*) to a generator. Two questions matter: is the
relevant material near the top of that context, and is all of it there?

- ``ContextPrecision@k`` (alias ``CtxP``): the mean of P@i over the ranks i <= k that hold a relevant
  document,

      CtxP@k = Σ_{i <= k} P@i · rel_i / (number of relevant documents in the top k),

  so a context whose relevant passages come first scores higher than one with the same passages lower down.
  It differs from AP@k only in the denominator: AP divides by every relevant document judged, CtxP by those
  retrieved in the top k (CtxP ignores what was missed; that is context recall's job). Edge cases: relevant
  documents exist but none is in the top k: 0; the query has no relevant document at all: undefined (NaN
  per query, None in results, left out of the mean), like R@k.
- ``ContextRecall@k`` (alias ``CtxR``): relevant in the top k / relevant judged. On human qrels this *is*
  R@k (same numbers, same undefined queries); the name is registered so RAG reports can use the RAGAS
  vocabulary.

Relation to RAGAS: RAGAS's ``context_precision`` uses the same rank-weighted mean, but decides each passage's
relevance by asking an LLM whether it was useful for reaching a reference answer; its ``context_recall`` asks
an LLM, claim by claim, whether each statement of the reference answer can be attributed to the retrieved
context (recall over the answer's claims, not over documents). Ours use the graded human judgments of the
qrels instead: relevant means a grade >= ``rel`` (default 1), unjudged passages count as non-relevant, and
recall is over judged relevant documents. They are deterministic and auditable, and they agree with RAGAS to
the extent that the LLM's usefulness verdicts agree with the assessors' grades; they do not look at the
answer.

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
