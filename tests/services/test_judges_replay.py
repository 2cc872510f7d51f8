"""Replay: machine labels from JSONL, validated like every import (every bad line, exact messages)."""

from __future__ import annotations

import io
import json

import pytest

from annotate_app.judges import (
    Backend,
    FailureKind,
    GradeScale,
    JudgeClient,
    JudgeTask,
    MemoryCache,
    Pair,
    ReplayJudge,
    read_machine_labels,
    sha256_text,
)
from metrics.errors import FormatError, quoted

SCALE = GradeScale.default()
GOOD = [
    {"query_id": "q1", "doc_id": "d1", "grade": 3, "reason": "exact", "confidence": 0.9, "model": "m1"},
    {"query_id": "q1", "doc_id": "d2", "grade": 0, "prompt": "Judge this."},
    {"query_id": "q2", "doc_id": "d1", "grade": 1, "confidence": None, "prompt": "ab" * 32, "extra": [1]},
]


def jsonl(rows: list, *, name: str = "labels.jsonl") -> io.StringIO:
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
    stream = io.StringIO(text)
    stream.name = name
    return stream


def test_good_lines_are_read_with_their_provenance():
    labels = read_machine_labels(jsonl(["", *GOOD, "   "]), scale=SCALE)
    assert [(x.query_id, x.doc_id, x.grade, x.line) for x in labels] == [
        ("q1", "d1", 3, 2),
        ("q1", "d2", 0, 3),
        ("q2", "d1", 1, 4),
    ]
    assert (labels[0].reason, labels[0].confidence, labels[0].model, labels[0].prompt_hash) == (
        "exact",
        0.9,
        "m1",
        "",
    )
    assert labels[1].prompt_hash == sha256_text("Judge this.") and labels[1].reason == ""
    assert labels[2].prompt_hash == "ab" * 32 and labels[2].confidence is None


def test_a_file_with_bom_and_crlf(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(json.dumps(r) for r in GOOD).encode())
    assert len(read_machine_labels(path, scale=SCALE)) == 3


QD = '{"query_id": "q", "doc_id": "d", '
IDS = "must be a non-empty string without whitespace; got"
CONF = "confidence must be a number in [0, 1] or null; got"
BAD = [
    ("{not json", "invalid JSON (Expecting property name enclosed in double quotes at column 2)"),
    ("[1, 2]", "expected a JSON object, got list"),
    ('{"doc_id": "d", "grade": 1}', "missing query_id"),
    ('{"query_id": "q 1", "doc_id": "d", "grade": 1}', f"query_id {IDS} 'q 1'"),
    ('{"query_id": "", "doc_id": "d", "grade": 1}', f"query_id {IDS} ''"),
    ('{"query_id": 7, "doc_id": "d", "grade": 1}', f"query_id {IDS} 7"),
    ('{"query_id": "q", "grade": 1}', "missing doc_id"),
    ('{"query_id": "q", "doc_id": "d\\t2", "grade": 1}', f"doc_id {IDS} 'd\\t2'"),
    (QD[:-2] + "}", "missing grade"),
    (QD + '"grade": "2"}', "grade must be an integer; got '2'"),
    (QD + '"grade": 2.0}', "grade must be an integer; got 2.0"),
    (QD + '"grade": true}', "grade must be an integer; got True"),
    (QD + '"grade": 4}', "grade 4 is not on the scale (0, 1, 2, 3)"),
    (QD + '"grade": -1}', "grade -1 is not on the scale (0, 1, 2, 3)"),
    (QD + '"grade": 1, "confidence": 1.5}', f"{CONF} 1.5"),
    (QD + '"grade": 1, "confidence": -0.1}', f"{CONF} -0.1"),
    (QD + '"grade": 1, "confidence": NaN}', f"{CONF} nan"),
    (QD + '"grade": 1, "confidence": Infinity}', f"{CONF} inf"),
    (QD + '"grade": 1, "confidence": "high"}', f"{CONF} 'high'"),
    (QD + '"grade": 1, "confidence": false}', f"{CONF} False"),
    (QD + '"grade": 1, "confidence": 1e400}', f"{CONF} inf"),
    (QD + '"grade": 1, "reason": 5}', "reason must be a string; got int 5"),
    (QD + '"grade": 1, "model": ["m"]}', "model must be a string; got list ['m']"),
]


@pytest.mark.parametrize(("line", "reason"), BAD, ids=[r for _, r in BAD])
def test_each_bad_line_is_reported_exactly(line, reason):
    with pytest.raises(FormatError) as info:
        read_machine_labels(jsonl([GOOD[0], line]), scale=SCALE)
    assert [str(p) for p in info.value.problems] == [f"labels.jsonl:2: {reason}: {line!r}"]


def test_every_bad_line_is_reported_and_nothing_is_returned():
    lines = [GOOD[0], BAD[0][0], GOOD[1], BAD[12][0], json.dumps(GOOD[0]), GOOD[2]]
    with pytest.raises(FormatError) as info:
        read_machine_labels(jsonl(lines), scale=SCALE)
    first = json.dumps(GOOD[0])
    assert [str(p) for p in info.value.problems] == [
        f"labels.jsonl:2: {BAD[0][1]}: {BAD[0][0]!r}",
        f"labels.jsonl:4: {BAD[12][1]}: {BAD[12][0]!r}",
        f"labels.jsonl:5: duplicate pair (query 'q1', document 'd1'), first on line 1: {quoted(first)}",
    ]
    assert str(info.value).endswith("(and 2 more problems)")


def test_undecodable_bytes_and_missing_files(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(json.dumps(GOOD[0]).encode() + b"\n\xff\xfe\n" + b'{"grade": 1}\n')
    with pytest.raises(FormatError) as info:
        read_machine_labels(path, scale=SCALE)
    assert [str(p) for p in info.value.problems] == [
        f"{path}:2: not valid UTF-8 (byte 1): '\ufffd\ufffd'",
        f"{path}:3: missing query_id: '{{\"grade\": 1}}'",
    ]
    with pytest.raises(FormatError, match="no such file"):
        read_machine_labels(tmp_path / "nope.jsonl", scale=SCALE)


def test_replay_judge_answers_from_the_file_and_reports_unknown_pairs():
    judge = ReplayJudge.from_file(jsonl(GOOD), scale=SCALE)
    assert (judge.name, judge.backend, len(judge)) == ("replay:labels.jsonl", Backend.REPLAY, 3)
    task = JudgeTask()
    hit = judge.judge(Pair(query_id="q1", doc_id="d1", query="x", document="y"), task)
    assert (hit.grade, hit.reason, hit.confidence, hit.model, hit.requests) == (3, "exact", 0.9, "m1", 0)
    assert hit.raw_response == json.dumps(GOOD[0])
    miss = judge.judge(Pair(query_id="q9", doc_id="d1", query="x", document="y"), task)
    assert miss.failure is FailureKind.NOT_FOUND
    assert miss.error == "the replay file has no label for query 'q9', document 'd1'"
    binary = JudgeTask(scale=GradeScale.from_labels([(0, "no"), (1, "yes")]))
    off = judge.judge(Pair(query_id="q1", doc_id="d1", query="x", document="y"), binary)
    assert (off.failure, off.error) == (FailureKind.OUT_OF_SCALE, "grade 3 is not on the scale (0, 1)")


def test_replay_through_the_client_with_a_cache():
    judge = ReplayJudge.from_file(jsonl(GOOD), scale=SCALE)
    pairs = [
        Pair(query_id=str(g["query_id"]), doc_id=str(g["doc_id"]), query="x", document="y") for g in GOOD
    ]
    client = JudgeClient(judge, JudgeTask(), cache=MemoryCache(), workers=2)
    assert sorted(r.grade or 0 for r in client.run(pairs)) == [0, 1, 3]
    assert sorted(r.grade or 0 for r in client.run(pairs)) == [0, 1, 3]
    assert (client.counts.cached, client.counts.sent) == (3, 0)
    other = ReplayJudge.from_file(jsonl(GOOD[:2]), scale=SCALE)
    assert other.fingerprint(JudgeTask()) != judge.fingerprint(JudgeTask())
