"""`metrics.formats.read_labels`: every bad record of every format named by its line, with the exact
reason; nothing half-read."""

from __future__ import annotations

import io
import json

import pytest

from metrics.errors import FormatError, QrelForgeError
from metrics.formats import read_labels


def _file(text: str, name: str) -> io.StringIO:
    f = io.StringIO(text)
    f.name = name
    return f


def _ls(annotations, data=None) -> str:
    data = {"query_id": "q1", "doc_id": "d1"} if data is None else data
    return json.dumps([{"id": 1, "data": data, "annotations": annotations}], indent=1)


def _choice(value, who=1) -> dict:
    return {"completed_by": who, "result": [{"type": "choices", "value": {"choices": value}}]}


QD = '{"query_id": "q1", "doc_id": "d1", '
BAD = [
    (
        "jsonl",
        "{oops\n",
        "x.jsonl:1: invalid JSON (Expecting property name enclosed in double quotes at column 2)",
    ),
    ("jsonl", "\n[1]\n", "x.jsonl:2: a line must be a JSON object; got list"),
    ("jsonl", '{"doc_id": "d1", "grade": 1}\n', "x.jsonl:1: missing query_id"),
    (
        "jsonl",
        QD + '"grade": 1}\n',
        "x.jsonl:1: no annotator: the record names none and annotator= was not given",
    ),
    (
        "jsonl",
        QD + '"annotator": "a", "grade": "high"}\n',
        "x.jsonl:1: grade 'high' is not an integer nor a label of grade_map",
    ),
    (
        "jsonl",
        QD + '"annotator": "a", "grade": true}\n',
        "x.jsonl:1: grade True is not an integer nor a label of grade_map",
    ),
    (
        "jsonl",
        QD + '"annotator": "a", "grade": 1.5}\n',
        "x.jsonl:1: grade 1.5 is not an integer nor a label of grade_map",
    ),
    (
        "jsonl",
        QD + '"annotator": "a", "grade": 9223372036854775808}\n',
        "x.jsonl:1: grade 9223372036854775808 is out of the 64-bit integer range",
    ),
    (
        "jsonl",
        '{"query_id": "q 1", "doc_id": "d1", "annotator": "a", "grade": 1}\n',
        "x.jsonl:1: query_id must not contain spaces, tabs or line breaks; got 'q 1'",
    ),
    (
        "jsonl",
        QD + '"annotator": "a", "grade": 1, "reason": 7}\n',
        "x.jsonl:1: reason must be a string; got 7",
    ),
    (
        "jsonl",
        (QD + '"annotator": "a", "grade": 1}\n') * 2,
        "x.jsonl:2: duplicate label of query 'q1', document 'd1' by annotator 'a', first on line 1",
    ),
    ("label-studio", '[\n {"data": {}}\n]', "x.json:2: data has no query_id"),
    ("label-studio", "[\n 1,\n 2", "x.json:2: a task must be a JSON object; got int"),
    ("label-studio", '[{"data": 1}]', "x.json:1: data must be a JSON object; got int"),
    (
        "label-studio",
        '[\n{"data": {"query_id": "q", "doc_id": "d"}},\n{,}]',
        "x.json:3: invalid JSON (Expecting property name enclosed in double quotes)",
    ),
    (
        "label-studio",
        _ls([_choice(["1", "2"])]),
        "x.json:2: annotation 1: choices must hold one choice; got ['1', '2']",
    ),
    (
        "label-studio",
        _ls([_choice(["Relevant"])]),
        "x.json:2: annotation 1: choice 'Relevant' is not an integer nor a label of grade_map",
    ),
    (
        "label-studio",
        _ls([_choice(["1"]), _choice(["2"])]),
        "x.json:2: duplicate label of query 'q1', document 'd1' by annotator 'label-studio-1', "
        "first on line 2",
    ),
    (
        "label-studio",
        _ls(
            [
                {
                    "completed_by": 1,
                    "result": [
                        {"type": "choices", "value": {"choices": ["1"]}},
                        {"type": "rating", "value": {"rating": 2}},
                    ],
                }
            ]
        ),
        "x.json:2: annotation 1: 2 choices/rating results; expected one",
    ),
    ("argilla", '{"metadata": {"query_id": "q1"}}\n', "x.json:1: neither metadata nor fields hold doc_id"),
    (
        "argilla",
        '{"metadata": {"query_id": "q1", "doc_id": "d1"}, "responses": {"a": [], "b": []}}\n',
        "x.json:1: responses answer 2 questions ['a', 'b']; expected one (besides 'reason')",
    ),
    (
        "argilla",
        '{"fields": {"query_id": "q1", "doc_id": "d1"}, '
        '"responses": {"rel": [{"value": "x", "user_id": "u1"}]}}\n',
        "x.json:1: response of u1 'x' is not an integer nor a label of grade_map",
    ),
    (
        "prodigy",
        '{"query_id": "q1", "doc_id": "d1", "answer": "maybe"}\n',
        "x.jsonl:1: answer must be 'accept', 'reject' or 'ignore'; got 'maybe'",
    ),
    (
        "prodigy",
        '{"answer": "accept", "_annotator_id": "a"}\n',
        "x.jsonl:1: neither the task nor its meta hold query_id",
    ),
    (
        "prodigy",
        '{"meta": {"query_id": "q1", "doc_id": "d1"}, "options": [], "accept": [1, 2], "answer": "accept"}\n',
        "x.jsonl:1: a choice task needs answer 'accept' and one accepted option; got [1, 2]",
    ),
    (
        "quepid",
        "query,doc,rating\nq,d,1\n",
        "x.csv:1: header must name query, docid, rating; missing ['docid']",
    ),
    (
        "quepid",
        "query,docid,rating\nquery one,d1,1\n",
        "x.csv:2: Quepid's ratings do not say who rated: give annotator=",
    ),
]


@pytest.mark.parametrize(("fmt", "text", "message"), BAD)
def test_bad_records_are_named_by_line(fmt, text, message):
    name = {"jsonl": "x.jsonl", "prodigy": "x.jsonl", "quepid": "x.csv"}.get(fmt, "x.json")
    with pytest.raises(FormatError) as exc:
        read_labels(_file(text, name), format=fmt)
    first = exc.value.problems[0]
    assert f"{first.source}:{first.line}: {first.reason}" == message


def test_every_bad_line_is_listed_and_nothing_is_returned():
    text = '{"query_id": "q1"}\n{"query_id": "q1", "doc_id": "d1", "annotator": "a", "grade": 1}\n[]\n'
    with pytest.raises(FormatError) as exc:
        read_labels(_file(text, "x.jsonl"), format="jsonl")
    assert [p.line for p in exc.value.problems] == [1, 3]
    assert str(exc.value) == 'x.jsonl:1: missing doc_id: \'{"query_id": "q1"}\' (and 1 more problem)'


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"format": "csv"},
            "format must be one of 'jsonl', 'label-studio', 'argilla', 'prodigy', 'quepid'; got 'csv'",
        ),
        ({"format": "jsonl", "annotator": ""}, "annotator must be a non-empty string or None; got ''"),
        (
            {"format": "jsonl", "grade_map": {"a": "1"}},
            "grade_map must map labels (str) to grades (int); got 'a': '1'",
        ),
        ({"format": "jsonl", "grade_map": [1]}, "grade_map must map labels (str) to grades (int); got [1]"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(QrelForgeError) as exc:
        read_labels(_file("", "x.jsonl"), **kwargs)
    assert str(exc.value) == message


def test_grade_map_renumbers_and_the_annotator_fills_in():
    text = 'query,docid,rating\nquery one,d1,4\nquery one,d2,1\nquery two\n" =1+1",d3,0\n'
    labels = read_labels(_file(text, "x.csv"), format="quepid", annotator="rita", grade_map={"4": 3})
    assert [(x.query_text, x.doc_id, x.annotator, x.grade, x.line) for x in labels] == [
        ("query one", "d1", "rita", 3, 2),
        ("query one", "d2", "rita", 1, 3),
        ("=1+1", "d3", "rita", 0, 5),
    ]


def test_prodigy_binary_answers_and_ignore():
    rows = [
        {"query_id": "q1", "doc_id": "d1", "answer": "accept", "_session_id": "s-a"},
        {"query_id": "q1", "doc_id": "d2", "answer": "reject", "_session_id": "s-a"},
        {"query_id": "q1", "doc_id": "d3", "answer": "ignore", "_session_id": "s-a"},
    ]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    labels = read_labels(_file(text, "x.jsonl"), format="prodigy", grade_map={"accept": 2})
    assert [(x.doc_id, x.grade, x.annotator) for x in labels] == [("d1", 2, "s-a"), ("d2", 0, "s-a")]


def test_label_studio_rating_email_and_cancelled():
    annotations = [
        {
            "completed_by": {"id": 4, "email": "ann@example.com"},
            "result": [{"type": "rating", "value": {"rating": 3}}],
        },
        {"completed_by": 5, "was_cancelled": True, "result": []},
        {"completed_by": 6, "result": []},
    ]
    labels = read_labels(_file(_ls(annotations), "x.json"), format="label-studio")
    assert [(x.annotator, x.grade, x.reason) for x in labels] == [("ann", 3, "")]
