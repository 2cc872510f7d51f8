"""Circularity: a run records the model that made it; calibration flags the runs of the judge's own model
family and gives Kendall's tau with and without them."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotate_app.services import imports, judges
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import NotFound
from metrics.stats.circularity import model_family, same_family

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("Qwen/Qwen2.5-7B-Instruct", "qwen"),
        ("qwen3:8b", "qwen"),
        ("gpt-4o-mini", "gpt"),
        ("meta-llama/Llama-3.1-8B", "llama"),
        ("bm25", "bm"),
        ("", ""),
        ("  ", ""),
        ("4o", ""),
    ],
)
def test_model_family(model, family):
    assert model_family(model) == family


def test_an_unknown_family_matches_nothing():
    assert same_family("Qwen/Qwen3-8B", "qwen2.5") and not same_family("", "") and not same_family("gpt", "")


def test_calibration_flags_the_runs_of_the_judges_family(db):
    from annotate_app.services.demo import load_demo

    load_demo(db, labelled=True)
    for name in ("bm25", "bm25_again", "bm25_third"):
        imports.import_run(db, SYSTEM, "demo-review", SAMPLE / "run_bm25.trec", name=name)
    runs = sorted(name for name, _ in imports.list_runs(db, SYSTEM, "demo-review"))
    judges.add_judge(db, SYSTEM, "demo-review", "lex", backend="lexical")  # model "bm25": family "bm"
    judges.run_judge(db, SYSTEM, "demo-review", "lex", pairs="all")
    (before,) = [c for c in judges.calibrate(db, SYSTEM, "demo-review") if c.name == "lex"]
    assert before.circular_runs == () and before.tau_without_circular is None
    judges.set_run_model(db, SYSTEM, "demo-review", "bm25", "BM25-rm3")
    judges.set_run_model(db, SYSTEM, "demo-review", "bm25_again", "gpt-4o")
    (cal,) = [c for c in judges.calibrate(db, SYSTEM, "demo-review") if c.name == "lex"]
    assert cal.circular_runs == ("bm25",) and cal.n_runs == len(runs) == 5
    assert (cal.tau, cal.tau_top5) == (before.tau, before.tau_top5)  # with them: as before
    assert cal.tau_without_circular is not None  # on the 4 other runs
    assert cal.to_dict()["circular_runs"] == ["bm25"]
    with pytest.raises(NotFound, match=r"^run 'nope' does not exist in project 'demo-review'$"):
        judges.set_run_model(db, SYSTEM, "demo-review", "nope", "gpt-4o")


def test_import_run_model_and_calibrate_show_the_circular_runs(db, db_url, monkeypatch, capsys):
    from annotate_app.cli import main
    from annotate_app.services.demo import load_demo

    load_demo(db, labelled=True)
    judges.add_judge(db, SYSTEM, "demo-review", "lex", backend="lexical")
    judges.run_judge(db, SYSTEM, "demo-review", "lex", pairs="all")
    monkeypatch.setenv("QRELFORGE_DATABASE_URL", db_url)
    run = SAMPLE / "run_bm25.trec"
    for name, model in (("bm25", "bm25-tuned"), ("other", "gpt-4o")):
        assert main(["import", "run", str(run), "-p", "demo-review", "--name", name, "--model", model]) == 0
    capsys.readouterr()
    assert main(["judge", "calibrate", "-p", "demo-review"]) == 0
    (cal,) = [c for c in judges.calibrate(db, SYSTEM, "demo-review") if c.name == "lex"]
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("judge lex: runs of"))
    without = "-" if cal.tau_without_circular is None else f"{cal.tau_without_circular:.3f}"
    assert line.startswith(f"judge lex: runs of its model family: bm25; tau without them {without} (top 5: ")
