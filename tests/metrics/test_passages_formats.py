"""PASSAGES and CHUNKS files (`metrics.formats.read_passages`, `read_chunks`, `write_passages`): every bad
line named with its reason, exactly."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from metrics.errors import FormatError
from metrics.formats import read_chunks, read_passages, write_passages

GOOD = {"query_id": "q1", "doc_id": "d1", "doc_version": 2, "start": 4, "end": 9, "grade": 2}


def _jsonl(*records) -> io.BytesIO:
    return io.BytesIO("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode())


def test_read_passages_keeps_the_fields_the_excerpt_and_the_lines():
    frame = read_passages(_jsonl(GOOD, "", {**GOOD, "start": 9, "end": 12, "text": "ça va", "extra": 1}))
    assert frame.to_dict("records") == [
        {**GOOD, "text": None},
        {**GOOD, "start": 9, "end": 12, "text": "ça va"},
    ]
    assert frame.attrs == {"source": "<stream>", "lines": [1, 3]}
    assert read_passages(_jsonl(GOOD)).columns.tolist() == list(GOOD)


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ("[1, 2]", "expected a JSON object, got list"),
        ("{oops", "invalid JSON (Expecting property name enclosed in double quotes at column 2)"),
        ({k: v for k, v in GOOD.items() if k not in ("grade", "end")}, "missing fields end, grade"),
        ({**GOOD, "query_id": 7}, "query_id must be a string; got 7"),
        ({**GOOD, "doc_id": "d 1"}, "doc_id must not contain spaces, tabs or line breaks; got 'd 1'"),
        ({**GOOD, "doc_version": 0}, "doc_version must be an int >= 1; got 0"),
        ({**GOOD, "start": -1}, "start must be an int >= 0; got -1"),
        ({**GOOD, "start": 4.0}, "start must be an int >= 0; got 4.0"),
        ({**GOOD, "grade": True}, "grade must be an int >= 0; got True"),
        ({**GOOD, "end": 4}, "span [4, 4) is empty"),
        ({**GOOD, "end": 3}, "span [4, 3) ends before it starts"),
        ({**GOOD, "text": 5}, "text must be a string; got int"),
    ],
)
def test_read_passages_refuses_a_bad_line(record, reason):
    with pytest.raises(FormatError) as caught:
        read_passages(_jsonl(GOOD, record))
    (problem,) = caught.value.problems
    assert (problem.line, problem.reason) == (2, reason)


def test_read_passages_refuses_overlapping_and_repeated_passages_of_one_document_version():
    data = _jsonl(
        GOOD,
        {**GOOD, "start": 0, "end": 30},  # line 2 reaches furthest
        {**GOOD, "start": 20, "end": 25},
        {**GOOD, "start": 0, "end": 30},
        {**GOOD, "start": 30, "end": 40},  # touches: fine
        {**GOOD, "doc_version": 3, "start": 0, "end": 30},  # another version: fine
        {**GOOD, "query_id": "q2", "start": 0, "end": 30},  # another query: fine
    )
    with pytest.raises(FormatError) as caught:
        read_passages(data)
    assert [(p.line, p.reason) for p in caught.value.problems] == [
        (1, "span [4, 9) overlaps span [0, 30) of line 2 (query 'q1', document 'd1')"),
        (3, "span [20, 25) overlaps span [0, 30) of line 2 (query 'q1', document 'd1')"),
        (4, "duplicate passage (first on line 2)"),
    ]
    assert caught.value.problems[0].text == json.dumps(GOOD)


def test_write_passages_round_trips(tmp_path):
    frame = read_passages(_jsonl(GOOD, {**GOOD, "start": 20, "end": 25, "text": "naïve"}))
    path = tmp_path / "passages.jsonl"
    write_passages(frame, path)
    assert read_passages(path).drop(columns=[]).to_dict("records") == frame.to_dict("records")
    with pytest.raises(FormatError, match=r"^passages: missing column \['grade'\]: "):
        write_passages(frame.drop(columns=["grade"]), path)


DOCS = {"d1": "One two. Three four. One two.", "d2": "Short.", "d3": "la la la"}


@pytest.mark.parametrize(
    ("name", "content", "want"),
    [
        (
            "chunks.jsonl",
            '{"chunk_id": "a", "doc_id": "d1", "start": 0, "end": 8}\n{"chunk_id": "b", "doc_id": "d2", '
            '"start": 0, "end": 6}\n',
            [("a", "d1", 0, 8), ("b", "d2", 0, 6)],
        ),
        (
            "chunks.csv",
            "chunk_id,doc_id,start,end\na,d1,0,8\nb,d1,9,20\n",
            [("a", "d1", 0, 8), ("b", "d1", 9, 20)],
        ),
        ("chunks.tsv", "chunk_id\tdoc_id\tstart\tend\na\td1\t0\t8\n", [("a", "d1", 0, 8)]),
        (
            # texts are found after the previous chunk's start: the second "One two." is the one at 21
            "chunks.jsonl",
            '{"chunk_id": "a", "doc_id": "d1", "text": "One two."}\n'
            '{"chunk_id": "b", "doc_id": "d1", "text": "Three four."}\n'
            '{"chunk_id": "c", "doc_id": "d1", "text": "One two."}\n',
            [("a", "d1", 0, 8), ("b", "d1", 9, 20), ("c", "d1", 21, 29)],
        ),
        (
            "chunks.tsv",  # the same text again is the next occurrence, not the same one
            "chunk_id\tdoc_id\ttext\na\td3\tla\nb\td3\tla\nc\td3\tla\n",
            [("a", "d3", 0, 2), ("b", "d3", 3, 5), ("c", "d3", 6, 8)],
        ),
        (
            "chunks.csv",  # out of order: "One" after c's start is the second one; "Short" only from 0
            "chunk_id,doc_id,text\nc,d1,Three four.\na,d1,One\nb,d1,One two. Three\n",
            [("c", "d1", 9, 20), ("a", "d1", 21, 24), ("b", "d1", 0, 14)],
        ),
    ],
)
def test_read_chunks_by_offsets_or_by_located_text(tmp_path, name, content, want):
    path = tmp_path / name
    path.write_text(content)
    frame = read_chunks(path, corpus=DOCS)
    assert [tuple(r) for r in frame.itertuples(index=False)] == want
    assert frame.attrs["source"] == str(path)


@pytest.mark.parametrize(
    ("line", "corpus", "reason"),
    [
        (
            '{"chunk_id": "b", "doc_id": "d1", "text": "Five six."}',
            DOCS,
            "chunk text not found in document 'd1'",
        ),
        ('{"chunk_id": "b", "doc_id": "d9", "text": "x"}', DOCS, "document 'd9' is not in the corpus"),
        (
            '{"chunk_id": "b", "doc_id": "d1", "text": "One"}',
            None,
            "chunk given by its text, but no corpus to locate it in (pass corpus=)",
        ),
        (
            '{"chunk_id": "b", "doc_id": "d2", "start": 0, "end": 9}',
            DOCS,
            "span [0, 9) is out of range (document length 6)",
        ),
        ('{"chunk_id": "b", "doc_id": "d1", "start": 5, "end": 5}', None, "span [5, 5) is empty"),
        (
            '{"chunk_id": "b", "doc_id": "d1", "start": 5, "end": 2}',
            None,
            "span [5, 2) ends before it starts",
        ),
        (
            '{"chunk_id": "b", "doc_id": "d1", "start": "5", "end": 9}',
            None,
            "start must be an int >= 0; got '5'",
        ),
        ('{"chunk_id": "b", "doc_id": "d1", "start": 5}', None, "end must be an int >= 0; got None"),
        ('{"chunk_id": "b", "doc_id": "d1"}', None, "expected start and end, or text"),
        ('{"chunk_id": "b", "doc_id": "d1", "text": 3}', None, "text must be a string; got int"),
        ('{"doc_id": "d1", "start": 0, "end": 3}', None, "missing chunk_id"),
        (
            '{"chunk_id": "a", "doc_id": "d1", "start": 0, "end": 3}',
            None,
            "duplicate chunk_id 'a' (first on line 1)",
        ),
    ],
)
@pytest.mark.parametrize("where", ["memory", "file"])  # a JSONL file on disk is read by Arrow first
def test_read_chunks_refuses_a_bad_line_naming_it(tmp_path, where, line, corpus, reason):
    content = ('{"chunk_id": "a", "doc_id": "d1", "start": 0, "end": 3}\n' + line + "\n").encode()
    path = tmp_path / "chunks.jsonl"
    path.write_bytes(content)
    with pytest.raises(FormatError) as caught:
        read_chunks(io.BytesIO(content) if where == "memory" else path, corpus=corpus)
    (problem,) = caught.value.problems
    assert (problem.line, problem.reason) == (2, reason)


GOOD_CHUNKS = (
    '{"chunk_id": "a", "doc_id": "d1", "start": 0, "end": 3, "text": "One"}\n'
    '{"end": 8, "start": 4, "doc_id": "d1", "chunk_id": "b", "model": {"name": "x"}}\n'
    '{"chunk_id": "c", "doc_id": "d2", "start": 0, "end": 6}'
)


@pytest.mark.parametrize(
    ("content", "lines"),
    [
        (GOOD_CHUNKS, [1, 2, 3]),  # Arrow reads it: extra fields, no newline at the end
        (GOOD_CHUNKS.replace("\n", "\n\n", 1), [1, 3, 4]),  # a blank line: the line reader numbers the lines
        ("\ufeff" + GOOD_CHUNKS, [1, 2, 3]),  # a BOM
        (GOOD_CHUNKS.replace('"end": 6', '"end": 6.0'), None),  # a float offset: refused line by line
    ],
)
def test_read_chunks_from_a_file_equals_the_line_reader(tmp_path, content, lines):
    path = tmp_path / "chunks.jsonl"
    path.write_text(content, encoding="utf-8")
    if lines is None:
        with pytest.raises(FormatError, match=r"chunks.jsonl:3: end must be an int >= 0; got 6.0: "):
            read_chunks(path, corpus=DOCS)
        return
    fast, slow = read_chunks(path, corpus=DOCS), read_chunks(io.BytesIO(content.encode()), corpus=DOCS)
    assert (
        fast.to_dict("records")
        == slow.to_dict("records")
        == [
            {"chunk_id": "a", "doc_id": "d1", "start": 0, "end": 3},
            {"chunk_id": "b", "doc_id": "d1", "start": 4, "end": 8},
            {"chunk_id": "c", "doc_id": "d2", "start": 0, "end": 6},
        ]
    )
    assert fast.attrs["lines"] == slow.attrs["lines"] == lines


def test_read_chunks_takes_a_corpus_as_a_dataframe_or_a_file(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"doc_id": "d1", "text": "alpha beta"}\n')
    data = b'{"chunk_id": "a", "doc_id": "d1", "text": "beta"}\n'
    frame = pd.DataFrame({"doc_id": ["d1"], "text": ["alpha beta"]})
    for given in (corpus, frame):
        assert read_chunks(io.BytesIO(data), corpus=given).iloc[0].tolist()[2:] == [6, 10]
    with pytest.raises(FormatError, match="^<input>: corpus must be a mapping"):
        read_chunks(io.BytesIO(data), corpus=[1])
