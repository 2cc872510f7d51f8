"""A release aggregated by Dawid–Skene or MACE instead of majority vote, on a simulated project whose answer
is known: a careless annotator and a noisy one out-vote a careful one on four pairs, so majority vote
releases the wrong grade there and Dawid–Skene the right one; everywhere else both release the truth."""

from __future__ import annotations

import pytest
from careless_project import TARGETS, build, truth

from annotate_app.services import export, gate, gold, releases
from annotate_app.services.aggregations import Aggregation, canonical_aggregation
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput


@pytest.fixture
def project(db):
    """The simulated project (tests/helpers/careless_project.py); its pair adjudicated against the truth."""
    return db, build(db)


def _grades(db, version: int) -> dict[tuple[str, str], int]:
    qrels = releases.release_qrels(db, SYSTEM, "agg", version).to_dict()
    return {(query, doc): grade for query, docs in qrels.items() for doc, grade in docs.items()}


WHY = "a simulated project with a careless annotator, released on purpose"


def test_majority_and_dawid_skene_differ_where_the_careless_annotator_tips_the_vote(project):
    db, (odd, odd_grade) = project
    by_vote = releases.create_release(db, SYSTEM, "agg", justification=WHY)
    by_model = releases.create_release(db, SYSTEM, "agg", justification=WHY, aggregate="dawid-skene")
    vote, model = _grades(db, by_vote.version), _grades(db, by_model.version)
    expected = {pair: truth(*pair) for pair in vote}
    expected[odd] = odd_grade  # adjudicated: both keep the reviewer's grade
    assert {pair for pair in vote if vote[pair] != expected[pair]} == set(TARGETS)  # majority: 3 there
    assert model == expected
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
    db, (odd, odd_grade) = project
    made = releases.create_release(db, SYSTEM, "agg", justification=WHY, aggregate=Aggregation.MACE)
    grades = _grades(db, made.version)
    assert all(grades[pair] == 2 for pair in TARGETS) and grades[odd] == odd_grade
    assert made.aggregation["parameters"]["seed"] == 0


@pytest.mark.parametrize("bad", ["vote", "", None, 3])
def test_an_unknown_aggregation_is_refused(project, bad):
    db, _ = project
    with pytest.raises(InvalidInput, match="aggregation must be one of 'majority', 'dawid-skene', 'mace'"):
        releases.create_release(db, SYSTEM, "agg", justification=WHY, aggregate=bad)
