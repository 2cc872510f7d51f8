"""An offline baseline judge: BM25 scores (`metrics.retrieval.bm25.BM25Index`) mapped to grades, no network.

Per query, r = score / the query's best score in the corpus; grade g_i for t_i <= r < t_(i+1) (default
t_i = i / n), so the best document gets the top grade. Confidence: r's distance to the nearest threshold,
relative to its interval. A text unlike the indexed one is scored as sent (keyword stuffing raises it).
"""

from __future__ import annotations

import bisect
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from annotate_app.judges._model import (
    Backend,
    FailureKind,
    GradeScale,
    JudgeResult,
    JudgeSetup,
    JudgeTask,
    Pair,
    RenderedPrompt,
    sha256_text,
)

__all__ = ["LexicalJudge", "grade_of"]


def grade_of(r: float, thresholds: Sequence[float], scale: GradeScale) -> tuple[int, float]:
    """The grade and confidence of a relative score ``r`` in [0, 1] (see the module doc).

    >>> scale = GradeScale.default()
    >>> grade_of(0.0, (0.25, 0.5, 0.75), scale), grade_of(0.625, (0.25, 0.5, 0.75), scale)
    ((0, 1.0), (2, 1.0))
    >>> grade_of(0.5, (0.25, 0.5, 0.75), scale), grade_of(1.0, (0.25, 0.5, 0.75), scale)
    ((2, 0.0), (3, 1.0))
    """
    i = bisect.bisect_right(thresholds, r)
    lo = thresholds[i - 1] if i > 0 else None
    hi = thresholds[i] if i < len(thresholds) else None
    if lo is None and hi is not None:
        confidence = (hi - r) / hi
    elif hi is None and lo is not None:
        confidence = (r - lo) / (1 - lo) if lo < 1 else 1.0
    elif lo is not None and hi is not None:
        confidence = min(r - lo, hi - r) / ((hi - lo) / 2)
    else:  # pragma: no cover - a scale has at least two grades, so at least one threshold
        confidence = 1.0
    return scale.values[i], float(min(1.0, max(0.0, confidence)))


class LexicalJudge:
    """BM25 as a judge (see the module doc). ``corpus``: the project's documents ``{doc_id: text}``.

    >>> judge = LexicalJudge({"d1": "replace the battery", "d2": "return an order", "d3": "battery life"})
    >>> task = JudgeTask()
    >>> [judge.judge(Pair(query_id="q", query="replace battery", doc_id=d, document=""), task).grade
    ...  for d in ("d1", "d2", "d3")]
    [3, 0, 1]
    """

    def __init__(
        self,
        corpus: Mapping[str, str],
        *,
        name: str = "lexical:bm25",
        thresholds: Sequence[float] | None = None,
        k1: float = 1.5,
        b: float = 0.75,
        cached_queries: int = 16,
    ):
        if not isinstance(corpus, Mapping):
            raise ValueError(f"corpus must be a mapping {{doc_id: text}}; got {type(corpus).__name__}")
        if thresholds is not None:
            thresholds = _checked_thresholds(thresholds)
        if not isinstance(cached_queries, int) or isinstance(cached_queries, bool) or cached_queries < 1:
            raise ValueError(f"cached_queries must be an int >= 1; got {cached_queries!r}")
        from metrics.retrieval.bm25 import (
            BM25Index,  # numpy, scipy and bm25s load only when a lexical judge is built
        )

        self._index = BM25Index(corpus, k1=k1, b=b)
        self._texts = {str(d): str(t) for d, t in corpus.items()}
        self._position = {d: i for i, d in enumerate(self._index.doc_ids.to_pylist())}
        self._name, self._thresholds, self._cached = name, thresholds, cached_queries
        digest = sha256_text(json.dumps(sorted(corpus.items()), ensure_ascii=False))
        self._corpus_hash = digest
        self._rows: OrderedDict[str, Any] = OrderedDict()  # query -> numpy row of scores
        self._lock = threading.Lock()

    @classmethod
    def from_setup(cls, setup: JudgeSetup) -> LexicalJudge:
        """The judge a stored setup describes: BM25 over the setup's corpus, under its name."""
        return cls(setup.corpus(), name=setup.name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def backend(self) -> Backend:
        return Backend.LEXICAL

    def thresholds(self, scale: GradeScale) -> tuple[float, ...]:
        """The thresholds used with ``scale``: the given ones, or i / n for a scale of n grades."""
        n = len(scale.grades)
        if self._thresholds is None:
            return tuple(i / n for i in range(1, n))
        if len(self._thresholds) != n - 1:
            raise ValueError(
                f"thresholds must hold {n - 1} numbers, one fewer than the scale's {n} grades; "
                f"got {list(self._thresholds)}"
            )
        return tuple(self._thresholds)

    def _rule(self, task: JudgeTask) -> str:
        rule = {
            "backend": str(self.backend),
            "k1": self._index.k1,
            "b": self._index.b,
            "thresholds": self.thresholds(task.scale),
            "scale": task.scale.values,
        }
        return json.dumps(rule, sort_keys=True)

    def fingerprint(self, task: JudgeTask) -> str:
        return sha256_text(f"{self._rule(task)}\n{self._corpus_hash}")

    def render(self, pair: Pair, task: JudgeTask) -> RenderedPrompt:
        rule = self._rule(task)
        text = f"BM25 score of {pair.doc_id!r} for {pair.query!r}, relative to the query's best; {rule}"
        return RenderedPrompt(judge=self._name, prompt_hash=sha256_text(self._rule(task)), text=text)

    def judge(self, pair: Pair, task: JudgeTask) -> JudgeResult:
        position = self._position.get(pair.doc_id)
        if position is None:
            return JudgeResult(
                query_id=pair.query_id,
                doc_id=pair.doc_id,
                judge=self._name,
                backend=self.backend,
                model="bm25",
                grade=None,
                failure=FailureKind.NOT_FOUND,
                error=f"document {pair.doc_id!r} is not in the lexical judge's corpus",
                prompt_hash=sha256_text(self._rule(task)),
                samples=0,
            )
        row = self._scores(pair.query)
        best = float(row.max(initial=0.0))
        if pair.document in ("", self._texts.get(pair.doc_id)):
            score = float(row[position])
        else:  # a text the corpus does not hold (the stuffing probe's): scored itself
            score = self._index.score_text(pair.query, pair.document)
            best = max(best, score)
        r = score / best if best > 0 else 0.0
        grade, confidence = grade_of(r, self.thresholds(task.scale), task.scale)
        return JudgeResult(
            query_id=pair.query_id,
            doc_id=pair.doc_id,
            judge=self._name,
            backend=self.backend,
            model="bm25",
            grade=grade,
            reason=f"BM25 {score:.4g}, {r:.0%} of the query's best ({best:.4g})",
            confidence=confidence,
            prompt_hash=sha256_text(self._rule(task)),
            sample_grades=(grade,),
        )

    def _scores(self, query: str) -> Any:
        with self._lock:
            row = self._rows.get(query)
            if row is not None:
                self._rows.move_to_end(query)
                return row
        row = self._index.scores([query]).toarray()[0].astype("float64")
        with self._lock:
            self._rows[query] = row
            while len(self._rows) > self._cached:
                self._rows.popitem(last=False)
        return row


def _checked_thresholds(values: Sequence[float]) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError(f"thresholds must be numbers; got {values!r}") from None
    if not out or not all(0 < v <= 1 for v in out) or list(out) != sorted(set(out)):
        raise ValueError(f"thresholds must increase strictly within (0, 1]; got {list(values)!r}")
    return out
