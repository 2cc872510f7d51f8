"""The retriever harness (metrics.retrieval.harness.run_retriever): retriever shapes, failures, duplicates,
latency, determinism across workers, progress, and input validation."""

from __future__ import annotations

import io
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from metrics import evaluate, read_run
from metrics.data import Run
from metrics.errors import QrelForgeError
from metrics.retrieval.bm25 import BM25Index
from metrics.retrieval.harness import Duplicate, Failure, RetrievalResult, load_queries, run_retriever

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
QUERIES = {"q1": "battery", "q2": "returns"}


def _run(retriever, queries=None, **options):
    options = {"workers": 1, "progress": False, **options}
    return run_retriever(retriever, queries or QUERIES, **options)


class Doc:
    """A LangChain-style document: page_content plus metadata (and an optional .id)."""

    def __init__(self, metadata, id=None, page_content="text"):
        self.metadata, self.id, self.page_content = metadata, id, page_content


class Invoker:
    def invoke(self, text):
        return [Doc({"id": "D2"}), Doc({"id": "D1"})]


class Searcher:
    def search(self, text):
        return [("D2", 0.4), ("D1", 0.9)]


class Retriever:
    def retrieve(self, text):
        return [{"id": "D2", "score": 2}, {"id": "D1", "score": 1}]


RANKED = {"q1": {"D2": 2.0, "D1": 1.0}, "q2": {"D2": 2.0, "D1": 1.0}}
SCORED = {"q1": {"D1": 0.9, "D2": 0.4}, "q2": {"D1": 0.9, "D2": 0.4}}


@pytest.mark.parametrize(
    ("retriever", "options", "expected"),
    [
        (lambda t: ["D2", "D1"], {}, RANKED),  # IDs: rank-derived scores 2, 1
        (lambda t: iter(["D2", "D1"]), {}, RANKED),  # a generator
        (lambda t: ("D2", "D1"), {}, RANKED),
        (lambda t: [("D2", 0.4), ("D1", 0.9)], {}, SCORED),  # (id, score) pairs: scores order
        (lambda t: [["D2", 0.4], ["D1", 0.9]], {}, SCORED),  # JSON-style pairs
        (lambda t: {"D2": 0.4, "D1": 0.9}, {}, SCORED),  # a mapping {id: score}
        (lambda t: [2, 1], {}, {"q1": {"2": 2.0, "1": 1.0}, "q2": {"2": 2.0, "1": 1.0}}),  # int IDs -> str
        (
            lambda t: [(7, 0.2), (3, 0.5)],
            {},
            {"q1": {"3": 0.5, "7": 0.2}, "q2": {"3": 0.5, "7": 0.2}},
        ),  # FAISS-like
        (lambda t: np.array(["D2", "D1"]), {}, RANKED),
        (Invoker(), {}, RANKED),  # .invoke, metadata["id"]
        (Searcher(), {}, SCORED),  # .search
        (Retriever(), {}, RANKED),  # .retrieve, mappings with score
        (lambda t: [Doc({"doc_id": "D2"}), Doc({"doc_id": "D1"})], {"id_field": "doc_id"}, RANKED),
        (lambda t: [Doc({}, id="D2"), Doc({}, id="D1")], {}, RANKED),  # no metadata id: the .id attribute
        (lambda t: [SimpleNamespace(id="D2", score=0.4), SimpleNamespace(id="D1", score=0.9)], {}, SCORED),
        (lambda t: [(Doc({"id": "D2"}), 0.4), (Doc({"id": "D1"}), 0.9)], {}, SCORED),  # (document, score)
    ],
)
def test_retriever_shapes(retriever, options, expected):
    result = _run(retriever, **options)
    assert result.run.to_dict() == expected and not result.failures


def test_the_seed_004_pattern_invoke_bound_method():
    # seed 004 passes `bm25_retriever.invoke`; documents carry metadata["id"].
    result = _run(Invoker().invoke, name="bm25")
    assert result.run.to_dict() == RANKED and result.name == "bm25"


def test_duplicates_are_reported_and_the_first_occurrence_kept_before_cutting_at_k():
    result = _run(lambda t: ["D1", "D2", "D1", "D3", "D2", "D4"], {"q1": "x"}, k=3)
    # distinct in order: D1 (1), D2 (2), D3 (4), D4 (6); k=3 keeps D1, D2, D3 with scores 3, 2, 1
    assert result.run.to_dict() == {"q1": {"D1": 3.0, "D2": 2.0, "D3": 1.0}}
    assert result.duplicates == [Duplicate("q1", "D1", 1, 3), Duplicate("q1", "D2", 2, 5)]
    assert result.summary()["duplicates"] == 2 and result.per_query().loc["q1", "duplicates"] == 2


def test_duplicates_keep_the_score_of_the_first_occurrence():
    result = _run(lambda t: [("D1", 0.2), ("D2", 0.5), ("D1", 0.9)], {"q1": "x"})
    assert result.run.to_dict() == {"q1": {"D2": 0.5, "D1": 0.2}}


def flaky(text):
    if "returns" in text:
        raise RuntimeError("index offline")
    return ["D1", "D2"]


def test_a_failing_query_is_recorded_and_the_others_go_on():
    queries = {"q1": "battery", "q2": "returns", "q3": "invoice"}
    result = _run(flaky, queries, name="flaky", workers=2)
    assert result.failures == [Failure("q2", "RuntimeError('index offline')")]
    assert result.run.query_ids == ["q1", "q3"] and "q2" not in result.run.empty_queries
    summary = result.summary()
    assert (summary["queries"], summary["answered"], summary["failed"], summary["results"]) == (3, 2, 1, 4)
    assert "failed q2: RuntimeError('index offline')" in str(result)
    # evaluate: the failed query is missing from the run, so it scores 0 and is counted as missing
    scored = evaluate({"q1": {"D1": 1}, "q2": {"D1": 1}, "q3": {"D9": 1}}, result.run, ["P@1", "RR"])
    assert scored.per_query_dict()["q2"] == {"P@1": 0.0, "RR": 0.0}
    assert scored.counts.missing == 1 and scored.mean["P@1"] == pytest.approx(1 / 3)


def test_an_empty_answer_is_answered_not_failed():
    result = _run(lambda t: [] if t == "returns" else ["D1"])
    assert result.run.empty_queries == ("q2",) and not result.failures and result.summary()["empty"] == 1


@pytest.mark.parametrize(
    ("retriever", "error"),
    [
        (lambda t: None, "RetrieverOutputError('returned a NoneType; expected a list of results')"),
        (lambda t: "D1", "RetrieverOutputError('returned a str; expected a list of results')"),
        (lambda t: 42, "RetrieverOutputError('returned a int; expected a list of results')"),
        (
            lambda t: pd.DataFrame({"id": ["D1"]}),
            "RetrieverOutputError('returned a DataFrame; expected a list of results')",
        ),
        (
            lambda t: [Doc({"source": "a.txt", "page": 1})],
            "RetrieverOutputError(\"result 1: no ID in metadata['id'] or .id of a Doc "
            "(metadata keys: ['page', 'source'])\")",
        ),
        (
            lambda t: ["D1", None],
            "RetrieverOutputError(\"result 2: no ID in metadata['id'] or .id of a NoneType\")",
        ),
        (
            lambda t: ["D1", "D 2"],
            'RetrieverOutputError("result 2: document ID must be a non-empty str without spaces; '
            "got 'D 2'\")",
        ),
        (
            lambda t: [("D1", 0.5), "D2"],
            "RetrieverOutputError('result 2: some results have scores and others do not')",
        ),
        (
            lambda t: [("D1", float("nan"))],
            "RetrieverOutputError('result 1: score must be a number (not NaN); got nan')",
        ),
        (
            lambda t: [{"id": "D1", "score": "high"}],
            "RetrieverOutputError(\"result 1: score must be a number (not NaN); got 'high'\")",
        ),
    ],
)
def test_unreadable_output_fails_the_query_with_a_clear_error(retriever, error):
    result = _run(retriever, {"q1": "x"})
    assert result.failures == [Failure("q1", error)] and len(result.run) == 0


def _slow_and_uneven(text):
    """Finishes out of order under threads: later queries sleep less."""
    n = int(text)
    time.sleep(0.002 * (8 - n % 8))
    if n % 5 == 0:
        raise ValueError(f"bad {n}")
    return [f"D{(n * 7 + i) % 11}" for i in range(6)] + [f"D{n % 11}"]


@pytest.mark.parametrize("workers", [2, 8])
def test_results_do_not_depend_on_the_number_of_workers(workers):
    queries = {f"q{i}": str(i) for i in range(16)}
    one = _run(_slow_and_uneven, queries, workers=1)
    many = _run(_slow_and_uneven, queries, workers=workers)
    assert many.run.to_dict() == one.run.to_dict() and list(many.run.query_ids) == list(one.run.query_ids)
    assert many.failures == one.failures and many.duplicates == one.duplicates
    assert [f.query_id for f in one.failures] == ["q0", "q5", "q10", "q15"]


def test_latency_summary_median_and_p95():
    # latencies 1, 2, 3, 4 ms: median 2.5; p95 at position 0.95 x 3 = 2.85 -> 3 + 0.85 x (4 - 3) = 3.85
    run = Run.from_dict({"a": ["D1"], "b": ["D1"], "c": ["D1"], "d": ["D1"]}, name="r")
    result = RetrievalResult(
        run,
        ["a", "b", "c", "d"],
        np.array([0.004, 0.001, 0.003, 0.002]),
        np.ones(4, int),
        [],
        [],
        k=10,
        workers=1,
        wall=0.01,
    )
    summary = result.summary()
    assert summary["latency_median_ms"] == pytest.approx(2.5) and summary["latency_p95_ms"] == pytest.approx(
        3.85
    )
    assert summary["latency_max_ms"] == pytest.approx(4.0)
    assert "latency median 2.50 ms, p95 3.85 ms" in str(result)


def test_every_query_is_timed():
    result = _run(lambda t: time.sleep(0.01) or ["D1"])
    assert (result.latency >= 0.009).all() and list(result.per_query().index) == ["q1", "q2"]


def test_to_dataframe_and_write_trec(tmp_path):
    result = _run(Searcher(), name="searcher")
    frame = result.to_dataframe()
    assert list(frame.columns) == ["query_id", "doc_id", "score", "rank"]
    assert frame[frame.query_id == "q1"][["doc_id", "rank"]].values.tolist() == [["D1", 1], ["D2", 2]]
    path = tmp_path / "run.trec"
    result.write_trec(path)
    assert path.read_text().splitlines()[0] == "q1 Q0 D1 1 0.9 searcher"
    assert read_run(path).to_dict() == SCORED


@pytest.mark.parametrize("form", ["mapping", "frame", "path", "stream"])
def test_queries_as_mapping_dataframe_or_path(form):
    path = SAMPLE / "queries.jsonl"
    frame = pd.read_json(path, lines=True)
    queries = {
        "mapping": dict(zip(frame.query_id, frame.text, strict=True)),
        "frame": frame,
        "path": str(path),
        "stream": io.BytesIO(path.read_bytes()),
    }[form]
    ids, texts = load_queries(queries)
    assert ids == ["q1", "q2", "q3"] and texts[1] == "普通商品退货需要满足什么条件"


def test_bm25_index_as_a_retriever_matches_its_batch_run():
    index = BM25Index(SAMPLE / "docs.jsonl")
    result = run_retriever(index, SAMPLE / "queries.jsonl", k=3, progress=False, name="bm25")
    assert result.run.to_dict() == index.run(SAMPLE / "queries.jsonl", k=3).to_dict()


@pytest.mark.parametrize(
    ("queries", "message"),
    [
        ({}, "queries is empty: nothing to retrieve"),
        (["q1"], "queries must be a mapping {qid: text}, a DataFrame or a path; got list"),
        ({"q 1": "x"}, "queries row 1: query_id must be a non-empty str without spaces; got 'q 1'"),
        ({"q1": "x", "": "y"}, "queries row 2: query_id must be a non-empty str without spaces; got ''"),
        ({"q1": None}, "queries row 1: text of 'q1' must be a str; got NoneType"),
        (
            pd.DataFrame({"query_id": ["q1", "q1"], "text": ["a", "b"]}),
            "queries row 2: duplicate query_id 'q1' (first on row 1)",
        ),
        (
            pd.DataFrame({"qid": ["q1"], "text": ["a"]}),
            "queries DataFrame is missing column(s) ['query_id']; has ['qid', 'text']",
        ),
    ],
)
def test_bad_queries(queries, message):
    with pytest.raises(QrelForgeError, match=re.escape(message)):
        load_queries(queries)


@pytest.mark.parametrize(
    ("retriever", "options", "message"),
    [
        (42, {}, "retriever must be callable or have an .invoke, .retrieve or .search method; got int"),
        (flaky, {"k": 0}, "k must be an int >= 1; got 0"),
        (flaky, {"k": True}, "k must be an int >= 1; got True"),
        (flaky, {"workers": 0}, "workers must be an int >= 1; got 0"),
        (flaky, {"workers": 2.0}, "workers must be an int >= 1; got 2.0"),
        (flaky, {"id_field": ""}, "id_field must be a non-empty str; got ''"),
        (flaky, {"name": "my run"}, "name must be a non-empty str without spaces; got 'my run'"),
    ],
)
def test_bad_arguments(retriever, options, message):
    with pytest.raises(QrelForgeError, match=re.escape(message)):
        run_retriever(retriever, QUERIES, progress=False, **options)


def test_progress_bar_uses_tqdm(capsys):
    run_retriever(flaky, QUERIES, name="flaky")
    assert "flaky: 100%" in capsys.readouterr().err


def test_progress_counter_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `from tqdm import tqdm` now raises ImportError
    run_retriever(flaky, QUERIES, name="flaky", workers=1)
    assert capsys.readouterr().err.endswith("\rflaky: 2/2 queries\n")


def test_no_progress_output_when_disabled(capsys):
    _run(flaky)
    assert capsys.readouterr().err == ""


def test_docstring_examples():
    import doctest

    import metrics.retrieval.harness

    assert doctest.testmod(metrics.retrieval.harness).failed == 0


def test_per_query_table():
    table = _run(flaky, {"q1": "battery", "q2": "returns"}).per_query()
    assert list(table.columns) == ["latency_ms", "results", "duplicates", "error"]
    assert table["results"].tolist() == [2, 0] and table["error"].isna().tolist() == [True, False]
    assert table.loc["q2", "error"] == "RuntimeError('index offline')"
