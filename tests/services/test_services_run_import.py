"""A run is imported piece by piece (`imports.RUN_PIECE_ROWS` lines at a time, in one transaction): whatever
the piece size, the stored entries are those of the whole file ranked at once, and a bad line in a late piece
leaves nothing behind. Run on SQLite and PostgreSQL (the ``db`` fixture)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from sqlalchemy import text

from annotate_app.services import imports, projects
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput
from annotate_app.store import annotation

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
DOCS = ["D1", "D2", "D3", "D4", "D5", "D6"]
QUERIES = ["q1", "q2", "q3"]


@pytest.fixture
def project(db):
    projects.create_project(db, SYSTEM, "p")
    imports.import_documents(db, SYSTEM, "p", SAMPLE / "docs.jsonl")
    imports.import_queries(db, SYSTEM, "p", SAMPLE / "queries.jsonl")
    return db


def _entries(db) -> list[tuple]:
    with db.read() as s:
        rows = s.execute(
            text(
                "SELECT r.name, q.external_id, d.external_id, e.rank, e.score FROM run_entries e "
                "JOIN runs r ON r.id = e.run_id JOIN queries q ON q.id = e.query_id "
                "JOIN documents d ON d.id = e.document_id ORDER BY r.name, q.external_id, e.rank"
            )
        )
        return [tuple(r) for r in rows]


def _count(db, table: str) -> int:
    with db.read() as s:
        return s.execute(text(f"SELECT count(*) FROM {table}")).scalar()


def _random_run(seed: int, *, grouped: bool) -> bytes:
    """Every (query, document) pair once, with tied scores; queries grouped or interleaved line by line."""
    rng = random.Random(seed)
    rows = [(q, d, rng.choice([0.5, 1.0, 2.0, 3.0])) for q in QUERIES for d in rng.sample(DOCS, 5)]
    if not grouped:
        rng.shuffle(rows)
    return "".join(f"{q}\tQ0  {d} {i} {s} tag\n" for i, (q, d, s) in enumerate(rows, 1)).encode()


def _expected(data: bytes) -> list[tuple]:
    """The entries ranked as trec_eval ranks them: score descending, then document ID descending."""
    rows = [line.split() for line in data.decode().splitlines() if line.strip()]
    out = []
    for qid in QUERIES:
        ranked = sorted(((float(r[4]), r[2]) for r in rows if r[0] == qid), reverse=True)
        out += [("tag", qid, doc, rank, score) for rank, (score, doc) in enumerate(ranked, 1)]
    return out


@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "interleaved"])
@pytest.mark.parametrize("piece", [1, 2, 4, 7, 1_000_000])
def test_any_piece_size_stores_the_whole_run_ranked(project, monkeypatch, piece, grouped):
    monkeypatch.setattr(imports.runs, "RUN_PIECE_ROWS", piece)
    data = _random_run(piece, grouped=grouped)
    report = imports.import_run(project, SYSTEM, "p", data, filename="run.trec")
    assert (report.name, report.added) == ("tag", 15)
    assert _entries(project) == _expected(data)
    assert imports.list_runs(project, SYSTEM, "p") == [("tag", 15)]


@pytest.mark.parametrize("piece", [1, 2, 1_000_000])
def test_a_chunk_level_run_keeps_each_documents_best_chunk_across_pieces(project, monkeypatch, piece):
    monkeypatch.setattr(imports.runs, "RUN_PIECE_ROWS", piece)
    chunks = "".join(f'{{"chunk_id": "{d}#{i}", "doc_id": "{d}"}}\n' for d in ("D1", "D2") for i in (1, 2))
    imports.import_chunk_map(project, SYSTEM, "p", chunks.encode(), filename="chunks.jsonl")
    run = (
        b"q1 Q0 D1#2 1 0.9 c\nq2 Q0 D2#1 1 0.4 c\nq1 Q0 D2#1 2 0.8 c\n"
        b"q1 Q0 D1#1 3 0.7 c\nq2 Q0 D1#1 2 0.3 c\nq2 Q0 D2#2 3 0.6 c\n"
    )
    assert imports.import_run(project, SYSTEM, "p", run, filename="run.trec", chunks=True).added == 4
    # a mapped run ranks documents by their best chunk's rank: the stored score is minus the 0-based position
    assert _entries(project) == [
        ("c", "q1", "D1", 1, 0.0),
        ("c", "q1", "D2", 2, -1.0),
        ("c", "q2", "D2", 1, 0.0),
        ("c", "q2", "D1", 2, -1.0),
    ]
    with project.read() as s:  # each entry keeps the chunk its document kept (by score: D2#2 0.6 in q2)
        kept = s.execute(
            text(
                "SELECT q.external_id, d.external_id, c.chunk_id FROM run_entries e "
                "JOIN queries q ON q.id = e.query_id JOIN documents d ON d.id = e.document_id "
                "JOIN chunks c ON c.id = e.chunk_id ORDER BY q.external_id, e.rank"
            )
        ).all()
    assert [tuple(r) for r in kept] == [
        ("q1", "D1", "D1#2"),
        ("q1", "D2", "D2#1"),
        ("q2", "D2", "D2#2"),
        ("q2", "D1", "D1#1"),
    ]


@pytest.mark.parametrize(
    ("run", "problems"),
    [
        # a format error in the last piece, after three pieces were written
        (
            b"q1 Q0 D1 1 1 t\nq1 Q0 D2 2 1 t\nq2 Q0 D1 1 1 t\nq2 Q0 D2 2 1 t\nq3 Q0 D1 1 1 t\n"
            b"q3 Q0 D2 2 x t\n",
            ["run.trec:6: score is not a number: 'x': 'q3 Q0 D2 2 x t'"],
        ),
        # a duplicate pair whose first occurrence is two pieces earlier
        (
            b"q1 Q0 D1 1 1 t\nq1 Q0 D2 2 1 t\nq2 Q0 D1 1 1 t\nq2 Q0 D2 2 1 t\nq1 Q0 D1 3 1 t\n",
            ["run.trec:5: duplicate document 'D1' for query 'q1' (first on line 1): 'q1 Q0 D1 3 1 t'"],
        ),
        # an unknown document early and a format error later: the format error is reported, as for a read
        # of the whole file
        (
            b"q1 Q0 D1 1 1 t\nq1 Q0 D99 2 1 t\nq2 Q0 D1 1 1 t\nq2 Q0 D2 2 1 t\nq3 Q0 D1 1 1\n",
            ["run.trec:5: expected 6 fields (qid Q0 docid rank score tag), got 5: 'q3 Q0 D1 1 1'"],
        ),
        # unknown IDs in two pieces, each named with its line
        (
            b"q1 Q0 D1 1 1 t\nq1 Q0 D99 2 1 t\nq2 Q0 D1 1 1 t\nq9 Q0 D2 2 1 t\n",
            [
                "run.trec:2: unknown document 'D99': 'q1 Q0 D99 2 1 t'",
                "run.trec:4: unknown query 'q9': 'q9 Q0 D2 2 1 t'",
            ],
        ),
    ],
)
def test_a_bad_line_in_a_late_piece_imports_nothing(project, monkeypatch, run, problems):
    monkeypatch.setattr(imports.runs, "RUN_PIECE_ROWS", 2)
    with pytest.raises(InvalidInput) as info:
        imports.import_run(project, SYSTEM, "p", run, filename="run.trec")
    assert [str(p) for p in info.value.problems] == problems
    assert (_count(project, "runs"), _count(project, "run_entries")) == (0, 0)


def test_the_run_is_named_by_its_first_tag_even_when_read_in_pieces(project, monkeypatch):
    monkeypatch.setattr(imports.runs, "RUN_PIECE_ROWS", 1)
    run = b"\n\nq1 Q0 D1 1 1 first\nq1 Q0 D2 2 1 second\n"
    assert imports.import_run(project, SYSTEM, "p", run, filename="run.trec").name == "first"
    with pytest.raises(InvalidInput, match=re.escape("run name must")):
        imports.import_run(project, SYSTEM, "p", run, filename="run.trec", name="has space")


@pytest.mark.parametrize(
    ("chunks", "first"),
    [
        ("chunks_paragraphs.jsonl", ("L1-p1", 457, 901)),  # offsets given
        ("chunks_windows.jsonl", None),  # text located: the run names paragraph chunks, unknown here
    ],
)
def test_the_card_of_a_chunk_run_pair_knows_the_retrieved_chunk(db, chunks, first):
    """The sample's long documents, a chunk map and the paragraph chunk run: q1's first pair (L1) carries
    the chunk L1-p1 [457, 901) the run ranked first; a re-import of L1 leaves the chunk's offsets behind."""
    from annotate_app.services import pooling, queue, users
    from annotate_app.services.auth import authenticate

    projects.create_project(db, SYSTEM, "lc", annotators_per_pair=1)
    imports.import_documents(db, SYSTEM, "lc", SAMPLE / "long_docs.jsonl")
    imports.import_queries(db, SYSTEM, "lc", SAMPLE / "queries.jsonl")
    imports.import_chunk_map(db, SYSTEM, "lc", SAMPLE / chunks)
    if first is None:  # the windows, located by their text: each one's place is its text's
        with db.read() as s:
            rows = s.execute(text("SELECT chunk_id, start_char, end_char, doc_version FROM chunks")).all()
        assert len(rows) == 16 and ("L1-w1", 500, 1000, 1) in [tuple(r) for r in rows]
        return
    imports.import_run(db, SYSTEM, "lc", SAMPLE / "run_chunks.trec", chunks=True)
    pooling.pool(db, SYSTEM, "lc", depth=3)
    users.create_user(db, SYSTEM, "ann", "ann-password-1")
    projects.assign(db, SYSTEM, "lc", ["ann"])
    ann = authenticate(db, "ann", "ann-password-1")
    views = []
    while (view := queue.next_pair(db, ann, "lc")) is not None:
        views.append(view)
        queue.skip(db, ann, "lc", view.pair_id, reason="looked only")
    retrieved = {(v.query_id, v.doc_id): v.retrieved for v in views}
    chunk = retrieved[("q1", "L1")]
    assert (chunk.chunk_id, chunk.start, chunk.end, chunk.run, chunk.rank) == (*first, "para_run", 1)
    assert retrieved[("q3", "L2")].chunk_id == "L2-p5"  # L2's best chunk for q3, at rank 4
    doc = [
        line
        for line in (SAMPLE / "long_docs.jsonl").read_text(encoding="utf-8").splitlines()
        if '"L1"' in line
    ]
    imports.import_documents(
        db, SYSTEM, "lc", doc[0].replace("This handbook", "Our handbook").encode(), filename="l1.jsonl"
    )
    q1 = [v for v in views if (v.query_id, v.doc_id) == ("q1", "L1")][0]
    with db.read() as s:
        assert annotation.retrieved_chunk(s, q1.pair_id, 2) is None  # offsets of version 1 only
        assert annotation.retrieved_chunk(s, q1.pair_id, 1)[0] == "L1-p1"
