"""AppTest: the reviewer pages as a new user reads them (issue 12) — the Score page opens at the pool depth,
counts read "1 pair" / "2 pairs", tables show human column names, only the open Score tab runs (a light first
load), the Agreement page states one definition of disagreement with matching counts and colours its charts
around the threshold, and a release's note is shown."""

from __future__ import annotations

import io
import json
import time

from app_helpers import app_as, plain

from annotate_app.services import adjudication, gate, pooling, releases
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.ui import state
from metrics.formats import read_run

SCORE = "views/review/score.py"


def _labels(dataframe) -> dict[str, str]:
    """Raw column → the label the browser shows (the column config of an ``st.dataframe``)."""
    config = json.loads(dataframe.proto.columns or "{}")
    return {name: spec.get("label", name) for name, spec in config.items() if name != "_index"}


def _open(at, tab: str):
    at.session_state[state.SCORE_TAB] = tab
    return at.run()


# ------------------------------------------------------------------------------------------------ Score
def test_score_opens_at_the_pool_depth_with_the_readmes_p_at_3(released_db):
    at = app_as(released_db, "rita", SCORE)
    assert not at.exception
    assert at.number_input(key=state.SCORE_K).value == 3  # the demo is pooled at depth 3
    table = at.table[0].value
    assert table.columns.tolist()[0] == "P@3"
    assert table["P@3"].round(3).tolist() == [0.333, 0.556]


def test_score_opens_at_10_when_the_pool_is_deeper(released_db):
    pooling.pool(released_db, SYSTEM, "demo", depth=25)
    at = app_as(released_db, "rita", SCORE)
    assert at.number_input(key=state.SCORE_K).value == 10


def _with_run(db, lines: list[str]):
    """The Score page on its Unjudged tab with one more run, ``mine`` (kept in the session)."""
    at = app_as(db, "rita", SCORE)
    run = read_run(io.BytesIO(("\n".join(lines) + "\n").encode()), name="mine")
    at.session_state[state.SCORE_EXTRA_RUNS] = {"mine": run}
    at.session_state[state.SCORE_RUNS] = ["scheme_a", "mine"]
    return _open(at, "Unjudged")


def test_counts_are_singular_for_one_and_plural_otherwise(released_db):
    at = _with_run(released_db, ["q1 Q0 D1 1 3.0 mine", "q1 Q0 D5 2 2.0 mine", "q1 Q0 D2 3 1.0 mine"])
    button = at.button(key=state.per_item("queue_unjudged", "mine"))
    assert button.label == "Send 1 pair to the judging queue"
    assert "mine: 1 unjudged document in the top 3" in [e.label for e in at.expander]
    assert "A depth-3 pool of these runs would add 1 pair to judge." in [c.value for c in at.caption]
    at = _with_run(released_db, ["q1 Q0 D5 1 3.0 mine", "q1 Q0 D6 2 2.0 mine", "q1 Q0 D2 3 1.0 mine"])
    assert (
        at.button(key=state.per_item("queue_unjudged", "mine")).label == "Send 2 pairs to the judging queue"
    )
    assert "mine: 2 unjudged documents in the top 3" in [e.label for e in at.expander]
    scores = " ".join(c.value for c in _open(at, "Scores").caption)  # the slice caption is first
    assert "scheme_a: 3 queries, " in plain(scores) and "mine: 3 queries, 2 missing" in plain(scores)


def test_the_first_load_runs_the_score_table_only_and_fast(released_db):
    at = app_as(released_db, "rita")  # the landing page (Agreement) has run, as in a browser after the login
    started = time.perf_counter()
    at.switch_page(SCORE).run()
    elapsed = time.perf_counter() - started
    assert not at.exception and len(at.table) == 1
    assert not at.get("vega_lite_chart") and not at.dataframe  # no chart, no compare: their tabs are closed
    assert elapsed < 2.0, f"the Score page's first load took {elapsed:.2f} s"


def test_compare_shows_human_column_names(released_db):
    at = _open(app_as(released_db, "rita", SCORE), "Compare")
    frame = next(d for d in at.dataframe if "p_t_adjusted" in d.value.columns)
    labels = _labels(frame)
    assert labels["p_t_adjusted"] == "p (t-test, adjusted)"
    assert labels["ci_low"] == "CI low" and labels["diff"] == "Difference" and labels["run"] == "Run"
    assert all("_" not in label for label in labels.values()), labels


def test_the_open_tab_is_kept_after_an_action(released_db):
    at = _open(app_as(released_db, "rita", SCORE), "BM25 & fusion")
    next(b for b in at.main.button if b.label == "Build BM25 run").click().run()
    assert plain(at.success[0].value).startswith("Built bm25: ")
    assert at.session_state[state.SCORE_TAB] == "BM25 & fusion"
    assert "Download bm25 (TREC)" in [b.label for b in at.get("download_button")]


# -------------------------------------------------------------------------------------------- Agreement
def test_agreement_states_one_definition_with_matching_counts(labelled_db):
    at = app_as(labelled_db, "rita")
    metrics = {m.label: (m.value, m.proto.delta) for m in at.metric}
    assert metrics["Cohen's κ (mean pairwise)"] == ("0.657", "substantial")
    assert metrics["Percent agreement"][0] == "0.833"
    assert metrics["Disagreements"] == ("2", "of 12 pairs compared")  # 1 − 0.833 of 12 pairs: the same rule
    captions = [c.value for c in at.main.caption]
    assert any("relevant (grade ≥ 1) or not" in c for c in captions), captions
    assert any("3 pairs whose grades differ, 3 not adjudicated yet" in c for c in captions), captions
    assert plain(at.warning[0].value).startswith("Gate not passed: Cohen's κ 0.657 (substantial)")


def test_agreement_tables_show_human_column_names(labelled_db):
    at = app_as(labelled_db, "rita")
    labels = _labels(at.dataframe[0])
    assert labels["query_id"] == "Query" and labels["n_items"] == "Pairs"
    assert labels["agreement"] == "Percent agreement" and labels["alpha"] == "Krippendorff's α"
    assert all("_" not in label for label in labels.values()), labels


def _color_scale(spec: dict) -> dict:
    layer = spec["layer"][0] if "layer" in spec else spec
    color = layer["encoding"]["color"]
    return color.get("condition", color)["scale"]


def test_the_kappa_heatmap_diverges_at_the_threshold(labelled_db):
    from annotate_app.ui.components import charts

    at = app_as(labelled_db, "rita")
    heatmap = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    scale = _color_scale(heatmap)
    assert scale["domain"] == [-1.0, 0.7, 1.0]
    assert scale["range"] == [charts.BELOW, charts.NEUTRAL, charts.ABOVE]


def test_the_confusion_matrix_is_coloured_by_row_share_with_neutral_zeros(labelled_db):
    from annotate_app.ui.components import charts

    at = app_as(labelled_db, "rita")
    confusion = json.loads(at.get("vega_lite_chart")[-1].proto.spec)
    layer = confusion["layer"][0]
    assert layer["encoding"]["color"]["field"] == "share"
    assert _color_scale(confusion) == {"domain": [0, 1], "range": [charts.NEUTRAL, charts.SHARE]}
    rita = authenticate(labelled_db, "rita", "rita-demo")
    table = gate.confusion(labelled_db, rita, "demo", "alice", "bob").table
    rows = next(iter(charts.confusion_heatmap(table).to_dict()["datasets"].values()))
    zero = [r for r in rows if r["pairs"] == 0]
    assert zero and all(r["share"] == 0 for r in zero)
    for grade in {r["A"] for r in rows}:
        shares = [r["share"] for r in rows if r["A"] == grade]
        assert sum(shares) in (0, 1) or abs(sum(shares) - 1) < 1e-9


# ---------------------------------------------------------------------------------------------- Release
def test_the_release_note_is_shown_in_the_list_and_the_details(released_db):
    rita = authenticate(released_db, "rita", "rita-demo")
    first = gate.disagreements(released_db, rita, "demo", include_resolved=True)[0]  # new content for v2
    grade = (first.adjudication.grade + 1) % 4 if first.adjudication else 0
    adjudication.adjudicate(released_db, rita, "demo", first.pair_id, grade=grade, reason="second thoughts")
    releases.create_release(
        released_db, rita, "demo", note="second cut, for the README", justification="kappa below 0.7 again"
    )
    at = app_as(released_db, "rita", "views/review/release.py")
    table = at.table[0].value
    assert table.loc[2, "note"] == "second cut, for the README" and table.loc[1, "note"] == ""
    details = [e for e in at.expander if e.label.startswith("v2 ")]
    assert details and plain(details[0].label).endswith(" · second cut, for the README")
    shown = details[0].table[0].value
    assert shown.loc["note"].tolist() == ["second cut, for the README"]
