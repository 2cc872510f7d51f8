"""Annotator quality on a simulated team labelling through the queue: the careless, the lenient and the
speeding annotator come out where their known behaviour puts them."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest
from crowd_simulation import CAREFUL, CARELESS, GRADES, LENIENT, RATERS, SPEEDER, confusions
from store_fixtures import synthetic_project

from annotate_app.services import annotators, gold, labels, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput, NotFound

QUERIES, DOCS, GOLD = 10, 16, 40  # 160 pairs, 4 annotators each, 40 of them gold


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """The simulated team (tests/helpers/crowd_simulation.py) labelling 160 pairs through the queue, in
    turns, N = 4; 40 pairs are gold with their true grade, drawn into every stream at a gold rate of 25%.
    Behaviour (`BEHAVIOUR`, its own random stream): the speeder skips a quarter of the pairs offered, the
    lenient edits a third of their labels (same grade, a second reason), and everyone but the careless marks
    a tenth of their labels unsure."""
    from annotate_app.services.setup import initialise, open_database

    random.seed(7)  # the queue's gold coin (`services._gold_draw`): the same draws every run
    url = f"sqlite:///{tmp_path_factory.mktemp('team') / 'team.db'}"
    initialise(url)
    db = open_database(url)
    people = synthetic_project(db, "sim", queries=QUERIES, docs=DOCS, n=4, annotators=len(RATERS))
    rng = np.random.default_rng(7)
    truth = {
        (f"q{j}", f"D{i}"): int(rng.choice(len(GRADES), p=[0.4, 0.3, 0.2, 0.1]))
        for j in range(QUERIES)
        for i in range(DOCS)
    }
    for index in rng.choice(len(truth), size=GOLD, replace=False):
        (query, doc), grade = list(truth.items())[index]
        gold.add_gold(db, SYSTEM, "sim", query, doc, grade=grade, explanation="the true grade")
    gold.set_gold_rate(db, SYSTEM, "sim", 0.25)
    matrices = confusions()
    names = dict(zip((p.username for p in people), RATERS, strict=True))
    behaviour = np.random.default_rng(11)
    active = list(people)
    while active:
        for who in list(active):
            view = queue.next_pair(db, who, "sim")
            if view is None:
                active.remove(who)
                continue
            name = names[who.username]
            skip, edit, unsure = (behaviour.random() < p for p in BEHAVIOUR.get(name, BEHAVIOUR[CAREFUL[0]]))
            if skip:
                queue.skip(db, who, "sim", view.pair_id, reason="simulated skip")
                continue
            given = int(rng.choice(len(GRADES), p=matrices[name][truth[(view.query_id, view.doc_id)]]))
            seconds = float(rng.uniform(2, 4) if name == SPEEDER else rng.lognormal(np.log(20), 0.4))
            labels.save_label(
                db, who, "sim", view.pair_id, grade=given, reason="simulated", seconds=seconds, unsure=unsure
            )
            if edit:
                labels.save_label(
                    db, who, "sim", view.pair_id, grade=given, reason="simulated, checked", unsure=unsure
                )
    return db, names, url


# each role's probabilities of (skipping a pair offered, editing a label, marking it unsure)
BEHAVIOUR = {
    CAREFUL[0]: (0.0, 0.0, 0.1),  # and every careful annotator
    CARELESS: (0.0, 0.0, 0.0),
    LENIENT: (0.0, 1 / 3, 0.1),
    SPEEDER: (0.25, 0.0, 0.1),
}


def _by_role(team) -> pd.DataFrame:
    db, names, _ = team
    rows = annotators.annotator_table(db, SYSTEM, "sim", floor_seconds=5, window=10).rows
    return rows.assign(role=rows["annotator"].map(names)).set_index("role")


def test_the_table_has_one_row_per_annotator_with_every_column(team):
    rows = annotators.annotator_table(team[0], SYSTEM, "sim").rows
    assert list(rows.columns) == list(annotators.COLUMNS)
    assert len(rows) == len(RATERS) and rows["n_labels"].sum() > QUERIES * DOCS * 4  # gold draws beyond N
    assert (rows["n_gold"] >= 10).all()  # the gold rate reached every annotator


# (column, the annotator who must rank first when the column is sorted, ascending?)
RANKINGS = [
    ("exact", CARELESS, True),  # least accurate against gold
    ("kappa", CARELESS, True),
    ("ds_competence", CARELESS, True),
    ("mace_competence", CARELESS, True),
    ("speeder_share", SPEEDER, False),  # most labels under the floor
    ("median_seconds", SPEEDER, True),  # fastest
    ("skip_rate", SPEEDER, False),  # skips most
    ("edit_rate", LENIENT, False),  # edits most
    ("unsure_share", CARELESS, True),  # never unsure
]


@pytest.mark.parametrize(("column", "first", "ascending"), RANKINGS, ids=[r[0] for r in RANKINGS])
def test_sorting_a_column_puts_the_known_culprit_first(team, column, first, ascending):
    rows = _by_role(team)
    assert rows[column].sort_values(ascending=ascending).index[0] == first, rows[column]


def test_the_lenient_is_near_gold_and_grades_high(team):
    """Uniform guesses look lenient too where most true grades are low; the within-one accuracy tells the
    careless (far from gold) from the lenient (one grade off), who is then the most lenient of the rest."""
    rows = _by_role(team)
    careless = rows.loc[CARELESS, "within_one"]
    assert rows.loc[LENIENT, "within_one"] > 0.8 and rows.loc[LENIENT, "within_one"] > careless
    near_gold = rows[rows["within_one"] > careless]
    assert near_gold["leniency"].idxmax() == LENIENT
    assert rows.loc[LENIENT, "leniency"] > 0.3 > rows.loc[CAREFUL, "leniency"].max()


def test_the_careful_and_the_speeder_grade_alike(team):
    rows = _by_role(team)
    assert rows.loc[SPEEDER, "exact"] > rows.loc[CARELESS, "exact"]
    assert rows.loc[CAREFUL, "speeder_share"].max() < 0.05 < rows.loc[SPEEDER, "speeder_share"]


def test_one_annotators_charts(team):
    db, names, _ = team
    lenient = next(user for user, role in names.items() if role == LENIENT)
    charts = annotators.annotator_charts(db, SYSTEM, "sim", lenient, window=10)
    assert list(charts.grades["grade"]) == GRADES
    assert charts.grades["share"].sum() == pytest.approx(1.0)
    assert charts.grades.iloc[-1]["share"] > charts.grades.iloc[-1]["team_share"]  # more top grades
    assert len(charts.seconds) == _by_role(team).loc[LENIENT, "n_labels"]
    assert len(charts.accuracy) >= 2
    with pytest.raises(NotFound, match="no label"):
        annotators.annotator_charts(db, SYSTEM, "sim", "nobody")


@pytest.mark.parametrize(("floor", "window"), [(0, 10), (5, 0), (float("inf"), 10), (5, 2.5)])
def test_bad_settings_are_refused(team, floor, window):
    with pytest.raises(InvalidInput):
        annotators.annotator_table(team[0], SYSTEM, "sim", floor_seconds=floor, window=window)


JSON_RANKINGS = [  # (--sort, the annotator who comes first, or last: "-")
    ("exact", CARELESS, ""),
    ("mace_competence", CARELESS, ""),
    ("median_seconds", SPEEDER, ""),
    ("unsure_share", CARELESS, ""),
    ("skip_rate", SPEEDER, "-"),
    ("edit_rate", LENIENT, "-"),
]


@pytest.mark.parametrize(("sort", "who", "end"), JSON_RANKINGS, ids=[r[0] for r in JSON_RANKINGS])
def test_the_json_output_ranks_them_too(team, monkeypatch, capsys, sort, who, end):
    from annotate_app.cli import main

    _, names, url = team
    monkeypatch.setenv("QRELFORGE_DATABASE_URL", url)
    assert main(["annotators", "-p", "sim", "--format", "json", "--window", "10", "--sort", sort]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [set(r) for r in records] == [{*annotators.COLUMNS, "status"}] * len(RATERS)
    assert names[records[-1 if end else 0]["annotator"]] == who


def test_the_simulated_rates_are_near_the_set_ones(team):
    rows = _by_role(team)
    assert rows.loc[SPEEDER, "skip_rate"] == pytest.approx(0.25, abs=0.1)
    assert rows.loc[LENIENT, "edit_rate"] == pytest.approx(1 / 3, abs=0.1)
    assert rows.loc[CAREFUL, "unsure_share"].between(0.02, 0.2).all()
    assert rows.loc[CARELESS, ["unsure_share", "skip_rate", "edit_rate"]].tolist() == [0.0, 0.0, 0.0]


def test_the_table_output_and_a_bad_sort(team, monkeypatch, capsys):
    from annotate_app.cli import main

    monkeypatch.setenv("QRELFORGE_DATABASE_URL", team[2])
    assert main(["annotators", "-p", "sim"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == list(annotators.COLUMNS)
    assert len(out.splitlines()) >= len(RATERS) + 1
    assert main(["annotators", "-p", "sim", "--sort", "height"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("qrelforge: error: --sort must be one of") and err.count("\n") == 1


def test_the_read_on_both_databases(demo, actors):
    """Seconds travel as milliseconds; unknown times stay NaN; a gold pair's labels count as gold."""
    alice, bob = actors["alice"], actors["bob"]
    gold.add_gold(demo, actors["rita"], "demo", "q1", "D1", grade=2, explanation="the expected grade")
    for who, seconds in ((alice, 12.3456), (bob, None)):
        while (view := queue.next_pair(demo, who, "demo")) is not None:
            labels.save_label(demo, who, "demo", view.pair_id, grade=2, reason="judged it", seconds=seconds)
    rows = annotators.annotator_table(demo, actors["rita"], "demo").rows.set_index("annotator")
    assert rows.loc["alice", "median_seconds"] == pytest.approx(12.346)
    assert np.isnan(rows.loc["bob", "median_seconds"])
    assert rows["n_gold"].tolist() == [1, 1] and rows["exact"].tolist() == [1.0, 1.0]


def test_the_behaviour_rates_on_both_databases(demo, actors):
    """alice: 12 pairs offered, 2 skipped, 10 labelled, 3 of them unsure, 1 edited; bob: 12 labelled, none
    unsure, skipped or edited. The rates come from the store's reads (unsure flag and version with the
    labels, one grouped read of the skips)."""
    alice, bob = actors["alice"], actors["bob"]
    k, first = 0, None
    while (view := queue.next_pair(demo, alice, "demo")) is not None:
        if k < 2:
            queue.skip(demo, alice, "demo", view.pair_id, reason="cannot read this")
        else:
            unsure = k in (2, 3, 4)
            labels.save_label(demo, alice, "demo", view.pair_id, grade=1, reason="judged it", unsure=unsure)
            first = first or view.pair_id
        k += 1
    labels.save_label(demo, alice, "demo", first, grade=2, reason="judged it again", unsure=True)
    while (view := queue.next_pair(demo, bob, "demo")) is not None:
        labels.save_label(demo, bob, "demo", view.pair_id, grade=2, reason="judged it")
    rows = annotators.annotator_table(demo, actors["rita"], "demo").rows.set_index("annotator")
    expected = pd.DataFrame(
        {"unsure_share": [0.3, 0.0], "skip_rate": [2 / 12, 0.0], "edit_rate": [0.1, 0.0]},
        index=pd.Index(["alice", "bob"], name="annotator"),
    )
    pd.testing.assert_frame_equal(rows[list(annotators.BEHAVIOUR)], expected)
