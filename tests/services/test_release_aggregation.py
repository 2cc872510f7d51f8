"""A release aggregated by Dawid–Skene or MACE instead of majority vote, on a simulated project whose answer
is known: a careless annotator and a noisy one out-vote a careful one on four pairs, so majority vote
releases the wrong grade there and Dawid–Skene the right one; everywhere else both release the truth."""

from __future__ import annotations

import json

import pytest
from store_fixtures import synthetic_project

from annotate_app.services import adjudication, export, gate, gold, imports, releases
from annotate_app.services.aggregations import Aggregation, canonical_aggregation
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput

QUERIES, DOCS = 4, 10  # 40 pairs, N = 3
TARGETS = [("q3", f"D{i}") for i in range(6, 10)]  # truth 2; ann says 2, xia and cal say 3
TRIPLES = [("ann", "ben", "cal"), ("ann", "xia", "cal"), ("ben", "xia", "cal"), ("ann", "ben", "xia")]


def _truth(query: str, doc: str) -> int:
    return 2 if (query, doc) in TARGETS else (int(query[1:]) + int(doc[1:])) % 4


def _grade(who: str, query: str, doc: str, k: int) -> int:
    """ann and ben are always right; xia is one grade high on every third pair; cal guesses (a fixed
    cycle)."""
    if (query, doc) in TARGETS:
        return 2 if who == "ann" else 3
    truth = _truth(query, doc)
    if who == "xia" and k % 3 == 0:
        return min(truth + 1, 3)
    guess = (7 * k + 1) % 4
    if who == "cal":  # but never sides with xia's slips: only on the targets does that tip the vote
        return (guess + 2) % 4 if k % 3 == 0 and guess == min(truth + 1, 3) != truth else guess
    return truth


def _labels() -> bytes:
    lines = []
    pairs = [(f"q{j}", f"D{i}") for j in range(QUERIES) for i in range(DOCS)]
    for k, (query, doc) in enumerate(pairs):
        triple = ("ann", "xia", "cal") if (query, doc) in TARGETS else TRIPLES[k % len(TRIPLES)]
        for who in triple:
            record = {"query_id": query, "doc_id": doc, "annotator": who, "grade": _grade(who, query, doc, k)}
            lines.append(json.dumps({**record, "reason": "simulated label"}) + "\n")
    return "".join(lines).encode()


@pytest.fixture
def project(db):
    """The simulated project, every disagreement adjudicated to the truth except one (to grade 0)."""
    synthetic_project(db, "agg", queries=QUERIES, docs=DOCS, n=3)
    imports.import_labels(db, SYSTEM, "agg", _labels(), fmt="jsonl", filename="labels.jsonl")
    odd = None
    for item in gate.disagreements(db, SYSTEM, "agg", limit=100):
        grade = _truth(item.query_id, item.doc_id)
        if odd is None and grade != 0:
            odd, grade = (item.query_id, item.doc_id), 0  # the reviewer's grade, whatever a model says
        adjudication.adjudicate(db, SYSTEM, "agg", item.pair_id, grade=grade, reason="checked the text")
    return db, odd


def _grades(db, version: int) -> dict[tuple[str, str], int]:
    qrels = releases.release_qrels(db, SYSTEM, "agg", version).to_dict()
    return {(query, doc): grade for query, docs in qrels.items() for doc, grade in docs.items()}


WHY = "a simulated project with a careless annotator, released on purpose"


def test_majority_and_dawid_skene_differ_where_the_careless_annotator_tips_the_vote(project):
    db, odd = project
    by_vote = releases.create_release(db, SYSTEM, "agg", justification=WHY)
    by_model = releases.create_release(db, SYSTEM, "agg", justification=WHY, aggregate="dawid-skene")
    vote, model = _grades(db, by_vote.version), _grades(db, by_model.version)
    truth = {pair: _truth(*pair) for pair in vote}
    truth[odd] = 0  # adjudicated: both keep the reviewer's grade
    assert {pair for pair in vote if vote[pair] != truth[pair]} == set(TARGETS)  # majority: 3 there
    assert model == truth
    assert by_vote.aggregation == {"name": "majority", "parameters": {}}
    assert by_model.aggregation == {
        "name": "dawid-skene",
        "parameters": {"max_iter": 100, "tol": 1e-6, "smoothing": 0.0},
        "changed": len(TARGETS),
    }
    assert by_model.content_hash != by_vote.content_hash
    assert by_model.counts == by_vote.counts  # the kinds say how the labels voted


def test_a_model_release_is_reproducible_and_its_hash_covers_the_aggregation(project):
    db, _ = project
    first = releases.create_release(db, SYSTEM, "agg", justification=WHY, aggregate="dawid-skene")
    plan = releases.preview_release(db, SYSTEM, "agg", aggregate=Aggregation.DAWID_SKENE)
    assert (plan.identical_to, plan.content_hash) == (first.version, first.content_hash)
    again = releases.create_release(db, SYSTEM, "agg", justification=WHY, aggregate="dawid-skene")
    assert again.unchanged and again.version == first.version
    trec = export.export_release(db, SYSTEM, "agg", first.version, format="trec").decode()
    with db.read() as s:
        from annotate_app.store import releases as releases_store
        from annotate_app.store.models import Release

        row = s.get(Release, releases_store.find(s, _project_id(s), first.version).id)
        confidences = releases_store.qrel_confidences(s, row.id)
    assert len(confidences) == 40 - len(_adjudicated(db)) and all(0 < c <= 1 for *_, c in confidences)
    record = {"name": "dawid-skene", "parameters": Aggregation.DAWID_SKENE.parameters}
    expected = releases.sha256_text(trec + canonical_aggregation(record, confidences))
    assert expected == first.content_hash
    assert releases.sha256_text(trec) != first.content_hash  # the aggregation lines are hashed


def _project_id(s) -> int:
    from annotate_app.store import projects as projects_store

    return projects_store.find(s, "agg").id


def _adjudicated(db) -> list:
    return gate.disagreements(db, SYSTEM, "agg", include_resolved=True, limit=100)


def test_gold_grades_do_not_enter_the_aggregation(project):
    """A gold pair's expected grade neither pins its posterior nor adds a label: the released grade of a
    target pair stays the model's, though its gold grade says otherwise."""
    db, _ = project
    gold.add_gold(db, SYSTEM, "agg", *TARGETS[0], grade=3, explanation="a deliberately different grade")
    made = releases.create_release(db, SYSTEM, "agg", justification=WHY, aggregate="dawid-skene")
    assert _grades(db, made.version)[TARGETS[0]] == 2


def test_mace_also_follows_the_careful_annotator(project):
    db, odd = project
    made = releases.create_release(db, SYSTEM, "agg", justification=WHY, aggregate=Aggregation.MACE)
    grades = _grades(db, made.version)
    assert all(grades[pair] == 2 for pair in TARGETS) and grades[odd] == 0
    assert made.aggregation["parameters"]["seed"] == 0


@pytest.mark.parametrize("bad", ["vote", "", None, 3])
def test_an_unknown_aggregation_is_refused(project, bad):
    db, _ = project
    with pytest.raises(InvalidInput, match="aggregation must be one of 'majority', 'dawid-skene', 'mace'"):
        releases.create_release(db, SYSTEM, "agg", justification=WHY, aggregate=bad)
