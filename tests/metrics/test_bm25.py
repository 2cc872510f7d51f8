"""The BM25 baseline (metrics.retrieval.bm25): the tokenizer, scores against bm25s itself, exact top-k and
ties, the sample corpus, and input validation."""

from __future__ import annotations

import math
import re
from pathlib import Path

import bm25s
import numpy as np
import pandas as pd
import pytest

from metrics import evaluate, read_corpus
from metrics.errors import FormatError, QrelForgeError
from metrics.retrieval.bm25 import BM25Index, bm25_run, tokenize
from metrics.retrieval.harness import load_queries

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "A 型设备更换电池，30天内 E-Mail",
            ["a", "型设", "设备", "备更", "更换", "换电", "电池", "30", "天内", "e", "mail"],
        ),
        ("退货", ["退货"]),
        ("单 字", ["单", "字"]),  # a lone CJK character is a unigram
        ("电池battery电池", ["电池", "battery", "电池"]),  # script changes end a run
        ("Ｂａｔｔｅｒｙ１２", ["battery12"]),  # NFKC: full-width letters and digits
        ("snake_case mp3 2026-03", ["snake", "case", "mp3", "2026", "03"]),
        ("Ünïcode ÉTÉ Привет", ["ünïcode", "été", "привет"]),
        ("ひらがな", ["ひら", "らが", "がな"]),  # kana: bigrams too
        ("한국어", ["한국", "국어"]),  # Hangul syllables
        ("\U00020000\U00020001", ["\U00020000\U00020001"]),  # CJK Extension B
        ("", []),
        ("，。！？ ...", []),
    ],
)
def test_tokenize(text, expected):
    assert tokenize(text) == expected


def test_tokenize_rejects_non_text():
    with pytest.raises(QrelForgeError, match=re.escape("text must be a str; got int 3")):
        tokenize(3)


def test_tokenizer_on_the_sample_corpus():
    docs = read_corpus(SAMPLE / "docs.jsonl").set_index("doc_id")
    assert tokenize(docs.loc["D3", "title"]) == [
        "普通",
        "通商",
        "商品",
        "品退",
        "退货",
        "条件",
        "件与",
        "与凭",
        "凭证",
    ]
    _, queries = load_queries(SAMPLE / "queries.jsonl")
    shared = set(tokenize(queries[1])) & set(tokenize(docs.loc["D3", "title"] + docs.loc["D3", "text"]))
    assert {"普通", "商品", "退货", "条件"} <= shared
    # q1 "A 型设备更换电池前后要做什么": the Latin 'A' is a word, the Chinese run gives bigrams
    assert tokenize(queries[0])[:4] == ["a", "型设", "设备", "备更"]


def test_hand_worked_score():
    # D1 has 8 terms, D2 6 (avgdl 7); 换电 and 电池 occur once in D1 only: idf = ln(1 + 1.5/1.5) = ln 2,
    # tf part = 1 / (1 + 1.5 (0.25 + 0.75 x 8/7)); score = 2 x ln 2 x that = 0.5210234.
    index = BM25Index({"D1": "更换电池之前先关机", "D2": "退货需要订单号"})
    expected = 2 * math.log(2) / (1 + 1.5 * (0.25 + 0.75 * 8 / 7))
    [(doc, score)] = index.search("怎么换电池", k=5)
    assert doc == "D1" and score == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(("k1", "b"), [(1.5, 0.75), (0.9, 0.4), (2.0, 1.0), (1.2, 0.0)])
def test_scores_equal_bm25s_on_the_sample_corpus(k1, b):
    corpus = read_corpus(SAMPLE / "docs.jsonl")
    reference = bm25s.BM25(k1=k1, b=b, method="lucene")
    reference.index(
        [tokenize(t + "\n" + x) for t, x in zip(corpus.title, corpus.text, strict=True)], show_progress=False
    )
    _, queries = load_queries(SAMPLE / "queries.jsonl")
    ours = BM25Index(corpus, k1=k1, b=b).scores(queries).toarray()
    for i, text in enumerate(queries):
        # the same float32 terms, added in another order (our vocabulary numbers terms differently)
        np.testing.assert_allclose(ours[i], reference.get_scores(tokenize(text)), rtol=1e-6)


def test_sample_corpus_run_and_scores():
    run = bm25_run(SAMPLE / "docs.jsonl", SAMPLE / "queries.jsonl")
    ranked = {q: list(docs) for q, docs in run.to_dict().items()}
    assert ranked == {"q1": ["D1", "D2", "D4"], "q2": ["D3", "D4", "D5", "D6"], "q3": ["D5", "D6", "D3"]}
    result = evaluate(SAMPLE / "qrels.trec", run, ["P@3", "R@3", "RR"])
    assert result.mean == {"P@3": pytest.approx(5 / 9), "R@3": 1.0, "RR": 1.0}


def test_ties_are_broken_by_doc_id_descending_even_at_the_cut():
    docs = {"D1": "电池", "D2": "电池", "D10": "电池", "D3": "电池", "D4": "退货"}
    index = BM25Index(docs)
    # four equal scores; byte order descending: D3 > D2 > D10 > D1; the cut at k=2 keeps D3, D2
    assert [d for d, _ in index.search("电池", k=2)] == ["D3", "D2"]
    assert [d for d, _ in index.search("电池", k=10)] == ["D3", "D2", "D10", "D1"]


def _brute_force(index: BM25Index, text: str, k: int) -> list[str]:
    scores = index.scores([text]).toarray()[0].astype(np.float32)
    ids = index.doc_ids.to_pylist()
    hits = sorted((i for i in range(len(ids)) if scores[i] > 0), key=lambda i: (-scores[i], _desc(ids[i])))
    return [ids[i] for i in hits[:k]]


def _desc(doc_id: str) -> list[int]:
    return [-b for b in doc_id.encode()] + [1]  # byte order descending (a prefix sorts after the longer ID)


def test_top_k_equals_a_brute_force_ranking_and_ignores_the_batch_size():
    rng = np.random.default_rng(7)
    alphabet = list("电池退货发票订单地址快递邮箱申请") + ["alpha", "beta", "gamma"]
    docs = {f"d{i}": " ".join(rng.choice(alphabet, size=rng.integers(1, 6))) for i in range(300)}
    queries = {f"q{i}": " ".join(rng.choice(alphabet, size=3)) for i in range(40)}
    index = BM25Index(docs)
    for k in (1, 5, 50, 1000):
        runs = [index.run(queries, k=k, batch_size=size) for size in (1, 7, 64)]
        assert runs[0].to_dict() == runs[1].to_dict() == runs[2].to_dict()
        got = {q: list(d) for q, d in runs[0].to_dict().items()}
        assert got == {q: _brute_force(index, text, k) for q, text in queries.items()}


def test_a_query_without_known_terms_retrieves_nothing():
    run = BM25Index({"D1": "电池"}).run({"q1": "电池", "q2": "zzz", "q3": ""}, k=5)
    # idf ln(1 + 0.5/1.5) = 0.2876821, tf part 1 / (1 + 1.5) = 0.4: 0.1150728
    assert run.to_dict() == {"q2": {}, "q3": {}, "q1": {"D1": pytest.approx(math.log(4 / 3) * 0.4, rel=1e-6)}}
    assert run.empty_queries == ("q2", "q3")


def test_title_and_text_are_indexed_and_missing_titles_are_fine():
    frame = pd.DataFrame({"doc_id": ["D1", "D2"], "title": ["电池", None], "text": ["关机", "退货"]})
    index = BM25Index(frame)
    assert [d for d, _ in index.search("电池")] == ["D1"] and [d for d, _ in index.search("退货")] == ["D2"]
    assert [d for d, _ in BM25Index(frame, fields=("text",)).search("电池")] == []


def test_scores_are_written_in_their_shortest_form(tmp_path):
    path = tmp_path / "run.trec"
    from metrics import write_run

    write_run(bm25_run(SAMPLE / "docs.jsonl", SAMPLE / "queries.jsonl"), path)
    assert path.read_text().splitlines()[0] == "q1 Q0 D1 1 4.793848 bm25"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: BM25Index({"D1": "x"}, k1=-1), "k1 must be a number >= 0.0; got -1"),
        (lambda: BM25Index({"D1": "x"}, k1="1"), "k1 must be a number >= 0.0; got '1'"),
        (lambda: BM25Index({"D1": "x"}, b=2), "b must be a number in [0.0, 1.0]; got 2"),
        (lambda: BM25Index({"D1": "x"}, b=float("nan")), "b must be a number in [0.0, 1.0]; got nan"),
        (lambda: BM25Index({}), "corpus has no documents"),
        (lambda: BM25Index({"D 1": "x"}), "corpus doc_id must be a non-empty str without spaces; got 'D 1'"),
        (lambda: BM25Index({"D1": 5}), "corpus text of 'D1' must be a str; got int"),
        (lambda: BM25Index(["D1"]), "corpus must be a path, DataFrame or mapping {doc_id: text}; got list"),
        (
            lambda: BM25Index(pd.DataFrame({"doc_id": ["D1"], "text": ["x"]})),
            "corpus DataFrame is missing column(s) ['title']; has ['doc_id', 'text']",
        ),
        (
            lambda: BM25Index(pd.DataFrame({"doc_id": ["D1", "D1"], "title": ["", ""], "text": ["x", "y"]})),
            "corpus row 2: duplicate doc_id 'D1'",
        ),
        (
            lambda: BM25Index(pd.DataFrame({"doc_id": ["D1"], "title": [3], "text": ["x"]})),
            "corpus row 1: fields ['title', 'text'] must be strings; got 3",
        ),
        (lambda: BM25Index({"D1": "x"}).run({"q1": "x"}, k=0), "k must be an int >= 1; got 0"),
        (
            lambda: BM25Index({"D1": "x"}).run({"q1": "x"}, batch_size=0),
            "batch_size must be an int >= 1; got 0",
        ),
        (lambda: BM25Index({"D1": "x"}).search("x", k=2.5), "k must be an int >= 1; got 2.5"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(QrelForgeError, match=re.escape(message)):
        call()


def test_a_bad_corpus_file_names_file_and_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"doc_id": "D1", "text": "电池"}\n{"doc_id": "D2"}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=re.escape(f"{path}:2: missing text")):
        BM25Index(path)


def test_batches_are_capped_by_the_dense_cell_budget(monkeypatch):
    import metrics.retrieval.bm25 as bm25

    docs = {f"D{i}": "电池 退货 发票"[i % 3 * 3 : i % 3 * 3 + 2] for i in range(5)}
    queries = {f"q{i}": ["电池", "退货", "发票"][i % 3] for i in range(7)}
    expected = BM25Index(docs).run(queries, k=2).to_dict()
    monkeypatch.setattr(bm25, "_DENSE_CELLS", 10)  # 10 // 5 documents: batches of 2 queries
    assert BM25Index(docs).run(queries, k=2).to_dict() == expected


def test_docstring_examples():
    import doctest

    import metrics.retrieval.bm25

    assert doctest.testmod(metrics.retrieval.bm25).failed == 0
