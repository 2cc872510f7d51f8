"""The lexical judge: BM25 scores relative to the query's best, mapped to grades, on a tiny corpus."""

from __future__ import annotations

from typing import Any

import pytest

from annotate_app.judges import (
    Backend,
    FailureKind,
    GradeScale,
    JudgeClient,
    JudgeTask,
    LexicalJudge,
    Pair,
    grade_of,
)
from metrics.retrieval.bm25 import BM25Index

CORPUS = {
    "d1": "how to replace the battery",
    "d2": "return policy for orders",
    "d3": "battery life tips",
    "d4": "replace a broken screen",
    "d5": "battery battery replace",
}
QUERY = "replace battery"
TASK = JudgeTask()


def judged(judge: LexicalJudge, task: JudgeTask = TASK, query: str = QUERY) -> dict[str, tuple[Any, Any]]:
    pairs = [Pair(query_id="q1", query=query, doc_id=d, document=CORPUS[d]) for d in CORPUS]
    return {r.doc_id: (r.grade, r.confidence) for r in (judge.judge(p, task) for p in pairs)}


def test_grades_follow_the_share_of_the_querys_best_score():
    scores = dict(BM25Index(CORPUS).search(QUERY, k=10))
    best = max(scores.values())
    share = {d: scores.get(d, 0.0) / best for d in CORPUS}
    assert share["d1"] == pytest.approx(0.664, abs=1e-3) and share["d4"] == pytest.approx(0.370, abs=1e-3)
    got = judged(LexicalJudge(CORPUS))
    assert {d: g for d, (g, _) in got.items()} == {"d1": 2, "d2": 0, "d3": 1, "d4": 1, "d5": 3}
    expected_confidence = {
        "d1": min(share["d1"] - 0.5, 0.75 - share["d1"]) / 0.125,
        "d2": 1.0,  # no shared term: as far below 0.25 as can be
        "d3": min(share["d3"] - 0.25, 0.5 - share["d3"]) / 0.125,
        "d4": min(share["d4"] - 0.25, 0.5 - share["d4"]) / 0.125,
        "d5": 1.0,  # the best document
    }
    assert {d: c for d, (_, c) in got.items()} == pytest.approx(expected_confidence, abs=1e-6)


def test_custom_thresholds_and_a_binary_scale():
    got = judged(LexicalJudge(CORPUS, thresholds=(0.1, 0.3, 0.9)))
    assert {d: g for d, (g, _) in got.items()} == {"d1": 2, "d2": 0, "d3": 2, "d4": 2, "d5": 3}
    binary = JudgeTask(scale=GradeScale.from_labels([(0, "no"), (1, "yes")]))
    got = judged(LexicalJudge(CORPUS), binary)
    assert {d: g for d, (g, _) in got.items()} == {"d1": 1, "d2": 0, "d3": 0, "d4": 0, "d5": 1}


def test_a_query_sharing_no_term_grades_everything_lowest():
    assert set(judged(LexicalJudge(CORPUS), query="完全无关").values()) == {(0, 1.0)}


def test_an_unknown_document_is_not_found_and_the_result_carries_provenance():
    judge = LexicalJudge(CORPUS)
    result = judge.judge(Pair(query_id="q", query=QUERY, doc_id="d9", document="x"), TASK)
    assert (result.failure, result.error) == (
        FailureKind.NOT_FOUND,
        "document 'd9' is not in the lexical judge's corpus",
    )
    ok = judge.judge(Pair(query_id="q", query=QUERY, doc_id="d5", document=""), TASK)
    assert (ok.backend, ok.model, ok.requests, ok.sample_grades) == (Backend.LEXICAL, "bm25", 0, (3,))
    assert ok.reason == "BM25 0.5685, 100% of the query's best (0.5685)"
    assert (
        ok.prompt_hash
        == judge.render(Pair(query_id="q", query="x", doc_id="d", document=""), TASK).prompt_hash
    )


def test_thresholds_that_do_not_fit_the_scale_fail_before_any_pair_is_read():
    judge = LexicalJudge(CORPUS, thresholds=(0.2, 0.5, 0.8))
    binary = JudgeTask(scale=GradeScale.from_labels([(0, "no"), (1, "yes")]))
    read = []

    def pairs():
        read.append(1)
        yield Pair(query_id="q", query=QUERY, doc_id="d1", document="")

    with pytest.raises(ValueError) as info:
        JudgeClient(judge, binary).run(pairs())
    assert str(info.value) == (
        "thresholds must hold 1 numbers, one fewer than the scale's 2 grades; got [0.2, 0.5, 0.8]"
    )
    assert read == []


@pytest.mark.parametrize(
    ("thresholds", "message"),
    [
        ((0.5, 0.2), "thresholds must increase strictly within (0, 1]; got [0.5, 0.2]"),
        ((0.0, 0.5), "thresholds must increase strictly within (0, 1]; got [0.0, 0.5]"),
        ((0.5, 1.5), "thresholds must increase strictly within (0, 1]; got [0.5, 1.5]"),
        (("a",), "thresholds must be numbers; got ('a',)"),
    ],
)
def test_bad_thresholds(thresholds, message):
    with pytest.raises(ValueError) as info:
        LexicalJudge(CORPUS, thresholds=thresholds)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("r", "grade", "confidence"),
    [
        (0.0, 0, 1.0),
        (0.125, 0, 0.5),
        (0.25, 1, 0.0),
        (0.375, 1, 1.0),
        (0.4375, 1, 0.5),
        (0.5, 2, 0.0),
        (0.75, 3, 0.0),
        (0.875, 3, 0.5),
        (1.0, 3, 1.0),
    ],
)
def test_grade_of(r, grade, confidence):
    assert grade_of(r, (0.25, 0.5, 0.75), GradeScale.default()) == (grade, confidence)


@pytest.mark.parametrize("doc", sorted(CORPUS))
def test_an_indexed_text_scores_as_the_index_scores_it(doc):
    index = BM25Index(CORPUS)
    row = index.scores([QUERY]).toarray()[0]
    position = index.doc_ids.to_pylist().index(doc)
    assert index.score_text(QUERY, CORPUS[doc]) == pytest.approx(float(row[position]), rel=1e-6)


@pytest.mark.parametrize(
    ("document", "grade", "reason"),
    [
        (CORPUS["d2"], 0, "BM25 0, 0% of the query's best (0.5685)"),
        # by hand: N = 5, df = 3 for both terms, avgdl = 19 / 5; |d| = 6 with tf 1, |d| = 8 with tf 2
        (CORPUS["d2"] + " replace battery", 2, "BM25 0.3421, 60% of the query's best (0.5685)"),
        (CORPUS["d2"] + " replace battery" * 2, 3, "BM25 0.4545, 80% of the query's best (0.5685)"),
    ],
)
def test_a_stuffed_text_is_scored_as_sent(document, grade, reason):
    result = LexicalJudge(CORPUS).judge(Pair(query_id="q", query=QUERY, doc_id="d2", document=document), TASK)
    assert (result.grade, result.reason) == (grade, reason)
