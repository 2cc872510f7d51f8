"""Run fusion (metrics.retrieval.fusion): hand-worked RRF / CombSUM / CombMNZ examples, normalization, ties,
errors."""

from __future__ import annotations

import io
import math
import re

import pandas as pd
import pytest

from metrics import evaluate, read_run
from metrics.data import Run
from metrics.errors import QrelForgeError
from metrics.retrieval.fusion import combmnz, combsum, fuse, normalize, rrf

# The worked example. Run A ranks D1 (3), D2 (2), D3 (1); run B ranks D2 (0.9), D4 (0.5). Ranks: A: D1 1,
# D2 2, D3 3; B: D2 1, D4 2.
A = {"q1": {"D1": 3.0, "D2": 2.0, "D3": 1.0}}
B = {"q1": {"D2": 0.9, "D4": 0.5}}
Z = math.sqrt(1.5)  # A's z-scores: mean 2, population std sqrt(2/3), so (3 - 2) / sqrt(2/3) = sqrt(3/2)

CASES = [
    # RRF, k=1: D1 1/(1+1) = 0.5; D2 1/(1+2) + 1/(1+1) = 5/6; D3 1/(1+3) = 0.25; D4 1/(1+2) = 1/3.
    ("rrf", {"k": 1}, [("D2", 5 / 6), ("D1", 0.5), ("D4", 1 / 3), ("D3", 0.25)]),
    # RRF, k=60: D2 1/62 + 1/61 = 0.0325225; D1 1/61 = 0.0163934; D4 1/62 = 0.0161290; D3 1/63 = 0.0158730.
    ("rrf", {}, [("D2", 1 / 62 + 1 / 61), ("D1", 1 / 61), ("D4", 1 / 62), ("D3", 1 / 63)]),
    # min-max: A -> D1 (3-1)/2 = 1, D2 (2-1)/2 = 0.5, D3 0; B -> D2 (0.9-0.5)/0.4 = 1, D4 0.
    # CombSUM: D2 0.5 + 1 = 1.5, D1 1, then D3 = D4 = 0: tie broken by doc ID descending, D4 before D3.
    ("combsum", {}, [("D2", 1.5), ("D1", 1.0), ("D4", 0.0), ("D3", 0.0)]),
    # CombMNZ = CombSUM x runs retrieving: D2 1.5 x 2 = 3, D1 1 x 1, D4 0 x 1, D3 0 x 1.
    ("combmnz", {}, [("D2", 3.0), ("D1", 1.0), ("D4", 0.0), ("D3", 0.0)]),
    # z-score: A -> D1 +sqrt(3/2), D2 0, D3 -sqrt(3/2); B (mean 0.7, std 0.2) -> D2 +1, D4 -1.
    # CombSUM: D1 1.2247, D2 0 + 1 = 1, D4 -1, D3 -1.2247.
    ("combsum", {"norm": "zscore"}, [("D1", Z), ("D2", 1.0), ("D4", -1.0), ("D3", -Z)]),
    # CombMNZ z-score: D2 1 x 2 = 2, D1 1.2247 x 1, D4 -1 x 1, D3 -1.2247 x 1.
    ("combmnz", {"norm": "zscore"}, [("D2", 2.0), ("D1", Z), ("D4", -1.0), ("D3", -Z)]),
    # raw scores: CombSUM D1 3, D2 2 + 0.9 = 2.9, D3 1, D4 0.5; CombMNZ D2 2.9 x 2 = 5.8.
    ("combsum", {"norm": "none"}, [("D1", 3.0), ("D2", 2.9), ("D3", 1.0), ("D4", 0.5)]),
    ("combmnz", {"norm": "none"}, [("D2", 5.8), ("D1", 3.0), ("D3", 1.0), ("D4", 0.5)]),
    # depth 1: A keeps D1, B keeps D2. RRF k=1: both 1/2, tie -> D2 before D1.
    ("rrf", {"k": 1, "depth": 1}, [("D2", 0.5), ("D1", 0.5)]),
    # depth 2, min-max: A {D1 3, D2 2} -> D1 1, D2 0; B {D2 .9, D4 .5} -> D2 1, D4 0.
    # CombMNZ: D2 (0 + 1) x 2 = 2, D1 1 x 1 = 1, D4 0.
    ("combmnz", {"depth": 2}, [("D2", 2.0), ("D1", 1.0), ("D4", 0.0)]),
]


def _ranking(run: Run, qid: str = "q1") -> list[tuple[str, float]]:
    frame = run.to_dataframe()
    frame = frame[frame["query_id"] == qid]
    return list(zip(frame["doc_id"], frame["score"], strict=True))


@pytest.mark.parametrize(("method", "options", "expected"), CASES)
def test_hand_worked_example(method, options, expected):
    got = _ranking(fuse([A, B], method=method, **options))
    assert [d for d, _ in got] == [d for d, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-12)


@pytest.mark.parametrize(
    ("function", "options"), [(rrf, {"k": 1}), (combsum, {}), (combmnz, {"norm": "zscore"})]
)
def test_functions_match_fuse(function, options):
    method = function.__name__
    assert function([A, B], **options).to_dict() == fuse([A, B], method=method, **options).to_dict()


def test_input_ranks_follow_trec_order_not_the_rank_column():
    # D1 and D2 tie at 1.0, so trec order is D2 (rank 1), D1 (rank 2) whatever the file's rank column says.
    text = "q1 Q0 D1 1 1.0 x\nq1 Q0 D2 2 1.0 x\nq1 Q0 D3 3 0.5 x\n"
    fused = rrf([read_run(io.StringIO(text))], k=0)  # 1/(0+1), 1/(0+2), 1/(0+3)
    assert _ranking(fused) == [("D2", 1.0), ("D1", 0.5), ("D3", pytest.approx(1 / 3))]


@pytest.mark.parametrize(
    ("scores", "method", "expected"),
    [
        ({"D1": 3.0, "D2": 2.0, "D3": 1.0}, "minmax", {"D1": 1.0, "D2": 0.5, "D3": 0.0}),
        ({"D1": 5.0}, "minmax", {"D1": 1.0}),  # one document: max = min -> 1
        ({"D1": 2.0, "D2": 2.0}, "minmax", {"D2": 1.0, "D1": 1.0}),  # all equal -> 1
        ({"D1": 4.0, "D2": 0.0}, "zscore", {"D1": 1.0, "D2": -1.0}),  # mean 2, std 2
        ({"D1": 7.0}, "zscore", {"D1": 0.0}),  # std 0 -> 0
        ({"D1": -1.5, "D2": 4.0}, "none", {"D2": 4.0, "D1": -1.5}),
    ],
)
def test_normalize(scores, method, expected):
    assert normalize({"q1": scores}, method=method).to_dict() == {"q1": expected}


def test_queries_missing_from_a_run_and_empty_queries():
    a = Run.from_dict({"q1": ["D1", "D2"], "q2": ["D5"], "q9": []})
    b = Run.from_dict({"q3": ["D7"], "q1": ["D2"]})
    fused = rrf([a, b], k=0)
    # q1: D2 1/2 + 1/1 = 1.5, D1 1/1; q2 only in a: D5 1/1; q3 only in b: D7 1/1; q9 answered with nothing.
    assert fused.to_dict() == {"q9": {}, "q1": {"D2": 1.5, "D1": 1.0}, "q2": {"D5": 1.0}, "q3": {"D7": 1.0}}
    assert fused.query_ids == ["q1", "q2", "q3"] and fused.empty_queries == ("q9",)


def test_equal_contributions_give_exactly_equal_scores_whatever_the_run_order():
    # X gets 0.1, 0.2, 0.3 and Y 0.3, 0.2, 0.1 from the three runs: (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1 in
    # floating point, but contributions are summed in ascending order, so X and Y tie exactly (Y first).
    runs = [{"q": {"X": 0.1, "Y": 0.3}}, {"q": {"X": 0.2, "Y": 0.2}}, {"q": {"X": 0.3, "Y": 0.1}}]
    forward = combsum(runs, norm="none")
    backward = combsum(runs[::-1], norm="none")
    assert (
        forward.to_dict() == backward.to_dict() == {"q": {"Y": 0.6000000000000001, "X": 0.6000000000000001}}
    )


def test_accepts_what_evaluate_accepts_and_scores_with_evaluate(tmp_path):
    path = tmp_path / "a.trec"
    path.write_text("q1 Q0 D1 1 3 a\nq1 Q0 D2 2 2 a\nq1 Q0 D3 3 1 a\n")
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["D2", "D4"], "score": [0.9, 0.5]})
    fused = fuse([str(path), frame], method="rrf", k=1, name="rrf_ab")
    assert _ranking(fused)[0] == ("D2", pytest.approx(5 / 6)) and fused.name == "rrf_ab"
    result = evaluate({"q1": {"D2": 1, "D3": 1}}, fused, ["P@1", "RR"])
    assert result.mean == {"P@1": 1.0, "RR": 1.0}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fuse([]), "runs must be a non-empty list of runs; got list []"),
        (lambda: fuse(A), "runs must be a non-empty list of runs; got dict"),
        (lambda: fuse([A], method="borda"), "method must be one of 'rrf', 'combsum', 'combmnz'; got 'borda'"),
        (
            lambda: fuse([A], method="combsum", norm="l2"),
            "norm must be one of 'minmax', 'zscore', 'none'; got 'l2'",
        ),
        (
            lambda: fuse([A], norm="minmax"),
            "norm applies to combsum and combmnz, not to rrf; got norm='minmax'",
        ),
        (lambda: rrf([A], k=-1), "k must be a finite number >= 0; got -1"),
        (lambda: rrf([A], k=True), "k must be a finite number >= 0; got True"),
        (lambda: rrf([A], k=float("inf")), "k must be a finite number >= 0; got inf"),
        (lambda: combsum([A], depth=0), "depth must be an int >= 1 or None; got 0"),
        (lambda: combsum([A], depth=2.5), "depth must be an int >= 1 or None; got 2.5"),
        (lambda: normalize(A, method="max"), "method must be one of 'minmax', 'zscore', 'none'; got 'max'"),
        (
            lambda: combsum([{"q1": {"D1": float("inf"), "D2": 1.0}}]),
            "run: score inf of 'D1' for query 'q1' must be finite for norm='minmax'",
        ),
    ],
)
def test_errors_name_the_parameter_and_the_value(call, message):
    with pytest.raises(QrelForgeError, match=re.escape(message)):
        call()


def test_infinite_scores_are_fine_for_rrf_and_raw_sums():
    run = {"q1": {"D1": float("inf"), "D2": 1.0}}
    assert rrf([run], k=0).to_dict() == {"q1": {"D1": 1.0, "D2": 0.5}}
    assert combsum([run], norm="none").to_dict() == {"q1": {"D1": float("inf"), "D2": 1.0}}


def test_docstring_examples():
    import doctest

    import metrics.retrieval.fusion

    assert doctest.testmod(metrics.retrieval.fusion).failed == 0
