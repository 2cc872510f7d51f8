"""evaluate(): seed 000's worked example, the documented semantics, and every error case."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from metrics import EvaluationError, FormatError, MeasureError, Qrels, Run, evaluate, read_qrels, read_run

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
# Seed 000: six documents, three queries, two hand-made rankings.
CORPUS = [f"D{i}" for i in range(1, 7)]
LABELS = {"q1": {"D1": 1, "D2": 1}, "q2": {"D3": 1}, "q3": {"D5": 1, "D6": 1}}
SCHEME_A = {"q1": ["D1", "D3", "D4"], "q2": ["D3", "D1", "D6"], "q3": ["D4", "D5", "D3"]}
SCHEME_B = {"q1": ["D2", "D1", "D3"], "q2": ["D3", "D4", "D6"], "q3": ["D5", "D6", "D4"]}


@pytest.mark.parametrize(
    "run, per_query, macro",
    [
        (SCHEME_A, {"q1": (1 / 3, 1 / 2), "q2": (1 / 3, 1.0), "q3": (1 / 3, 1 / 2)}, (0.333, 0.667)),
        (SCHEME_B, {"q1": (2 / 3, 1.0), "q2": (1 / 3, 1.0), "q3": (2 / 3, 1.0)}, (0.556, 1.0)),
    ],
    ids=["scheme-A", "scheme-B"],
)
def test_seed_000_figures(run, per_query, macro):
    result = evaluate(LABELS, run, ["P@3", "R@3"], corpus=CORPUS)
    for qid, (p, r) in per_query.items():
        assert result.per_query.loc[qid, "P@3"] == pytest.approx(p)
        assert result.per_query.loc[qid, "R@3"] == pytest.approx(r)
    assert (round(result.mean["P@3"], 3), round(result.mean["R@3"], 3)) == macro


@pytest.mark.parametrize("run_file, macro", [("run_a.trec", (0.333, 0.667)), ("run_b.trec", (0.556, 1.0))])
def test_sample_corpus_files_give_the_seed_figures(run_file, macro):
    result = evaluate(
        SAMPLE / "qrels.trec", SAMPLE / run_file, ["P@3", "R@3"], corpus=SAMPLE / "docs.jsonl", strict=True
    )
    assert (round(result.mean["P@3"], 3), round(result.mean["R@3"], 3)) == macro


def test_precision_divides_by_k_even_for_short_lists():
    result = evaluate({"q1": {"D1": 1}}, {"q1": ["D1"]}, ["P@3", "R@3", "Judged@3"])
    assert result.mean == {"P@3": pytest.approx(1 / 3), "R@3": 1.0, "Judged@3": 1.0}  # 1 of the 1 shown


def test_empty_ranking_scores_zero_without_crashing():
    result = evaluate(LABELS, {**SCHEME_A, "q2": []}, ["P@3", "R@3", "RR"])
    assert result.per_query_dict()["q2"] == {"P@3": 0.0, "R@3": 0.0, "RR": 0.0}
    assert result.counts.missing == 0  # answered with nothing is not missing


def test_ranking_order_matters_to_rr_but_not_to_p_and_r():
    a = evaluate(LABELS, {"q1": ["D1", "D3", "D4"]}, ["P@3", "R@3", "RR", "FirstRel"]).per_query_dict()["q1"]
    b = evaluate(LABELS, {"q1": ["D3", "D4", "D1"]}, ["P@3", "R@3", "RR", "FirstRel"]).per_query_dict()["q1"]
    assert (a["P@3"], a["R@3"]) == (b["P@3"], b["R@3"])
    assert (a["RR"], b["RR"], a["FirstRel"], b["FirstRel"]) == (1.0, pytest.approx(1 / 3), 1.0, 3.0)


def test_recall_is_undefined_for_a_query_without_relevant_documents():
    qrels = {**LABELS, "q4": {"D4": 0}}
    result = evaluate(
        qrels, {**SCHEME_B, "q4": ["D4"]}, ["P@3", "R@3", "AP", "nDCG@3", "R-Prec", "F1@3", "RR"]
    )
    q4 = result.per_query_dict()["q4"]
    assert q4 == {
        "P@3": 0.0,
        "R@3": None,
        "AP": None,
        "nDCG@3": None,
        "R-Prec": None,
        "F1@3": None,
        "RR": 0.0,
    }
    assert math.isnan(result.per_query.loc["q4", "R@3"])
    assert result.mean["R@3"] == 1.0 and result.n["R@3"] == 3  # left out of the mean, and said so
    assert result.mean["P@3"] == pytest.approx((2 / 3 + 1 / 3 + 2 / 3 + 0) / 4) and result.n["P@3"] == 4
    assert result.counts.no_relevant == 1


def test_mean_is_none_when_undefined_everywhere():
    result = evaluate({"q1": {"D1": 0}}, {"q1": ["D1"]}, ["R@1", "P@1"])
    assert result.mean == {"R@1": None, "P@1": 0.0} and result.n == {"R@1": 0, "P@1": 1}


@pytest.mark.parametrize(
    "grades, ndcg",
    [
        ({"D1": 3, "D2": 0}, 1.0),
        ({"D1": 1, "D2": 3}, (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))),
        ({"D1": -2, "D2": 2}, (2 / math.log2(3)) / 2),  # a negative grade gives no gain
    ],
)
def test_ndcg_uses_the_raw_grade_as_gain(grades, ndcg):
    result = evaluate({"q": grades}, {"q": ["D1", "D2"]}, ["nDCG", "nDCG@2"])
    assert result.mean["nDCG"] == pytest.approx(ndcg) and result.mean["nDCG@2"] == pytest.approx(ndcg)


def test_exponential_gain():
    result = evaluate({"q": {"D1": 1, "D2": 3}}, {"q": ["D1", "D2"]}, ["nDCG(gain=exp)@2"])
    assert result.mean["nDCG(gain=exp)@2"] == pytest.approx((1 + 7 / math.log2(3)) / (7 + 1 / math.log2(3)))


def test_relevance_threshold():
    qrels = {"q": {"D1": 1, "D2": 2, "D3": 3}}
    result = evaluate(qrels, {"q": ["D1", "D2", "D3"]}, ["P(rel=2)@3", "R(rel=3)@1", "RR(rel=3)"])
    assert result.mean == {
        "P(rel=2)@3": pytest.approx(2 / 3),
        "R(rel=3)@1": 0.0,
        "RR(rel=3)": pytest.approx(1 / 3),
    }


def test_ties_are_broken_by_doc_id_descending_and_rank_column_is_ignored(tmp_path):
    path = tmp_path / "r.trec"
    path.write_text("q Q0 A 1 1.0 s\nq Q0 B 2 1.0 s\nq Q0 C 3 0.5 s\n")
    result = evaluate({"q": {"A": 1}}, path, ["RR", "FirstRel"])
    assert result.mean == {"RR": 0.5, "FirstRel": 2.0}  # B ranks above A: 'B' > 'A'


def test_scores_equal_in_single_precision_tie():
    run = {"q": {"A": 1.0, "B": 1.0 + 1e-9}}  # trec_eval stores scores as float: these tie
    assert evaluate({"q": {"B": 1}}, run, ["RR"]).mean["RR"] == 1.0
    assert evaluate({"q": {"A": 1}}, run, ["RR"]).mean["RR"] == 0.5


def test_ranked_lists_keep_their_order():
    assert evaluate({"q": {"A": 1}}, {"q": ["Z", "A"]}, ["RR"]).mean["RR"] == 0.5


def test_missing_and_extra_queries_are_counted():
    result = evaluate(LABELS, {"q1": SCHEME_B["q1"], "q9": ["D1"]}, ["P@3"])
    assert result.counts.to_dict() == {"evaluated": 3, "missing": 2, "extra": 1, "no_relevant": 0}
    assert result.missing_queries == ["q2", "q3"] and result.extra_queries == ["q9"]
    assert result.mean["P@3"] == pytest.approx(2 / 9)


@pytest.mark.parametrize(
    "run, message",
    [
        ({"q1": ["D1"], "q2": ["D3"]}, "strict=True: run: 1 qrels query missing from the run: 'q3'"),
        ({**SCHEME_A, "q9": ["D1"]}, "strict=True: run: 1 run query not in the qrels: 'q9'"),
    ],
)
def test_strict_mode_rejects_missing_and_extra_queries(run, message):
    with pytest.raises(EvaluationError, match=re.escape(message)):
        evaluate(LABELS, run, ["P@3"], strict=True)


@pytest.mark.parametrize(
    "qrels, run, kwargs, error, message",
    [
        (
            LABELS,
            {"q1": ["D1", "D1", "D2"]},
            {},
            FormatError,
            "duplicate document 'D1' for query 'q1' at positions 1 and 2",
        ),
        (
            LABELS,
            {"q1": ["D99"]},
            {"corpus": CORPUS},
            EvaluationError,
            "run row 1: unknown document ID 'D99' for query 'q1': not in the corpus",
        ),
        (
            {"q1": {"D99": 1}},
            {"q1": ["D1"]},
            {"corpus": CORPUS},
            EvaluationError,
            "qrels row 1: unknown document ID 'D99' for query 'q1': not in the corpus",
        ),
        (LABELS, SCHEME_A, {"strict": 1}, EvaluationError, "strict must be a bool; got 1"),
        ({}, SCHEME_A, {}, EvaluationError, "qrels 'qrels' has no judgments; nothing to evaluate"),
        ([1], SCHEME_A, {}, EvaluationError, "qrels must be a path, DataFrame, mapping or Qrels; got list"),
        (LABELS, 3, {}, EvaluationError, "run must be a path, DataFrame, mapping or Run; got int"),
        (
            LABELS,
            SCHEME_A,
            {"corpus": 5},
            EvaluationError,
            "corpus must be a path, DataFrame or collection of doc IDs; got int",
        ),
    ],
)
def test_errors(qrels, run, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        evaluate(qrels, run, ["P@3"], **kwargs)


def test_bad_measure_and_bad_k():
    for measures, message in [
        (["P@0"], "cutoff must be an int >= 1; got 0"),
        (["Foo"], "unknown measure 'Foo'"),
    ]:
        with pytest.raises(MeasureError, match=re.escape(message)):
            evaluate(LABELS, SCHEME_A, measures)


def test_unknown_document_in_a_run_file_names_its_line(tmp_path):
    path = tmp_path / "r.trec"
    path.write_text("q1 Q0 D1 1 0.9 s\n\nq1 Q0 D99 2 0.5 s\n")
    with pytest.raises(
        EvaluationError, match=re.escape(f"{path}:3: unknown document ID 'D99' for query 'q1'")
    ):
        evaluate(LABELS, path, ["P@3"], corpus=CORPUS)


def test_chunks_map_back_to_documents_keeping_the_first_chunk():
    chunk_map = {"D1#0": "D1", "D1#1": "D1", "D3#0": "D3", "D2#0": "D2"}
    run = {"q1": ["D1#0", "D1#1", "D3#0", "D2#0"]}  # D1 twice: only its best chunk counts
    result = evaluate({"q1": {"D1": 1, "D2": 1}}, run, ["P@3", "R@3", "FirstRel"], chunk_map=chunk_map)
    assert result.mean == {"P@3": pytest.approx(2 / 3), "R@3": 1.0, "FirstRel": 1.0}


def test_unmapped_chunk_is_an_error():
    with pytest.raises(
        EvaluationError, match=re.escape("run: chunk 'X#0' of query 'q1' is not in the chunk map")
    ):
        evaluate(LABELS, {"q1": ["X#0"]}, ["P@3"], chunk_map={"D1#0": "D1"})


def test_inputs_of_every_kind_agree():
    qrels_df = read_qrels(SAMPLE / "qrels.trec").to_dataframe()
    run_df = read_run(SAMPLE / "run_b.trec").to_dataframe()
    results = [
        evaluate(SAMPLE / "qrels.trec", SAMPLE / "run_b.trec", ["P@3", "nDCG@3"]),
        evaluate(qrels_df, run_df, ["P@3", "nDCG@3"]),
        evaluate(
            Qrels.from_dataframe(qrels_df).to_dict(), Run.from_dataframe(run_df).to_dict(), ["P@3", "nDCG@3"]
        ),
    ]
    assert results[0].mean == results[1].mean == results[2].mean


def test_result_api():
    result = evaluate(LABELS, SCHEME_B, ["P@3", "MRR"])
    assert list(result.per_query.columns) == ["P@3", "RR"] and result.per_query.index.name == "query_id"
    data = result.to_dict()
    assert set(data) == {"name", "mean", "n", "counts", "per_query"}
    assert data["per_query"]["q2"]["P@3"] == pytest.approx(1 / 3)
    assert "P@3=0.5556" in repr(result)
    assert isinstance(result.per_query, pd.DataFrame)
