"""AppTest: the Score page's slice selector (queries tagged by their queries file), the run × query heatmap,
and the fingerprinted downloads, which `qrelforge verify` checks against the exported release."""

from __future__ import annotations

import io
import json

import pytest
from app_helpers import SAMPLE, app_as

from annotate_app.cli import main
from annotate_app.services import export, imports
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.ui import state
from metrics.evaluate import evaluate
from metrics.formats import read_qrels, read_run

TAGS = {"q1": ["head", "lang:zh"], "q2": ["tail", "lang:zh"], "q3": ["tail", "lang:en"]}
MEASURES = ["P@3", "R@3", "nDCG@3", "AP", "RR", "Judged@3"]


@pytest.fixture
def tagged_db(released_db):
    """The released demo, its queries imported again with tags (same texts: the labels stay)."""
    lines = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    data = "".join(json.dumps({**q, "tags": TAGS[q["query_id"]]}, ensure_ascii=False) + "\n" for q in lines)
    report = imports.import_queries(released_db, SYSTEM, "demo", data.encode(), filename="queries.jsonl")
    assert (report.added, report.changed) == (0, 3)
    return released_db


@pytest.fixture
def page(tagged_db, monkeypatch):
    import streamlit as st

    downloads: dict[str, bytes] = {}

    def download_button(label, data, *args, **kwargs):
        downloads[label] = data if isinstance(data, bytes) else b""
        return False

    monkeypatch.setattr(st, "download_button", download_button)
    at = app_as(tagged_db, "rita", "views/review/score.py")
    at.number_input(key=state.SCORE_K).set_value(3).run()
    at.downloads = downloads
    return at


def _release(db):
    rita = authenticate(db, "rita", "rita-demo")
    return export.export_release(db, rita, "demo", format="trec")


def test_the_selector_offers_each_tag_and_each_key(page):
    assert not page.exception and not page.error
    box = page.selectbox(key=state.SCORE_SLICE_BY)
    assert box.options == ["All queries (no slices)", "Each tag", "Tag lang: one slice per value"]
    page.selectbox(key=state.SCORE_SLICE_BY).set_value("tag").run()
    assert page.selectbox(key=state.SCORE_SLICE).options == [
        "head (1 query)",
        "lang:en (1 query)",
        "lang:zh (2 queries)",
        "tail (2 queries)",
    ]


@pytest.mark.parametrize(
    "by, name, queries", [("tag:lang", "zh", ["q1", "q2"]), ("tag", "tail", ["q2", "q3"])]
)
def test_the_table_shows_the_slice_as_evaluate_on_its_queries(page, tagged_db, by, name, queries):
    page.selectbox(key=state.SCORE_SLICE_BY).set_value(by).run()
    page.selectbox(key=state.SCORE_SLICE).set_value(name).run()
    assert not page.exception and not page.error
    qrels = read_qrels(io.BytesIO(_release(tagged_db)))
    cut = {q: dict(docs) for q, docs in qrels.to_dict().items() if q in queries}
    table = page.table[0].value
    for run, path in (("scheme_a", "run_a.trec"), ("scheme_b", "run_b.trec")):
        assert table.loc[run].to_dict() == evaluate(cut, read_run(SAMPLE / path), MEASURES).mean
    overview = next(d.value for d in page.dataframe if "slice" in d.value.columns)
    assert overview["slice"].drop_duplicates().tolist() == (
        ["en", "zh"] if by == "tag:lang" else ["head", "lang:en", "lang:zh", "tail"]
    )


def test_the_heatmap_shows_the_slice_runs_by_queries(page):
    page.selectbox(key=state.SCORE_SLICE_BY).set_value("tag:lang").run()
    page.selectbox(key=state.SCORE_SLICE).set_value("zh").run()
    page.session_state[state.SCORE_TAB] = "Per query"
    page.run()
    page.selectbox(key=state.SCORE_HEATMAP_MEASURE).set_value("RR").run()
    heat = json.loads(page.get("vega_lite_chart")[0].proto.spec)
    assert heat["mark"]["type"] == "rect" and heat["encoding"]["color"]["condition"]["title"] == "RR"
    import pyarrow as pa

    [data] = page.get("vega_lite_chart")[0].proto.datasets
    frame = pa.ipc.open_stream(data.data.data).read_pandas()
    assert sorted(zip(frame["run"], frame["query_id"], strict=True)) == [
        ("scheme_a", "q1"),
        ("scheme_a", "q2"),
        ("scheme_b", "q1"),
        ("scheme_b", "q2"),
    ]


def test_the_json_download_verifies_against_the_exported_release(page, tagged_db, tmp_path, capsys):
    page.selectbox(key=state.SCORE_SLICE_BY).set_value("tag:lang").run()
    report = tmp_path / "scores.json"
    report.write_bytes(page.downloads["Download the scores (JSON)"])
    data = json.loads(report.read_bytes())
    assert data["fingerprint"]["qrels"]["release"] == 1 and data["slices"]["by"] == "tag:lang"
    release = tmp_path / "release.trec"
    release.write_bytes(_release(tagged_db))
    code = main(["verify", str(report), str(release), str(SAMPLE / "run_a.trec"), str(SAMPLE / "run_b.trec")])
    out = capsys.readouterr().out
    assert code == 0 and out.endswith("numbers hold\n")
    csv_rows = page.downloads["Download the table (CSV)"].decode().splitlines()
    assert (
        csv_rows[0].endswith(",fingerprint") and data["fingerprint"]["qrels"]["content_sha256"] in csv_rows[1]
    )


def test_without_tags_the_page_says_how_to_get_slices(released_db):
    at = app_as(released_db, "rita", "views/review/score.py")
    assert "No query has tags: import queries with a `tags` field to score slices." in [
        c.value for c in at.caption
    ]
