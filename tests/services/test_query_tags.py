"""Query tags: read from the queries file's ``tags`` field, stored in the query's meta, changed by a re-import
even on a labelled query (tags are not content), refused with the line on a bad tag (nothing imported); read
by reviewers for the Score page's slices. Both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotate_app.services import imports, projects, scoring
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput, PermissionDenied

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"


def _jsonl(*records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


@pytest.fixture
def project(db):
    projects.create_project(db, SYSTEM, "p")
    return db


def test_tags_are_stored_and_read_back(project):
    data = _jsonl(
        {"query_id": "q1", "text": "a", "tags": ["head", "lang:zh"], "source": "log"},
        {"query_id": "q2", "text": "b"},
    )
    imports.import_queries(project, SYSTEM, "p", data, filename="q.jsonl")
    assert scoring.query_tags(project, SYSTEM, "p") == {"q1": ("head", "lang:zh"), "q2": ()}


@pytest.mark.parametrize(
    "second, counts, tags",
    [
        ([{"query_id": "q1", "text": "a", "tags": ["tail"]}], (0, 1, 0), ("tail",)),
        ([{"query_id": "q1", "text": "a", "tags": ["head"]}], (0, 0, 1), ("head",)),
        ([{"query_id": "q1", "text": "a"}], (0, 1, 0), ()),
    ],
)
def test_a_reimport_changes_only_the_tags(project, second, counts, tags):
    imports.import_queries(
        project, SYSTEM, "p", _jsonl({"query_id": "q1", "text": "a", "tags": ["head"]}), filename="q.jsonl"
    )
    report = imports.import_queries(project, SYSTEM, "p", _jsonl(*second), filename="q.jsonl")
    assert (report.added, report.changed, report.unchanged) == counts
    assert scoring.query_tags(project, SYSTEM, "p") == {"q1": tags}


def test_a_labelled_query_may_be_retagged(actors, demo):
    lines = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [q["text"] for q in lines] == _texts(demo)  # the demo's queries, as loaded
    first = lines[0] | {"tags": ["lang:zh"]}
    report = imports.import_queries(demo, SYSTEM, "demo", _jsonl(first, *lines[1:]), filename="queries.jsonl")
    assert (report.changed, report.unchanged) == (1, len(lines) - 1)
    assert scoring.query_tags(demo, actors["rita"], "demo")["q1"] == ("lang:zh",)


def _texts(db) -> list[str]:
    from sqlalchemy import text

    with db.read() as s:
        return [t for (t,) in s.execute(text("SELECT text FROM queries ORDER BY external_id"))]


def test_a_bad_tag_names_its_line_and_imports_nothing(project):
    data = _jsonl(
        {"query_id": "q1", "text": "a", "tags": ["ok"]}, {"query_id": "q2", "text": "b", "tags": ["a b"]}
    )
    with pytest.raises(InvalidInput) as info:
        imports.import_queries(project, SYSTEM, "p", data, filename="q.jsonl")
    assert str(info.value).startswith(
        "q.jsonl:2: tags[0] must be a label or key:value (letters, digits, '_', '.', '-'); got 'a b'"
    )
    assert scoring.query_tags(project, SYSTEM, "p") == {}


def test_annotators_cannot_read_the_tags(demo, actors):
    with pytest.raises(PermissionDenied):
        scoring.query_tags(demo, actors["alice"], "demo")
