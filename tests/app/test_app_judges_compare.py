"""AppTest: the Agreement page's comparison of the project's judges on the same random human sample, the
best judge marked only when the paired test says it is significantly better."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from app_helpers import app_as, clear_streamlit_caches, sample_grades

from annotate_app.services import judges
from annotate_app.services.auth import SYSTEM
from annotate_app.ui.components.judges_compare import BEST, comparison_table


def _import(db, name: str, grades: dict) -> None:
    lines = "".join(
        json.dumps({"query_id": q, "doc_id": d, "grade": g}) + "\n" for (q, d), g in grades.items()
    )
    judges.import_labels(db, SYSTEM, "demo", name, lines.encode(), filename=f"{name}.jsonl")


def _table(at):
    (found,) = [d.value for d in at.dataframe if "kappa_95ci" in d.value.columns]
    return found


@pytest.mark.parametrize(
    ("second", "best"),
    [
        ({}, None),  # two judges that grade alike: no significant difference, nobody marked
        ({key: (grade + 2) % 4 for key, grade in sample_grades().items()}, "exact"),  # every grade wrong
    ],
)
def test_the_best_judge_is_marked_only_when_significant(labelled_db, second, best):
    _import(labelled_db, "exact", sample_grades())
    _import(labelled_db, "other", {**sample_grades(), **second})
    clear_streamlit_caches()
    at = app_as(labelled_db, "rita")
    assert not at.exception
    report = judges.compare_judges(labelled_db, SYSTEM, "demo", ["exact", "other"])
    assert report.comparison.best == best
    shown = _table(at)
    pd.testing.assert_frame_equal(shown, comparison_table(report), check_dtype=False)
    assert shown["best"].tolist() == [BEST if name == best else "" for name in ("exact", "other")]
    assert any(report.message in c.value.replace("\\", "") for c in at.main.caption)
