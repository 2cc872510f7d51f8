"""AppTest: the reviewer pages (agreement, adjudicate, release) and their role guards."""

from __future__ import annotations

import pytest
from app_helpers import SAMPLE, app_as, judge_all, plain, sample_grades, texts

from annotate_app.services import export, projects, releases
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.ui import state

REVIEWER_PAGES = [
    "views/review/agreement.py",
    "views/review/adjudicate.py",
    "views/review/release.py",
    "views/review/score.py",
    "views/review/annotators.py",
]
ADMIN_PAGES = [
    "views/admin/admin_users.py",
    "views/admin/admin_project.py",
    "views/admin/admin_data.py",
    "views/admin/audit.py",
]


@pytest.mark.parametrize("page", REVIEWER_PAGES + ADMIN_PAGES)
def test_an_annotator_is_refused_and_sees_no_data(labelled_db, page):
    at = app_as(labelled_db, "alice", page)
    assert not at.exception
    assert len(at.error) == 1
    assert plain(at.error[0].value).startswith("Not allowed: this page needs the ")
    assert "alice is annotator" in plain(at.error[0].value)
    for kind in ("metric", "dataframe", "table", "vega_lite_chart", "text_area", "download_button"):
        assert not at.get(kind), kind


@pytest.mark.parametrize("page", ADMIN_PAGES)
def test_a_reviewer_cannot_administer(labelled_db, page):
    at = app_as(labelled_db, "rita", page)
    assert texts(at.error) == ["Not allowed: this page needs the admin role; rita is reviewer."]
    assert not at.dataframe


@pytest.mark.parametrize("page", REVIEWER_PAGES + ADMIN_PAGES)
def test_every_page_renders_for_the_admin(released_db, page):
    at = app_as(released_db, "admin", page)
    assert not at.exception
    assert not at.error, texts(at.error)


def test_agreement_shows_the_statistic_band_gate_heatmap_and_per_query(labelled_db):
    at = app_as(labelled_db, "rita")
    assert [t.value for t in at.title] == ["Agreement"]
    metrics = {m.label: (m.value, m.proto.delta) for m in at.metric}
    assert metrics["Cohen's κ (mean pairwise)"] == ("0.657", "substantial")
    assert metrics["Threshold"][0] == "0.700"
    assert metrics["Disagreements"] == ("2", "of 12 pairs compared")  # on relevance, as percent agreement
    assert plain(at.warning[0].value).startswith(
        "Gate not passed: Cohen's κ 0.657 (substantial) is below the threshold 0.700"
    )
    assert len(at.get("vega_lite_chart")) == 3  # kappa heatmap, per query, confusion
    per_query = at.dataframe[0].value
    assert per_query["query_id"].tolist() == ["q1", "q2", "q3"]
    assert "Rows (A): alice's grades; columns (B): bob's grades; 12 shared pairs" in at.main.caption[-1].value


def test_agreement_confusion_of_any_two_annotators(labelled_db):
    at = app_as(labelled_db, "rita")
    at.selectbox(key=state.AGREE_B).select("alice").run()
    assert (
        "Rows (A): alice's grades; columns (B): alice's grades; 12 shared pairs; Cohen's κ 1.000"
        in at.main.caption[-1].value
    )


def test_adjudicate_shows_labels_side_by_side_then_saves_the_final_grade(labelled_db):
    at = app_as(labelled_db, "rita", "views/review/adjudicate.py")
    assert [t.value for t in at.title] == ["Adjudicate"]
    assert at.get("progress")[0].proto.text == "3 left of 3 disagreements"
    item = _first_item(at)
    shown = [m.value for m in at.markdown]
    assert any(v.startswith("**alice**: ") for v in shown) and any(v.startswith("**bob**: ") for v in shown)
    assert f"alice judged \\(\\'{item[0]}\\'\\, \\'{item[1]}\\'\\)" in shown  # the reasons, escaped
    truth = sample_grades()[item[:2]]
    at.button(key=state.grade_button(item[2], truth, "a")).click().run()
    at.button(key=state.submit(item[2], "a")).click().run()
    assert texts(at.error) == ["reason must have at least 5 characters; got 0"]
    at.text_area(key=state.reason(item[2], "a")).input("the document answers the question").run()
    at.button(key=state.submit(item[2], "a")).click().run()
    assert plain(at.success[0].value).startswith(f"Final grade {truth} · ")
    assert at.get("progress")[0].proto.text == "2 left of 3 disagreements"
    assert _first_item(at)[:2] != item[:2]


def _first_item(at) -> tuple[str, str, int]:
    import re

    query, doc = re.fullmatch(r"Query (\S+) · document (\S+)", at.caption[0].value).groups()
    pair_id = int(next(b.key for b in at.button if b.key and b.key.startswith("a_submit_")).rsplit("_", 1)[1])
    return query, doc, pair_id


def test_adjudicating_everything_empties_the_queue(released_db):
    at = app_as(released_db, "rita", "views/review/adjudicate.py")
    assert plain(at.success[0].value) == "No disagreement waits for adjudication."


def test_release_is_blocked_by_unadjudicated_disagreements(labelled_db):
    at = app_as(labelled_db, "rita", "views/review/release.py")
    assert texts(at.error) == ["3 disagreements are not adjudicated"]
    assert at.main.button[-1].label == "Create release" and at.main.button[-1].disabled


def _adjudicate_all(db) -> None:
    from annotate_app.services import adjudication, gate

    rita = authenticate(db, "rita", "rita-demo")
    truth = sample_grades()
    for item in gate.disagreements(db, rita, "demo"):
        adjudication.adjudicate(
            db,
            rita,
            "demo",
            item.pair_id,
            grade=truth[(item.query_id, item.doc_id)],
            reason="as in the sample qrels",
        )


def test_release_below_the_threshold_needs_a_justification(labelled_db):
    _adjudicate_all(labelled_db)
    at = app_as(labelled_db, "rita", "views/review/release.py")
    low = "cohen 0.657 is below the threshold 0.700: a release needs a written justification"
    assert plain(at.warning[0].value).startswith(low)
    at.main.button[-1].click().run()
    assert texts(at.error) == [
        "cohen 0.657 is below the threshold 0.700: a release needs a written "
        "justification of at least 20 characters"
    ]
    at.text_area(key=state.RELEASE_JUSTIFICATION).input("a 12-pair demo; kappa is noisy here").run()
    at.main.button[-1].click().run()
    assert plain(at.success[0].value).startswith("Release 1 created: 12 qrels, content sha256 ")
    table = at.table[0].value
    assert table.index.tolist() == [1] and table.loc[1, "agreement"] == "0.657"
    assert table.loc[1, "justification"] == "a 12-pair demo; kappa is noisy here"
    assert [b.label for b in at.get("download_button")] == [
        "TREC qrels",
        "BEIR TSV",
        "JSONL with reasons",
        "Evidence passages (JSONL)",
    ]
    rita = authenticate(labelled_db, "rita", "rita-demo")
    made = releases.get_release(labelled_db, rita, "demo")
    assert made.justification == "a 12-pair demo; kappa is noisy here"


def test_release_without_justification_when_the_gate_passes(app_db):
    judge_all(app_db, flips={})
    projects.update_settings(app_db, SYSTEM, "demo", threshold=0.7)
    at = app_as(app_db, "rita", "views/review/release.py")
    assert plain(at.success[0].value) == "Nothing blocks a release."
    at.main.button[-1].click().run()
    assert plain(at.success[0].value).startswith("Release 1 created: 12 qrels")
    rita = authenticate(app_db, "rita", "rita-demo")
    qrels = export.export_release(app_db, rita, "demo", format="trec").decode()
    assert qrels == (sample_grades_text())


def test_release_by_dawid_skene_from_the_aggregation_selector(app_db):
    judge_all(app_db, flips={})
    projects.update_settings(app_db, SYSTEM, "demo", threshold=0.7)
    at = app_as(app_db, "rita", "views/review/release.py")
    assert at.selectbox(key=state.RELEASE_AGGREGATE).value == "majority"
    at.selectbox(key=state.RELEASE_AGGREGATE).select("dawid-skene").run()
    at.main.button[-1].click().run()
    assert plain(at.success[0].value).startswith("Release 1 created: 12 qrels")
    assert at.main.button[-1].disabled  # v1 holds these qrels under Dawid–Skene
    details = at.table[1].value
    assert details.loc["aggregation"].iloc[0] == (
        "Dawid–Skene (max_iter=100, smoothing=0.0, tol=1e-06); 0 differ from the vote"
    )
    rita = authenticate(app_db, "rita", "rita-demo")
    assert releases.get_release(app_db, rita, "demo").aggregation["name"] == "dawid-skene"
    at.selectbox(key=state.RELEASE_AGGREGATE).select("majority").run()
    assert not at.main.button[-1].disabled  # majority vote: another release


def sample_grades_text() -> str:
    return "".join(sorted(line + "\n" for line in (SAMPLE / "qrels.trec").read_text().splitlines()))


def test_annotators_lists_every_annotator_and_charts_the_one_picked(labelled_db):
    at = app_as(labelled_db, "rita", "views/review/annotators.py")
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Annotators"]
    table = at.dataframe[0].value
    assert table["annotator"].tolist() == ["alice", "bob"]
    assert table["n_labels"].tolist() == [12, 12]
    assert [s.value for s in at.subheader] == [
        "alice: accuracy over time",
        "Time per label",
        "Grade distribution",
    ]
    at.selectbox[0].select("bob").run()
    assert at.subheader[0].value == "bob: accuracy over time"


def test_adjudicate_marks_the_shown_pair_gold(labelled_db):
    from annotate_app.services import gold

    at = app_as(labelled_db, "rita", "views/review/adjudicate.py")
    query, doc, pair_id = _first_item(at)
    at.selectbox(key=state.gold_grade(pair_id)).select(2).run()
    at.button(key=state.gold_submit(pair_id)).click().run()
    assert texts(at.error) == ["explanation must have at least 5 characters; got 0"]
    at.text_area(key=state.gold_explanation(pair_id)).input("half of the answer is there").run()
    at.button(key=state.gold_submit(pair_id)).click().run()
    assert plain(at.success[0].value) == f"({query}, {doc}) is gold: grade 2."
    rita = authenticate(labelled_db, "rita", "rita-demo")
    listed = [
        (g.query_id, g.doc_id, g.grade, g.explanation) for g in gold.list_gold(labelled_db, rita, "demo")
    ]
    assert listed == [(query, doc, 2, "half of the answer is there")]


def test_adjudicate_orders_least_certain_first_on_request(labelled_db):
    at = app_as(labelled_db, "rita", "views/review/adjudicate.py")
    worst = list(at.dataframe[0].value["document"])
    at.radio(key=state.ADJ_ORDER).set_value("least_certain").run()
    assert not at.exception
    least = list(at.dataframe[0].value["document"])
    assert sorted(least) == sorted(worst) and len(least) == 3
