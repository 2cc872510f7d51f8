"""Imports: one transaction each, every bad line reported, idempotent, document versions and stale labels."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlalchemy import text

from annotate_app.services import imports, labels, pooling, projects, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import Conflict, InvalidInput, PermissionDenied

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"


@pytest.fixture
def project(db):
    projects.create_project(db, SYSTEM, "p")
    return db


def _count(db, table: str) -> int:
    with db.read() as s:
        return s.execute(text(f"SELECT count(*) FROM {table}")).scalar()


def _jsonl(*records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def test_documents_import_and_reimport(project):
    report = imports.import_documents(project, SYSTEM, "p", SAMPLE / "docs.jsonl")
    assert (report.added, report.changed, report.unchanged, report.name) == (6, 0, 0, "docs.jsonl")
    again = imports.import_documents(project, SYSTEM, "p", SAMPLE / "docs.jsonl")
    assert (again.added, again.changed, again.unchanged) == (0, 0, 6)
    assert _count(project, "documents") == 6 and _count(project, "document_versions") == 6
    with project.read() as s:
        meta, version = s.execute(
            text("SELECT meta, source_version FROM document_versions WHERE version = 1 ORDER BY id LIMIT 1")
        ).one()
    assert (json.loads(meta) if isinstance(meta, str) else meta)["title_en"].startswith("Model A")
    assert version == "2026-03"


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("docs.csv", "doc_id,title,text\nD1,t,hello\nD2,t2,world\n"),
        ("docs.tsv", "doc_id\ttitle\ttext\nD1\tt\thello\nD2\tt2\tworld\n"),
        ("docs.jsonl", '{"_id": "D1", "text": "hello"}\n\n{"id": 2, "text": "world"}\n'),
    ],
)
def test_documents_in_every_format(project, name, content):
    assert imports.import_documents(project, SYSTEM, "p", content.encode(), filename=name).added == 2


def test_bad_file_imports_nothing_and_reports_every_line(project):
    bad = b'{"doc_id": "D1", "text": "ok"}\nnot json\n{"doc_id": "D1", "text": "dup"}\n{"doc_id": "D3"}\n'
    with pytest.raises(InvalidInput) as info:
        imports.import_documents(project, SYSTEM, "p", bad, filename="up.jsonl")
    assert [str(p) for p in info.value.problems] == [
        "up.jsonl:2: invalid JSON (Expecting value at column 1): 'not json'",
        'up.jsonl:3: duplicate doc_id \'D1\' (first on line 1): \'{"doc_id": "D1", "text": "dup"}\'',
        'up.jsonl:4: missing text: \'{"doc_id": "D3"}\'',
    ]
    assert str(info.value).endswith("(and 2 more problems)")
    assert _count(project, "documents") == 0 and _count(project, "imports") == 0


def test_changed_document_gets_a_new_version_and_flags_labels(db):
    from annotate_app.services.auth import authenticate
    from annotate_app.services.demo import load_demo

    load_demo(db)
    alice = authenticate(db, "alice", "alice-demo")
    view = queue.next_pair(db, alice, "demo")
    labels.save_label(db, alice, "demo", view.pair_id, grade=2, reason="partly answers")
    docs = [json.loads(line) for line in (SAMPLE / "docs.jsonl").read_text().splitlines()]
    changed = [dict(d, text=d["text"] + " (updated)") if d["doc_id"] == view.doc_id else d for d in docs]
    report = imports.import_documents(db, SYSTEM, "demo", _jsonl(*changed), filename="docs-v2.jsonl")
    assert (report.added, report.changed, report.unchanged, report.stale_labels) == (0, 1, 5, 1)
    mine = labels.my_labels(db, alice, "demo")
    assert [(x.doc_id, x.doc_version, x.stale) for x in mine] == [(view.doc_id, 1, True)]
    back = queue.next_pair(db, alice, "demo")  # the stale pair comes back first, with the new text
    assert (back.pair_id, back.doc_version, back.stale, back.current.grade) == (view.pair_id, 2, True, 2)
    assert back.doc_text.endswith("(updated)")
    labels.save_label(db, alice, "demo", back.pair_id, grade=3, reason="now fully answers")
    history = labels.pair_history(db, alice, "demo", view.pair_id)
    assert [(h.version, h.grade, h.doc_version, h.stale) for h in history] == [
        (2, 3, 2, False),
        (1, 2, 1, True),
    ]


def test_queries_change_only_without_labels(demo, actors):
    queries = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text().splitlines()]
    edited = [dict(q, text=q["text"] + "？") if q["query_id"] == "q3" else q for q in queries]
    assert imports.import_queries(demo, SYSTEM, "demo", _jsonl(*edited), filename="q.jsonl").changed == 1
    view = queue.next_pair(demo, actors["alice"], "demo")
    labels.save_label(demo, actors["alice"], "demo", view.pair_id, grade=1, reason="related only")
    edited = [dict(q, text="changed") if q["query_id"] == view.query_id else q for q in queries]
    with pytest.raises(
        InvalidInput, match=re.escape(f"q.jsonl:1: query {view.query_id!r} already has labels")
    ):
        imports.import_queries(demo, SYSTEM, "demo", _jsonl(*edited), filename="q.jsonl")


def test_run_import_checks_ids_and_is_idempotent(project):
    imports.import_documents(project, SYSTEM, "p", SAMPLE / "docs.jsonl")
    imports.import_queries(project, SYSTEM, "p", SAMPLE / "queries.jsonl")
    bad = b"q1 Q0 D1 1 0.9 s\n\nq9 Q0 D1 2 0.8 s\nq1 Q0 D99 3 0.7 s\n"
    with pytest.raises(InvalidInput) as info:
        imports.import_run(project, SYSTEM, "p", bad, filename="bad.trec")
    assert [str(p) for p in info.value.problems] == [
        "bad.trec:3: unknown query 'q9': 'q9 Q0 D1 2 0.8 s'",
        "bad.trec:4: unknown document 'D99': 'q1 Q0 D99 3 0.7 s'",
    ]
    report = imports.import_run(project, SYSTEM, "p", SAMPLE / "run_a.trec")
    assert (report.name, report.added) == ("scheme_a", 9)
    assert imports.import_run(project, SYSTEM, "p", SAMPLE / "run_a.trec").unchanged == 9
    with pytest.raises(Conflict, match="run 'scheme_a' was already imported from a different file"):
        imports.import_run(project, SYSTEM, "p", SAMPLE / "run_b.trec", name="scheme_a")
    assert imports.list_runs(project, SYSTEM, "p") == [("scheme_a", 9)]
    with project.read() as s:
        ranks = s.execute(
            text(
                "SELECT d.external_id, e.rank FROM run_entries e JOIN documents d "
                "ON d.id = e.document_id JOIN queries q ON q.id = e.query_id "
                "WHERE q.external_id = 'q1' ORDER BY e.rank"
            )
        ).all()
    assert [tuple(r) for r in ranks] == [("D1", 1), ("D3", 2), ("D4", 3)]


def test_prior_qrels(project):
    imports.import_documents(project, SYSTEM, "p", SAMPLE / "docs.jsonl")
    imports.import_queries(project, SYSTEM, "p", SAMPLE / "queries.jsonl")
    assert imports.import_qrels(project, SYSTEM, "p", SAMPLE / "qrels.trec").added == 12
    assert imports.import_qrels(project, SYSTEM, "p", SAMPLE / "qrels.trec").unchanged == 12
    beir = b"query-id\tcorpus-id\tscore\nq1\tD1\t1\n"
    with pytest.raises(Conflict, match="qrels 'qrels.trec' was already imported from a different file"):
        imports.import_qrels(project, SYSTEM, "p", beir, filename="x.tsv", name="qrels.trec")
    assert imports.import_qrels(project, SYSTEM, "p", beir, filename="x.tsv").added == 1


def test_chunk_map_and_chunk_level_run(project):
    imports.import_documents(project, SYSTEM, "p", SAMPLE / "docs.jsonl")
    imports.import_queries(project, SYSTEM, "p", SAMPLE / "queries.jsonl")
    chunks = _jsonl(
        {"chunk_id": "D1#1", "doc_id": "D1"},
        {"chunk_id": "D1#2", "doc_id": "D1"},
        {"chunk_id": "D2#1", "doc_id": "D2"},
    )
    assert imports.import_chunk_map(project, SYSTEM, "p", chunks, filename="chunks.jsonl").added == 3
    with pytest.raises(
        InvalidInput, match=re.escape("map.jsonl:1: chunk 'D1#1' is already mapped to another")
    ):
        imports.import_chunk_map(
            project, SYSTEM, "p", _jsonl({"chunk_id": "D1#1", "doc_id": "D2"}), filename="map.jsonl"
        )
    run = b"q1 Q0 D1#2 1 0.9 chunky\nq1 Q0 D2#1 2 0.8 chunky\nq1 Q0 D1#1 3 0.7 chunky\n"
    report = imports.import_run(project, SYSTEM, "p", run, filename="run.trec", chunks=True)
    assert report.added == 2  # D1 keeps its best chunk
    pooling.pool(project, SYSTEM, "p", depth=5)
    assert sorted(pooling.list_pairs(project, SYSTEM, "p")["doc_id"]) == ["D1", "D2"]


def test_preview_writes_nothing(project):
    good = imports.preview(project, SYSTEM, "documents", SAMPLE / "docs.jsonl", limit=2)
    assert (good.ok, good.n_rows, good.columns[:3], len(good.sample)) == (
        True,
        6,
        ("doc_id", "title", "text"),
        2,
    )
    bad = imports.preview(project, SYSTEM, "run", b"q1 Q0 D1 1\n", filename="r.trec")
    assert bad.problems == ("r.trec:1: expected 6 fields (qid Q0 docid rank score tag), got 4: 'q1 Q0 D1 1'",)
    assert _count(project, "documents") == 0
    with pytest.raises(InvalidInput, match="kind must be one of"):
        imports.preview(project, SYSTEM, "pdf", b"")


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ("x", "limit must be an int >= 0; got 'x'"),
        (-1, "limit must be an int >= 0; got -1"),
        (True, "limit must be an int >= 0; got True"),
        (1.5, "limit must be an int >= 0; got 1.5"),
    ],
)
def test_preview_refuses_a_bad_limit(project, limit, message):
    with pytest.raises(InvalidInput, match=f"^{re.escape(message)}$"):
        imports.preview(project, SYSTEM, "documents", SAMPLE / "docs.jsonl", limit=limit)


def test_imports_need_admin(demo, actors):
    with pytest.raises(PermissionDenied, match=re.escape("rita (reviewer) may not import documents")):
        imports.import_documents(demo, actors["rita"], "demo", SAMPLE / "docs.jsonl")
    with pytest.raises(InvalidInput, match="no such file"):
        imports.import_documents(demo, SYSTEM, "demo", "/nonexistent/docs.jsonl")
