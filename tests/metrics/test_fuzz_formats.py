"""Property tests for every reader and for measure names.

The only outcomes allowed: a correct parse, or our own error naming the line. Layout noise (runs of spaces and
tabs, CRLF, BOM, blank lines, extra run fields) never changes what is read, and read → write → read is the
identity.
"""

from __future__ import annotations

import io
import json
import math
import os

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from metrics import (
    FormatError,
    MeasureError,
    Qrels,
    Run,
    parse_measure,
    read_corpus,
    read_qrels,
    read_queries,
    read_run,
    write_jsonl,
    write_qrels,
    write_run,
)

# QF_FUZZ_EXAMPLES=5000 for a long hunt; the default keeps `make test` fast.
FUZZ = settings(
    max_examples=int(os.environ.get("QF_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# IDs: anything printable without spaces, tabs or line ends (Chinese, punctuation, look-alikes included).
ID = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters=" \t\r\n\x85\u2028\u2029"),
    min_size=1,
    max_size=12,
)
QID = ID.filter(lambda s: not s.startswith("#"))  # a TREC line starting with '#' is a comment
SCORE = st.one_of(st.floats(allow_nan=False, width=64), st.integers(-(10**6), 10**6).map(float))
SEP = st.sampled_from([" ", "\t", "  ", " \t ", "\t\t"])


def reader_outcome(read, data: bytes):
    """Run ``read`` on ``data``; only a result or a FormatError naming its line may come out."""
    try:
        return read(io.BytesIO(data))
    except FormatError as exc:
        assert exc.problems, exc
        for p in exc.problems:
            assert p.line is not None or p.reason.startswith("not a valid gzip file"), p
        return None


@FUZZ
@given(st.binary(max_size=400))
@example(b"")
@example(b"\xef\xbb\xbf")
@example(b"\xff\xfe q1 Q0 D1 1 1 s")
@example(b"q1 Q0 D1 1 nan s\n")
@example(b"\x1f\x8b garbage")
@example(b"q1\x00 Q0 D1 1 1 s\n")
def test_random_bytes_never_escape_as_other_errors(data):
    for read in (read_run, read_qrels, read_corpus, read_queries):
        reader_outcome(read, data)
    reader_outcome(lambda f: read_qrels(f, format="beir"), data)


@st.composite
def run_layouts(draw):
    """A run as a model {qid: {doc: score}} and as text laid out with random whitespace and line ends."""
    model: dict[str, dict[str, float]] = {}
    for qid in draw(st.lists(QID, min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(ID, min_size=1, max_size=6, unique=True))
        model[qid] = {d: draw(SCORE) for d in docs}
    single = draw(st.booleans())  # single spaces take the vectorized reader
    lines = []
    for qid, docs in model.items():
        for rank, (doc, score) in enumerate(docs.items(), 1):
            fields = [qid, "Q0", doc, str(rank), repr(score), "tag"]
            if draw(st.booleans()) and not single:
                fields.append("extra field")
            sep = " " if single else draw(SEP)
            pad = "" if single else draw(st.sampled_from(["", " ", "\t"]))
            lines.append(pad + sep.join(fields) + pad)
            if not single and draw(st.integers(0, 5)) == 0:
                lines.append(draw(st.sampled_from(["", "  ", "\t"])))
    end = "\n" if single else draw(st.sampled_from(["\n", "\r\n"]))
    bom = "" if single else draw(st.sampled_from(["", "\ufeff"]))
    return model, bom + end.join(lines) + end


@FUZZ
@given(run_layouts())
def test_run_layouts_parse_to_the_model(case):
    model, text = case
    run = read_run(io.BytesIO(text.encode("utf-8")))
    assert run.to_dict() == model


@FUZZ
@given(run_layouts())
def test_run_round_trip(case):
    model, _ = case
    run = Run.from_dict(model, name="r")
    out = io.StringIO()
    write_run(run, out)
    again = read_run(io.BytesIO(out.getvalue().encode("utf-8")))
    assert again.to_dict() == model and again.name == "r"
    out2 = io.StringIO()
    write_run(again, out2)
    assert out2.getvalue() == out.getvalue()


@st.composite
def qrels_models(draw):
    model: dict[str, dict[str, int]] = {}
    for qid in draw(st.lists(QID, min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(ID, min_size=1, max_size=6, unique=True))
        model[qid] = {d: draw(st.integers(-3, 10)) for d in docs}
    return model


@FUZZ
@given(qrels_models(), SEP, st.sampled_from(["\n", "\r\n"]))
def test_qrels_parse_and_round_trip(model, sep, end):
    text = end.join(sep.join([q, "0", d, str(g)]) for q, docs in model.items() for d, g in docs.items()) + end
    assert read_qrels(io.BytesIO(text.encode())).to_dict() == model
    for fmt in ("trec", "beir"):
        out = io.StringIO()
        write_qrels(Qrels.from_dict(model), out, format=fmt)
        assert read_qrels(io.BytesIO(out.getvalue().encode()), format=fmt).to_dict() == model


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@FUZZ
@given(st.lists(st.tuples(ID, TEXT, TEXT), max_size=5, unique_by=lambda r: r[0]))
def test_corpus_round_trip(rows):
    records = [{"doc_id": d, "title": t, "text": x} for d, t, x in rows]
    out = io.StringIO()
    write_jsonl(records, out)
    frame = read_corpus(io.BytesIO(out.getvalue().encode()))
    assert frame.to_dict("records") == records


@FUZZ
@given(st.lists(st.text(max_size=30), max_size=4))
def test_jsonl_lines_of_anything(lines):
    data = "\n".join(lines).encode("utf-8")
    result = reader_outcome(read_corpus, data)
    if result is not None:
        assert all(isinstance(d, str) and d.strip() for d in result["doc_id"])


@pytest.mark.parametrize(
    "score", ["inf", "-inf", "-0", "+3.5", ".5", "5."]
)  # 1e400: tests/metrics/test_hostile_numbers.py
def test_infinite_and_unusual_scores_are_numbers(score):
    run = read_run(io.StringIO(f"q1 Q0 D1 1 {score} s\nq1 Q0 D2 2 0 s\n"))
    assert run.to_dict()["q1"]["D1"] == float(score)


@pytest.mark.parametrize("score", ["nan", "NaN", "-nan", "1,5", "0x10", "1_0", "١"])
def test_nan_and_foreign_numbers_are_errors_naming_the_line(score):
    with pytest.raises(FormatError, match=r"<stream>:2: score is not a number"):
        read_run(io.StringIO(f"q1 Q0 D1 1 1 s\nq1 Q0 D2 2 {score} s\n"))


def test_a_million_duplicate_lines_fail_fast_naming_line_two():
    data = b"q1 Q0 D1 1 1.0 s\n" * 1_000_000
    with pytest.raises(
        FormatError, match=r"<stream>:2: duplicate document 'D1' for query 'q1' \(first on line 1\)"
    ):
        read_run(io.BytesIO(data))


def test_a_huge_line_is_one_error():
    data = b"q1 Q0 " + b"x" * 5_000_000 + b"\n"
    with pytest.raises(FormatError, match=r"<stream>:1: expected 6 fields"):
        read_run(io.BytesIO(data))


def test_a_huge_id_is_refused_and_the_longest_allowed_is_read():  # the 512-byte cap of issue 16.8
    doc = "d" * 512
    assert list(read_run(io.StringIO(f"q1 Q0 {doc} 1 1 s\n")).to_dict()["q1"]) == [doc]
    with pytest.raises(FormatError, match="document ID is longer than 512 bytes"):
        read_run(io.StringIO(f"q1 Q0 {'d' * 100_000} 1 1 s\n"))


def test_empty_files():
    assert len(read_run(io.BytesIO(b""))) == 0 and len(read_qrels(io.BytesIO(b""))) == 0
    assert len(read_corpus(io.BytesIO(b""))) == 0


@FUZZ
@given(st.text(max_size=30))
@example("P@10")
@example("nDCG(gain=exp)@5")
@example("P(rel=2,rel=3)@5")
@example("P@99999999999999999999")
def test_measure_names_parse_or_raise_our_error(text):
    try:
        measure = parse_measure(text)
    except MeasureError:
        return
    assert parse_measure(str(measure)) == measure


def test_json_numbers_in_ids_are_strings():
    frame = read_corpus(io.StringIO(json.dumps({"_id": 12, "text": "x"}) + "\n"))
    assert list(frame["doc_id"]) == ["12"]
    assert not math.isnan(0.0)
