"""AppTest: upload size limits (Data page imports, Score page runs) and paging of big lists (a pool of 100 000
pairs of one query on the Data page; 1 000 unjudged documents of a run on the Score page).

AppTest has no file uploads: ``st.file_uploader`` is replaced for the test (`ui_attack_helpers.fake_uploads`)
and returns the files (its keyword arguments are kept, to check the limit passed to the browser).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from app_helpers import ROOT, app_as, app_database, plain, texts
from ui_attack_helpers import BIG_N, BIG_PROJECT, build_big_project, fake_uploads

from annotate_app import launch
from annotate_app.ui import settings as ui_settings
from annotate_app.ui import state
from annotate_app.ui.components import widgets

MIB = 1024 * 1024


def _documents(size: int) -> bytes:
    """A valid documents JSONL of exactly ``size`` bytes (one document)."""
    head = b'{"doc_id": "pad", "title": "padding", "text": "'
    return head + b"x" * (size - len(head) - 3) + b'"}\n'


# ------------------------------------------------------------------------------------------ upload limits
@pytest.mark.parametrize(("size", "refused"), [(MIB, False), (MIB + 1, True)])
def test_the_data_page_refuses_an_import_over_its_limit(app_db, monkeypatch, size, refused):
    monkeypatch.setenv("QRELFORGE_IMPORT_MAX_MB", "1")
    at = app_as(app_db, "admin", "views/admin/admin_data.py")
    calls = fake_uploads(monkeypatch, [("big.jsonl", _documents(size))], many=False)
    at.run()
    assert calls[-1]["max_upload_size"] == 1  # the browser refuses bigger files itself
    imports = [b for b in at.main.button if b.label == "Import"]
    if refused:
        assert texts(at.error) == [
            "big.jsonl is 1.0 MB: files here are limited to 1 MB. Import bigger files on "
            "the server with `qrelforge import KIND FILE` (it streams them)."
        ]
        assert not imports and not at.success
    else:
        assert not at.error and imports
        assert plain(at.success[0].value).startswith("big.jsonl: 1 rows; columns ")


def test_the_score_page_refuses_a_run_over_its_limit_and_reads_the_others(released_db, monkeypatch):
    monkeypatch.setenv("QRELFORGE_RUN_UPLOAD_MAX_MB", "1")
    at = app_as(released_db, "rita", "views/review/score.py")
    line = b"q1 Q0 D1 1 0.9 huge\n"
    calls = fake_uploads(
        monkeypatch,
        [
            ("huge.trec", line * (MIB // len(line) + 1)),
            ("mine.trec", b"q1 Q0 D2 1 0.9 mine\nq1 Q0 D1 2 0.5 mine\n"),
        ],
        many=True,
    )
    at.run()
    assert calls[-1]["max_upload_size"] == 1
    assert texts(at.error) == [
        "huge.trec is 1.0 MB: files here are limited to 1 MB. Import it on the Data page "
        "or with `qrelforge import run FILE`, then pick it in Runs."
    ]
    assert at.table[0].value.index.tolist() == ["scheme_a", "scheme_b", "mine"]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, (200, 50)),
        ({"QRELFORGE_IMPORT_MAX_MB": "20", "QRELFORGE_RUN_UPLOAD_MAX_MB": "5"}, (20, 5)),
        (
            {"QRELFORGE_IMPORT_MAX_MB": "5000"},
            (200, 50),
        ),  # never above Streamlit's server.maxUploadSize (200)
        ({"QRELFORGE_IMPORT_MAX_MB": "0"}, "QRELFORGE_IMPORT_MAX_MB must be at least 1; got '0'"),
        (
            {"QRELFORGE_RUN_UPLOAD_MAX_MB": "1.5"},
            "QRELFORGE_RUN_UPLOAD_MAX_MB must be a whole number of megabytes; got '1.5'",
        ),
    ],
)
def test_upload_limit_settings(app_db, monkeypatch, env, expected):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if isinstance(expected, str):
        with pytest.raises(ValueError, match=f"^{expected}$".replace("(", r"\(").replace(")", r"\)")):
            ui_settings.app_settings()
    else:
        settings = ui_settings.app_settings()
        assert (settings.import_max_mb, settings.run_upload_max_mb) == expected


def test_make_run_sets_streamlits_upload_limit():
    """`make run` starts `qrelforge serve`, which gives Streamlit the project's settings: 200 MiB uploads."""
    run = (ROOT / "Makefile").read_text().split("\nrun:")[1].split("\n\n")[0]
    assert "qrelforge serve" in run
    flags = launch.streamlit_flags("127.0.0.1", 8501)
    assert flags[flags.index("--server.maxUploadSize") + 1] == "200"


# ------------------------------------------------------------------------------------------- big lists
@pytest.fixture(scope="session")
def big_file(tmp_path_factory, demo_template) -> Path:
    """The demo plus project ``big``: one query with 100 000 pooled candidates (bulk inserts, a few seconds;
    built once per test session and worker, copied per test)."""
    from annotate_app.store.db import Database

    path = tmp_path_factory.mktemp("big") / "qrelforge.db"
    shutil.copyfile(demo_template, path)
    db = Database(f"sqlite:///{path}")
    build_big_project(db)
    db.dispose()
    return path


@pytest.fixture
def big_db(big_file, tmp_path, monkeypatch, fast_hashing):
    """A fresh copy of the demo with the 100k-pair project, configured for the app."""
    yield from app_database(big_file, tmp_path, monkeypatch)


def test_a_query_with_100k_candidates_is_paged(big_db):
    """The admin's pool table shows PAGE_ROWS pairs at a time and pages to the very end; the annotator's card
    shows one pair of the 100 000 with the count."""
    at = app_as(big_db, "admin", "views/admin/admin_data.py")
    at.selectbox(key=state.PROJECT).select(BIG_PROJECT).run()
    shown = at.dataframe[0].value
    assert len(shown) == widgets.PAGE_ROWS == 200
    assert shown["doc_id"].iloc[0] == "d000000" and shown["query_id"].unique().tolist() == ["q1"]
    assert "Pairs 1–200, 200 at a time." in [c.value for c in at.main.caption]
    at.number_input(key=state.PAIRS_PAGE).set_value(BIG_N - 100).run()
    shown = at.dataframe[0].value
    assert shown["doc_id"].tolist() == [f"d{i:06d}" for i in range(BIG_N - 100, BIG_N)]
    assert "Pairs 99901–100000, 200 at a time." in [c.value for c in at.main.caption]
    at.number_input(key=state.PAIRS_PAGE).set_value(BIG_N).run()
    assert len(at.dataframe[0].value) == 0
    assert "No pairs after the first 100000." in [c.value for c in at.main.caption]

    alice = app_as(big_db, "alice")
    alice.selectbox(key=state.PROJECT).select(BIG_PROJECT).run()
    assert alice.get("progress")[0].proto.text == f"0 / {BIG_N} judged"
    [card] = [c.value for c in alice.caption if c.value.startswith("Query ")]
    assert re.fullmatch(r"Query q1 · document d\d{6}", card)  # one pair of the 100 000, nothing else
    assert not alice.dataframe and not alice.table


def test_unjudged_documents_are_paged(released_db, monkeypatch):
    """A run with 100 000 documents for one query: its 1 000 unjudged top-k documents are shown 200 at a time;
    "Send" still queues all of them."""
    deep = "".join(f"q1 Q0 x{i:06d} {i + 1} {100_000 - i} deep\n" for i in range(100_000)).encode()
    at = app_as(released_db, "rita", "views/review/score.py")
    at.number_input(key=state.SCORE_K).set_value(1000).run()
    fake_uploads(monkeypatch, [("deep.trec", deep)], many=True)
    at.session_state[state.SCORE_TAB] = "Unjudged"  # only the open tab runs
    at.run()
    [expander] = [e for e in at.expander if e.label.startswith("deep: ")]
    assert expander.label == "deep: 1000 unjudged documents in the top 1000"
    frame = expander.dataframe[0].value
    assert frame["rank"].tolist() == list(range(1, 201))
    assert "Rows 1–200 of 1000" in [c.value for c in expander.caption]
    pager = expander.number_input[0]
    assert pager.label == "Page (of 5)"
    pager.set_value(5).run()
    [expander] = [e for e in at.expander if e.label.startswith("deep: ")]
    frame = expander.dataframe[0].value
    assert frame["rank"].tolist() == list(range(801, 1001))
    assert frame["doc_id"].iloc[-1] == "x000999"
    assert [b.label for b in expander.button] == ["Send 1000 pairs to the judging queue"]
    assert max(len(d.value) for d in at.dataframe) <= widgets.PAGE_ROWS


def test_short_lists_are_shown_whole(released_db):
    """Below PAGE_ROWS rows there is nothing to page: the demo's pool, and its unjudged documents at
    k = 10."""
    at = app_as(released_db, "admin", "views/admin/admin_data.py")
    assert len(at.dataframe[0].value) == 12
    assert "Pairs 1–12, 200 at a time." in [c.value for c in at.main.caption]
    at = app_as(released_db, "rita", "views/review/score.py")
    assert not [n for n in at.number_input if n.label.startswith("Page (of ")]
    assert all(len(d.value) < widgets.PAGE_ROWS for d in at.dataframe)
