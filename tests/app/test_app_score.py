"""AppTest: the Score page — numbers equal metrics.evaluate on the exported release; uploads, per-query
charts, unjudged documents to the queue, the compare view, assessor sensitivity, BM25 and fusion runs."""

from __future__ import annotations

import io

import pytest
from app_helpers import SAMPLE, app_as, plain

from annotate_app.services import export, pooling
from annotate_app.services.auth import authenticate
from annotate_app.ui import state
from metrics.evaluate import evaluate
from metrics.formats import read_qrels, read_run


def _score_page(db, k: int = 3, tab: str | None = None):
    at = app_as(db, "rita", "views/review/score.py")
    at.number_input(key=state.SCORE_K).set_value(k).run()
    return at if tab is None else _open(at, tab)


def _open(at, tab: str):
    """Open a tab of the Score page (only the open tab runs)."""
    at.session_state[state.SCORE_TAB] = tab
    return at.run()


@pytest.mark.parametrize("k", [3, 10])
def test_the_numbers_are_evaluate_on_the_exported_release(released_db, k):
    at = _score_page(released_db, k)
    assert not at.exception and not at.error
    rita = authenticate(released_db, "rita", "rita-demo")
    qrels = read_qrels(io.BytesIO(export.export_release(released_db, rita, "demo", format="trec")))
    measures = [f"P@{k}", f"R@{k}", f"nDCG@{k}", "AP", "RR", f"Judged@{k}"]
    table = at.table[0].value
    assert table.index.tolist() == ["scheme_a", "scheme_b"]
    assert table.columns.tolist() == measures
    for name, path in (("scheme_a", "run_a.trec"), ("scheme_b", "run_b.trec")):
        expected = evaluate(qrels, read_run(SAMPLE / path), measures).mean
        assert table.loc[name].to_dict() == expected  # exactly, not approximately


def test_the_table_shows_p3_as_in_the_seed(released_db):
    at = _score_page(released_db)
    import pyarrow as pa

    shown = pa.ipc.open_stream(at.table[0].proto.arrow_data.styler.display_values).read_pandas()
    assert shown.iloc[:, 0].tolist() == ["0.333", "0.556"]  # the P@3 column as displayed


def test_a_bad_upload_is_reported_with_line_numbers(released_db, monkeypatch):
    at = _score_page(released_db)
    bad = b"q1 Q0 D1 1 0.9 mine\nq1 Q0 D2 2 abc mine\nq2 Q0 D1\n"
    good = b"q1 Q0 D2 1 0.9 mine\nq1 Q0 D1 2 0.5 mine\n"
    _upload(at, monkeypatch, [("bad.trec", bad), ("good.trec", good)])
    assert plain(at.error[0].value) == "bad.trec was not read: 2 problem(s)"
    problems = at.code[0].value.splitlines()
    assert problems[0].startswith("bad.trec:2: ") and problems[1].startswith("bad.trec:3: ")
    assert at.table[0].value.index.tolist() == ["scheme_a", "scheme_b", "mine"]


def _upload(at, monkeypatch, files: list[tuple[str, bytes]]) -> None:
    """Upload ``files`` (AppTest has no file uploads: st.file_uploader returns them for one run)."""
    import streamlit as st
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    records = [
        UploadedFile(UploadedFileRec(f"id{i}", name, "text/plain", data), None)
        for i, (name, data) in enumerate(files)
    ]
    with monkeypatch.context() as patch:
        patch.setattr(st, "file_uploader", lambda *args, **kwargs: records)
        at.run()


def test_per_query_bars_and_difference_chart(released_db):
    at = _score_page(released_db, tab="Per query")
    captions = [c.value for c in at.main.caption]
    charts = [*at.get("vega_lite_chart"), *_open(at, "Compare").get("vega_lite_chart")]
    assert len(charts) >= 3  # per-query bars, difference, win/tie/loss
    assert "2 queries better for scheme_b, 0 worse, 1 tied." in captions


def test_unjudged_documents_go_to_the_judging_queue(released_db):
    at = _score_page(released_db, k=10, tab="Unjudged")
    assert at.table[0].value["Judged@10"].tolist() == [1.0, 1.0]
    # a BM25 run retrieves documents that no scheme ranked in its top 3
    _open(at, "BM25 & fusion")
    at.number_input(key=state.SCORE_BM25_K).set_value(5).run()
    next(b for b in at.main.button if b.label == "Build BM25 run").click().run()
    assert plain(at.success[0].value).startswith("Built bm25: ")
    _open(at, "Unjudged")
    unjudged = [e for e in at.expander if e.label.startswith("bm25: ")]
    assert unjudged and not unjudged[0].label.startswith("bm25: 0 ")
    button = at.button(key=state.per_item("queue_unjudged", "bm25"))
    count = int(button.label.split()[1])
    button.click().run()
    plural = "s" if count > 1 else ""
    assert plain(at.success[0].value) == f"bm25: {count} pair{plural} sent to the judging queue."
    rita = authenticate(released_db, "rita", "rita-demo")
    pool = pooling.list_pairs(released_db, rita, "demo")
    assert (pool["origin"] == "manual").sum() == count
    assert set(pool[pool["origin"] == "manual"]["note"]) == {"unjudged in bm25's top 10"}


def test_compare_view_tests_against_the_baseline_and_offers_downloads(released_db):
    at = _score_page(released_db, tab="Compare")
    frame = next(d.value for d in at.dataframe if "p_permutation_adjusted" in d.value.columns)
    assert frame["run"].unique().tolist() == ["scheme_b"]
    assert frame.loc[frame["measure"] == "P@3", "diff"].round(4).tolist() == [0.2222]
    labels = [b.label for b in at.get("download_button")]
    assert "Report (Markdown)" in labels and "Report (HTML)" in labels


def test_assessor_sensitivity_panel(released_db):
    at = _score_page(released_db, tab="Sensitivity")
    at.toggle(key=state.SCORE_SENSITIVITY).set_value(True).run()
    spread = next(d.value for d in at.dataframe if "min_qrels" in d.value.columns)
    assert set(spread["run"]) == {"scheme_a", "scheme_b"}
    tau = next(d.value for d in at.dataframe if "discordant" in d.value.columns)
    assert set(tau["qrels"]) == {"majority", "annotator:alice", "annotator:bob"}


def test_bm25_and_fusion_runs_are_scored_with_the_rest(released_db):
    at = _score_page(released_db, tab="BM25 & fusion")
    next(b for b in at.main.button if b.label == "Build BM25 run").click().run()
    at.multiselect(key=state.SCORE_FUSE_RUNS).select("scheme_a").select("scheme_b").run()
    at.text_input(key=state.SCORE_FUSE_NAME).input("rrf_ab").run()
    next(b for b in at.main.button if b.label == "Fuse").click().run()
    assert plain(at.success[0].value) == "Built rrf_ab: rrf of 2 runs."
    downloads = [b.label for b in at.get("download_button")]
    table = _open(at, "Scores").table[0].value
    assert table.index.tolist() == ["scheme_a", "scheme_b", "bm25", "rrf_ab"]
    rita = authenticate(released_db, "rita", "rita-demo")
    qrels = read_qrels(io.BytesIO(export.export_release(released_db, rita, "demo", format="trec")))
    from metrics.retrieval.fusion import fuse

    fused = fuse([read_run(SAMPLE / "run_a.trec"), read_run(SAMPLE / "run_b.trec")], method="rrf")
    assert table.loc["rrf_ab"].to_dict() == evaluate(qrels, fused, table.columns.tolist()).mean
    assert "Download bm25 (TREC)" in downloads


def test_score_without_a_release_says_so(labelled_db):
    at = app_as(labelled_db, "rita", "views/review/score.py")
    assert plain(at.info[0].value) == "No release yet: scores are computed on a release's qrels."
