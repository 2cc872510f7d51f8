"""Releases and exports, and the full workflow: import → pool → two annotators → gate blocks → adjudicate →
release → export → score with metrics."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import warnings
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, IntegrityError

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
    status,
    users,
)
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from metrics import evaluate, read_qrels
from metrics.formats import read_corpus

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_corpus"
TRUTH = {
    tuple(line.split()[0::2][:2]): int(line.split()[3])
    for line in (SAMPLE_DIR / "qrels.trec").read_text().splitlines()
}


def judge(db, actor, grades: dict, project: str = "demo") -> None:
    while (view := queue.next_pair(db, actor, project)) is not None:
        labels.save_label(
            db,
            actor,
            project,
            view.pair_id,
            grade=grades[(view.query_id, view.doc_id)],
            reason=f"{actor.username}: checked the text",
            seconds=3.0,
        )


def test_full_workflow(db):
    # import
    projects.create_project(
        db, SYSTEM, "kb", title="Knowledge base", guidelines="# Guidelines\nJudge answers."
    )
    assert imports.import_documents(db, SYSTEM, "kb", SAMPLE_DIR / "docs.jsonl").added == 6
    assert imports.import_queries(db, SYSTEM, "kb", SAMPLE_DIR / "queries.jsonl").added == 3
    for run in ("run_a.trec", "run_b.trec"):
        imports.import_run(db, SYSTEM, "kb", SAMPLE_DIR / run)
    # pool
    assert pooling.pool(db, SYSTEM, "kb", depth=3).added == 12
    # two annotators: ann agrees with the sample qrels; ben flips (q1, D3) across the cut-off
    for name in ("ann", "ben", "rev"):
        users.create_user(
            db, SYSTEM, name, f"{name}-password", role="reviewer" if name == "rev" else "annotator"
        )
    projects.assign(db, SYSTEM, "kb", ["ann", "ben"])
    ann, ben, rev = (authenticate(db, n, f"{n}-password") for n in ("ann", "ben", "rev"))
    judge(db, ann, TRUTH, "kb")
    judge(db, ben, {**TRUTH, ("q1", "D3"): 2}, "kb")
    # the gate blocks
    summary = gate.agreement(db, rev, "kb")
    assert (summary.n_pairs, summary.disagreements, summary.unadjudicated) == (12, 1, 1)
    assert summary.value == pytest.approx(5 / 6)  # binary: p_o = 11/12, p_e = 1/2 → kappa = 5/6
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unadjudicated pair's missing grade is never cast to an int
        assert releases.preview_release(db, rev, "kb").blocked == ("1 disagreements are not adjudicated",)
        with pytest.raises(Conflict, match="release blocked: 1 disagreements are not adjudicated"):
            releases.create_release(db, rev, "kb")
    # adjudicate, side by side
    item = gate.disagreements(db, rev, "kb")[0]
    assert (item.query_id, item.doc_id, [x.grade for x in item.labels]) == ("q1", "D3", [0, 2])
    adjudication.adjudicate(db, rev, "kb", item.pair_id, grade=0, reason="D3 is about returns, not batteries")
    # release
    info = releases.create_release(db, rev, "kb", note="first")
    assert (info.version, info.n_qrels, info.created_by, info.annotators) == (1, 12, "rev", ("ann", "ben"))
    assert info.counts == {"unanimous": 11, "majority": 0, "adjudicated": 1, "excluded": 0}
    assert (
        info.agreement_value == pytest.approx(5 / 6)
        and info.justification is None
        and info.guidelines_version == 1
    )
    # export → metrics
    trec = export.export_release(db, rev, "kb", format="trec")
    assert hashlib.sha256(trec).hexdigest() == info.content_hash
    qrels = read_qrels(io.BytesIO(trec))
    assert qrels.to_dict() == {
        q: {d: g for (qq, d), g in TRUTH.items() if qq == q} for q in ("q1", "q2", "q3")
    }
    scores = {
        run: evaluate(qrels, SAMPLE_DIR / f"{run}.trec", ["P@3", "R@3"]).mean for run in ("run_a", "run_b")
    }
    assert scores["run_a"] == pytest.approx({"P@3": 1 / 3, "R@3": 2 / 3})
    assert scores["run_b"] == pytest.approx({"P@3": 5 / 9, "R@3": 1.0})
    beir = export.export_release(db, rev, "kb", format="beir")
    assert read_qrels(io.BytesIO(beir), format="beir").to_dict() == qrels.to_dict()
    assert evaluate(releases.release_qrels(db, rev, "kb"), SAMPLE_DIR / "run_b.trec", ["P@3"]).mean[
        "P@3"
    ] == pytest.approx(5 / 9)


@pytest.fixture
def judged(demo, actors):
    judge(demo, actors["alice"], TRUTH)
    judge(demo, actors["bob"], {**TRUTH, ("q1", "D1"): 3, ("q2", "D4"): 2})
    return demo


def _adjudicate_all(db, reviewer) -> None:
    for item in gate.disagreements(db, reviewer, "demo"):
        adjudication.adjudicate(
            db,
            reviewer,
            "demo",
            item.pair_id,
            grade=TRUTH[(item.query_id, item.doc_id)],
            reason="matches the reference",
        )


def test_release_below_threshold_needs_a_justification(judged, actors):
    rita = actors["rita"]
    _adjudicate_all(judged, rita)
    projects.update_settings(judged, SYSTEM, "demo", threshold=0.95)
    with pytest.raises(
        Conflict,
        match=r"cohen 0\.833 is below the threshold 0\.950: a release needs a written "
        r"justification of at least 20",
    ):
        releases.create_release(judged, rita, "demo", justification="too short")
    info = releases.create_release(
        judged, rita, "demo", justification="  pilot round; guidelines clarified for v2 "
    )
    assert info.justification == "pilot round; guidelines clarified for v2" and info.below_threshold
    assert info.agreement["passes"] is False and info.agreement["value"] == pytest.approx(5 / 6)


def test_releases_are_versioned_and_immutable(judged, actors):
    rita = actors["rita"]
    _adjudicate_all(judged, rita)
    first = releases.create_release(judged, rita, "demo")
    labels.save_label(
        judged, actors["alice"], "demo", _pair(judged, "q3", "D4"), grade=1, reason="hmm, related"
    )
    with pytest.raises(Conflict, match="release blocked: 1 disagreements"):
        releases.create_release(judged, rita, "demo")
    adjudication.adjudicate(
        judged, rita, "demo", _pair(judged, "q3", "D4"), grade=1, reason="related after all"
    )
    second = releases.create_release(judged, rita, "demo", justification="alice's late edit lowered kappa")
    assert (first.version, second.version) == (1, 2) and first.content_hash != second.content_hash
    assert releases.get_release(judged, rita, "demo", 1) == first
    assert read_qrels(io.BytesIO(export.export_release(judged, rita, "demo", 1))).to_dict()["q3"]["D4"] == 0
    assert [r.version for r in releases.list_releases(judged, rita, "demo")] == [1, 2]
    with pytest.raises((IntegrityError, DBAPIError), match="immutable"), judged.write() as s:
        s.execute(text("UPDATE release_qrels SET grade = 3"))
    with pytest.raises(NotFound, match="project 'demo': release 9 does not exist"):
        releases.get_release(judged, rita, "demo", 9)


def _pair(db, query_id: str, doc_id: str) -> int:
    return pooling.get_pair_info(db, SYSTEM, "demo", query_id, doc_id).pair_id


def test_hashes(judged, actors):
    rita = actors["rita"]
    _adjudicate_all(judged, rita)
    info = releases.create_release(judged, rita, "demo")
    docs = read_corpus(SAMPLE_DIR / "docs.jsonl")
    expected_rows = [
        (d, 1, hashlib.sha256(f"{t}\x1f{x}".encode()).hexdigest())
        for d, t, x in zip(docs["doc_id"], docs["title"], docs["text"], strict=True)
    ]
    assert info.corpus_hash == releases.corpus_hash(expected_rows)
    canonical = "".join(f"{q} 0 {d} {g}\n" for (q, d), g in sorted(TRUTH.items()))
    assert info.content_hash == hashlib.sha256(canonical.encode()).hexdigest()


def test_jsonl_export_has_reasons_and_provenance(judged, actors):
    rita = actors["rita"]
    _adjudicate_all(judged, rita)
    releases.create_release(judged, rita, "demo")
    records = [
        json.loads(x) for x in export.export_release(judged, rita, "demo", format="jsonl").splitlines()
    ]
    assert len(records) == 12
    d4 = next(r for r in records if (r["query_id"], r["doc_id"]) == ("q2", "D4"))
    assert (d4["relevance"], d4["kind"], d4["origin"], d4["release"]) == (0, "adjudicated", "pool", 1)
    assert d4["sources"] == [{"run": "scheme_b", "rank": 2}]
    assert [(x["annotator"], x["grade"], x["reason"]) for x in d4["labels"]] == [
        ("alice", 0, "alice: checked the text"),
        ("bob", 2, "bob: checked the text"),
    ]
    assert (d4["adjudication"]["reviewer"], d4["adjudication"]["reason"]) == ("rita", "matches the reference")
    d2 = next(r for r in records if (r["query_id"], r["doc_id"]) == ("q1", "D2"))
    assert (d2["kind"], d2["adjudication"], d2["labels"][0]["doc_version"]) == ("unanimous", None, 1)


def test_labels_csv_is_formula_safe(demo, actors):
    view = queue.next_pair(demo, actors["alice"], "demo")
    labels.save_label(demo, actors["alice"], "demo", view.pair_id, grade=1, reason='=HYPERLINK("http://x")')
    rows = list(csv.reader(io.StringIO(export.export_labels_csv(demo, actors["rita"], "demo").decode())))
    assert rows[0][:6] == ["query_id", "doc_id", "annotator", "version", "grade", "reason"]
    assert rows[1][5] == '\'=HYPERLINK("http://x")'


def test_exports_need_a_reviewer_and_a_format(judged, actors):
    with pytest.raises(PermissionDenied, match=re.escape("alice (annotator) may not export releases")):
        export.export_release(judged, actors["alice"], "demo")
    wrong = "format must be one of 'trec', 'beir', 'jsonl', 'passages'; got 'xml'"
    with pytest.raises(InvalidInput, match=wrong):
        export.export_release(judged, actors["rita"], "demo", format="xml")
    with pytest.raises(NotFound, match="project 'demo': no release yet"):
        export.export_release(judged, actors["rita"], "demo")


def test_excluded_pairs_stay_out(judged, actors):
    rita = actors["rita"]
    for q, d in (("q1", "D1"), ("q2", "D4")):
        pooling.exclude_pair(judged, rita, "demo", q, d, reason="ambiguous query intent")
    st = status.project_status(judged, rita, "demo")
    assert (st.pairs, st.excluded, st.complete, st.disagreements) == (10, 2, 10, 0)
    info = releases.create_release(judged, rita, "demo")
    assert info.n_qrels == 10 and info.counts["excluded"] == 2


def test_project_status(judged, actors):
    st = status.project_status(judged, actors["rita"], "demo")
    assert (st.pairs, st.complete, st.labels, st.slots, st.disagreements, st.adjudicated) == (
        12,
        12,
        24,
        24,
        2,
        0,
    )
    assert st.progress.fraction == 1.0
    assert [(a.username, a.done, a.available) for a in st.annotators] == [("alice", 12, 0), ("bob", 12, 0)]


def test_majority_with_three_annotators(db):
    from store_fixtures import synthetic_project

    people = synthetic_project(db, "tri", queries=1, docs=3, n=3, annotators=3)
    grades = {"D0": (2, 2, 3), "D1": (0, 0, 0), "D2": (0, 0, 3)}  # majority, unanimous, straddles the cut-off
    for k, actor in enumerate(people):
        while (view := queue.next_pair(db, actor, "tri")) is not None:
            labels.save_label(db, actor, "tri", view.pair_id, grade=grades[view.doc_id][k], reason="judged")
    items = gate.disagreements(db, SYSTEM, "tri")
    assert [(d.doc_id, sorted(x.grade for x in d.labels)) for d in items] == [("D2", [0, 0, 3])]
    adjudication.adjudicate(db, SYSTEM, "tri", items[0].pair_id, grade=0, reason="off topic")
    info = releases.create_release(
        db, SYSTEM, "tri", justification="three pairs only: kappa is not meaningful"
    )
    assert info.counts == {"unanimous": 1, "majority": 1, "adjudicated": 1, "excluded": 0}
    records = {
        r["doc_id"]: r
        for r in map(json.loads, export.export_release(db, SYSTEM, "tri", format="jsonl").splitlines())
    }
    assert {d: (r["relevance"], r["kind"]) for d, r in records.items()} == {
        "D0": (2, "majority"),
        "D1": (0, "unanimous"),
        "D2": (0, "adjudicated"),
    }
    assert records["D2"]["adjudication"]["reviewer"] == "system" and len(records["D0"]["labels"]) == 3
