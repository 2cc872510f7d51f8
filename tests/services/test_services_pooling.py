"""Depth-k pooling with budgets, sources, new runs, manual pairs and exclusions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotate_app.services import imports, pooling, projects, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import Conflict, InvalidInput, NotFound, PermissionDenied

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"


@pytest.fixture
def sample(db):
    projects.create_project(db, SYSTEM, "p")
    imports.import_documents(db, SYSTEM, "p", SAMPLE / "docs.jsonl")
    imports.import_queries(db, SYSTEM, "p", SAMPLE / "queries.jsonl")
    imports.import_run(db, SYSTEM, "p", SAMPLE / "run_a.trec")
    imports.import_run(db, SYSTEM, "p", SAMPLE / "run_b.trec")
    return db


def _pairs(db) -> set[tuple[str, str]]:
    frame = pooling.list_pairs(db, SYSTEM, "p", limit=1000)
    return set(zip(frame["query_id"], frame["doc_id"], strict=True))


@pytest.mark.parametrize(
    ("depth", "runs", "expected"),
    [
        (1, ["scheme_a"], {("q1", "D1"), ("q2", "D3"), ("q3", "D4")}),
        (1, None, {("q1", "D1"), ("q1", "D2"), ("q2", "D3"), ("q3", "D4"), ("q3", "D5")}),
        (
            2,
            ["scheme_b"],
            {("q1", "D2"), ("q1", "D1"), ("q2", "D3"), ("q2", "D4"), ("q3", "D5"), ("q3", "D6")},
        ),
    ],
)
def test_depth_k_union(sample, depth, runs, expected):
    report = pooling.pool(sample, SYSTEM, "p", depth=depth, runs=runs)
    assert _pairs(sample) == expected and report.added == len(expected)


def test_depth_three_covers_the_sample_qrels(sample):
    report = pooling.pool(sample, SYSTEM, "p", depth=3)
    qrels = {tuple(line.split()[0::2][:2]) for line in (SAMPLE / "qrels.trec").read_text().splitlines()}
    assert _pairs(sample) == qrels
    assert (report.added, report.per_query) == (12, {"q1": 4, "q2": 4, "q3": 4})
    info = pooling.get_pair_info(sample, SYSTEM, "p", "q1", "D1")
    assert (info.origin, info.sources) == ("pool", (("scheme_a", 1), ("scheme_b", 2)))


def test_a_new_run_adds_only_unjudged_pairs_and_records_its_sources(sample):
    pooling.pool(sample, SYSTEM, "p", depth=2, runs=["scheme_a"])
    report = pooling.pool(sample, SYSTEM, "p", depth=2, runs=["scheme_b"])
    assert (report.added, report.already_pooled) == (3, 3)  # (q1,D1), (q2,D3), (q3,D5) came from scheme_a
    assert pooling.get_pair_info(sample, SYSTEM, "p", "q2", "D3").sources == (
        ("scheme_a", 1),
        ("scheme_b", 1),
    )
    again = pooling.pool(sample, SYSTEM, "p", depth=2)
    assert (again.added, again.already_pooled) == (0, 9)


def test_budget_keeps_the_best_ranked(sample):
    report = pooling.pool(sample, SYSTEM, "p", depth=3, budget=2)
    pairs = _pairs(sample)
    # q1: D1 (ranks 1, 2) and D2 (rank 1) beat D3 (2, 3) and D4 (3)
    assert {d for q, d in pairs if q == "q1"} == {"D1", "D2"}
    assert (report.added, report.over_budget) == (6, 6)
    assert pooling.pool(sample, SYSTEM, "p", depth=3, budget=3).added == 3


def test_skip_prior_judged_pairs(sample):
    imports.import_qrels(sample, SYSTEM, "p", b"q1 0 D1 2\n", filename="old.trec")
    pooling.pool(sample, SYSTEM, "p", depth=1, skip_prior=True)
    assert ("q1", "D1") not in _pairs(sample)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"depth": 0}, InvalidInput, "depth must be an int >= 1; got 0"),
        ({"depth": 3, "budget": 0}, InvalidInput, "budget must be an int >= 1 or None; got 0"),
        (
            {"depth": 3, "runs": ["nope"]},
            NotFound,
            "run 'nope' does not exist in project 'p' (runs: scheme_a, scheme_b)",
        ),
        (
            {"depth": 3, "runs": "scheme_a"},
            InvalidInput,
            "runs must be a non-empty list of run names; got 'scheme_a'",
        ),
    ],
)
def test_pool_arguments(sample, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        pooling.pool(sample, SYSTEM, "p", **kwargs)


def test_no_runs(db):
    projects.create_project(db, SYSTEM, "empty")
    with pytest.raises(Conflict, match="project 'empty' has no runs; import one first"):
        pooling.pool(db, SYSTEM, "empty", depth=3)


def test_manual_pairs(sample, actors, demo):
    info = pooling.add_pair(demo, actors["rita"], "demo", "q1", "D5", note="suspected relevant")
    assert (info.origin, info.sources, info.excluded) == ("manual", (), False)
    with pytest.raises(Conflict, match=re.escape("pair ('q1', 'D5') is already in the pool")):
        pooling.add_pair(demo, SYSTEM, "demo", "q1", "D5")
    with pytest.raises(NotFound, match="document 'D9' does not exist in project 'demo'"):
        pooling.add_pair(demo, SYSTEM, "demo", "q1", "D9")
    with pytest.raises(PermissionDenied, match=re.escape("alice (annotator) may not add pairs")):
        pooling.add_pair(demo, actors["alice"], "demo", "q2", "D5")


def test_exclusion_frees_claims_and_hides_the_pair(actors, demo):
    view = queue.next_pair(demo, actors["alice"], "demo")
    info = pooling.exclude_pair(
        demo, actors["rita"], "demo", view.query_id, view.doc_id, reason="duplicate text"
    )
    assert info.excluded
    nxt = queue.next_pair(demo, actors["alice"], "demo")
    assert nxt.pair_id != view.pair_id
    seen = {nxt.pair_id}
    bob = actors["bob"]
    while (v := queue.next_pair(demo, bob, "demo")) is not None:
        seen.add(v.pair_id)
        queue.skip(demo, bob, "demo", v.pair_id, reason="just looking")
    assert view.pair_id not in seen and len(seen) == 11
    with pytest.raises(InvalidInput, match="reason must be a non-empty string"):
        pooling.exclude_pair(demo, SYSTEM, "demo", "q1", "D1", reason=" ")
    assert not pooling.include_pair(demo, SYSTEM, "demo", view.query_id, view.doc_id).excluded
