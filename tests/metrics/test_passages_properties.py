"""Property tests: `chunk_qrels`, `evidence_scores` and `perfect_evidence_recall` equal a brute-force oracle
that works on sets of characters, one character at a time, on random passages, chunkings (overlapping,
nested, with gaps) and runs."""

from __future__ import annotations

import itertools
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.passages import chunk_qrels, evidence_scores, perfect_evidence_recall

DOCS = ["d1", "d2", "d3"]


def _interval(draw, length: int = 40) -> tuple[int, int]:
    start = draw(st.integers(0, length - 1))
    return start, draw(st.integers(start + 1, min(length, start + 25)))


@st.composite
def _cases(draw):
    passages = []
    for query in ["q1", "q2", "q3"]:
        for doc in draw(st.lists(st.sampled_from(DOCS), max_size=3, unique=True)):
            for _ in range(draw(st.integers(1, 3))):
                passages.append((query, doc, *_interval(draw), draw(st.integers(0, 3))))
    if not passages:
        passages.append(("q1", "d1", 0, 5, 1))
    chunks = []
    for doc in DOCS:
        for i in range(draw(st.integers(1, 5))):
            chunks.append((f"{doc}-{i}", doc, *_interval(draw)))
    ids = [c[0] for c in chunks]
    run = {
        q: draw(st.lists(st.sampled_from(ids), max_size=6, unique=True))
        for q in draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q9"]), max_size=4, unique=True))
    }
    return passages, chunks, run


def _frames(passages, chunks):
    return (
        pd.DataFrame(passages, columns=["query_id", "doc_id", "start", "end", "grade"]),
        pd.DataFrame(chunks, columns=["chunk_id", "doc_id", "start", "end"]),
    )


def _chars(doc: str, start: int, end: int) -> set[tuple[str, int]]:
    return {(doc, x) for x in range(start, end)}


@settings(max_examples=300, deadline=None)
@given(_cases(), st.sampled_from([0.5, 0.25, 0.3, 1.0, 0.75]))
def test_chunk_qrels_equals_the_character_oracle(case, fraction):
    passages, chunks, _ = case
    got = chunk_qrels(*_frames(passages, chunks), min_overlap=fraction).to_dict()
    want: dict[str, dict[str, int]] = {}
    for query in dict.fromkeys(p[0] for p in passages):
        judged = {p[1] for p in passages if p[0] == query}
        for chunk, doc, cs, ce in chunks:
            if doc not in judged:
                continue
            grade = 0
            for _, _, ps, pe, g in (p for p in passages if p[0] == query and p[1] == doc):
                shared = len(_chars(doc, ps, pe) & _chars(doc, cs, ce))
                if shared and (shared / (pe - ps) >= fraction or shared / (ce - cs) >= fraction):
                    grade = max(grade, g)
            want.setdefault(query, {})[chunk] = grade
    assert got == want


@settings(max_examples=300, deadline=None)
@given(_cases(), st.sampled_from([1, 2, 3]))
def test_evidence_scores_equal_the_character_oracle(case, rel):
    passages, chunks, run = case
    result = evidence_scores(*_frames(passages, chunks), run, k=[1, 2, 5], rel=rel)
    where = {c[0]: c for c in chunks}
    queries = list(dict.fromkeys(p[0] for p in passages))
    assert result.query_ids == queries
    for query in queries:
        evidence = set().union(*(_chars(d, s, e) for q, d, s, e, g in passages if q == query and g >= rel))
        ranking = run.get(query, [])
        for k in (1, 2, 5):
            retrieved = set().union(*(_chars(*where[c][1:]) for c in ranking[:k]))
            both = len(evidence & retrieved)
            values = [
                result.values[f"Evidence{m}{'' if rel == 1 else f'(rel={rel})'}@{k}"]
                for m in ("Recall", "Precision", "IoU")
            ]
            row = result.query_ids.index(query)
            if not evidence:
                assert all(math.isnan(v[row]) for v in values)
                continue
            want = [
                both / len(evidence),
                both / len(retrieved) if retrieved else 0.0,
                both / len(evidence | retrieved),
            ]
            assert [v[row] for v in values] == pytest.approx(want)
    assert result.counts.extra == len(set(run) - set(queries))
    assert result.counts.missing == len([q for q in queries if q not in run])


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_perfect_evidence_recall_equals_the_best_subset(case):
    passages, chunks, _ = case
    got = perfect_evidence_recall(*_frames(passages, chunks), k=[1, 2, 3])
    for query in got.index:
        evidence = set().union(*(_chars(d, s, e) for q, d, s, e, g in passages if q == query and g >= 1))
        assert got.loc[query, "evidence"] == len(evidence)
        for k in (1, 2, 3):
            best = max(
                len(evidence & set().union(*(_chars(d, s, e) for _, d, s, e in subset)))
                for subset in itertools.combinations(chunks, min(k, len(chunks)))
            )
            value = got.loc[query, f"EvidenceRecall@{k}"]
            if evidence:
                assert value == pytest.approx(best / len(evidence))
            else:
                assert math.isnan(value)
