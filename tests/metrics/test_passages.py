"""`metrics.passages`: spans of one document, chunk qrels, evidence scores, chunkers, quotes; tables that read
as the spec, with the exact messages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics import evaluate
from metrics.errors import EvaluationError, FormatError, QrelForgeError
from metrics.passages import (
    Carry,
    Method,
    SpanError,
    carry_spans,
    check_spans,
    chunk_qrels,
    compare_chunkers,
    evidence_scores,
    locate_quote,
    perfect_evidence_recall,
    score_chunk_run,
)


def _passages(*rows):
    return pd.DataFrame(list(rows), columns=["query_id", "doc_id", "start", "end", "grade"])


def _chunks(*rows):
    return pd.DataFrame(list(rows), columns=["chunk_id", "doc_id", "start", "end"])


# ---------------------------------------------------------------------------------------------- spans
@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ([(3, 3)], r"span \[3, 3\) is empty \(document length 10\)"),
        ([(6, 2)], r"span \[6, 2\) ends before it starts \(document length 10\)"),
        ([(-1, 4)], r"span \[-1, 4\) is out of range \(document length 10\)"),
        ([(8, 11)], r"span \[8, 11\) is out of range \(document length 10\)"),
        ([(5, 9), (2, 6)], r"spans \[2, 6\) and \[5, 9\) overlap \(document length 10\)"),
        ([(0, 9), (2, 3)], r"spans \[0, 9\) and \[2, 3\) overlap \(document length 10\)"),
        ([(1.0, 4)], r"span start must be an int; got 1.0 in span \[1.0, 4\) \(document length 10\)"),
        ([(1, True)], r"span end must be an int; got True in span \[1, True\) \(document length 10\)"),
        ([(1, 2, 3)], r"a span must be a pair \(start, end\); got \(1, 2, 3\) \(document length 10\)"),
        (["ab"], r"a span must be a pair \(start, end\); got 'ab' \(document length 10\)"),
    ],
)
def test_check_spans_refuses_a_bad_span_naming_it_and_the_document_length(spans, message):
    with pytest.raises(SpanError, match=f"^{message}$"):
        check_spans(spans, length=10)


def test_check_spans_sorts_and_accepts_touching_spans():
    assert check_spans([(5, 10), (0, 5), (np.int64(11), 12)], length=12) == [(0, 5), (5, 10), (11, 12)]
    assert check_spans([], length=0) == []
    with pytest.raises(SpanError, match="^length must be an int >= 0; got -1$"):
        check_spans([], length=-1)


@pytest.mark.parametrize(
    ("old", "new", "span", "status", "where"),
    [
        ("a cat sat", "the cat sat", (2, 5), Carry.CARRIED, (4, 7)),  # moved by the text before it
        ("a cat sat", "a cat sat", (0, 9), Carry.CARRIED, (0, 9)),  # unchanged
        ("a cat sat", "a dog sat", (2, 5), Carry.MISSING, None),  # its text is gone
        ("a cat sat", "a Cat sat", (2, 5), Carry.MISSING, None),  # exact: case counts
        ("a cat", "cat or cat", (2, 5), Carry.AMBIGUOUS, None),  # twice: which one is unknown
        ("xaa", "aaa", (1, 3), Carry.AMBIGUOUS, None),  # overlapping occurrences count
        ("é cat", "😀😀 cat", (2, 5), Carry.CARRIED, (3, 6)),  # code points, not bytes or UTF-16 units
    ],
)
def test_carry_spans_moves_a_span_whose_text_occurs_exactly_once(old, new, span, status, where):
    (carried,) = carry_spans(old, new, [span])
    assert carried.status == status and carried.stale == (status != Carry.CARRIED)
    assert (carried.old_start, carried.old_end) == span
    assert ((carried.start, carried.end) if where else (carried.start, carried.end)) == (
        where or (None, None)
    )
    if where:
        assert new[carried.start : carried.end] == old[span[0] : span[1]]


def test_carry_spans_keeps_the_order_given_and_checks_the_spans_against_the_old_text():
    statuses = [c.status for c in carry_spans("one two", "two one", [(4, 7), (0, 3)])]
    assert statuses == ["carried", "carried"]
    with pytest.raises(SpanError, match=r"^span \[0, 9\) is out of range \(document length 7\)$"):
        carry_spans("one two", "one two", [(0, 9)])
    with pytest.raises(SpanError, match="^new_text must be a str; got NoneType$"):
        carry_spans("one", None, [])  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------- chunk qrels
CHUNKS = _chunks(("a", "d1", 0, 10), ("b", "d1", 10, 20), ("c", "d1", 20, 40), ("z", "d9", 0, 5))


@pytest.mark.parametrize(
    ("passages", "want", "why"),
    [
        ([("q", "d1", 12, 18, 2)], {"a": 0, "b": 2, "c": 0}, "b holds all of the passage"),
        ([("q", "d1", 5, 12, 1)], {"a": 1, "b": 0, "c": 0}, "a holds 5/7 >= 0.5; b holds 2/7 and 2/10 of it"),
        ([("q", "d1", 8, 40, 1)], {"a": 0, "b": 1, "c": 1}, "the passage covers all of b and c; 2/10 of a"),
        ([("q", "d1", 15, 25, 1)], {"a": 0, "b": 1, "c": 1}, "exactly half of the passage in b and in c"),
        ([("q", "d1", 2, 8, 1), ("q", "d1", 9, 10, 3)], {"a": 3, "b": 0, "c": 0}, "the highest grade"),
        ([("q", "d1", 0, 5, 0)], {"a": 0, "b": 0, "c": 0}, "a grade-0 passage grades nothing"),
    ],
)
def test_chunk_qrels_grade_rule(passages, want, why):
    got = chunk_qrels(_passages(*passages), CHUNKS).to_dict()
    assert got == {"q": want}, why


def test_chunk_qrels_half_is_enough_and_lists_only_the_judged_documents():
    # [16, 24): 4 characters in b (4/8 of the passage, 4/10 of b) -> 4/8 >= 0.5: relevant; 4/20 of c, 4/8
    got = chunk_qrels(_passages(("q", "d1", 16, 24, 3), ("r", "d9", 0, 1, 1)), CHUNKS).to_dict()
    assert got == {"q": {"a": 0, "b": 3, "c": 3}, "r": {"z": 1}}


@pytest.mark.parametrize(("fraction", "grade"), [(0.3, 1), (0.31, 0), (1, 0), (0.1, 1)])
def test_chunk_qrels_min_overlap_compares_fractions_as_floats(fraction, grade):
    # the passage [7, 17) puts 3 of its 10 characters in a and 7 in b; 3/10 >= 0.3 holds as floats
    got = chunk_qrels(_passages(("q", "d1", 7, 17, 1)), CHUNKS, min_overlap=fraction).to_dict()
    assert got["q"]["a"] == grade


@pytest.mark.parametrize("fraction", [0, 1.5, -0.1, "0.5", True, float("nan")])
def test_chunk_qrels_refuses_a_bad_min_overlap(fraction):
    with pytest.raises(QrelForgeError, match=r"^min_overlap must be a number in \(0, 1\]; got "):
        chunk_qrels(_passages(("q", "d1", 0, 5, 1)), CHUNKS, min_overlap=fraction)


@pytest.mark.parametrize(
    ("passages", "chunks", "message"),
    [
        (
            _passages(("q", "d1", 5, 5, 1)),
            CHUNKS,
            r"^passages row 1: span \[5, 5\) is empty: '\[5, 5\)'$",
        ),
        (
            _passages(("q", "d1", 0, 5, 1), ("q", "d1", 7, 3, 1)),
            CHUNKS,
            r"^passages row 2: span \[7, 3\) ends before it starts: '\[7, 3\)'$",
        ),
        (
            _passages(("q", "d1", -1, 5, 1)),
            CHUNKS,
            r"^passages row 1: start must be an int >= 0; got -1: '-1'$",
        ),
        (
            _passages(("q", "d1", 0, 5, -2)),
            CHUNKS,
            r"^passages row 1: grade must be an int >= 0; got -2: '-2'$",
        ),
        (
            _passages(("q", "d1", 0.5, 5, 1)),
            CHUNKS,
            r"^passages row 1: start must be an int; got 0.5: '0.5'$",
        ),
        (_passages(("q", "d 1", 0, 5, 1)), CHUNKS, r"^passages row 1: doc_id must not contain spaces"),
        (_passages(("q", None, 0, 5, 1)), CHUNKS, r"^passages row 1: doc_id is missing: 'None'$"),
        (
            _passages(("q", "d1", 0, 5, 1), ("q", "d7", 0, 5, 1)),
            CHUNKS,
            r"^passages row 2: document 'd7' has no chunk in chunks: 'd7'$",
        ),
        (
            pd.DataFrame({"query_id": ["q"], "doc_id": ["d1"], "start": [0], "end": [5]}),
            CHUNKS,
            r"^passages: missing column \['grade'\]: ",
        ),
        (
            _passages(("q", "d1", 0, 5, 1)),
            _chunks(("a", "d1", 0, 10), ("b", "d1", 10, 20), ("a", "d1", 20, 30)),
            r"^chunks row 3: duplicate chunk_id 'a' \(first on row 1\): 'a'$",
        ),
        (
            _passages(("q", "d1", 0, 5, 1)),
            _chunks(("a", "d1", 0, 10), ("b", "d1", 12, 12)),
            r"^chunks row 2: span \[12, 12\) is empty: '\[12, 12\)'$",
        ),
        (
            _passages(("q", "d1", 0, 5, 1)),
            [("a", "d1", 0, 5)],
            r"^chunks must be a path or a DataFrame; got list$",
        ),
    ],
)
def test_chunk_qrels_refuses_bad_input_naming_the_row(passages, chunks, message):
    with pytest.raises((FormatError, QrelForgeError), match=message):
        chunk_qrels(passages, chunks)


def test_chunk_qrels_reads_files_and_names_their_lines(tmp_path):
    passages = tmp_path / "p.jsonl"
    passages.write_text(
        '{"query_id": "q", "doc_id": "d1", "doc_version": 1, "start": 0, "end": 5, "grade": 1}\n\n'
        '{"query_id": "q", "doc_id": "d5", "doc_version": 1, "start": 0, "end": 5, "grade": 1}\n'
    )
    chunks = tmp_path / "c.tsv"
    chunks.write_text("chunk_id\tdoc_id\tstart\tend\na\td1\t0\t10\n")
    with pytest.raises(FormatError, match=rf"^{passages}:3: document 'd5' has no chunk in {chunks}: 'd5'$"):
        chunk_qrels(passages, chunks)


# -------------------------------------------------------------------------- the README's worked example
def test_worked_example_document_credit_overstates_a_chunk_runs_recall():
    """Query q has two relevant documents: d1 (evidence [10, 30), grade 2) and d2 (evidence [50, 70), grade
    1). Each is cut in two chunks: d1#0 [0, 50), d1#1 [50, 100), d2#0 [0, 40), d2#1 [40, 80).

    Chunk qrels (F = 0.5): d1#0 holds all 20 evidence characters of d1 -> 2; d2#1 holds all of d2's -> 1;
    d1#1 and d2#0 hold none -> 0.

    Run A returns d1#1, d2#0: the right documents, the wrong chunks.
      documents (chunks mapped to their documents): d1 and d2 are both relevant -> R@2 = 2/2 = 1.0
      chunks (chunk qrels):                        neither chunk is relevant   -> R@2 = 0/2 = 0.0
      characters: E = 20 + 20 = 40; T = 50 (d1#1) + 40 (d2#0) = 90; E ∩ T = 0
        EvidenceRecall@2 = 0/40 = 0; EvidencePrecision@2 = 0/90 = 0; EvidenceIoU@2 = 0/130 = 0
    Run B returns d1#0, d2#0: one right chunk.
      documents R@2 = 1.0; chunks R@2 = 1/2 = 0.5
      characters: T = 50 + 40 = 90; E ∩ T = 20 (d1's evidence, inside d1#0)
        EvidenceRecall@2 = 20/40 = 0.5; EvidencePrecision@2 = 20/90 = 0.2222;
        EvidenceIoU@2 = 20/(40 + 90 − 20) = 20/110 = 0.1818
    """
    passages = _passages(("q", "d1", 10, 30, 2), ("q", "d2", 50, 70, 1))
    chunks = _chunks(
        ("d1#0", "d1", 0, 50), ("d1#1", "d1", 50, 100), ("d2#0", "d2", 0, 40), ("d2#1", "d2", 40, 80)
    )
    qrels = chunk_qrels(passages, chunks)
    assert qrels.to_dict() == {"q": {"d1#0": 2, "d1#1": 0, "d2#0": 0, "d2#1": 1}}
    doc_qrels = {"q": {"d1": 2, "d2": 1}}
    chunk_map = dict(zip(chunks["chunk_id"], chunks["doc_id"], strict=True))
    for run, doc_recall, chunk_recall, evidence in [
        (["d1#1", "d2#0"], 1.0, 0.0, (0.0, 0.0, 0.0)),
        (["d1#0", "d2#0"], 1.0, 0.5, (20 / 40, 20 / 90, 20 / 110)),
    ]:
        assert evaluate(doc_qrels, {"q": run}, ["R@2"], chunk_map=chunk_map).mean == {"R@2": doc_recall}
        assert evaluate(qrels, {"q": run}, ["R@2"]).mean == {"R@2": chunk_recall}
        scores = evidence_scores(passages, chunks, {"q": run}, k=2).mean
        assert scores == pytest.approx(
            dict(zip(["EvidenceRecall@2", "EvidencePrecision@2", "EvidenceIoU@2"], evidence, strict=True))
        )


# ---------------------------------------------------------------------------------------- score_chunk_run
WORKED = (
    _passages(("q", "d1", 10, 30, 2), ("q", "d2", 50, 70, 1), ("r", "d1", 60, 70, 0)),
    _chunks(("d1#0", "d1", 0, 50), ("d1#1", "d1", 50, 100), ("d2#0", "d2", 0, 40), ("d2#1", "d2", 40, 80)),
)


@pytest.mark.parametrize(
    ("measures", "want_q", "want_r"),
    [
        # every measure on the chunk qrels beside the evidence measures, in the order asked
        (["R@2", "EvidenceRecall@2", "P@1"], [0.5, 0.5, 1.0], [np.nan, np.nan, 0.0]),
        # evidence measures only; rel=2 leaves d2's grade-1 passage out of E
        (["EvidenceRecall(rel=2)@1", "EvidenceIoU@2"], [1.0, 20 / 110], [np.nan, np.nan]),
        # the same cutoff under two thresholds
        (["EvidencePrecision@2", "EvidencePrecision(rel=2)@2"], [20 / 90, 20 / 90], [np.nan, np.nan]),
    ],
)
def test_score_chunk_run_joins_chunk_qrels_and_evidence_per_query(measures, want_q, want_r):
    """Run B of the worked example (d1#0, d2#0) for q; r has only a grade-0 passage: no evidence, no relevant
    chunk, so recall and the evidence measures are undefined for it and P@1 is 0."""
    result = score_chunk_run(*WORKED, {"q": ["d1#0", "d2#0"], "r": ["d1#1"]}, measures)
    assert [str(m) for m in result.measures] == measures and result.query_ids == ["q", "r"]
    frame = result.per_query
    np.testing.assert_allclose(frame.loc["q"].to_numpy(), want_q)
    np.testing.assert_allclose(frame.loc["r"].to_numpy(), want_r)
    assert result.counts.no_relevant == 1


@pytest.mark.parametrize(
    ("run", "kwargs", "error", "message"),
    [
        (
            {"q": ["d1#0", "d9#0"]},
            {},
            EvaluationError,
            "run: chunk 'd9#0' of query 'q' is not in the chunks (1 unknown in all)",
        ),
        (
            {"q": ["d1#0"]},
            {"min_overlap": 0},
            QrelForgeError,
            "min_overlap must be a number in (0, 1]; got 0",
        ),
        (
            {"q": ["d1#0"]},
            {"strict": True},
            EvaluationError,
            "strict=True: run: 1 qrels query missing from the run: 'r'",
        ),
    ],
)
def test_score_chunk_run_refuses(run, kwargs, error, message):
    with pytest.raises(error) as caught:
        score_chunk_run(
            *WORKED, run, ["R@2"], **kwargs
        )  # (only ordinary measures: the chunks are checked too)
    assert str(caught.value) == message


# ---------------------------------------------------------------------------------------- evidence scores
def test_evidence_scores_per_query_undefined_missing_and_extra():
    passages = _passages(("q1", "d1", 0, 10, 1), ("q2", "d1", 0, 10, 0), ("q3", "d1", 10, 20, 2))
    chunks = _chunks(("a", "d1", 0, 10), ("b", "d1", 5, 15), ("c", "d1", 10, 20))
    run = {"q1": ["b", "a"], "q2": ["a"], "q9": ["a"]}  # q3 missing, q9 extra
    result = evidence_scores(passages, chunks, run, k=[1, 2])
    assert result.measures == (
        "EvidenceRecall@1",
        "EvidenceRecall@2",
        "EvidencePrecision@1",
        "EvidencePrecision@2",
        "EvidenceIoU@1",
        "EvidenceIoU@2",
    )
    table = result.per_query
    # q1 @1: T = [5, 15), E = [0, 10): 5/10, 5/10, 5/15; @2: T = [0, 15) (a and b overlap, counted once)
    assert table.loc["q1"].tolist() == pytest.approx([0.5, 1.0, 0.5, 10 / 15, 5 / 15, 10 / 15])
    assert table.loc["q2"].isna().all()  # only a grade-0 passage: no evidence, undefined as R@k is
    assert table.loc["q3"].tolist() == [0.0] * 6  # missing from the run: nothing retrieved
    assert (
        result.counts.evaluated,
        result.counts.missing,
        result.counts.extra,
        result.counts.no_relevant,
    ) == (
        3,
        1,
        1,
        1,
    )
    assert (result.missing_queries, result.extra_queries) == (["q3"], ["q9"])
    assert result.n["EvidenceRecall@1"] == 2 and result.mean["EvidenceRecall@1"] == 0.25


def test_evidence_scores_threshold_and_names():
    passages = _passages(("q", "d1", 0, 10, 1), ("q", "d1", 10, 20, 2))
    chunks = _chunks(("a", "d1", 0, 10), ("c", "d1", 10, 20))
    result = evidence_scores(passages, chunks, {"q": ["c"]}, k=1, rel=2)
    assert result.mean == {
        "EvidenceRecall(rel=2)@1": 1.0,
        "EvidencePrecision(rel=2)@1": 1.0,
        "EvidenceIoU(rel=2)@1": 1.0,
    }
    assert evidence_scores(passages, chunks, {"q": ["c"]}, k=1).mean["EvidenceRecall@1"] == 0.5


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"k": 0}, QrelForgeError, r"^k must be an int >= 1 or a sequence of them; got 0$"),
        ({"k": []}, QrelForgeError, r"^k must be an int >= 1 or a sequence of them; got \[\]$"),
        ({"k": "5"}, QrelForgeError, r"^k must be an int >= 1 or a sequence of them; got '5'$"),
        ({"rel": 0}, QrelForgeError, r"^rel must be an int >= 1; got 0$"),
        ({"run": {"q": ["a", "x9"]}}, EvaluationError, r"^run: chunk 'x9' of query 'q' is not in the chunks"),
    ],
)
def test_evidence_scores_refuses_bad_arguments(kwargs, error, message):
    passages, chunks = _passages(("q", "d1", 0, 10, 1)), _chunks(("a", "d1", 0, 10))
    run = kwargs.pop("run", {"q": ["a"]})
    with pytest.raises(error, match=message):
        evidence_scores(passages, chunks, run, **kwargs)


# ------------------------------------------------------------------------------------------------ chunkers
def test_perfect_retriever_is_not_greedy_when_chunks_overlap():
    # E = [0, 10); greedy takes m = [2, 8) (6 characters) and then 2 more; l and r together cover all 10
    passages = _passages(("q", "d", 0, 10, 1))
    chunks = _chunks(("m", "d", 2, 8), ("l", "d", 0, 5), ("r", "d", 5, 10), ("far", "d", 20, 30))
    got = perfect_evidence_recall(passages, chunks, k=[1, 2, 3])
    assert got.loc["q"].tolist() == [10, 0.6, 1.0, 1.0]


def test_perfect_retriever_shares_k_between_documents():
    # E: 8 characters of d1 in two chunks (5 + 3), 4 of d2 in one: best 2 chunks = 5 + 4
    passages = _passages(("q", "d1", 0, 8, 1), ("q", "d2", 0, 4, 1), ("q2", "d2", 10, 11, 0))
    chunks = _chunks(("a", "d1", 0, 5), ("b", "d1", 5, 10), ("c", "d2", 0, 6), ("e", "d2", 6, 12))
    got = perfect_evidence_recall(passages, chunks, k=[1, 2, 5])
    assert got.loc["q"].tolist() == [12, 5 / 12, 9 / 12, 1.0]
    assert got.loc["q2", "evidence"] == 0 and got.loc["q2"].iloc[1:].isna().all()


def test_compare_chunkers_reports_recall_chunks_per_passage_and_length():
    passages = _passages(("q", "d", 0, 10, 1), ("q", "d", 30, 35, 1))
    chunkings = {
        "fixed-20": _chunks(("a", "d", 0, 20), ("b", "d", 20, 40)),
        "fixed-5": _chunks(*[(f"c{i}", "d", 5 * i, 5 * i + 5) for i in range(8)]),
    }
    table = compare_chunkers(passages, chunkings, k=[1, 3])
    assert table.to_dict("index") == {
        # fixed-20: b holds 5 of 15, a 10: @1 10/15, @3 all; passages span 1 chunk each; 20 characters a chunk
        "fixed-20": {
            "chunks": 2,
            "EvidenceRecall@1": 10 / 15,
            "EvidenceRecall@3": 1.0,
            "chunks_per_passage": 1.0,
            "chars_per_chunk": 20.0,
        },
        # fixed-5: every chunk holds at most 5; the first passage spans 2 chunks, the second 1
        "fixed-5": {
            "chunks": 8,
            "EvidenceRecall@1": 5 / 15,
            "EvidenceRecall@3": 1.0,
            "chunks_per_passage": 1.5,
            "chars_per_chunk": 5.0,
        },
    }
    with pytest.raises(
        QrelForgeError, match=r"^chunkings must be a non-empty mapping \{name: chunks\}; got dict$"
    ):
        compare_chunkers(passages, {})


# -------------------------------------------------------------------------------------------------- quotes
TEXT = "Der  Fluß fließt.\nThe quick brown fox jumps over the lazy dog."


@pytest.mark.parametrize(
    ("quote", "method", "piece", "score"),
    [
        ("quick brown", Method.EXACT, "quick brown", 100.0),
        ("QUICK   brown\nfox", Method.NORMALIZED, "quick brown fox", 100.0),
        ("der fluss", Method.NORMALIZED, "Der  Fluß", 100.0),  # ß folds to ss; offsets stay the original's
        ("fluss fliesst", Method.NORMALIZED, "Fluß fließt", 100.0),
        ("the quick brwn fox", Method.FUZZY, "The quick brown fox", 97.3),
        ("jumps ovr the lazzy dog", Method.FUZZY, "jumps over the lazy dog", 95.7),
    ],
)
def test_locate_quote_exact_then_normalized_then_fuzzy(quote, method, piece, score):
    found = locate_quote(TEXT, quote)
    assert (found.method, TEXT[found.start : found.end], round(found.score, 1)) == (method, piece, score)
    assert found.found


def test_a_quote_that_cannot_be_located_is_recorded_as_not_found_with_its_best_score():
    found = locate_quote(TEXT, "an entirely different sentence here")
    assert (found.start, found.end, found.method, found.found) == (None, None, Method.NOT_FOUND, False)
    assert 0 < found.score < 90
    assert locate_quote(TEXT, "quick brwn", min_score=99.9).method == Method.NOT_FOUND
    assert locate_quote("   ", "cat") == locate_quote("", "cat")


@pytest.mark.parametrize(
    ("text", "quote", "kwargs", "message"),
    [
        ("abc", "  \n", {}, r"^quote must be a non-blank str; got '  \\n'$"),
        ("abc", None, {}, r"^quote must be a non-blank str; got None$"),
        (b"abc", "a", {}, r"^text must be a str; got bytes$"),
        ("abc", "a", {"min_score": 101}, r"^min_score must be a number in \[0, 100\]; got 101$"),
        ("abc", "a", {"min_score": True}, r"^min_score must be a number in \[0, 100\]; got True$"),
    ],
)
def test_locate_quote_refuses_bad_arguments(text, quote, kwargs, message):
    with pytest.raises(QrelForgeError, match=message):
        locate_quote(text, quote, **kwargs)
