"""AppTest: the Agreement page's Judges section (each machine judge against the humans; machine labels never
change the human figures above it) and the Score page's "Machine judge (PPI)" tab."""

from __future__ import annotations

import json
import math

import pytest
from app_helpers import app_as, clear_streamlit_caches, plain, sample_grades

from annotate_app.services import judges
from annotate_app.services.auth import SYSTEM
from annotate_app.ui import state

HUMAN = {"Cohen's κ (mean pairwise)": "0.657", "Threshold": "0.700", "Percent agreement": "0.833"}
# the judge "copycat" gives the sample grades, but calls q2 D4 (0) fully relevant and q3 D6 (2) related
COPYCAT_CHANGES = {("q2", "D4"): 3, ("q3", "D6"): 1}


def _jsonl(grades: dict[tuple[str, str], int]) -> bytes:
    rows = [
        {"query_id": q, "doc_id": d, "grade": g, "reason": "replayed", "confidence": 0.9, "model": "m"}
        for (q, d), g in sorted(grades.items())
    ]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _import_copycat(db) -> None:
    grades = {**sample_grades(), **COPYCAT_CHANGES}
    judges.import_labels(db, SYSTEM, "demo", "copycat", _jsonl(grades), filename="copycat.jsonl")
    clear_streamlit_caches()  # the page must recompute the human figures, not reuse them


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _human(at) -> dict[str, str]:
    return {k: v for k, v in _metrics(at).items() if k in HUMAN}


def test_no_judge_no_section(labelled_db):
    at = app_as(labelled_db, "rita")
    assert not at.exception and _human(at) == HUMAN
    assert "Judges" not in [h.value for h in at.subheader]


def test_the_judges_section_shows_the_calibration_and_leaves_the_human_figures_alone(labelled_db):
    before = app_as(labelled_db, "rita")
    assert _human(before) == HUMAN
    _import_copycat(labelled_db)
    at = app_as(labelled_db, "rita")
    assert not at.exception and not at.error
    assert _human(at) == HUMAN  # machine labels never enter the human figures
    assert "Judges" in [h.value for h in at.subheader]
    (cal,) = judges.calibrate(labelled_db, SYSTEM, "demo")
    shown = _metrics(at)
    assert shown["Shared pairs"] == "12"
    assert shown["Cohen's κ (binary, relevant ≥ 1)"] == f"{cal.kappa:.3f}"
    assert shown["Weighted κ (linear)"] == f"{cal.weighted_kappa:.3f}"
    assert shown["Krippendorff's α (ordinal)"] == f"{cal.alpha_ordinal:.3f}"
    # 24 human labels; copycat is +3 on q2 D4 (both 0) and -1 on q3 D6 (alice 2, bob 3 -> -1, -2),
    # and bob's flips q1 D1 (0 vs 2: +2) and q1 D3 (1 vs 0: -1): (6 - 1 - 2 + 2 - 1) / 24
    assert shown["Leniency"] == f"{(6 - 1 - 2 + 2 - 1) / 24:+.3f}"
    assert shown["Randomly sampled"] == "12"  # the queue was never steered: every shared pair counts
    assert shown["Kendall's τ (runs)"] == "needs ≥ 3 runs"  # the demo has two stored runs
    assert shown["Kendall's τ (top 5 runs)"] == "needs ≥ 3 runs"
    assert plain(at.warning[-1].value) == (
        f"Calibration not passed: κ {cal.kappa:.3f} on 12 randomly sampled human pairs; it needs κ ≥ 0.700 "
        "on at least 30 randomly sampled human pairs. Its labels fill no pair."
    )
    assert len(at.get("vega_lite_chart")) == 4  # kappa heatmap, per query, human confusion, judge confusion
    assert any("Rows: the human labels' grades" in c.value for c in at.main.caption)
    leniency, per_query = at.dataframe[-2].value, at.dataframe[-1].value
    assert leniency["human_grade"].tolist() == [0, 1, 2, 3]
    # 14 human 0s (alice 7, bob 6 + his flip of q1 D1): +3 twice on q2 D4, +2 on bob's q1 D1
    assert leniency["leniency"].tolist()[0] == pytest.approx(8 / 14)
    assert per_query["query_id"].tolist() == ["q1", "q2", "q3"]
    assert per_query["n_items"].tolist() == [4, 4, 4]
    assert any("No probe of copycat: its labels were made elsewhere" in c.value for c in at.main.caption)


def test_the_confusion_matrix_is_the_calibrations(labelled_db):
    from annotate_app.ui.components.judges_panel import confusion_table

    _import_copycat(labelled_db)
    (cal,) = judges.calibrate(labelled_db, SYSTEM, "demo")
    table = confusion_table(cal)
    assert table.index.tolist() == [0, 1, 2, 3] and table.columns.tolist() == [0, 1, 2, 3]
    assert int(table.to_numpy().sum()) == 24  # one count per human label on a shared pair
    assert table.loc[0, 3] == 2  # alice's and bob's 0 on q2 D4, the judge's 3


def test_a_passed_judge_a_second_judge_and_a_probe(labelled_db):
    exact = _jsonl(sample_grades())  # kappa 1 with alice, 0.657 with bob: mean 0.83
    judges.import_labels(labelled_db, SYSTEM, "demo", "copycat", exact, filename="exact.jsonl")
    judges.add_judge(labelled_db, SYSTEM, "demo", "lex", backend="lexical")
    judges.run_judge(labelled_db, SYSTEM, "demo", "lex", pairs="all")
    probe = judges.probe(labelled_db, SYSTEM, "demo", "lex", sample=3)
    judges.update_judge_settings(labelled_db, SYSTEM, "demo", min_calibration_pairs=10)
    clear_streamlit_caches()
    at = app_as(labelled_db, "rita")
    assert at.selectbox(key=state.AGREE_JUDGE).options == ["copycat", "lex"]
    cal = {c.name: c for c in judges.calibrate(labelled_db, SYSTEM, "demo")}
    assert cal["copycat"].kappa >= 0.7
    assert plain(at.success[-1].value).startswith(
        f"Calibration passed: κ {cal['copycat'].kappa:.3f} on 12 randomly sampled human pairs (κ ≥ 0.700 "
        "on at least 10"
    )
    at.selectbox(key=state.AGREE_JUDGE).select("lex").run()
    assert _metrics(at)["Cohen's κ (binary, relevant ≥ 1)"] == f"{cal['lex'].kappa:.3f}"
    assert _human(at) == HUMAN
    notes = [plain(x.value) for x in (*at.info, *at.warning) if "probe:" in x.value]
    share, (low, high), (rise_low, rise_high) = probe.share_raised, probe.share_raised_ci, probe.mean_rise_ci
    assert notes == [
        f"Stuffing probe: with the query's terms inserted, the grade rose on {probe.n_raised} of "
        f"{probe.n_pairs} pairs humans judged non-relevant ({share:.0%}, 95% CI {low:.0%} to {high:.0%}); "
        f"fell on {probe.n_lowered}, unchanged on {probe.n_unchanged}; mean rise {probe.mean_rise:+.2f} "
        f"(95% CI {rise_low:+.2f} to {rise_high:+.2f})."
    ]
    (pairs,) = [e for e in at.expander if e.label == "Pairs behind the stuffing probe"]
    table = pairs.dataframe[0].value
    assert table.to_numpy().tolist() == [
        [p.query_id, p.doc_id, p.before, p.after, p.after - p.before] for p in probe.pairs
    ]
    assert plain(pairs.caption[0].value) == f"Prompt hash: `{probe.prompt_hash}`"
    assert any("No injection, length probe of lex yet" in c.value for c in at.main.caption)
    injected = judges.probe(labelled_db, SYSTEM, "demo", "lex", sample=3, kind="injection")
    clear_streamlit_caches()
    at = app_as(labelled_db, "rita")
    at.selectbox(key=state.AGREE_JUDGE).select("lex").run()
    notes = [plain(x.value) for x in (*at.info, *at.warning) if "probe:" in x.value]
    assert sorted(n.split(":")[0] for n in notes) == ["Injection probe", "Stuffing probe"]
    (injection_pairs,) = [e for e in at.expander if e.label == "Pairs behind the injection probe"]
    assert plain(injection_pairs.caption[0].value) == f"Prompt hash: `{injected.prompt_hash}`"
    assert injected.prompt_hash != probe.prompt_hash  # each kind shows the hash of its own prompts
    assert any(
        n.startswith(
            "Injection probe: with a sentence asserting relevance inserted, the grade rose on "
            f"{injected.n_raised} of"
        )
        for n in notes
    )
    assert not math.isnan(cal["lex"].kappa)


def test_the_section_shows_the_circular_runs_and_the_taus_with_and_without_them(labelled_db):
    from pathlib import Path

    from annotate_app.services import imports

    sample = Path(__file__).resolve().parents[2] / "sample_corpus"
    for name in ("bm25", "bm25_again", "bm25_third"):
        imports.import_run(labelled_db, SYSTEM, "demo", sample / "run_bm25.trec", name=name)
    judges.add_judge(labelled_db, SYSTEM, "demo", "lex", backend="lexical")  # model "bm25": family "bm"
    judges.run_judge(labelled_db, SYSTEM, "demo", "lex", pairs="all")
    clear_streamlit_caches()
    at = app_as(labelled_db, "rita")
    assert not at.exception
    assert any(
        plain(c.value).startswith("No stored run was made by a model of the judge's family")
        for c in at.main.caption
    )
    assert not [w for w in at.warning if "Circular runs" in w.value]
    judges.set_run_model(labelled_db, SYSTEM, "demo", "bm25", "BM25-rm3")
    judges.set_run_model(labelled_db, SYSTEM, "demo", "bm25_third", "bm25s")
    judges.set_run_model(labelled_db, SYSTEM, "demo", "bm25_again", "gpt-4o")  # another family
    clear_streamlit_caches()
    at = app_as(labelled_db, "rita")
    assert not at.exception
    (cal,) = judges.calibrate(labelled_db, SYSTEM, "demo")
    assert cal.circular_runs == ("bm25", "bm25_third") and cal.n_runs == 5
    (flag,) = [plain(w.value) for w in at.warning if "Circular runs" in w.value]
    assert flag == (
        "Circular runs: 2 stored runs made by a model of the judge's family (bm25, bm25_third); a judge may "
        "favour them. Kendall's τ with and without them:"
    )
    table = next(d.value for d in at.dataframe if "tau_top5" in d.value.columns)
    assert table["runs"].tolist() == ["all stored runs", "without the circular runs"]
    assert table["tau"].tolist() == pytest.approx([cal.tau, cal.tau_without_circular], nan_ok=True)
    assert table["tau_top5"].tolist() == pytest.approx(
        [cal.tau_top5, cal.tau_top5_without_circular], nan_ok=True
    )
    assert not math.isnan(table["tau"][0]) and not math.isnan(table["tau"][1])  # 5 runs, and 3 without
    shown = _metrics(at)
    assert shown["Kendall's τ (runs)"] == f"{cal.tau:.3f}"


def test_the_section_counts_a_judges_failed_pairs_by_kind(labelled_db):
    import itertools

    from llm_server import LLMServer, fixture, honour_n, replay

    calls = itertools.count()

    def script(body, attempt):  # BerriAI/litellm #8953 (Azure content filter) on every third request
        if next(calls) % 3 == 0:
            return replay(fixture("azure_content_filter.json"))
        return honour_n(body, attempt)

    _import_copycat(labelled_db)
    with LLMServer(script=script) as llm:
        judges.add_judge(labelled_db, SYSTEM, "demo", "gpt", backend="openai", base_url=llm.url, model="m")
        report = judges.run_judge(labelled_db, SYSTEM, "demo", "gpt", pairs="all")
    counts = judges.failure_counts(labelled_db, SYSTEM, "demo")
    assert report.failed == 4 and counts == {"gpt": {"content_filter": 4}}
    clear_streamlit_caches()
    at = app_as(labelled_db, "rita")
    at.selectbox(key=state.AGREE_JUDGE).select("gpt").run()
    assert not at.exception
    assert plain(at.warning[-1].value) == (
        f"Failed pairs: {report.failed} (content_filter {report.failed}). A rerun asks again for those a "
        "server failed on (`qrelforge judge failures -p PROJECT gpt` lists them)."
    )
    at.selectbox(key=state.AGREE_JUDGE).select("copycat").run()
    assert any("No failed pair: every pair copycat was asked about" in c.value for c in at.main.caption)


# ------------------------------------------------------------------------------------------ Score: PPI
def _ppi_tab(db):
    at = app_as(db, "rita", "views/review/score.py")
    at.number_input(key=state.SCORE_K).set_value(3).run()
    at.session_state[state.SCORE_TAB] = "Machine judge (PPI)"
    return at.run()


def test_the_ppi_tab_without_a_judge_says_how_to_add_one(released_db):
    at = _ppi_tab(released_db)
    assert not at.exception and not at.error
    assert plain(at.info[0].value).startswith("No machine judge in this project: an admin adds one")


@pytest.mark.parametrize("measure", ["nDCG@3", "P@3"])
def test_the_ppi_tab_shows_what_score_ppi_computes(released_db, measure):
    import pandas as pd
    from app_helpers import SAMPLE

    from annotate_app.services import releases
    from metrics.evaluate import evaluate
    from metrics.formats import read_run
    from metrics.stats.ppi import ppi_mean

    _import_copycat(released_db)
    at = _ppi_tab(released_db)
    assert not at.exception and not at.error
    assert at.selectbox(key=state.SCORE_PPI_JUDGE).value == "copycat"
    assert at.selectbox(key=state.SCORE_PPI_MEASURE).value == "nDCG@3"  # the default
    at.selectbox(key=state.SCORE_PPI_MEASURE).select(measure).run()
    table = at.dataframe[0].value
    assert table["run"].tolist() == ["scheme_a", "scheme_b"]
    human = judges.human_release_qrels(released_db, SYSTEM, "demo")
    assert len(human.relevance) == len(releases.release_qrels(released_db, SYSTEM, "demo").relevance)
    judge = judges.judge_qrels(released_db, SYSTEM, "demo", "copycat")
    for i, path in enumerate(("run_a.trec", "run_b.trec")):
        run = read_run(SAMPLE / path)  # by hand: the judge's per-query values on all, the humans' on theirs
        j = evaluate(judge, run, [measure]).per_query[measure].dropna()
        h = evaluate(human, run, [measure]).per_query[measure].dropna()
        want = ppi_mean(pd.DataFrame({"x": j}), pd.DataFrame({"x": h[h.index.isin(j.index)]}))["x"]
        row = table.iloc[i]
        assert row["estimate"] == pytest.approx(want.estimate)
        assert row["human_mean"] == pytest.approx(want.human_mean)
        assert row["human_n"] == f"{want.n_human}/{want.n_total}" == "3/3"
        assert row["ppi_ci"] == f"[{want.ci_low:.4f}, {want.ci_high:.4f}]"
        assert row["human_ci"] == f"[{want.human_ci_low:.4f}, {want.human_ci_high:.4f}]"
    assert "with judge copycat: PPI = the judge's mean" in at.main.caption[-1].value


def test_the_ppi_tab_adds_the_calibrated_interval_and_how_much_narrower_it_is(released_db):
    import math

    from app_helpers import SAMPLE

    from annotate_app.ui.components.ppi_panel import CALIBRATED_COLUMNS
    from metrics.formats import read_run
    from metrics.stats.ppi import ppi_run

    _import_copycat(released_db)
    at = _ppi_tab(released_db)
    assert at.selectbox(key=state.SCORE_PPI_CALIBRATE).value == "none"  # the default: no calibration
    assert not set(CALIBRATED_COLUMNS) & set(at.dataframe[0].value.columns)
    at.selectbox(key=state.SCORE_PPI_CALIBRATE).select("isotonic").run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    human = judges.human_release_qrels(released_db, SYSTEM, "demo")
    judge = judges.judge_qrels(released_db, SYSTEM, "demo", "copycat")
    confidence: dict[str, dict[str, float | None]] = {}
    for (query, doc), value in judges.judge_confidences(released_db, SYSTEM, "demo", "copycat").items():
        confidence.setdefault(query, {})[doc] = value
    for i, path in enumerate(("run_a.trec", "run_b.trec")):
        run = read_run(SAMPLE / path)  # as `score --ppi copycat --calibrate isotonic` computes it
        plain_ = ppi_run(human, judge, run, ["nDCG@3"])["nDCG@3"]
        want = ppi_run(human, judge, run, ["nDCG@3"], calibrate="isotonic", judge_confidence=confidence)[
            "nDCG@3"
        ]
        row = table.iloc[i]
        assert row["ppi_ci"] == f"[{plain_.ci_low:.4f}, {plain_.ci_high:.4f}]"  # the plain interval stays
        assert row["calibrated_estimate"] == pytest.approx(want.estimate)
        assert row["calibrated_ci"] == f"[{want.ci_low:.4f}, {want.ci_high:.4f}]"
        if plain_.width:  # scheme_a: calibration on 3 queries widens it (negative); scheme_b has width 0
            assert row["narrower"] == pytest.approx(1 - want.width / plain_.width) == -0.2116399724
        else:
            assert math.isnan(row["narrower"])
    assert "Calibrated (isotonic): the judge's grades mapped to the human grades" in at.main.caption[-1].value
    assert "--calibrate isotonic" in at.main.caption[-1].value


# ------------------------------------------------------------------------------------ Release: sources
@pytest.mark.parametrize(
    ("sources", "shown"),
    [({"human": 12}, "12 human"), ({"human": 8, "judge:lex": 4}, "8 human, 4 judge:lex"), ({}, "—")],
)
def test_a_releases_details_count_its_qrels_by_source(sources, shown):
    from datetime import UTC, datetime

    from annotate_app.services.types import ReleaseInfo
    from annotate_app.views.review.release import details

    info = ReleaseInfo(
        project="p",
        version=1,
        created_by="rita",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        statistic="cohen",
        agreement_value=0.8,
        threshold=0.7,
        justification=None,
        content_hash="c",
        corpus_hash="h",
        guidelines_version=1,
        n_qrels=sum(sources.values()),
        counts={},
        annotators=(),
        agreement={},
        sources=sources,
    )
    assert details(info)["qrels by source"] == shown


def test_the_release_page_shows_the_sources(released_db):
    at = app_as(released_db, "rita", "views/review/release.py")
    (v1,) = [e for e in at.expander if e.label.startswith("v1 ")]
    assert v1.table[0].value.loc["qrels by source"].tolist() == ["12 human"]


def test_the_page_says_what_every_probe_kind_does():
    from annotate_app.ui.components.judges_panel import PROBE_CHANGES

    assert list(PROBE_CHANGES) == list(judges.PROBE_KINDS)


def test_the_section_shows_the_evidence_span_f1_when_evidence_was_marked(labelled_db):
    _import_copycat(labelled_db)
    at = app_as(labelled_db, "rita")
    assert "Evidence span F1" not in _metrics(at)  # neither the humans nor the judge marked a passage
    rows = [{"query_id": "q1", "doc_id": "D1", "grade": 0, "evidence": [[0, 10]]}]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    judges.import_labels(labelled_db, SYSTEM, "demo", "quoter", data, filename="quoter.jsonl")
    clear_streamlit_caches()
    at = app_as(labelled_db, "rita")
    at.selectbox(key=state.AGREE_JUDGE).select("quoter").run()
    assert not at.exception
    # alice and bob labelled q1 D1 and marked nothing: two items, no overlap; the other 22 labels are not
    # shared with this judge
    assert _metrics(at)["Evidence span F1"] == "0.000"
    assert any(
        plain(c.value).startswith(
            "Evidence span F1: the character overlap of the judge's located evidence passages and the "
            "humans' on 2 (pair, human) items"
        )
        for c in at.main.caption
    )
