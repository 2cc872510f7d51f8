"""BM25 baseline throughput: index a synthetic mixed Chinese/Latin corpus and answer queries, against peers.

Systems, measured in the same run on the same corpus and queries (top 100 per query):

- ``qrelforge``: `metrics.retrieval.bm25.BM25Index` (our tokenizer; bm25s index; batched sparse scoring, exact
  ties);
- ``bm25s+ourtok``: bm25s's own ``retrieve`` (one query at a time, numpy backend) on our tokens: the
  same index and scores, so the ratio isolates the query path;
- ``bm25s-default``: bm25s end to end with its default tokenizer (``\\b\\w\\w+\\b``, English stop
  words), which treats a whole run of Chinese characters as one word; its quality on Chinese is not
  comparable, its speed is.

The corpus is generated deterministically (numpy seed 20240817): each document is eight segments of eight
Chinese characters (Zipf-distributed over 3,000 common ideographs) followed by a Latin word (Zipf over
5,000 synthetic words); each query is a 4-6 character span of one document plus a word of another.

Usage: ``python benchmarks/bm25_throughput.py [--docs 100000] [--queries 1000] [--repeat 1]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics.retrieval.bm25 import BM25Index, tokenize  # noqa: E402

SEED = 20240817
K = 100


def _zipf(rng: np.random.Generator, n_values: int, size: int, s: float = 1.1) -> np.ndarray:
    p = 1.0 / np.arange(1, n_values + 1) ** s
    return rng.choice(n_values, size=size, p=p / p.sum())


def make_corpus(n_docs: int, n_queries: int) -> tuple[dict[str, str], dict[str, str]]:
    """Deterministic documents {doc_id: text} and queries {qid: text}."""
    rng = np.random.default_rng(SEED)
    chars = np.array([chr(0x4E00 + i * 7) for i in range(3000)])
    syllables = [
        "ka",
        "ri",
        "to",
        "me",
        "su",
        "lo",
        "na",
        "pe",
        "chi",
        "vo",
        "ba",
        "zu",
        "el",
        "or",
        "in",
        "us",
    ]
    words = np.array(
        ["".join(syllables[j] for j in rng.integers(0, len(syllables), 3)) + str(i % 10) for i in range(5000)]
    )
    han = chars[_zipf(rng, 3000, n_docs * 64)].reshape(n_docs, 8, 8)
    latin = words[_zipf(rng, 5000, n_docs * 8)].reshape(n_docs, 8)
    segments = ["".join(run) for run in han.reshape(-1, 8)]
    docs = {
        f"d{i:06d}": " ".join(f"{segments[i * 8 + j]} {latin[i, j]}" for j in range(8)) for i in range(n_docs)
    }
    picks, starts = rng.integers(0, n_docs, n_queries), rng.integers(0, 60, n_queries)
    spans, other = rng.integers(4, 7, n_queries), rng.integers(0, n_docs, (n_queries, 2))
    queries = {}
    for i in range(n_queries):
        flat = "".join(han[picks[i]].ravel())
        queries[f"q{i:04d}"] = (
            f"{flat[starts[i] : starts[i] + spans[i]]} {latin[other[i, 0], other[i, 1] % 8]}"
        )
    return docs, queries


def _ours(docs: dict[str, str], queries: dict[str, str]) -> tuple[float, float, int]:
    t0 = time.perf_counter()
    index = BM25Index(docs)
    t1 = time.perf_counter()
    run = index.run(queries, k=K)
    return t1 - t0, time.perf_counter() - t1, len(run)


def _bm25s(docs: dict[str, str], queries: dict[str, str], *, our_tokens: bool) -> tuple[float, float, int]:
    import bm25s

    texts, qtexts = list(docs.values()), list(queries.values())
    t0 = time.perf_counter()
    if our_tokens:
        corpus_tokens = [tokenize(t) for t in texts]
    else:
        corpus_tokens = bm25s.tokenize(texts, show_progress=False)
    model = bm25s.BM25(method="lucene")
    model.index(corpus_tokens, show_progress=False)
    t1 = time.perf_counter()
    if our_tokens:
        q_tokens = [[t for t in tokenize(q) if t in model.vocab_dict] or [""] for q in qtexts]
    else:
        q_tokens = bm25s.tokenize(qtexts, show_progress=False)
    found, _ = model.retrieve(q_tokens, k=K, show_progress=False)
    return t1 - t0, time.perf_counter() - t1, int(found.size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1, help="best of N timings per system")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    docs, queries = make_corpus(args.docs, args.queries)
    tokens = sum(len(tokenize(t)) for t in list(docs.values())[:1000]) / min(1000, len(docs))
    print(
        f"corpus: {len(docs):,} documents (~{tokens:.0f} terms each), {len(queries):,} queries, top {K}; "
        f"generated in {time.perf_counter() - t0:.1f} s"
    )
    systems = {
        "qrelforge": lambda: _ours(docs, queries),
        "bm25s+ourtok": lambda: _bm25s(docs, queries, our_tokens=True),
        "bm25s-default": lambda: _bm25s(docs, queries, our_tokens=False),
    }
    import bm25s  # noqa: F401 - imported before timing: no system pays for the imports
    import scipy.sparse  # noqa: F401

    results = {}
    for name, fn in systems.items():
        runs = [fn() for _ in range(args.repeat)]
        results[name] = (min(r[0] for r in runs), min(r[1] for r in runs), runs[0][2])
    index_ours, query_ours, _ = results["qrelforge"]
    print(f"{'system':<15}{'index s':>9}{'queries/s':>11}{'rows':>10}{'index x':>9}{'qps x':>8}")
    for name, (index_s, query_s, rows) in results.items():
        print(
            f"{name:<15}{index_s:>9.2f}{len(queries) / query_s:>11.0f}{rows:>10,}"
            f"{index_s / index_ours:>9.2f}{query_ours / query_s:>8.2f}"
        )
    print(
        "index x: the system's index time / qrelforge's (above 1: qrelforge indexes faster); "
        "qps x: the system's queries/s / qrelforge's"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
