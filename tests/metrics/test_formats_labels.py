"""`metrics.formats.read_labels`: every bad record of every format named by its line, with the exact
reason; nothing half-read."""

from __future__ import annotations

import io
import json
from pathlib import Path

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
        "x.jsonl:1: a choice task needs one accepted option; got [1, 2]",
    ),
    (
        "argilla",
        '{"query_id": "q1", "doc_id": "d1", "rel.responses": [1], "rel.responses.users": []}\n',
        "x.json:1: rel.responses, rel.responses.users and rel.responses.status must be lists of one length",
    ),
    (
        "argilla",
        '{"rel.responses": [1], "rel.responses.users": ["u"]}\n',
        "x.json:1: the record has no query_id",
    ),
    (
        "prodigy",
        '{"query_id": "q1", "doc_id": "d1", "answer": "accept", "_annotator_id": "a", "_timestamp": "x"}\n',
        "x.jsonl:1: _timestamp must be a number; got 'x'",
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


def test_label_studio_rating_user_object_and_cancelled():
    annotations = [
        {
            "completed_by": {"id": 4, "email": "ann@example.com"},
            "result": [{"type": "rating", "value": {"rating": 3}}],
        },
        {
            "completed_by": {"email": "bea@example.com"},
            "result": [{"type": "rating", "value": {"rating": 2}}],
        },
        {"completed_by": 5, "was_cancelled": True, "result": []},
        {"completed_by": 6, "result": []},
    ]
    labels = read_labels(_file(_ls(annotations), "x.json"), format="label-studio")
    assert [(x.annotator, x.grade, x.reason) for x in labels] == [("label-studio-4", 3, ""), ("bea", 2, "")]
    assert labels.summary() == "2 labels; 2 left out: 1 skipped, 1 without a choice"


# ------------------------------------------------------------------------------ real exports (fixtures)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "labels"
ALICE, BOB = "99e68edb-ee02-43ee-a462-ed4ea968d38f", "05597270-1b78-4a3c-ae64-a061c87e4ee7"
CAROL = "ef56d0ce-764d-468f-b10e-677f164e9deb"
BEN, JULIA = "2024-04-20_10-59-51", "2024-07-22_18-49-53"
P1, P2 = "1ed4cad4-9edc-4d6d-83bb-b7e595c2fe0b", "e1eec138-4623-4b5b-b555-6d1d69348d78"
LS_ALICE = [
    ("q0", "D0", 3),
    ("q0", "D1", 1),
    ("q0", "D2", 0),
    ("q1", "D0", 2),
    ("q1", "D1", 0),
    ("q1", "D2", 1),
]
LS_BOB = LS_ALICE[:5] + [("q1", "D2", 2)]
ARGILLA_REASON = "{who}: grade {g} for {q}/{d}"
# file, format, options -> summary, and (query, doc, annotator, grade, reason, version) of each label in order
REAL = [
    (
        "label_studio.json",
        "label-studio",
        {},
        "12 labels; 1 left out: 1 skipped",
        [
            (q, d, f"label-studio-{n}", g, f"{who}: grade {g} for {q}/{d}", 1)
            for (q, d, g), (q2, d2, g2) in zip(LS_ALICE, LS_BOB, strict=True)
            for n, who, g in ((2, "alice", g), (3, "bob", g2))
        ],
    ),
    (
        "label_studio_numeric_ids.json",
        "label-studio",
        {},
        "12 labels; 1 left out: 1 skipped",
        [
            (str(101 + i // 3), str(7 + i % 3), f"label-studio-{n}", g, "", 1)
            for i, ((_, _, ga), (_, _, gb)) in enumerate(zip(LS_ALICE, LS_BOB, strict=True))
            for n, g in ((2, ga), (3, gb))
        ],
    ),
    (
        "label_studio_task.json",
        "label-studio",
        {},
        "2 labels; 1 left out: 1 skipped",
        [("101", "7", "label-studio-2", 3, "", 1), ("101", "7", "label-studio-3", 3, "", 1)],
    ),
    (
        "label_studio_annotation.json",
        "label-studio",
        {},
        "1 label",
        [("q0", "D0", "label-studio-2", 3, "alice: grade 3 for q0/D0", 1)],
    ),
    (
        "argilla_datasets.jsonl",
        "argilla",
        {},
        "12 labels; 2 left out: 1 draft, 1 discarded",
        [
            (q, d, uid, g, f"{who}: grade {g} for {q}/{d}", 1)
            for (q, d, ga), (_, _, gb) in zip(LS_ALICE, LS_BOB, strict=True)
            for uid, who, g in ((ALICE, "alice", ga), (BOB, "bob", gb))
        ],
    ),
    (
        "prodigy.jsonl",
        "prodigy",
        {},
        "12 labels; 4 left out: 3 rejected, 1 without a choice",
        [(q, d, BEN, g, "", 1) for q, d, g in LS_ALICE] + [(q, d, JULIA, g, "", 1) for q, d, g in LS_BOB],
    ),
    (
        "prodigy_sessions.jsonl",
        "prodigy",
        {},
        "8 labels; 2 left out: 2 ignored",
        [
            ("q0", "D0", P2, 1, "", 1),
            ("q0", "D1", P2, 1, "", 1),
            ("q0", "D2", P2, 0, "", 1),
            ("q0", "D0", P1, 1, "", 1),  # answered again in another session, the same: one label
            ("q0", "D1", P1, 1, "", 1),
            ("q0", "D2", P1, 0, "", 1),
            ("q1", "D0", P1, 0, "", 1),  # rejected, then accepted in another session: two versions
            ("q1", "D0", P1, 1, "", 2),
        ],
    ),
    (
        "quepid_case.csv",
        "quepid",
        {"annotator": "rita"},
        "12 labels",
        [
            (q, d, "rita", g, "", 1)
            for q, ratings in (
                ("120v power supply", (("3488015", 0), ("637052", 0), ("2274126", 0), ("499178", 0))),
                ("power supply", (("1667753", 0), ("1667805", 0), ("1667802", 0), ("1667811", 0))),
                ("projector screen", (("1069226", 3), ("47471", 3), ("490523", 1), ("1229109", 0))),
            )
            for d, g in ratings
        ],
    ),
]


@pytest.mark.parametrize(("name", "fmt", "options", "summary", "labels"), REAL, ids=[r[0] for r in REAL])
def test_real_exports_are_read(name, fmt, options, summary, labels):
    found = read_labels(FIXTURES / name, format=fmt, **options)
    assert found.summary() == summary
    got = [(x.query_id or x.query_text, x.doc_id, x.annotator, x.grade, x.reason, x.version) for x in found]
    assert got == labels


def test_argilla_to_json_holds_no_response_status():
    """Argilla 2.8's records.to_json writes {value, user_id}: carol's draft and discarded answers read as
    answers (the flattened export, above, leaves them out)."""
    found = read_labels(FIXTURES / "argilla.json", format="argilla")
    assert found.summary() == "14 labels"
    assert [(x.query_id, x.doc_id, x.grade, x.reason) for x in found if x.annotator == CAROL] == [
        ("q0", "D0", 2, ""),
        ("q0", "D2", 1, "carol: not sure"),
    ]


REFUSED = [
    (
        "label_studio_min.json",
        "label_studio_min.json:2: this is Label Studio's JSON-MIN export, which does not keep who gave each "
        "label: export the project as JSON (Export, then JSON) and import that file",
    ),
    (
        "label_studio.csv",
        "label_studio.csv:1: this is Label Studio's CSV export, which does not keep who gave each label: "
        "export the project as JSON (Export, then JSON) and import that file",
    ),
]


@pytest.mark.parametrize(("name", "message"), REFUSED)
def test_label_studio_min_and_csv_exports_are_refused_in_one_line(name, message):
    with pytest.raises(FormatError) as exc:
        read_labels(_file((FIXTURES / name).read_text(encoding="utf-8"), name), format="label-studio")
    assert len(exc.value.problems) == 1
    first = exc.value.problems[0]
    assert f"{first.source}:{first.line}: {first.reason}" == message


def test_prodigy_versions_follow_timestamps_not_lines():
    lines = (FIXTURES / "prodigy_sessions.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    shuffled = read_labels(_file("".join(reversed(lines)), "x.jsonl"), format="prodigy")
    p1 = [(x.doc_id, x.grade, x.version) for x in shuffled if x.annotator == P1 and x.query_id == "q1"]
    assert p1 == [("D0", 0, 1), ("D0", 1, 2)]
    assert shuffled.summary() == "8 labels; 2 left out: 2 ignored"


def _argilla_record(responses) -> str:
    return (
        json.dumps({"metadata": {"query_id": "q1", "doc_id": "d1"}, "responses": {"rel": responses}}) + "\n"
    )


ARGILLA_LEFT_OUT = [
    ([{"value": None, "user_id": "u1"}], "0 labels; 1 left out: 1 without a value"),
    ([{"value": None, "user_id": "u1", "status": "discarded"}], "0 labels; 1 left out: 1 discarded"),
    (
        [{"user_id": "u1", "status": "discarded"}, {"value": 2, "user_id": "u2"}],
        "1 label; 1 left out: 1 discarded",
    ),
    ([{"value": 1, "user_id": "u1", "status": "draft"}], "0 labels; 1 left out: 1 draft"),
    ([{"value": 1, "user_id": "u1", "status": "submitted"}], "1 label"),
    ([{"value": 1, "user_id": "u1", "status": ["draft"]}], "1 label"),
]


@pytest.mark.parametrize(("responses", "summary"), ARGILLA_LEFT_OUT)
def test_argilla_responses_without_a_value_or_not_submitted_are_left_out(responses, summary):
    assert read_labels(_file(_argilla_record(responses), "x.json"), format="argilla").summary() == summary


PRODIGY_CHOICE = '{"meta": {"query_id": "q1", "doc_id": "d%d"}, "options": [], "_annotator_id": "a", '
GRADES = [
    ("quepid", "query,docid,rating\nq,d1,3.0\nq,d2,-1\nq,d3,2.\nq,d4, 0.00 \n", [3, -1, 2, 0]),
    ("jsonl", QD + '"annotator": "a", "grade": "3.0"}\n', [3]),
    ("jsonl", QD + '"annotator": "a", "grade": 3.0}\n', [3]),
]


@pytest.mark.parametrize(("fmt", "text", "grades"), GRADES)
def test_an_integral_float_is_that_integer(fmt, text, grades):
    found = read_labels(_file(text, "x.csv"), format=fmt, annotator="rita")
    assert [x.grade for x in found] == grades


BAD_GRADES = [
    (
        "quepid",
        "query,docid,rating\nq,d1,3.5\n",
        "x.csv:2: rating '3.5' is not an integer nor a label of --grade-map",
    ),
    (
        "quepid",
        "query,docid,rating\nq,d1,1e3\n",
        "x.csv:2: rating '1e3' is not an integer nor a label of --grade-map",
    ),
    (
        "jsonl",
        QD + '"annotator": "a", "grade": "3.5"}\n',
        "x.csv:1: grade '3.5' is not an integer nor a label of --grade-map",
    ),
    (
        "jsonl",
        QD + '"grade": 1}\n',
        "x.csv:1: no annotator: the record names none and --annotator was not given",
    ),
]


@pytest.mark.parametrize(("fmt", "text", "message"), BAD_GRADES)
def test_messages_name_the_options_as_the_caller_spells_them(fmt, text, message):
    names = {"annotator": "--annotator", "grade_map": "--grade-map"}
    options = {"annotator": "rita"} if fmt == "quepid" else {}
    with pytest.raises(FormatError) as exc:
        read_labels(_file(text, "x.csv"), format=fmt, option_names=names, **options)
    first = exc.value.problems[0]
    assert f"{first.source}:{first.line}: {first.reason}" == message


def test_quepid_rows_without_a_rating():
    text = "query,docid,rating\nq,d1,\nq,d2,1.0\nother,,\n"
    found = read_labels(_file(text, "x.csv"), format="quepid", annotator="rita")
    assert found.summary() == "1 label; 1 left out: 1 without a rating"
