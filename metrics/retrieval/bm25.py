"""A BM25 baseline for mixed Chinese and Latin text, built on the `bm25s` package.

`tokenize` turns text into terms (CJK character bigrams, lowercase Latin/digit words); `BM25Index` indexes a
corpus with bm25s (Lucene's BM25 variant) and answers queries in batches: a batch of queries is scored at once
as one sparse matrix product over bm25s's term→document score matrix, and the top ``k`` of every query are
picked at once with numpy, ties broken exactly as trec_eval orders them.

``bm25s`` is an optional dependency (the ``app`` extra); it is imported only when an index is built.
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics.data import Run
from metrics.errors import QrelForgeError
from metrics.retrieval.harness import load_queries

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["tokenize", "BM25Index", "bm25_run"]

# Han ideographs (CJK Unified, Extension A, Compatibility, Extensions B-G), Hiragana + Katakana, Hangul
# syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0003134f"
_DENSE_CELLS = 1 << 24  # a batch scores at most this many (query, document) cells densely (64 MB)
_RUNS = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into BM25 terms, in order of appearance, duplicates kept.

    Rule, applied after Unicode NFKC normalization (full-width ``Ａ１`` → ``A1``) and lowercasing:

    - a run of consecutive CJK characters (Han ideographs U+3400–U+4DBF, U+4E00–U+9FFF, U+F900–U+FAFF,
      U+20000–U+3134F; Hiragana and Katakana U+3040–U+30FF; Hangul syllables U+AC00–U+D7AF) gives its
      overlapping character bigrams; a run of one character gives that character (a unigram);
    - a run of other letters or digits (Unicode letters and digits: Latin, Greek, Cyrillic, ...) gives one
      word, so ``e-mail`` gives ``e`` and ``mail``, and ``mp3`` stays ``mp3``;
    - everything else (spaces, punctuation, symbols, ``_``) separates runs and gives nothing; no stop words,
      no stemming. Bigrams never cross a run boundary.

    Args:
        text: the text.

    Returns:
        The terms.

    Raises:
        QrelForgeError: ``text`` is not a str.

    >>> tokenize("A 型设备更换电池，30天内 E-Mail")
    ['a', '型设', '设备', '备更', '更换', '换电', '电池', '30', '天内', 'e', 'mail']
    >>> tokenize("退货")
    ['退货']
    >>> tokenize("单 字")
    ['单', '字']
    """
    if not isinstance(text, str):
        raise QrelForgeError(f"text must be a str; got {type(text).__name__} {text!r}")
    out: list[str] = []
    for cjk, word in _RUNS.findall(unicodedata.normalize("NFKC", text).lower()):
        if word:
            out.append(word)
        elif len(cjk) == 1:
            out.append(cjk)
        else:
            out.extend(map(str.__add__, cjk[:-1], cjk[1:]))
    return out


def _check_number(value: Any, name: str, *, low: float, high: float | None = None) -> float:
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool | np.bool_)
    if not ok or not low <= value or (high is not None and value > high) or value != value:
        bound = f"a number >= {low}" if high is None else f"a number in [{low}, {high}]"
        raise QrelForgeError(f"{name} must be {bound}; got {value!r}")
    return float(value)


def _check_k(k: Any) -> int:
    if not isinstance(k, int | np.integer) or isinstance(k, bool | np.bool_) or k < 1:
        raise QrelForgeError(f"k must be an int >= 1; got {k!r}")
    return int(k)


class BM25Index:
    """A BM25 index of a corpus (Lucene's BM25 variant, computed by `bm25s`) with deterministic top-k search.

    score(q, d) = Σ over query terms t (repeated terms count again) of idf(t) · tf(t, d) / (tf(t, d) + k1 · (1
    − b + b · |d| / avgdl)), with idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)), terms from `tokenize` over the
    concatenated ``fields`` of each document (title and text by default).

    A document is retrieved only when it shares a term with the query (so its score is > 0); the top ``k``
    are kept in trec_eval order: score descending in single precision, then document ID descending. A query
    with no term in the corpus retrieves nothing (an empty query of the run).

    ``corpus``: a path read by `metrics.read_corpus`, a DataFrame with ``doc_id`` and the ``fields``
    columns, or a mapping ``{doc_id: text}``.

    >>> index = BM25Index({"D1": "更换电池之前先关机", "D2": "退货需要订单号"})
    >>> index.search("怎么换电池", k=5)  # 换电, 电池: 2 · ln 2 · 1 / (1 + 1.5 · (0.25 + 0.75 · 8/7))
    [('D1', 0.5210234)]
    """

    def __init__(
        self, corpus: Any, *, k1: float = 1.5, b: float = 0.75, fields: tuple[str, ...] = ("title", "text")
    ):
        self.k1 = _check_number(k1, "k1", low=0.0)
        self.b = _check_number(b, "b", low=0.0, high=1.0)
        doc_ids, texts = _corpus_texts(corpus, fields)
        self.doc_ids = pa.array(doc_ids, type=pa.string())
        self._vocab: dict[str, int] = {}
        token_ids = [self._term_ids(tokenize(x)) for x in texts]
        self._matrix = self._build(token_ids)
        self._df = np.bincount(
            np.fromiter((t for ids in token_ids for t in set(ids)), dtype=np.int64),
            minlength=len(self._vocab),
        )
        self._avgdl = float(np.mean([len(ids) for ids in token_ids])) if token_ids else 0.0
        order = pc.array_sort_indices(self.doc_ids, order="descending").to_numpy()
        self._tie_rank = np.empty(len(doc_ids), dtype=np.int64)
        self._tie_rank[order] = np.arange(len(doc_ids))

    def _term_ids(self, terms: list[str]) -> list[int]:
        """Vocabulary IDs of ``terms``, adding new terms (the ints are the dict's own: no copy per token)."""
        found = list(map(self._vocab.get, terms))
        if None not in found:
            return cast(list[int], found)  # no None: every term was known
        return [
            self._vocab.setdefault(t, len(self._vocab)) if i is None else i
            for t, i in zip(terms, found, strict=True)
        ]

    def _build(self, token_ids: list[list[int]]):
        try:
            import bm25s
        except ImportError:  # pragma: no cover - bm25s ships with the app extra
            raise QrelForgeError(
                "the BM25 baseline needs the bm25s package: pip install 'qrelforge[app]'"
            ) from None
        import scipy.sparse as sp

        model = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        if not self._vocab:
            return sp.csr_matrix((0, len(token_ids)), dtype=np.float32)
        model.index((token_ids, self._vocab), create_empty_token=False, show_progress=False)
        s = model.scores  # CSC document x term scores; read as CSR term x document
        return sp.csr_matrix((s["data"], s["indices"], s["indptr"]), shape=(len(self._vocab), s["num_docs"]))

    def __len__(self) -> int:
        return len(self.doc_ids)

    @property
    def vocabulary_size(self) -> int:
        return len(self._vocab)

    def __repr__(self) -> str:
        return f"BM25Index({len(self)} documents, {self.vocabulary_size} terms, k1={self.k1}, b={self.b})"

    def scores(self, queries: list[str]):
        """The BM25 score of every document for every query: a sparse (queries x documents) float32 matrix."""
        import scipy.sparse as sp

        if isinstance(queries, str) or not all(isinstance(t, str) for t in queries):
            raise QrelForgeError(f"queries must be a list of str; got {queries!r:.80}")
        rows, cols = [], []
        for i, text in enumerate(queries):
            terms = [self._vocab[t] for t in tokenize(text) if t in self._vocab]
            rows.extend([i] * len(terms))
            cols.extend(terms)
        counts = sp.csr_matrix(
            (np.ones(len(rows), np.float32), (rows, cols)), shape=(len(queries), self._matrix.shape[0])
        )
        return (counts @ self._matrix).tocsr()

    def score_text(self, query: str, text: str) -> float:
        """The BM25 score of ``text`` for ``query`` as if ``text`` were a document of the corpus: the
        formula of the class doc with the corpus's N, document frequencies and avgdl (a term the corpus lacks
        has df = 0, so idf = ln(1 + (N + 0.5) / 0.5)); ``|d|`` is the number of terms of ``text``. The text of
        an indexed document scores what `scores` gives it (up to float32 rounding). 0 for an empty corpus.

        >>> index = BM25Index({"D1": "更换电池之前先关机", "D2": "退货需要订单号"})
        >>> round(index.score_text("怎么换电池", "更换电池之前先关机"), 4)
        0.521
        >>> round(index.score_text("怎么换电池", "电池 电池 电池"), 4) > 0.521
        True
        """
        if not isinstance(query, str) or not isinstance(text, str):
            raise QrelForgeError(
                f"query and text must be str; got {type(query).__name__}, {type(text).__name__}"
            )
        n, terms = len(self), tokenize(text)
        if n == 0 or not terms:
            return 0.0
        counts: dict[str, int] = {}
        for term in terms:
            counts[term] = counts.get(term, 0) + 1
        norm = self.k1 * (1 - self.b + self.b * len(terms) / self._avgdl) if self._avgdl else self.k1
        total = 0.0
        for term in tokenize(query):  # repeated query terms count again, as in `scores`
            tf = counts.get(term, 0)
            if tf:
                i = self._vocab.get(term)
                df = int(self._df[i]) if i is not None else 0
                total += math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf / (tf + norm)
        return total

    def top_k(self, queries: list[str], *, k: int = 100) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query position, document position, float32 score) of every query's top ``k``, in trec order."""
        k = _check_k(k)
        matrix = self.scores(queries)
        dense = matrix.toarray()
        n_docs = dense.shape[1]
        if k < n_docs:  # the k-th largest score of each row (partitioning the negated scores is much faster)
            kth = -np.partition(-dense, k - 1, axis=1)[:, k - 1]
            keep = (dense >= kth[:, None]) & (dense > 0)
        else:
            keep = dense > 0
        q, d = np.nonzero(keep)
        s = dense[q, d]
        order = np.lexsort((self._tie_rank[d], -s, q))
        q, d, s = q[order], d[order], s[order]
        starts = np.searchsorted(q, np.arange(len(queries)))
        within = np.arange(len(q)) - starts[q]
        top = within < k
        return q[top], d[top], s[top]

    def search(self, query: str, *, k: int = 100) -> list[tuple[str, float]]:
        """The top ``k`` ``(doc_id, score)`` pairs for one query (a retriever for `metrics.run_retriever`)."""
        _, d, s = self.top_k([query], k=k)
        return list(zip(self.doc_ids.take(pa.array(d)).to_pylist(), _shortest(s).tolist(), strict=True))

    def run(self, queries: Any, *, k: int = 100, name: str = "bm25", batch_size: int = 64) -> Run:
        """Search every query (a mapping, a `read_queries` DataFrame or a path) and return the run.

        Queries are scored ``batch_size`` at a time (fewer when a batch would hold more than 2**24 query x
        document cells); a query that retrieves nothing is an empty query of the run (answered, scoring 0).
        Scores are the float32 BM25 scores, written in their shortest form.
        """
        k = _check_k(k)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise QrelForgeError(f"batch_size must be an int >= 1; got {batch_size!r}")
        qids, texts = load_queries(queries)
        size = max(1, min(batch_size, _DENSE_CELLS // max(len(self), 1)))
        parts = [self.top_k(texts[lo : lo + size], k=k) for lo in range(0, len(texts), size)]
        q = np.concatenate([p[0] + i * size for i, p in enumerate(parts)]).astype(np.int64)
        d = np.concatenate([p[1] for p in parts]).astype(np.int64)
        answered = np.zeros(len(qids), dtype=bool)
        answered[q] = True
        empty = [qid for qid, hit in zip(qids, answered, strict=True) if not hit]
        qid_col = pa.array(qids, type=pa.string()).take(pa.array(q))
        scores = _shortest(np.concatenate([p[2] for p in parts]))
        return Run(
            qid_col,
            self.doc_ids.take(pa.array(d)),
            scores,
            name=name,
            source="bm25",
            empty_queries=empty,
            _validated=True,
        )


def _shortest(scores: np.ndarray) -> np.ndarray:
    """float32 scores as the float64 of their shortest decimal form (0.6931472, not 0.6931471824645996)."""
    return np.asarray(scores, dtype=np.float32).astype(str).astype(np.float64)


def bm25_run(
    corpus: Any, queries: Any, *, k: int = 100, k1: float = 1.5, b: float = 0.75, name: str = "bm25"
) -> Run:
    """Index ``corpus`` and search ``queries``: the BM25 baseline run in one call (see `BM25Index`).

    Args:
        corpus: a path (JSONL, CSV or TSV), a `read_corpus` DataFrame or a mapping ``{doc_id: text}``.
        queries: a path, a `read_queries` DataFrame or a mapping ``{query_id: text}``.
        k: the documents retrieved per query, >= 1.
        k1: the term-frequency saturation, >= 0.
        b: the length normalization, in [0, 1].
        name: the run's name.

    Returns:
        The `Run`: each query's top ``k`` documents by BM25 score.

    Raises:
        QrelForgeError: an empty or unreadable corpus or queries file, or a bad option, naming it.

    >>> run = bm25_run({"d1": "red apples", "d2": "green pears"}, {"q1": "apples"}, k=5)
    >>> run.doc_id.to_pylist()
    ['d1']
    """
    return BM25Index(corpus, k1=k1, b=b).run(queries, k=k, name=name)


# ------------------------------------------------------------------------------------------------ corpus
def _corpus_texts(corpus: Any, fields: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(doc IDs, the text to index: the ``fields`` joined by newlines) of a path, DataFrame or mapping."""
    from metrics.formats import read_corpus

    if isinstance(corpus, str | os.PathLike) or hasattr(corpus, "read"):
        corpus = read_corpus(corpus)
    if isinstance(corpus, Mapping):
        return _mapping_texts(corpus)
    if hasattr(corpus, "columns"):
        return _frame_texts(corpus, fields)
    raise QrelForgeError(
        f"corpus must be a path, DataFrame or mapping {{doc_id: text}}; got {type(corpus).__name__}"
    )


def _mapping_texts(corpus: Mapping) -> tuple[list[str], list[str]]:
    if not corpus:
        raise QrelForgeError("corpus has no documents")
    for doc, text in corpus.items():
        if not isinstance(doc, str) or not doc.strip() or re.search(r"\s", doc):
            raise QrelForgeError(f"corpus doc_id must be a non-empty str without spaces; got {doc!r}")
        if not isinstance(text, str):
            raise QrelForgeError(f"corpus text of {doc!r} must be a str; got {type(text).__name__}")
    return list(corpus), list(corpus.values())


def _frame_texts(frame: pd.DataFrame, fields: tuple[str, ...]) -> tuple[list[str], list[str]]:
    missing = [c for c in ("doc_id", *fields) if c not in frame.columns]
    if missing:
        raise QrelForgeError(f"corpus DataFrame is missing column(s) {missing}; has {list(frame.columns)}")
    if len(frame) == 0:
        raise QrelForgeError("corpus has no documents")
    mapping: dict[str, str] = {}
    for row, (doc, *values) in enumerate(frame[["doc_id", *fields]].itertuples(index=False, name=None), 1):
        if doc in mapping:
            raise QrelForgeError(f"corpus row {row}: duplicate doc_id {doc!r}")
        bad = next((v for v in values if v is not None and v == v and not isinstance(v, str)), None)
        if bad is not None:
            raise QrelForgeError(f"corpus row {row}: fields {list(fields)} must be strings; got {bad!r}")
        mapping[doc] = "\n".join(v for v in values if isinstance(v, str))
    return _mapping_texts(mapping)
