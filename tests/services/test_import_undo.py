"""Import undo (issue 12): `imports.list_imports` and `imports.undo_import` on SQLite and PostgreSQL — what
each kind of import added goes, in one transaction; judged pairs that depend on it refuse the undo (or are
excluded with ``exclude_dependent``); a document re-import's previous version comes back; undoing twice is a
no-op."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text

from annotate_app.services import imports, labels, pooling, projects, queue, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from annotate_app.services.inputs import MAX_INT
from annotate_app.store.enums import ImportKind

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
CHUNKS = b'{"chunk_id": "D1#1", "doc_id": "D1"}\n{"chunk_id": "D1#2", "doc_id": "D1"}\n'


def _count(db, table: str, where: str = "") -> int:
    with db.read() as s:
        return s.execute(text(f"SELECT count(*) FROM {table} {where}")).scalar()


def _jsonl(*records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def _docs() -> list[dict]:
    return [json.loads(line) for line in (SAMPLE / "docs.jsonl").read_text().splitlines()]


STEPS = {
    "docs": lambda db: imports.import_documents(db, SYSTEM, "p", SAMPLE / "docs.jsonl"),
    "queries": lambda db: imports.import_queries(db, SYSTEM, "p", SAMPLE / "queries.jsonl"),
    "run_a": lambda db: imports.import_run(db, SYSTEM, "p", SAMPLE / "run_a.trec"),
    "qrels": lambda db: imports.import_qrels(db, SYSTEM, "p", SAMPLE / "qrels.trec"),
    "chunks": lambda db: imports.import_chunk_map(db, SYSTEM, "p", CHUNKS, filename="chunks.jsonl"),
    "pool": lambda db: pooling.pool(db, SYSTEM, "p", depth=3),
}


def _setup(db, *steps: str) -> None:
    projects.create_project(db, SYSTEM, "p")
    for step in steps:
        STEPS[step](db)


def _alice_labels_one(db) -> tuple[str, str]:
    """alice (a member of p) labels the first pair the queue gives her; returns its (query ID, doc ID)."""
    users.create_user(db, SYSTEM, "alice", "alice-password")
    projects.assign(db, SYSTEM, "p", ["alice"])
    alice = authenticate(db, "alice", "alice-password")
    view = queue.next_pair(db, alice, "p")
    labels.save_label(db, alice, "p", view.pair_id, grade=2, reason="partly answers it")
    return view.query_id, view.doc_id


@pytest.mark.parametrize(
    ("steps", "undo", "message", "empty"),
    [
        (("docs",), 1, "import 1 (documents docs.jsonl) undone: 6 document versions removed", "documents"),
        (("docs", "queries"), 2, "import 2 (queries queries.jsonl) undone: 3 queries removed", "queries"),
        (
            ("docs", "queries", "run_a", "pool"),
            3,
            "import 3 (run scheme_a) undone: 9 run entries removed, 9 unjudged pairs removed",
            "pairs",
        ),
        (
            ("docs", "queries", "qrels"),
            3,
            "import 3 (qrels qrels.trec) undone: 12 prior judgments removed",
            "prior_judgments",
        ),
        (("docs", "chunks"), 2, "import 2 (chunks chunks.jsonl) undone: 2 chunk mappings removed", "chunks"),
    ],
)
def test_undo_removes_what_the_import_added(db, steps, undo, message, empty):
    _setup(db, *steps)
    report = imports.undo_import(db, SYSTEM, "p", undo)
    assert str(report) == message
    assert _count(db, empty) == 0
    n = len([step for step in steps if step != "pool"])
    listed = {i.import_id: i.undone_at is not None for i in imports.list_imports(db, SYSTEM, "p")}
    assert listed == {k: k == undo for k in range(1, n + 1)}
    with db.read() as s:
        action, details = s.execute(
            text("SELECT action, details FROM audit_log ORDER BY id DESC LIMIT 1")
        ).one()
    details = json.loads(details) if isinstance(details, str) else details
    assert (action, details["import_id"], details["removed"]) == ("import_undone", undo, report.removed)


def test_undone_run_can_be_imported_again(db):
    _setup(db, "docs", "queries", "run_a")
    imports.undo_import(db, SYSTEM, "p", 3)
    assert str(STEPS["run_a"](db)) == "run scheme_a: 9 added, 0 changed, 0 unchanged"
    assert _count(db, "run_entries") == 9


def test_an_undone_chunk_map_leaves_no_chunk_to_a_runs_entries(db):
    """The chunk run's entries forget the chunks of an undone map (SQLite may give their ids to new chunks):
    the card then opens as for a document-level run."""
    placed = _jsonl(*({"chunk_id": f"D1#{i}", "doc_id": "D1", "start": i, "end": i + 5} for i in (1, 2)))
    _setup(db, "docs", "queries")
    imports.import_chunk_map(db, SYSTEM, "p", placed, filename="chunks.jsonl")
    imports.import_run(
        db, SYSTEM, "p", b"q1 Q0 D1#2 1 2 c\nq1 Q0 D1#1 2 1 c\n", filename="c.trec", chunks=True
    )
    assert _count(db, "run_entries", "WHERE chunk_id IS NOT NULL") == 1
    imports.undo_import(db, SYSTEM, "p", 3)
    assert (
        _count(db, "chunks"),
        _count(db, "run_entries"),
        _count(db, "run_entries", "WHERE chunk_id IS NULL"),
    ) == (
        0,
        1,
        1,
    )


@pytest.mark.parametrize(
    ("undo", "message"),
    [
        (1, "import 1 cannot be undone: run 'scheme_a' refers to its documents; undo that import first"),
        (2, "import 2 cannot be undone: run 'scheme_a' refers to its queries; undo that import first"),
    ],
)
def test_undo_refuses_while_another_import_refers_to_its_rows(db, undo, message):
    _setup(db, "docs", "queries", "run_a")
    with pytest.raises(Conflict) as info:
        imports.undo_import(db, SYSTEM, "p", undo)
    assert str(info.value) == message
    assert (
        _count(db, "documents"),
        _count(db, "queries"),
        _count(db, "imports", "WHERE undone_at IS NULL"),
    ) == (
        6,
        3,
        3,
    )


def test_undo_refuses_when_labels_depend_on_it_and_excludes_them_on_request(db):
    _setup(db, "docs", "queries", "run_a", "pool")
    qid, did = _alice_labels_one(db)
    with pytest.raises(Conflict) as info:
        imports.undo_import(db, SYSTEM, "p", 3)
    assert str(info.value) == (
        f"import 3 cannot be undone: 1 labelled pair depends on it ({qid} {did}); "
        "use --exclude-dependent to exclude that pair instead"
    )
    assert (_count(db, "runs"), _count(db, "pairs"), _count(db, "pairs", "WHERE excluded")) == (1, 9, 0)
    report = imports.undo_import(db, SYSTEM, "p", 3, exclude_dependent=True)
    assert str(report) == (
        "import 3 (run scheme_a) undone: 9 run entries removed, 8 unjudged pairs removed, "
        "1 judged pair excluded"
    )
    assert (_count(db, "runs"), _count(db, "pairs"), _count(db, "labels")) == (0, 1, 1)
    info_ = pooling.get_pair_info(db, SYSTEM, "p", qid, did)
    assert (info_.excluded, info_.sources) == (True, ())


def test_undo_names_at_most_five_dependent_pairs(db):
    _setup(db, "docs", "queries", "run_a", "pool")
    users.create_user(db, SYSTEM, "alice", "alice-password")
    projects.assign(db, SYSTEM, "p", ["alice"])
    alice = authenticate(db, "alice", "alice-password")
    judged = []
    for _ in range(6):
        view = queue.next_pair(db, alice, "p")
        labels.save_label(db, alice, "p", view.pair_id, grade=1, reason="related only")
        judged.append((view.pair_id, f"{view.query_id} {view.doc_id}"))
    shown = ", ".join(name for _, name in sorted(judged)[:5])
    with pytest.raises(Conflict) as info:
        imports.undo_import(db, SYSTEM, "p", 3)
    assert str(info.value) == (
        f"import 3 cannot be undone: 6 labelled pairs depend on it ({shown}, …); "
        "use --exclude-dependent to exclude those pairs instead"
    )


def test_undoing_a_document_reimport_restores_the_previous_version(db):
    _setup(db, "docs", "queries", "run_a", "pool")
    qid, did = _alice_labels_one(db)
    changed = [dict(d, text=d["text"] + " (updated)") if d["doc_id"] == did else d for d in _docs()]
    report = imports.import_documents(db, SYSTEM, "p", _jsonl(*changed), filename="docs-v2.jsonl")
    assert (report.changed, report.stale_labels) == (1, 1)
    undone = imports.undo_import(db, SYSTEM, "p", 4)
    assert str(undone) == (
        "import 4 (documents docs-v2.jsonl) undone: 1 document version removed, 1 restored to their previous "
        "version"
    )
    with db.read() as s:
        version, stale = s.execute(
            text(
                "SELECT d.version, a.stale FROM documents d JOIN pairs p ON p.document_id = d.id "
                "JOIN assignments a ON a.pair_id = p.id WHERE d.external_id = :d"
            ),
            {"d": did},
        ).one()
    assert (version, bool(stale), _count(db, "document_versions")) == (1, False, 6)
    again = imports.import_documents(db, SYSTEM, "p", _jsonl(*changed), filename="docs-v2.jsonl")
    assert (again.changed, again.stale_labels) == (1, 1)  # version 2 again, as a fresh change


def test_undo_refuses_when_a_label_judged_the_version_it_added(db):
    _setup(db, "docs", "queries", "run_a", "pool")
    qid, did = _alice_labels_one(db)
    changed = [dict(d, text=d["text"] + " (updated)") if d["doc_id"] == did else d for d in _docs()]
    imports.import_documents(db, SYSTEM, "p", _jsonl(*changed), filename="docs-v2.jsonl")
    alice = authenticate(db, "alice", "alice-password")
    back = queue.next_pair(db, alice, "p")
    labels.save_label(db, alice, "p", back.pair_id, grade=3, reason="now fully answers")
    with pytest.raises(Conflict, match=rf"1 labelled pair depends on it \({qid} {did}\)"):
        imports.undo_import(db, SYSTEM, "p", 4)
    report = imports.undo_import(db, SYSTEM, "p", 4, exclude_dependent=True)
    assert (report.removed, report.restored, report.pairs_excluded) == (0, 0, 1)
    assert _count(db, "document_versions") == 7  # the judged version stays


def test_undoing_a_query_change_restores_the_previous_text(db):
    _setup(db, "queries")
    queries = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text().splitlines()]
    edited = [dict(q, text="changed") if q["query_id"] == "q3" else q for q in queries]
    imports.import_queries(db, SYSTEM, "p", _jsonl(*edited), filename="q2.jsonl")
    report = imports.undo_import(db, SYSTEM, "p", 2)
    assert (
        str(report)
        == "import 2 (queries q2.jsonl) undone: 0 queries removed, 1 restored to their previous version"
    )
    with db.read() as s:
        assert (
            s.execute(text("SELECT text FROM queries WHERE external_id = 'q3'")).scalar()
            == queries[2]["text"]
        )


def test_undo_twice_says_already_undone(db):
    _setup(db, "docs")
    imports.undo_import(db, SYSTEM, "p", 1)
    again = imports.undo_import(db, SYSTEM, "p", 1)
    assert (str(again), again.already_undone) == ("import 1 (documents docs.jsonl) was already undone", True)
    assert _count(db, "audit_log", "WHERE action = 'import_undone'") == 1


def test_the_same_file_again_says_already_imported(db):
    _setup(db, "docs")
    assert str(STEPS["docs"](db)) == "documents docs.jsonl: already imported (import 1); 6 unchanged"
    imports.undo_import(db, SYSTEM, "p", 1)
    assert str(STEPS["docs"](db)) == "documents docs.jsonl: 6 added, 0 changed, 0 unchanged"


@pytest.mark.parametrize(
    ("import_id", "kw", "error", "message"),
    [
        (99, {}, NotFound, "import 99 does not exist in project 'p'"),
        (0, {}, InvalidInput, "import_id must be an int >= 1; got 0"),
        ("1", {}, InvalidInput, "import_id must be an int >= 1; got '1'"),
        (True, {}, InvalidInput, "import_id must be an int >= 1; got True"),
        (2**70, {}, InvalidInput, f"import_id must be an int in [1, {MAX_INT}]; got {2**70}"),
        (1, {"exclude_dependent": "yes"}, InvalidInput, "exclude_dependent must be True or False; got 'yes'"),
    ],
)
def test_bad_undo_requests(db, import_id, kw, error, message):
    _setup(db, "docs")
    with pytest.raises(error) as info:
        imports.undo_import(db, SYSTEM, "p", import_id, **kw)
    assert str(info.value) == message
    assert _count(db, "documents") == 6


def test_only_admins_list_and_undo(db):
    _setup(db, "docs", "queries", "run_a", "pool")
    _alice_labels_one(db)
    alice = authenticate(db, "alice", "alice-password")
    for call in (
        lambda: imports.list_imports(db, alice, "p"),
        lambda: imports.undo_import(db, alice, "p", 1),
    ):
        with pytest.raises(PermissionDenied):
            call()


def test_list_imports(db):
    _setup(db, "docs", "queries")
    listed = imports.list_imports(db, SYSTEM, "p")
    assert [(i.import_id, i.kind, i.name, i.summary, i.by, i.undone_at) for i in listed] == [
        (2, ImportKind.QUERIES, "queries.jsonl", "3 added, 0 changed, 0 unchanged", "system", None),
        (1, ImportKind.DOCUMENTS, "docs.jsonl", "6 added, 0 changed, 0 unchanged", "system", None),
    ]
