"""Retrieval without a search engine: a BM25 baseline, run fusion, and a harness that scores any retriever.

- `metrics.retrieval.bm25`: `BM25Index`, `bm25_run` (mixed Chinese and Latin text, on `bm25s`);
- `metrics.retrieval.fusion`: `fuse`, `rrf`, `combsum`, `combmnz`;
- `metrics.retrieval.harness`: `run_retriever` and its `RetrievalResult`.

The names are imported on first use (``bm25s`` is an optional dependency).
"""

from typing import TYPE_CHECKING

from metrics._lazy import lazy_exports

if TYPE_CHECKING:
    from metrics.retrieval.bm25 import BM25Index, bm25_run
    from metrics.retrieval.fusion import combmnz, combsum, fuse, rrf
    from metrics.retrieval.harness import RetrievalResult, run_retriever

_HOMES = {
    **dict.fromkeys(["BM25Index", "bm25_run"], "metrics.retrieval.bm25"),
    **dict.fromkeys(["combmnz", "combsum", "fuse", "rrf"], "metrics.retrieval.fusion"),
    **dict.fromkeys(["RetrievalResult", "run_retriever"], "metrics.retrieval.harness"),
}

__all__ = ["BM25Index", "bm25_run", "combmnz", "combsum", "fuse", "rrf", "RetrievalResult", "run_retriever"]

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
