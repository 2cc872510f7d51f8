"""metrics.slices: tags in the queries file (line-numbered errors), slices equal to evaluate on the qrels cut
to the slice's queries, compare's tests and check's thresholds within each slice."""

from __future__ import annotations

import io

import numpy as np
import pytest

from metrics import Qrels, evaluate
from metrics.checks import check_slices
from metrics.compare import compare, slice_report
from metrics.errors import FormatError, QrelForgeError
from metrics.formats import read_queries
from metrics.slices import UNTAGGED, query_slices, query_tags, slice_results, slice_table

QRELS = {"q1": {"D1": 1}, "q2": {"D2": 1, "D3": 2}, "q3": {"D3": 1}, "q4": {"D4": 0}}
RUN_A = {"q1": ["D1", "D9"], "q2": ["D9", "D2", "D3"], "q3": ["D9"], "q4": ["D4"]}
RUN_B = {"q1": ["D9", "D1"], "q2": ["D3", "D2"], "q3": ["D3"], "q4": ["D9"]}
TAGS = {"q1": ["head", "lang:en"], "q2": ["tail", "lang:zh"], "q3": ["tail", "lang:zh", "lang:en"], "q4": []}
MEASURES = ["P@2", "R@2", "AP", "RR", "nDCG@2"]


def _source(text: str, name: str) -> io.BytesIO:
    stream = io.BytesIO(text.encode())
    stream.name = name
    return stream


# ------------------------------------------------------------------------------------------ the tags field
@pytest.mark.parametrize(
    "line, message",
    [
        ('"tags": "head"', "tags must be a list of strings; got str 'head'"),
        ('"tags": {"a": 1}', "tags must be a list of strings; got dict {'a': 1}"),
        ('"tags": [1]', "tags[0] must be a string; got int 1"),
        (
            '"tags": ["ok", "a b"]',
            "tags[1] must be a label or key:value (letters, digits, '_', '.', '-'); got 'a b'",
        ),
        (
            '"tags": ["intent:"]',
            "tags[0] must be a label or key:value (letters, digits, '_', '.', '-'); got 'intent:'",
        ),
        (
            '"tags": ["a:b:c"]',
            "tags[0] must be a label or key:value (letters, digits, '_', '.', '-'); got 'a:b:c'",
        ),
        ('"tags": ["head", "head"]', "tags[1] 'head' appears twice"),
        ('"tags": ["' + "x" * 101 + '"]', "tags[0] must be at most 100 characters; got " + repr("x" * 80)),
    ],
)
def test_a_bad_tags_field_is_an_error_of_its_line(line, message):
    text = (
        '{"query_id": "q1", "text": "a", "tags": ["head"]}\n{"query_id": "q2", "text": "b", ' + line + "}\n"
    )
    with pytest.raises(FormatError) as info:
        read_queries(_source(text, "queries.jsonl"))
    [problem] = info.value.problems
    assert (problem.line, problem.reason.split("; got ")[0]) == (2, message.split("; got ")[0])
    assert str(problem).startswith(f"queries.jsonl:2: {message}"[:60])


@pytest.mark.parametrize(
    "text, name, expected",
    [
        (
            '{"query_id": "q1", "text": "a", "tags": ["head", "lang:zh"]}\n{"query_id": "q2", "text": "b"}\n',
            "q.jsonl",
            {"q1": ("head", "lang:zh"), "q2": ()},
        ),
        ("query_id,text,tags\nq1,a,head|lang:zh\nq2,b,\n", "q.csv", {"q1": ("head", "lang:zh"), "q2": ()}),
        ("query_id\ttext\ttags\nq1\ta\t意图:导航 | tail\n", "q.tsv", {"q1": ("意图:导航", "tail")}),
        ("query_id,text\nq1,a\n", "q.csv", {"q1": ()}),
    ],
)
def test_tags_are_read_from_jsonl_csv_and_tsv(text, name, expected):
    assert query_tags(read_queries(_source(text, name))) == expected


def test_a_bad_csv_tag_names_its_line():
    with pytest.raises(FormatError) as info:
        read_queries(_source("query_id,text,tags\nq1,a,head\nq2,b,a b|c\n", "q.csv"))
    assert [str(p) for p in info.value.problems] == [
        "q.csv:3: tags[0] must be a label or key:value (letters, digits, '_', '.', '-'); got 'a b': "
        "'q2,b,a b|c'"
    ]


# -------------------------------------------------------------------------------------------- the slices
@pytest.mark.parametrize(
    "by, expected",
    [
        (
            "tag",
            {
                "head": ["q1"],
                "lang:en": ["q1", "q3"],
                "lang:zh": ["q2", "q3"],
                "tail": ["q2", "q3"],
                UNTAGGED: ["q4"],
            },
        ),
        ("tag:lang", {"en": ["q1", "q3"], "zh": ["q2", "q3"], UNTAGGED: ["q4"]}),
        ("tag:intent", {UNTAGGED: ["q1", "q2", "q3", "q4"]}),
    ],
)
def test_query_slices(by, expected):
    ids = ["q1", "q2", "q3", "q4"]
    got = query_slices(ids, TAGS, by=by)
    assert {k: [ids[i] for i in v] for k, v in got.items()} == expected
    assert list(got) == list(expected)  # sorted, untagged last


@pytest.mark.parametrize("by", ["tag", "tag:lang"])
def test_each_slice_is_evaluate_on_the_qrels_cut_to_its_queries(by):
    full = evaluate(QRELS, RUN_A, MEASURES)
    ids = full.query_ids
    for name, part in slice_results(full, TAGS, by=by).items():
        keep = [ids[i] for i in query_slices(ids, TAGS, by=by)[name]]
        alone = evaluate({q: QRELS[q] for q in keep}, RUN_A, MEASURES)
        assert part.mean == alone.mean and part.n == alone.n, name
        assert part.counts.evaluated == alone.counts.evaluated == len(keep)
        assert part.counts.no_relevant == alone.counts.no_relevant
        assert part.per_query_dict() == alone.per_query_dict()


def test_slice_table_rows():
    table = slice_table(
        {"a": evaluate(QRELS, RUN_A, ["RR"]), "b": evaluate(QRELS, RUN_B, ["RR"])}, TAGS, by="tag:lang"
    )
    rows = [tuple(r) for r in table.itertuples(index=False)]
    assert rows[:3] == [
        ("en", 2, "a", "RR", 0.5, 2),
        ("zh", 2, "a", "RR", 0.25, 2),
        (UNTAGGED, 1, "a", "RR", 0.0, 1),
    ]
    assert rows[3] == ("en", 2, "b", "RR", 0.75, 2)
    undefined = slice_table({"a": evaluate(QRELS, RUN_A, ["AP"])}, TAGS, by="tag:lang")
    assert undefined["mean"].isna().tolist() == [False, False, True] and undefined["n"].tolist() == [2, 2, 0]


@pytest.mark.parametrize(
    "by, tags, message",
    [
        ("lang", TAGS, "by must be 'tag' or 'tag:KEY' (e.g. 'tag:lang'); got 'lang'"),
        ("tag:", TAGS, "by must be 'tag' or 'tag:KEY' (e.g. 'tag:lang'); got 'tag:'"),
        (3, TAGS, "by must be 'tag' or 'tag:KEY' (e.g. 'tag:lang'); got 3"),
        (
            "tag",
            {"q1": ["a b"]},
            "query 'q1': tags[0] must be a label or key:value (letters, digits, '_', '.', '-'); got 'a b'",
        ),
        ("tag", ["head"], "tags must be a path, a DataFrame or a mapping {query_id: [tag, ...]}; got list"),
    ],
)
def test_bad_slicing_is_refused(by, tags, message):
    with pytest.raises(QrelForgeError) as info:
        slice_results(evaluate(QRELS, RUN_A, ["RR"]), tags, by=by)
    assert str(info.value) == message


def test_compare_tests_within_each_slice_with_its_query_count():
    report = compare(QRELS, {"a": RUN_A, "b": RUN_B}, ["RR", "AP"], n_permutations=1000, n_bootstrap=500)
    parts = slice_report(report, TAGS, by="tag:lang")
    assert list(parts) == ["en", "zh", UNTAGGED]
    for name, part in parts.items():
        keep = part.query_ids
        runs = {n: {q: r[q] for q in keep} for n, r in (("a", RUN_A), ("b", RUN_B))}
        alone = compare({q: QRELS[q] for q in keep}, runs, ["RR", "AP"], n_permutations=1000, n_bootstrap=500)
        assert part.to_dict() == alone.to_dict(), name
    assert parts["en"].comparison("b", "RR").n == 2


def test_check_applies_the_thresholds_in_every_slice():
    result = check_slices(QRELS, RUN_B, TAGS, by="tag", minimum=["RR=0.5"], maximum=["P@2=0.9"])
    assert {k: v.message() for k, v in result.items()} == {
        "head": "PASS: 2 thresholds met",
        "lang:en": "PASS: 2 thresholds met",
        "lang:zh": "PASS: 2 thresholds met",
        "tail": "PASS: 2 thresholds met",
        UNTAGGED: "FAIL: 1 of 2 thresholds missed: RR = 0.0000 < 0.5 (minimum)",
    }
    assert {k: v.queries for k, v in result.items()} == {
        "head": 1,
        "lang:en": 2,
        "lang:zh": 2,
        "tail": 2,
        UNTAGGED: 1,
    }


def test_take_keeps_missing_queries_of_the_slice():
    qrels = Qrels.from_dict({"q1": {"D1": 1}, "q2": {"D2": 1}})
    full = evaluate(qrels, {"q1": ["D1"]}, ["RR"])
    part = full.take(np.array([1]))
    assert (part.counts.missing, part.missing_queries, part.mean) == (1, ["q2"], {"RR": 0.0})
