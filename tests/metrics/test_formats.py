"""File formats: TREC runs and qrels, BEIR TSV, JSONL/CSV/TSV corpora; line-numbered errors; round trips."""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import numpy as np
import pytest

from metrics import (
    FormatError,
    Qrels,
    Run,
    read_corpus,
    read_qrels,
    read_queries,
    read_run,
    write_jsonl,
    write_qrels,
    write_run,
)
from metrics.formats import _trec, read_chunk_map

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
QUEPID = Path(__file__).resolve().parents[1] / "fixtures" / "quepid"
RUN_TEXT = "q1 Q0 D1 1 0.9 sys\nq1 Q0 D2 2 0.5 sys\nq2 Q0 D3 1 1.5 sys\n"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


# ---------------------------------------------------------------------------------------------- runs
@pytest.mark.parametrize(
    "content",
    [
        RUN_TEXT,  # single spaces: the vectorized reader
        RUN_TEXT.replace(" ", "\t"),  # tabs
        RUN_TEXT.replace(" ", "  \t "),  # mixed runs of spaces and tabs
        "  " + RUN_TEXT.replace("\n", "  \n"),  # leading and trailing blanks
        RUN_TEXT.replace("\n", "\r\n"),  # CRLF
        "\ufeff" + RUN_TEXT,  # BOM
        "\n\n" + RUN_TEXT.replace("\n", "\n\n"),  # blank lines
        RUN_TEXT.replace("sys\n", "sys extra junk\n"),  # fields after the sixth are ignored
    ],
    ids=["spaces", "tabs", "mixed", "padded", "crlf", "bom", "blank-lines", "extra-fields"],
)
def test_run_layouts_read_the_same(tmp_path, content):
    run = read_run(write(tmp_path, "run.trec", content))
    assert run.to_dict() == {"q1": {"D1": 0.9, "D2": 0.5}, "q2": {"D3": 1.5}}
    assert run.name == "sys"


@pytest.mark.parametrize("opener", ["path", "gzip-path", "text-stream", "binary-stream", "gzip-stream"])
def test_run_sources(tmp_path, opener):
    if opener == "path":
        source = write(tmp_path, "r.trec", RUN_TEXT)
    elif opener == "gzip-path":
        source = write(tmp_path, "r.trec.gz", gzip.compress(RUN_TEXT.encode()))
    elif opener == "text-stream":
        source = io.StringIO(RUN_TEXT)
    elif opener == "binary-stream":
        source = io.BytesIO(RUN_TEXT.encode())
    else:
        source = io.BytesIO(gzip.compress(RUN_TEXT.encode()))
    assert read_run(source).to_dict() == {"q1": {"D1": 0.9, "D2": 0.5}, "q2": {"D3": 1.5}}


def test_run_name_falls_back_to_the_file_name_and_can_be_given(tmp_path):
    path = write(tmp_path, "bm25.trec", RUN_TEXT)
    assert read_run(path, name="mine").name == "mine"
    assert read_run(io.StringIO("")).name == "<stream>"


@pytest.mark.parametrize(
    "content, message",
    [
        (
            "q1 Q0 D1 1 0.9\n",
            "run.trec:1: expected 6 fields (qid Q0 docid rank score tag), got 5: 'q1 Q0 D1 1 0.9'",
        ),
        ("q1 Q0 D1 1 high sys\n", "run.trec:1: score is not a number: 'high': 'q1 Q0 D1 1 high sys'"),
        ("q1 Q0 D1 1 nan sys\n", "run.trec:1: score is not a number: 'nan'"),
        ("q1 Q0 D1 1 1_000 sys\n", "run.trec:1: score is not a number: '1_000'"),
        (
            "q1 Q0 D1 1 0.9 s\nq1 Q0 D2 2 0.8 s\nq1 Q0 D1 3 0.1 s\n",
            "run.trec:3: duplicate document 'D1' for query 'q1' (first on line 1): 'q1 Q0 D1 3 0.1 s'",
        ),
        (b"q1 Q0 D\xff 1 0.9 s\n", "run.trec:1: not valid UTF-8 (byte 8)"),
        ("q1 Q0 D1\r 1 0.9 s\n", "run.trec:1: carriage return inside a line"),
    ],
    ids=["too-few-fields", "non-numeric", "nan", "underscore", "duplicate", "utf8", "lone-cr"],
)
def test_bad_run_lines_name_file_line_and_text(tmp_path, content, message):
    with pytest.raises(FormatError, match=re.escape(message)) as info:
        read_run(write(tmp_path, "run.trec", content))
    assert info.value.line is not None


def test_every_bad_line_is_reported_and_nothing_is_returned(tmp_path):
    content = "q1 Q0 D1 1 0.9 s\nq1 Q0 D2\nq1 Q0 D3 3 x s\nq2 Q0 D1 1 0.1 s\n"
    with pytest.raises(FormatError) as info:
        read_run(write(tmp_path, "run.trec", content))
    assert [p.line for p in info.value.problems] == [2, 3]
    assert str(info.value).endswith("(and 1 more problem)")


def test_duplicate_in_a_large_single_space_file_still_names_its_line(tmp_path):
    lines = [f"q{i // 100} Q0 D{i % 100} {i % 100 + 1} {1 - (i % 100) / 100} s" for i in range(5000)]
    lines.append("q7 Q0 D42 101 0.001 s")
    with pytest.raises(
        FormatError,
        match=re.escape("run.trec:5001: duplicate document 'D42' for query 'q7' (first on line 743)"),
    ):
        read_run(write(tmp_path, "run.trec", "\n".join(lines) + "\n"))


def test_vectorized_and_line_readers_agree_on_a_large_file(tmp_path):
    rng = np.random.default_rng(0)
    rows = [
        f"q{q} Q0 doc{d} 0 {float(s)!r} tag"
        for q in range(50)
        for d, s in zip(
            rng.choice(10_000, 200, replace=False), np.round(rng.normal(size=200), 3), strict=True
        )
    ]
    fast = read_run(write(tmp_path, "fast.trec", "\n".join(rows) + "\n"))
    slow = read_run(write(tmp_path, "slow.trec", "\n".join(rows).replace(" ", "\t") + "\n"))
    assert fast.to_dict() == slow.to_dict() and len(fast) == 10_000


RUN_PATHS = {
    "plain": lambda text: io.BytesIO(text.encode()),
    "gzip": lambda text: io.BytesIO(gzip.compress(text.encode())),
    "tabs": lambda text: io.BytesIO(text.replace(" ", "\t").encode()),
}
COMMENTS = "# a comment\n#\n  # indented\n\t#tabbed q1 Q0 D9 1 1 t\n#q1 Q0 D8 1 1 t\n"


@pytest.mark.parametrize("path", RUN_PATHS)
def test_comment_lines_are_skipped_in_runs(path):
    """trec_eval 10 skips a line whose first character other than a blank is ``#``; a ``#`` inside a field
    (``D#2``) belongs to it. The run is named by the first line that is not a comment."""
    rows = [f"q{q} Q0 D#{d} {d} {9 - d} tag{q}\n" for q in range(1, 300) for d in range(5)]
    text = COMMENTS + "".join(rows[:200]) + COMMENTS + "".join(rows[200:]) + COMMENTS.rstrip("\n")
    run = read_run(RUN_PATHS[path](text))
    assert run.name == "tag1" and len(run) == 299 * 5 and "D8" not in run.to_dict()["q1"]
    assert run.to_dict()["q1"]["D#2"] == 7.0


@pytest.mark.parametrize("path", ["plain", "gzip", "tabs"])
def test_comment_lines_are_skipped_in_qrels(path):
    rows = [f"q{q} 0 D#{d} {d % 3}\n" for q in range(1, 300) for d in range(5)]
    qrels = read_qrels(QRELS_PATHS[path](COMMENTS + "".join(rows[:200]) + COMMENTS + "".join(rows[200:])))
    assert len(qrels) == 299 * 5 and qrels.to_dict()["q1"] == {f"D#{d}": d % 3 for d in range(5)}


@pytest.mark.parametrize(
    ("write", "rows"),
    [
        (write_run, Run.from_dict({"q1": {"D1": 1.0}, "#q2": {"D2": 1.0}}, name="r")),
        (write_qrels, Qrels.from_dict({"q1": {"D1": 1}, "#q2": {"D2": 1}})),
    ],
)
def test_a_query_id_starting_with_a_hash_is_not_written_as_a_comment(write, rows):
    with pytest.raises(FormatError) as info:
        write(rows, io.StringIO())
    where = f"<{write.__name__}>"
    assert (
        str(info.value)
        == f"{where}: query ID '#q2' starts with '#': its TREC lines would read as comments: '#q2'"
    )
    if write is write_qrels:
        out = io.StringIO()
        write_qrels(rows, out, format="beir")  # BEIR TSV has no comments
        assert read_qrels(io.StringIO(out.getvalue()), format="beir").to_dict() == rows.to_dict()


def test_a_bad_line_after_comments_keeps_its_line_number():
    with pytest.raises(FormatError, match=re.escape("<stream>:7: expected 6 fields")):
        read_run(io.StringIO(COMMENTS + "q1 Q0 D1 1 1 t\nq1 Q0 D2 1\n"))


# --------------------------------------------------------------------------------------------- qrels
QRELS_TEXT = "q1 0 D1 2\nq1 0 D2 0\nq2 0 D3 -1\n"


@pytest.mark.parametrize(
    "content", [QRELS_TEXT, QRELS_TEXT.replace(" ", "\t"), QRELS_TEXT.replace("\n", "\r\n")]
)
def test_trec_qrels(tmp_path, content):
    assert read_qrels(write(tmp_path, "qrels.txt", content)).to_dict() == {
        "q1": {"D1": 2, "D2": 0},
        "q2": {"D3": -1},
    }


@pytest.mark.parametrize(
    "content, message",
    [
        ("q1 0 D1\n", "qrels.txt:1: expected 4 fields (qid iter docid rel), got 3: 'q1 0 D1'"),
        ("q1 0 D1 1 extra\n", "qrels.txt:1: expected 4 fields (qid iter docid rel), got 5"),
        ("q1 0 D1 high\n", "qrels.txt:1: relevance grade is not an integer: 'high'"),
        ("q1 0 D1 1.5\n", "qrels.txt:1: relevance grade is not an integer: '1.5'"),
        ("q1 0 D1 1\nq1 0 D1 2\n", "qrels.txt:2: duplicate document 'D1' for query 'q1' (first on line 1)"),
    ],
)
def test_bad_qrels_lines(tmp_path, content, message):
    with pytest.raises(FormatError, match=re.escape(message)):
        read_qrels(write(tmp_path, "qrels.txt", content))


# Each qrels path: the numpy reader (plain), Arrow in pieces (gzip), the line reader (tabs), BEIR TSV.
QRELS_PATHS = {
    "plain": lambda text: io.BytesIO(text.encode()),
    "gzip": lambda text: io.BytesIO(gzip.compress(text.encode())),
    "tabs": lambda text: io.BytesIO(text.replace(" ", "\t").encode()),
    "beir": lambda text: io.BytesIO(
        ("query-id\tcorpus-id\tscore\n" + re.sub(r"(\S+) 0 (\S+) (\S+)", r"\1\t\2\t\3", text)).encode()
    ),
}


VECTORIZED = {"plain": ["_piece_qrels", "_slow_qrels"], "gzip": ["_slow_qrels"]}  # the readers after it


@pytest.mark.parametrize("path", QRELS_PATHS)
@pytest.mark.parametrize(
    ("grade", "value"),
    [("3.0", 3), ("3.00", 3), ("-1.0", -1), ("+2.0", 2), ("0.0", 0), ("-0.0", 0), ("3.", 3), ("7", 7)],
)
def test_an_integral_float_grade_is_that_integer(path, grade, value, monkeypatch):
    """Quepid writes its ratings as floats; trec_eval reads ``3.0`` as 3 (``atol``), and so do we, on every
    qrels path; a plain file stays on the numpy reader and a gzip file on Arrow (the slower ones refuse)."""
    for slower in VECTORIZED.get(path, ()):
        monkeypatch.setattr(_trec, slower, lambda *a, **k: pytest.fail("a slower reader was used"))
    text = f"q1 0 D1 {grade}\nq1 0 D2 1\n" + "".join(f"q2 0 E{i} {grade}\n" for i in range(2000))
    qrels = read_qrels(QRELS_PATHS[path](text))
    assert qrels.relevance.dtype == np.int64 and qrels.to_dict()["q1"] == {"D1": value, "D2": 1}
    assert set(qrels.to_dict()["q2"].values()) == {value} and len(qrels) == 2002


@pytest.mark.parametrize("path", QRELS_PATHS)
@pytest.mark.parametrize("grade", ["3.5", "3.05", "1e0", ".0", "3.0.0", "nan", "2.0x"])
def test_a_fractional_grade_names_its_line_and_value(path, grade):
    text = "".join(f"q2 0 E{i} 1\n" for i in range(2000)) + f"q1 0 D1 {grade}\n"
    with pytest.raises(FormatError) as info:
        read_qrels(QRELS_PATHS[path](text))
    line = 2001 + (path == "beir")
    assert str(info.value).startswith(f"<stream>:{line}: relevance grade is not an integer: {grade!r}: ")


def test_quepids_trec_export_is_read_with_its_float_grades():
    qrels = read_qrels(QUEPID / "case_trec.txt")
    assert qrels.to_dict() == {"2": {"docb": 1, "doca": 3}} and qrels.relevance.dtype == np.int64


BEIR_TEXT = "query-id\tcorpus-id\tscore\nq1\tD1\t2\nq1\tD2\t0\n"


def test_beir_qrels_by_extension_and_by_content(tmp_path):
    want = {"q1": {"D1": 2, "D2": 0}}
    assert read_qrels(write(tmp_path, "test.tsv", BEIR_TEXT)).to_dict() == want
    assert read_qrels(io.StringIO(BEIR_TEXT)).to_dict() == want


@pytest.mark.parametrize(
    "content, message",
    [
        ("q1\tD1\t2\n", "test.tsv:1: missing header line 'query-id<TAB>corpus-id<TAB>score'"),
        ("h\th\th\nq1\t\t2\n", "test.tsv:2: empty corpus-id"),
        (
            "h\th\th\nq1\tD1\n",
            "test.tsv:2: expected 3 tab-separated fields (query-id corpus-id score), got 2",
        ),
        ("h\th\th\nq1\tD1\tx\n", "test.tsv:2: relevance grade is not an integer: 'x'"),
    ],
)
def test_bad_beir_lines(tmp_path, content, message):
    with pytest.raises(FormatError, match=re.escape(message)):
        read_qrels(write(tmp_path, "test.tsv", content))


def test_unknown_format_option():
    with pytest.raises(FormatError, match=re.escape("format must be 'auto', 'trec' or 'beir'")):
        read_qrels(io.StringIO(QRELS_TEXT), format="csv")


def test_missing_file():
    with pytest.raises(FormatError, match="no such file"):
        read_run("/nonexistent/run.trec")


# ---------------------------------------------------------------------------------------- round trips
def test_run_round_trip_keeps_scores_exactly(tmp_path):
    run = Run.from_dict({"q1": {"D1": 0.1 + 0.2, "D2": 1e-300, "D3": -2.5}, "q2": {"D9": 1e20}}, name="x")
    write_run(run, tmp_path / "r.trec")
    again = read_run(tmp_path / "r.trec")
    assert again.to_dict() == run.to_dict() and again.name == "x"
    write_run(again, tmp_path / "r2.trec.gz")
    assert read_run(tmp_path / "r2.trec.gz").to_dict() == run.to_dict()


def test_run_is_written_in_rank_order(tmp_path):
    write_run(Run.from_dict({"q1": {"a": 1.0, "b": 2.0, "c": 1.0}}), tmp_path / "r.trec", tag="t")
    assert (tmp_path / "r.trec").read_text() == "q1 Q0 b 1 2.0 t\nq1 Q0 c 2 1.0 t\nq1 Q0 a 3 1.0 t\n"


@pytest.mark.parametrize("fmt", ["trec", "beir"])
def test_qrels_round_trip(tmp_path, fmt):
    qrels = read_qrels(SAMPLE / "qrels.trec")
    write_qrels(qrels, tmp_path / "q.out", format=fmt)
    assert read_qrels(tmp_path / "q.out", format=fmt).to_dict() == qrels.to_dict()


def test_sample_corpus_reads_utf8_and_round_trips(tmp_path):
    docs = read_corpus(SAMPLE / "docs.jsonl")
    assert list(docs["doc_id"]) == ["D1", "D2", "D3", "D4", "D5", "D6"]
    assert docs.loc[2, "title"] == "普通商品退货：条件与凭证"
    write_jsonl(docs, tmp_path / "docs.jsonl")
    assert read_corpus(tmp_path / "docs.jsonl").equals(docs)
    queries = read_queries(SAMPLE / "queries.jsonl")
    assert list(queries.columns[:2]) == ["query_id", "text"] and len(queries) == 3


@pytest.mark.parametrize(
    "name, content, message",
    [
        (
            "d.jsonl",
            '{"doc_id": "D1", "text": "a"}\n{"doc_id": "D1", "text": "b"}\n',
            "d.jsonl:2: duplicate doc_id 'D1' (first on line 1)",
        ),
        ("d.jsonl", '{"doc_id": "D1", "text": "a"\n', "d.jsonl:1: invalid JSON"),
        ("d.jsonl", '{"title": "x", "text": "a"}\n', "d.jsonl:1: missing doc_id (or _id, docid, id)"),
        ("d.jsonl", '{"doc_id": "", "text": "a"}\n', "d.jsonl:1: doc_id must be a non-empty string; got ''"),
        (
            "d.jsonl",
            '{"doc_id": "D 1", "text": "a"}\n',
            "d.jsonl:1: doc_id must not contain spaces, tabs or line breaks",
        ),
        ("d.jsonl", '{"doc_id": "D1"}\n', "d.jsonl:1: missing text"),
        ("d.jsonl", '{"doc_id": "D1", "text": 3}\n', "d.jsonl:1: text must be a string; got int"),
        ("d.jsonl", "[1, 2]\n", "d.jsonl:1: expected a JSON object, got list"),
        ("d.csv", "doc_id,title,text\nD1,t\n", "d.csv:2: expected 3 fields as in the header, got 2"),
    ],
)
def test_bad_corpus_lines(tmp_path, name, content, message):
    with pytest.raises(FormatError, match=re.escape(message)):
        read_corpus(write(tmp_path, name, content))


@pytest.mark.parametrize("name, sep", [("d.csv", ","), ("d.tsv", "\t")])
def test_corpus_from_csv_and_tsv(tmp_path, name, sep):
    content = sep.join(["doc_id", "title", "text"]) + "\n" + sep.join(["D1", "标题", "正文"]) + "\n"
    docs = read_corpus(write(tmp_path, name, content))
    assert docs.to_dict("records") == [{"doc_id": "D1", "title": "标题", "text": "正文"}]


def test_beir_style_ids_are_accepted(tmp_path):
    docs = read_corpus(write(tmp_path, "c.jsonl", '{"_id": "7", "title": "", "text": "x"}\n'))
    assert list(docs["doc_id"]) == ["7"]


def test_chunk_map(tmp_path):
    chunks, docs = read_chunk_map(write(tmp_path, "m.tsv", "chunk_id\tdoc_id\nD1#0\tD1\nD1#1\tD1\n"))
    assert chunks.to_pylist() == ["D1#0", "D1#1"] and docs.to_pylist() == ["D1", "D1"]


# ----------------------------------------------------------------------------------- in-memory inputs
@pytest.mark.parametrize(
    "build, message",
    [
        (
            lambda: Run.from_dict({"q1": ["D1", "D1", "D2"]}),
            "run: duplicate document 'D1' for query 'q1' at positions 1 and 2",
        ),
        (
            lambda: Run.from_dict({"q1": ["D1", 3]}),
            "run: doc_id must be a str; got int at position 2 for query 'q1'",
        ),
        (
            lambda: Run.from_dict({"q1": ["D1", " "]}),
            "run: doc_id contains a space, tab or line break at position 2 for query 'q1'",
        ),
        (lambda: Run.from_dict({"q1": ["D1", ""]}), "run: doc_id is empty at position 2 for query 'q1'"),
        (lambda: Run.from_dict({"q1": {"D1": True}}), "run: score of 'D1' for query 'q1' must be a number"),
        (
            lambda: Run.from_dict({"q1": "D1"}),
            "run: ranking of query 'q1' must be a list of doc IDs or a mapping",
        ),
        (lambda: Run.from_dict({1: ["D1"]}), "run: query_id must be a str; got int"),
        (lambda: Qrels.from_dict({"q1": {"D1": 1.0}}), "qrels: grade of 'D1' for query 'q1' must be an int"),
        (lambda: Qrels.from_dict({"q1": {"D1": True}}), "qrels: grade of 'D1' for query 'q1' must be an int"),
        (lambda: Qrels.from_dict([("q1", "D1", 1)]), "qrels: qrels must be a mapping {qid: {doc_id: grade}}"),
    ],
)
def test_in_memory_inputs_are_validated(build, message):
    with pytest.raises(FormatError, match=re.escape(message)):
        build()


def test_dataframe_inputs():
    import pandas as pd

    qrels = Qrels.from_dataframe(
        pd.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "relevance": [1, 0]})
    )
    assert qrels.to_dict() == {"1": {"a": 1, "b": 0}}
    bad = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(
        FormatError, match=re.escape("DataFrame row 2: duplicate document 'a' for query 'q' (first at row 1)")
    ):
        Run.from_dataframe(bad)
    with pytest.raises(FormatError, match=re.escape("missing column ['relevance']")):
        Qrels.from_dataframe(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"]}))
    with pytest.raises(
        FormatError, match=re.escape("DataFrame row 1: relevance must be an integer grade: '1.5'")
    ):
        Qrels.from_dataframe(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1.5]}))
    with pytest.raises(FormatError, match=re.escape("DataFrame row 2: score must be a number (not NaN)")):
        Run.from_dataframe(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, None]}))


@pytest.mark.parametrize(
    ("score", "message"),
    [
        (
            10**400,
            "run: score of 'd1' for query 'q1' is too large for a float (at most about 1.8e308): '1000000000",
        ),
        (
            -(10**400),
            "run: score of 'd1' for query 'q1' is too large for a float (at most about 1.8e308): '-100000000",
        ),
        (
            10**5000,
            "run: score of 'd1' for query 'q1' is too large for a float (at most about 1.8e308): "
            "'an integer of 16610 bits'",
        ),
        (float("nan"), "run: score of 'd1' for query 'q1' must be a number: 'nan'"),
    ],
    ids=["1e400", "-1e400", "1e5000", "nan"],
)
def test_evaluate_names_a_score_that_is_no_float(score, message):
    """A score too large for a float is the library's one-line error naming the query, the document and the
    value, not a bare OverflowError."""
    import metrics

    qrels = Qrels.from_dict({"q1": {"d1": 1}})
    with pytest.raises(FormatError) as exc:
        metrics.evaluate(qrels, {"q1": {"d1": score}}, ["P@1"])
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)


@pytest.mark.parametrize(
    ("per_query", "at", "line", "expected"),
    [
        # the pieces before it were read by the plain reader, whose count of their lines numbers the next
        (1000, 190_000, "q190 Q0 D190000 1 oops t", "190001: score is not a number: 'oops'"),
        # the query's rows span several pieces: a later piece's pairs of it are checked against the rows
        # gathered before it
        (
            100_000,
            99_000,
            "q0 Q0 D100 99001 1.5 t",
            "99001: duplicate document 'D100' for query 'q0' (first on line 101)",
        ),
    ],
)
def test_a_bad_line_many_plain_pieces_in_is_reported_at_its_line(tmp_path, per_query, at, line, expected):
    lines = [f"q{i // per_query} Q0 D{i} {i % per_query + 1} 1.5 t\n" for i in range(200_000)]
    lines[at] = line + "\n"
    path = tmp_path / "run.trec"
    path.write_text("".join(lines))
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert str(info.value) == f"{path}:{expected}: {line!r}"
