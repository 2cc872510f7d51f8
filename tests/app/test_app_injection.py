"""AppTest: user-chosen names reach Streamlit's Markdown only escaped, and the Score page's CSV download is
safe against formula injection. Run names are the hardest case: they are TREC tags (any characters but
whitespace) shown in tables, captions, expander labels and the comparison legend. The browser proof that
hostile text is inert (no script runs, no dialog opens) is ``tests/e2e/test_e2e_attacks.py``.
"""

from __future__ import annotations

import csv
import io

import pytest
from app_helpers import app_as, plain
from ui_attack_helpers import EVIL_RUN

from annotate_app.ui import state
from annotate_app.ui.escape import escape_markdown, escape_name

# (run name, what the CSV download holds for it)
NAMES = [
    ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
    ("@cmd", "'@cmd"),
    ("-2+3", "'-2+3"),
    ("+1", "+1"),  # a plain number: a spreadsheet reads it as 1, nothing runs
    (EVIL_RUN, EVIL_RUN),
    ("<b>x</b>_*y*", "<b>x</b>_*y*"),
]


def _run(name: str) -> bytes:
    return f"q1 Q0 D2 1 0.9 {name}\nq1 Q0 D1 2 0.5 {name}\n".encode()


@pytest.fixture
def score_page(released_db, monkeypatch):
    """The Score page as rita with the demo's two runs and one stored run per hostile name (imported as an
    admin would); the CSV download's data is kept under ``at.downloads`` (label → bytes)."""
    import streamlit as st

    from annotate_app.services import imports
    from annotate_app.services.auth import SYSTEM

    for i, (name, _) in enumerate(NAMES):
        imports.import_run(released_db, SYSTEM, "demo", _run(name), filename=f"run{i}.trec")
    downloads: dict[str, bytes] = {}

    def download_button(label, data, *args, **kwargs):
        downloads[label] = data if isinstance(data, bytes) else b""
        return False

    monkeypatch.setattr(st, "download_button", download_button)
    at = app_as(released_db, "rita", "views/review/score.py")
    assert not at.exception and not at.error
    at.downloads = downloads
    return at


def test_run_names_are_escaped_wherever_markdown_shows_them(score_page):
    """Each place shows exactly the demo's runs and the hostile ones, escaped (st.table renders its cells as
    Markdown too), and the escaped text reads as typed."""
    expected = sorted(escape_name(n) for n in ["scheme_a", "scheme_b", *(name for name, _ in NAMES)])
    shown = list(score_page.table[0].value.index)
    notes = [c.value for c in score_page.caption if "missing from the run" in c.value]
    score_page.session_state[state.SCORE_TAB] = "Unjudged"  # only the open tab runs
    labels = [e.label for e in score_page.run().expander if "unjudged documents" in e.label]
    for names in (
        shown,
        [line.split(": ")[0] for line in notes[0].split("  \n")],
        [label.split(": ")[0] for label in labels],
    ):
        assert sorted(names) == expected
    assert {plain(name) for name in shown} >= {name for name, _ in NAMES}


def test_the_comparison_legend_escapes_the_baseline(score_page):
    score_page.session_state[state.SCORE_TAB] = "Compare"
    score_page.run()
    score_page.selectbox(key=state.SCORE_BASELINE).select(EVIL_RUN).run()
    [legend] = [c.value for c in score_page.caption if "than the baseline" in c.value]
    assert f"than the baseline {escape_markdown(EVIL_RUN)}" in legend


def test_the_score_csv_cannot_run_a_formula(score_page):
    rows = list(csv.reader(io.StringIO(score_page.downloads["Download the table (CSV)"].decode())))
    assert rows[0][0] == "run"
    assert sorted(row[0] for row in rows[1:]) == sorted(
        ["scheme_a", "scheme_b", *(cell for _, cell in NAMES)]
    )


def test_admin_set_grade_labels_are_escaped_on_the_grade_buttons(app_db):
    from annotate_app.services import projects
    from annotate_app.services.auth import SYSTEM

    scale = ((0, "[no](javascript:alert(1))"), (1, "<b>partly</b>"), (2, "**yes**"))
    projects.update_settings(app_db, SYSTEM, "demo", grade_scale=scale)
    at = app_as(app_db, "alice", "views/annotate/annotate.py")
    shown = [b.label for b in at.button if b.label.startswith(("0", "1", "2"))]
    assert shown == [escape_name(f"{g} · {label}") for g, label in scale]
    assert shown[0] == "0 · \\[no\\]\\(javascript\\:alert\\(1\\)\\)"
