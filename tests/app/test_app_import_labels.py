"""AppTest: labels made in another tool, imported on the Data page (issue 15 item 5) — the tool's format, a
preview of the labels per annotator and of the accounts the import creates disabled, the Import button (a
second click adds nothing), a bad file refused line by line with nothing imported, and no way in for an
annotator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_helpers import app_as, plain, texts
from store_fixtures import synthetic_project
from ui_attack_helpers import fake_uploads

from annotate_app.services import gate, users
from annotate_app.services.auth import SYSTEM
from annotate_app.services.import_kinds import IMPORT_KINDS
from annotate_app.ui import state
from metrics.formats import LabelFormat

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "labels"
GRADE_MAP = "Not relevant=0\nSomewhat relevant=1\nRelevant=2\nHighly relevant=3\n"
NEW = ["label-studio-2", "label-studio-3"]


@pytest.fixture
def labels_db(app_db):
    synthetic_project(app_db, "p", queries=2, docs=3, n=2)  # q0, q1 × D0, D1, D2: the fixtures' six pairs
    return app_db


def _page(db, monkeypatch, name: str, data: bytes, grade_map: str = GRADE_MAP):
    """The Data page of project p with ``name`` uploaded as Label Studio labels."""
    at = app_as(db, "admin", "views/admin/admin_data.py")
    at.selectbox(key=state.PROJECT).select("p").run()
    at.selectbox(key=state.IMPORT_KIND).select("labels").run()
    at.selectbox(key=state.IMPORT_LABEL_FORMAT).select("label-studio").run()
    at.text_area(key=state.IMPORT_GRADE_MAP).input(grade_map).run()
    calls = fake_uploads(monkeypatch, [(name, data)], many=False)
    at.run()
    assert calls[-1]["max_upload_size"] == 200  # the limit of every upload of the page
    return at


def _import_button(at):
    return [b for b in at.main.button if b.label == "Import"]


def _preview_rows(at) -> list[dict]:
    return at.dataframe[0].value.to_dict(orient="records")


def test_a_label_studio_file_previews_then_imports_once(labels_db, monkeypatch):
    at = _page(labels_db, monkeypatch, "label_studio.json", (FIXTURES / "label_studio.json").read_bytes())
    assert not at.error
    assert at.selectbox(key=state.IMPORT_LABEL_FORMAT).options == [f"{f}: {f.help}" for f in LabelFormat]
    kinds = at.selectbox(key=state.IMPORT_KIND).options  # a kind's help, capitalized
    assert [k.lower() for k in kinds] == [i.help.lower() for i in IMPORT_KINDS.values()]
    assert texts(at.success) == ["label_studio.json: 12 labels by 2 annotators; 1 left out: 1 skipped."]
    rows = [
        {"annotator": n, "labels": 6, "new": 6, "changed": 0, "unchanged": 0, "account": "new (disabled)"}
        for n in NEW
    ]
    assert _preview_rows(at) == rows
    assert texts(at.info) == [
        "New accounts, created disabled (no password): label-studio-2, label-studio-3. Enable one on the "
        "Users page (reactivate, then set its password)."
    ]
    assert ":material/arrow_forward: Import 12 labels into p." in [plain(m.value) for m in at.main.markdown]
    assert users.list_users(labels_db, SYSTEM) and not [
        u for u in users.list_users(labels_db, SYSTEM) if u.username in NEW
    ]  # the preview wrote nothing
    _import_button(at)[0].click().run()
    assert (
        texts(at.success)[0]
        == "Imported labels label_studio.json: 12 added, 0 changed, 0 unchanged; 1 left out: 1 skipped."
    )
    assert [(u.username, u.active) for u in users.list_users(labels_db, SYSTEM) if u.username in NEW] == [
        ("label-studio-2", False),
        ("label-studio-3", False),
    ]
    summary = gate.agreement(labels_db, SYSTEM, "p")
    assert (summary.n_pairs, summary.n_annotators, summary.n_labels) == (6, 2, 12)
    # the same file again (a second click, a second upload): every label unchanged, no account to create
    assert [(r["new"], r["unchanged"], r["account"]) for r in _preview_rows(at)] == [(0, 6, "exists")] * 2
    assert not at.info
    _import_button(at)[0].click().run()
    assert (
        texts(at.success)[0]
        == "Imported labels label_studio.json: 0 added, 0 changed, 12 unchanged; 1 left out: 1 skipped."
    )
    assert gate.agreement(labels_db, SYSTEM, "p").n_labels == 12


def _bad_file(change) -> bytes:
    """The Label Studio example, changed."""
    tasks = json.loads((FIXTURES / "label_studio.json").read_text(encoding="utf-8"))
    change(tasks)
    return json.dumps(tasks, indent=2).encode()


def _unknown_ids(tasks: list) -> None:
    tasks[2]["data"]["doc_id"] = "D99"
    tasks[4]["data"]["query_id"] = "q7"


def _unmapped(tasks: list) -> None:
    tasks[-1]["annotations"][0]["result"][0]["value"]["choices"] = ["Off topic"]


CHOICE = (
    "choice.json:645: annotation 1: choice 'Off topic' is not an integer nor a label of the grade map "
    "('Not relevant', 'Somewhat relevant', 'Relevant', 'Highly relevant'): '{\\n    \"id\": 6,"
)
# file, its content, the grade map typed -> the error shown, the problem lines (each at most: a prefix)
BAD = [
    (
        "ids.json",
        _bad_file(_unknown_ids),
        GRADE_MAP,
        "ids.json: 4 problem(s); nothing can be imported.",
        [
            "ids.json:273: unknown document 'D99': 'q0 D99 label-studio-2 0'",
            "ids.json:273: unknown document 'D99': 'q0 D99 label-studio-3 0'",
            "ids.json:521: unknown query 'q7': 'q7 D1 label-studio-2 0'",
            "ids.json:521: unknown query 'q7': 'q7 D1 label-studio-3 0'",
        ],
    ),
    (
        "choice.json",
        _bad_file(_unmapped),
        GRADE_MAP,
        "choice.json: 1 problem(s); nothing can be imported.",
        [CHOICE],
    ),
    (
        "x.json",
        b'[{"data": {"query_id": "q0"}',
        GRADE_MAP,
        "x.json: 1 problem(s); nothing can be imported.",
        ["x.json:1: invalid JSON (Expecting ',' delimiter): ''"],
    ),
    (
        "label_studio.json",
        (FIXTURES / "label_studio.json").read_bytes(),
        "Highly relevant=3\nRelevant=two\n",
        "grade map line 2: expected LABEL=GRADE with an integer GRADE; got 'two'",
        [],
    ),
]


@pytest.mark.parametrize(("name", "data", "grade_map", "error", "lines"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_file_imports_nothing_and_names_its_lines(
    labels_db, monkeypatch, name, data, grade_map, error, lines
):
    at = _page(labels_db, monkeypatch, name, data, grade_map)
    assert texts(at.error) == [error]
    shown = at.code[0].value.splitlines() if lines else [c.value for c in at.code]
    assert [x[: len(want)] for x, want in zip(shown, lines, strict=True)] == lines
    assert not _import_button(at) and not at.success
    assert len(at.dataframe) == 1  # the pool's, no preview
    assert not [u for u in users.list_users(labels_db, SYSTEM) if u.username in NEW]
    assert gate.agreement(labels_db, SYSTEM, "p").n_labels == 0


def test_an_annotator_cannot_reach_the_data_page(labels_db):
    at = app_as(labels_db, "alice", "views/admin/admin_data.py")
    assert texts(at.error) == ["Not allowed: this page needs the admin role; alice is annotator."]
    assert not at.main.selectbox and not at.main.button and not at.dataframe and not at.main.text_area
