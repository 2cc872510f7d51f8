"""`imports.import_labels` against the project (SQLite and PostgreSQL): each label must name a pooled pair,
a grade of the project and a valid annotator name; a bad file imports nothing (no label, no account); a
changed label is a new version; the accounts it creates cannot log in until an admin enables them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_fixtures import synthetic_project

from annotate_app.services import imports, labels, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import Conflict, InvalidInput, PermissionDenied


@pytest.fixture
def proj(db):
    synthetic_project(db, "p", queries=2, docs=3, n=2)
    extra = json.dumps({"doc_id": "D9", "title": "t9", "text": "text 9"}) + "\n"
    imports.import_documents(db, SYSTEM, "p", extra.encode(), filename="more.jsonl")  # known, not pooled
    return db


def _jsonl(*rows: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


NAME = "annotator must be 2-64 characters of a-z, 0-9, '.', '_', '-' (not 'system'); got"
GOOD = {"query_id": "q0", "doc_id": "D0", "annotator": "ext-ann", "grade": 2, "reason": "on topic"}
BAD = [
    ({"query_id": "q7"}, "labels.jsonl:2: unknown query 'q7'"),
    ({"doc_id": "D7"}, "labels.jsonl:2: unknown document 'D7'"),
    (
        {"doc_id": "D9"},
        "labels.jsonl:2: query 'q0', document 'D9' is not a pair of project 'p''s pool (pool it first)",
    ),
    ({"grade": 7}, "labels.jsonl:2: grade 7 is not one of the project's grades [0, 1, 2, 3]"),
    ({"grade": -1}, "labels.jsonl:2: grade -1 is not one of the project's grades [0, 1, 2, 3]"),
    (
        {"annotator": "x"},
        f"labels.jsonl:2: {NAME} 'x'",
    ),
    (
        {"annotator": "system"},
        f"labels.jsonl:2: {NAME} 'system'",
    ),
    (
        {"annotator": "a@b.c"},
        f"labels.jsonl:2: {NAME} 'a@b.c'",
    ),
    ({"reason": "a\x00b"}, "labels.jsonl:2: reason contains a NUL character (U+0000)"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_a_bad_label_imports_nothing(proj, change, message):
    bad = {**GOOD, "doc_id": "D1", "annotator": "ext-two", **change}
    with pytest.raises(InvalidInput) as exc:
        imports.import_labels(proj, SYSTEM, "p", _jsonl(GOOD, bad), fmt="jsonl", filename="labels.jsonl")
    first = exc.value.problems[0]
    assert f"{first.source}:{first.line}: {first.reason}" == message
    assert [u.username for u in users.list_users(proj, SYSTEM)] == []  # no account created either
    good = imports.import_labels(proj, SYSTEM, "p", _jsonl(GOOD), fmt="jsonl", filename="labels.jsonl")
    assert (good.added, good.unchanged) == (1, 0)  # the good line was not imported the first time


def test_quepid_query_text_must_name_one_query(proj):
    csv = b"query,docid,rating\nquery 0,D0,1\nno such query,D0,1\n"
    with pytest.raises(InvalidInput) as exc:
        imports.import_labels(proj, SYSTEM, "p", csv, fmt="quepid", annotator="rita", filename="q.csv")
    assert (
        str(exc.value)
        == "q.csv:3: no query of the project has the text 'no such query': 'no such query D0 rita 1'"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"fmt": "csv"},
            "fmt must be one of 'jsonl', 'label-studio', 'argilla', 'prodigy', 'quepid'; got 'csv'",
        ),
        (
            {"fmt": "jsonl", "grade_map": {"x": "1"}},
            "grade_map must map labels (str) to grades (int); got 'x': '1'",
        ),
        ({"fmt": "jsonl", "annotator": " "}, "annotator must be a non-empty string or None; got ' '"),
    ],
)
def test_bad_arguments(proj, kwargs, message):
    with pytest.raises(InvalidInput) as exc:
        imports.import_labels(proj, SYSTEM, "p", _jsonl(GOOD), filename="labels.jsonl", **kwargs)
    assert str(exc.value) == message


def test_only_admins_import(proj):
    users.create_user(proj, SYSTEM, "rita", "rita-password", role="reviewer")
    rita = authenticate(proj, "rita", "rita-password")
    with pytest.raises(PermissionDenied):
        imports.import_labels(proj, rita, "p", _jsonl(GOOD), fmt="jsonl")


def test_a_changed_label_is_a_new_version_and_the_account_can_be_enabled(proj):
    imports.import_labels(proj, SYSTEM, "p", _jsonl(GOOD), fmt="jsonl", filename="a.jsonl")
    again = imports.import_labels(
        proj, SYSTEM, "p", _jsonl({**GOOD, "grade": 3}), fmt="jsonl", filename="b.jsonl"
    )
    assert (again.added, again.changed, again.unchanged) == (0, 1, 0)
    (pair,) = {x.pair_id for x in labels.pair_history(proj, SYSTEM, "p", 1)} or {1}
    history = labels.pair_history(proj, SYSTEM, "p", pair)
    assert [(x.annotator, x.version, x.grade, x.reason) for x in history] == [
        ("ext-ann", 2, 3, "on topic"),
        ("ext-ann", 1, 2, "on topic"),
    ]
    with pytest.raises(PermissionDenied):
        authenticate(proj, "ext-ann", "")
    users.reactivate(proj, SYSTEM, "ext-ann")
    users.reset_password(proj, SYSTEM, "ext-ann", "a-new-password")
    assert authenticate(proj, "ext-ann", "a-new-password").username == "ext-ann"


def test_annotators_are_renamed_and_one_user_labels_a_pair_once(proj):
    users.create_user(proj, SYSTEM, "rita", "rita-password", role="reviewer")
    report = imports.import_labels(
        proj, SYSTEM, "p", _jsonl(GOOD), fmt="jsonl", annotators={"ext-ann": "rita"}, filename="a.jsonl"
    )
    assert report.added == 1
    assert [(u.username, u.active) for u in users.list_users(proj, SYSTEM)] == [("rita", True)]
    twice = _jsonl({**GOOD, "annotator": "Ann"}, {**GOOD, "annotator": "ann"})
    with pytest.raises(InvalidInput) as exc:
        imports.import_labels(proj, SYSTEM, "p", twice, fmt="jsonl", filename="b.jsonl")
    first = exc.value.problems[0]
    assert f"{first.source}:{first.line}: {first.reason}" == (
        "b.jsonl:2: a second label of this pair by user 'ann', first on line 1"
    )
    with pytest.raises(InvalidInput) as exc:
        imports.import_labels(proj, SYSTEM, "p", _jsonl(GOOD), fmt="jsonl", annotators={"ext-ann": 1})
    assert str(exc.value) == "annotators must map names (str) to usernames (str); got {'ext-ann': 1}"


def test_a_label_import_is_listed_and_cannot_be_undone(proj):
    """Imported labels join the append-only label history: the import is listed, and undo refuses it."""
    imports.import_labels(proj, SYSTEM, "p", _jsonl(GOOD), fmt="jsonl", filename="labels.jsonl")
    listed = [i for i in imports.list_imports(proj, SYSTEM, "p") if i.kind == "labels"]
    assert [i.name for i in listed] == ["labels.jsonl"]
    with pytest.raises(Conflict) as exc:
        imports.undo_import(proj, SYSTEM, "p", listed[0].import_id)
    assert str(exc.value) == (
        f"import {listed[0].import_id} (labels 'labels.jsonl') cannot be undone: imported labels are part of "
        "the label history, which is append-only; exclude their pairs instead"
    )


def _preview(db, data: bytes, **kwargs):
    found = imports.preview_labels(db, SYSTEM, "p", data, fmt="jsonl", filename="labels.jsonl", **kwargs)
    return [(a.username, a.labels, a.added, a.changed, a.unchanged, a.new_account) for a in found.annotators]


SECOND = {**GOOD, "doc_id": "D1", "annotator": "rita", "grade": 1}
# what is imported first, the file previewed -> per annotator (user, labels, added, changed, unchanged, new)
PREVIEWS = [
    (None, [GOOD, SECOND], [("ext-ann", 1, 1, 0, 0, True), ("rita", 1, 1, 0, 0, False)]),
    ([GOOD, SECOND], [GOOD, SECOND], [("ext-ann", 1, 0, 0, 1, False), ("rita", 1, 0, 0, 1, False)]),
    ([GOOD], [{**GOOD, "grade": 3}, SECOND], [("ext-ann", 1, 0, 1, 0, False), ("rita", 1, 1, 0, 0, False)]),
    ([GOOD], [{**GOOD, "reason": "other"}], [("ext-ann", 1, 0, 1, 0, False)]),
]


@pytest.mark.parametrize(("before", "rows", "expected"), PREVIEWS)
def test_a_preview_counts_what_the_import_would_do_and_writes_nothing(proj, before, rows, expected):
    users.create_user(proj, SYSTEM, "rita", "rita-password", role="annotator")
    if before:
        imports.import_labels(proj, SYSTEM, "p", _jsonl(*before), fmt="jsonl", filename="first.jsonl")
    n_imports = len(imports.list_imports(proj, SYSTEM, "p"))
    assert _preview(proj, _jsonl(*rows)) == expected
    assert len(imports.list_imports(proj, SYSTEM, "p")) == n_imports
    assert {u.username for u in users.list_users(proj, SYSTEM)} == {"rita"} | (
        {"ext-ann"} if before else set()
    )
    report = imports.import_labels(proj, SYSTEM, "p", _jsonl(*rows), fmt="jsonl", filename="labels.jsonl")
    totals = [sum(row[k] for row in expected) for k in (2, 3, 4)]
    assert [report.added, report.changed, report.unchanged] == totals


@pytest.mark.parametrize(("change", "message"), BAD[:4])
def test_a_preview_refuses_a_bad_file_as_the_import_does(proj, change, message):
    with pytest.raises(InvalidInput) as exc:
        _preview(proj, _jsonl(GOOD, {**GOOD, "doc_id": "D1", **change}))
    first = exc.value.problems[0]
    assert f"{first.source}:{first.line}: {first.reason}" == message
    assert users.list_users(proj, SYSTEM) == []


def test_only_admins_preview(proj):
    users.create_user(proj, SYSTEM, "rita", "rita-password", role="reviewer")
    with pytest.raises(PermissionDenied):
        imports.preview_labels(
            proj, authenticate(proj, "rita", "rita-password"), "p", _jsonl(GOOD), fmt="jsonl"
        )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("Highly relevant=3\n\n Not relevant = 0 \n", {"Highly relevant": 3, "Not relevant": 0}),
        ("a=b=2", {"a=b": 2}),  # the last '=' splits
    ],
)
def test_a_typed_grade_map(text, expected):
    assert imports.grade_map_from_text(text) == expected


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (
            "grade",
            "Relevant=2\nRelevant",
            "grade map line 2: expected LABEL=GRADE with an integer GRADE; got 'Relevant'",
        ),
        ("grade", "=2", "grade map line 1: expected LABEL=GRADE with an integer GRADE; got '=2'"),
        ("grade", "Relevant=two", "grade map line 1: expected LABEL=GRADE with an integer GRADE; got 'two'"),
        ("annotator", "\nlabel-studio-3", "annotator map line 2: expected NAME=USER; got 'label-studio-3'"),
        ("annotator", "x=", "annotator map line 1: expected NAME=USER; got 'x='"),
        ("annotator", 3, "annotator map must be text; got int"),
    ],
)
def test_a_bad_typed_map_names_its_line(parse, text, message):
    with pytest.raises(InvalidInput) as exc:
        (imports.grade_map_from_text if parse == "grade" else imports.annotator_map_from_text)(text)
    assert str(exc.value) == message


def test_a_typed_annotator_map():
    assert imports.annotator_map_from_text("label-studio-3=alice\n a = b=c ") == {
        "label-studio-3": "alice",
        "a": "b=c",
    }


SESSIONS = Path(__file__).resolve().parents[1] / "fixtures" / "labels" / "prodigy_sessions.jsonl"
P1, P2 = "1ed4cad4-9edc-4d6d-83bb-b7e595c2fe0b", "e1eec138-4623-4b5b-b555-6d1d69348d78"


def test_versions_in_one_file_are_previewed_imported_once_and_counted(proj):
    """Prodigy: P1 rejected q1/D0 in one session and accepted it in the next; the file's two versions are
    previewed as one label added and one changed, imported as such, and a second import adds nothing."""
    data = SESSIONS.read_bytes()
    found = imports.preview_labels(proj, SYSTEM, "p", data, fmt="prodigy", filename="s.jsonl")
    assert [(a.username, a.labels, a.added, a.changed, a.unchanged) for a in found.annotators] == [
        (P1, 5, 4, 1, 0),
        (P2, 3, 3, 0, 0),
    ]
    assert found.left_out == "2 left out: 2 ignored"
    assert found.headline == "s.jsonl: 8 labels by 2 annotators; 2 left out: 2 ignored."
    report = imports.import_labels(proj, SYSTEM, "p", data, fmt="prodigy", filename="s.jsonl")
    assert str(report) == "labels s.jsonl: 7 added, 1 changed, 0 unchanged; 2 left out: 2 ignored"
    again = imports.preview_labels(proj, SYSTEM, "p", data, fmt="prodigy", filename="s.jsonl")
    assert [(a.added, a.changed, a.unchanged) for a in again.annotators] == [(0, 0, 5), (0, 0, 3)]
    report = imports.import_labels(proj, SYSTEM, "p", data, fmt="prodigy", filename="s.jsonl")
    assert (report.added, report.changed, report.unchanged) == (0, 0, 8)
    # the older answer alone, imported later, is a change back (the file's view wins), made once
    older = b"".join(line for line in data.splitlines(keepends=True) if b'"_timestamp":1694858809' in line)
    report = imports.import_labels(proj, SYSTEM, "p", older, fmt="prodigy", filename="old.jsonl")
    assert (report.added, report.changed, report.unchanged) == (0, 1, 0)


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (None, "labels.jsonl:1: no annotator: the record names none and annotator= was not given"),
        (
            {"annotator": "--annotator"},
            "labels.jsonl:1: no annotator: the record names none and --annotator was not given",
        ),
    ],
)
def test_messages_name_the_options_as_given(proj, names, message):
    row = {k: v for k, v in GOOD.items() if k != "annotator"}
    with pytest.raises(InvalidInput) as exc:
        imports.import_labels(
            proj, SYSTEM, "p", _jsonl(row), fmt="jsonl", filename="labels.jsonl", option_names=names
        )
    first = exc.value.problems[0]
    assert f"{first.source}:{first.line}: {first.reason}" == message
