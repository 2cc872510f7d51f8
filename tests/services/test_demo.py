"""The labelled demo (issue 12): ``load_demo(labelled=True)`` / ``qrelforge demo-data --with-labels`` adds
project ``demo-review``, judged by alice and bob through the services, with rita's verdicts, release v1 and
two open disagreements (kappa below the threshold), while ``demo`` stays fresh; idempotent; on SQLite and
PostgreSQL."""

from __future__ import annotations

import dataclasses
import io
import json
import math
import shutil
from pathlib import Path

import pytest

from annotate_app.cli import main
from annotate_app.services import audit, gate, labels, releases, status
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.demo import CHUNKS_PROJECT, REVIEW_LABELS, REVIEW_PROJECT, ReviewInfo, load_demo
from annotate_app.services.errors import InvalidInput

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
SCRIPT = [json.loads(line) for line in (SAMPLE / REVIEW_LABELS).read_text(encoding="utf-8").splitlines()]
SUMMARY = (
    "project demo-review: 12 pairs, 24 labels by alice and bob, 3 disagreements adjudicated by rita, 2 open, "
    "1 release(s); cohen 0.50 (threshold 0.70)"
)


@pytest.fixture
def labelled(db):
    info = load_demo(db, labelled=True)
    return db, info


def test_the_review_project_is_judged_and_demo_stays_fresh(labelled):
    db, info = labelled
    assert info.review == ReviewInfo(
        project=REVIEW_PROJECT,
        pairs=12,
        labels=24,
        adjudicated=3,
        open_disagreements=2,
        releases=1,
        statistic="cohen",
        value=0.5,
        threshold=0.7,
        created=True,
    )
    assert str(info.review) == SUMMARY
    fresh = status.project_status(db, SYSTEM, "demo")
    assert (fresh.pairs, fresh.complete, fresh.labels) == (12, 0, 0)


def test_the_reviewer_sees_agreement_below_the_threshold_and_two_open_disagreements(labelled):
    db, _ = labelled
    rita = authenticate(db, "rita", "rita-demo")
    summary = gate.agreement(db, rita, REVIEW_PROJECT)
    assert (summary.n_pairs, summary.passes, summary.disagreements, summary.unadjudicated) == (
        12,
        False,
        5,
        2,
    )
    assert math.isclose(summary.value, 0.5)
    open_ones = gate.disagreements(db, rita, REVIEW_PROJECT)
    assert sorted((d.query_id, d.doc_id, tuple(x.grade for x in d.labels)) for d in open_ones) == [
        ("q1", "D4", (0, 1)),
        ("q3", "D3", (1, 0)),
    ]
    assert not gate.blockers(db, rita, REVIEW_PROJECT).ok


def test_release_v1_holds_the_adjudicated_depth_2_pool(labelled):
    db, _ = labelled
    (v1,) = releases.list_releases(db, SYSTEM, REVIEW_PROJECT)
    assert (v1.version, v1.created_by, v1.n_qrels, v1.justification) == (1, "rita", 9, None)
    assert round(v1.agreement_value, 3) == 0.769 and not v1.below_threshold
    qrels = releases.release_qrels(db, SYSTEM, REVIEW_PROJECT, 1)
    got = {(q, d): g for q, docs in qrels.to_dict().items() for d, g in docs.items()}
    truth = {
        (q, d): int(g)
        for q, _, d, g in (line.split() for line in (SAMPLE / "qrels.trec").read_text().splitlines())
    }
    assert got == {k: v for k, v in truth.items() if k not in {("q1", "D4"), ("q2", "D6"), ("q3", "D3")}}


def test_the_labels_and_verdicts_are_the_scripts_made_by_the_users(labelled):
    db, _ = labelled
    for name in ("alice", "bob"):
        me = authenticate(db, name, f"{name}-demo")
        made = {
            (x.query_id, x.doc_id): (x.grade, x.reason, x.seconds, x.version)
            for x in labels.my_labels(db, me, REVIEW_PROJECT)
        }
        assert made == {
            (r["query_id"], r["doc_id"]): (r["grade"], r["reason"], r["seconds"], 1)
            for r in SCRIPT
            if r["user"] == name
        }
    rita = authenticate(db, "rita", "rita-demo")
    verdicts = {
        (d.query_id, d.doc_id): (d.adjudication.grade, d.adjudication.reason, d.adjudication.reviewer)
        for d in gate.disagreements(db, rita, REVIEW_PROJECT, include_resolved=True)
        if d.adjudication is not None
    }
    assert verdicts == {
        (r["query_id"], r["doc_id"]): (r["grade"], r["reason"], "rita") for r in SCRIPT if r["user"] == "rita"
    }


def test_a_second_load_changes_nothing(labelled):
    db, first = labelled
    before = {e.id for e in audit.audit_log(db, SYSTEM, project=REVIEW_PROJECT, limit=1000)}
    again = load_demo(db, labelled=True)
    assert again.review == dataclasses.replace(first.review, created=False)
    new = [e for e in audit.audit_log(db, SYSTEM, project=REVIEW_PROJECT, limit=1000) if e.id not in before]
    assert {e.action for e in new} <= {"import_documents", "import_queries", "import_run"}  # nothing else
    alice = authenticate(db, "alice", "alice-demo")
    assert {x.version for x in labels.my_labels(db, alice, REVIEW_PROJECT)} == {1}


def test_reset_wipes_both_demo_projects(labelled):
    db, _ = labelled
    info = load_demo(db, reset=True)
    assert info.reset and info.review is None
    assert [r.project for r in releases.list_releases(db, SYSTEM, "demo")] == []


def test_the_labelled_demo_needs_the_script(db, tmp_path):
    for name in ("docs.jsonl", "queries.jsonl", "run_a.trec", "run_b.trec"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    load_demo(db, sample_dir=tmp_path)  # the fresh demo does not
    with pytest.raises(InvalidInput, match=rf"^sample corpus folder '{tmp_path}' lacks review_labels.jsonl$"):
        load_demo(db, sample_dir=tmp_path, labelled=True)
    with pytest.raises(InvalidInput, match=r"^labelled must be a bool; got 'yes'$"):
        load_demo(db, labelled="yes")


def test_cli_demo_data_with_labels(db_url, fast_hashing, monkeypatch, capsys):
    monkeypatch.setenv("QRELFORGE_DATABASE_URL", db_url)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["demo-data", "--with-labels"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("project demo: pooled") and out[1] == SUMMARY
    assert main(["demo-data", "--with-labels"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == SUMMARY.replace("demo-review:", "demo-review (exists, unchanged):")
    assert main(["status", "--project", REVIEW_PROJECT]) == 0
    assert capsys.readouterr().out.startswith("project demo-review: 12 pairs (0 excluded), 12 complete")


def test_release_v1_carries_passages_and_one_passage_disagreement_is_open(labelled):
    """alice and bob mark the same passage of q2 D3 and of q3 D5, and different ones of q1 D2 (D2's first
    sentence, [0, 47), against the whole text, [0, 92)): v1 takes the union of q1 D2's."""
    from annotate_app.services import export, passage_adjudication, passage_agreement

    db, _ = labelled
    lines = export.export_release(db, SYSTEM, REVIEW_PROJECT, 1, format="passages").decode().splitlines()
    got = [tuple(json.loads(x)[k] for k in ("query_id", "doc_id", "start", "end", "grade")) for x in lines]
    assert got == [("q1", "D2", 0, 92, 3), ("q2", "D3", 19, 51, 3), ("q3", "D5", 0, 39, 3)]
    (open_item,) = passage_adjudication.passage_disagreements(db, SYSTEM, REVIEW_PROJECT)
    assert (open_item.query_id, open_item.doc_id, open_item.spans) == (
        "q1",
        "D2",
        {"alice": ((0, 47),), "bob": ((0, 92),)},
    )
    found = passage_agreement.passage_agreement(db, SYSTEM, REVIEW_PROJECT)
    # alice's characters 47 + 32 + 39 = 118, bob's 92 + 32 + 39 = 163, both 118: F1 = 2·118 / (118 + 163)
    assert found.mean_f1 == pytest.approx(2 * 118 / 281)


def test_demo_chunks_opens_each_card_at_the_chunk_the_run_retrieved(labelled):
    """``demo-chunks``: the long documents L1–L3 pooled from the paragraph chunk run at depth 3 (6 pairs);
    each card knows the chunk its document kept, at the offsets of `chunks_paragraphs.jsonl`."""
    from annotate_app.services import queue

    db, info = labelled
    assert (info.chunks.added, status.project_status(db, SYSTEM, CHUNKS_PROJECT).pairs) == (6, 6)
    paragraphs = {
        r["chunk_id"]: (r["start"], r["end"])
        for r in map(json.loads, (SAMPLE / "chunks_paragraphs.jsonl").read_text().splitlines())
    }
    alice = authenticate(db, "alice", "alice-demo")
    seen = {}
    while (view := queue.next_pair(db, alice, CHUNKS_PROJECT)) is not None:
        chunk = view.retrieved
        assert (chunk.start, chunk.end) == paragraphs[chunk.chunk_id] and view.evidence == "optional"
        seen[(view.query_id, view.doc_id)] = (chunk.chunk_id, chunk.rank)
        queue.skip(db, alice, CHUNKS_PROJECT, view.pair_id, reason="only looking")
    # each document's best-ranked paragraph in sample_corpus/run_chunks.trec, and the document's rank
    assert seen == {
        ("q1", "L1"): ("L1-p1", 1),
        ("q1", "L2"): ("L2-p3", 2),
        ("q2", "L2"): ("L2-p3", 1),
        ("q2", "L3"): ("L3-p4", 2),
        ("q3", "L3"): ("L3-p1", 1),
        ("q3", "L2"): ("L2-p5", 2),
    }
    again = load_demo(db, labelled=True)
    assert (again.chunks.added, again.chunks.already_pooled) == (0, 6)
