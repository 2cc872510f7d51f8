"""metrics.compare.compare and its Report: seed 000 worked by hand, a planted difference, identical runs,
undefined pairs, Holm across runs, renderings (golden Markdown, self-contained HTML, escaping) and errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from metrics import Run
from metrics.compare import DOWN, UP, compare
from metrics.stats import adjust

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_corpus"
GOLDEN = ROOT / "tests" / "fixtures" / "compare_sample.md"
QRELS, RUN_A, RUN_B = (str(SAMPLE / n) for n in ("qrels.trec", "run_a.trec", "run_b.trec"))


@pytest.fixture(scope="module")
def sample_report():
    return compare(QRELS, [RUN_A, RUN_B], ["P@3", "R@3", "nDCG@3"], baseline="scheme_a")


# ------------------------------------------------------------------------------------ seed 000 by hand
@pytest.mark.parametrize(
    "measure, base, other",
    [
        ("P@3", [1 / 3, 1 / 3, 1 / 3], [2 / 3, 1 / 3, 2 / 3]),
        ("R@3", [1 / 2, 1, 1 / 2], [1, 1, 1]),
    ],
)
def test_seed_000_per_query_values_and_outcomes(sample_report, measure, base, other):
    frame = sample_report.to_dataframe("per_query")
    b = frame[(frame.run == "scheme_b") & (frame.measure == measure)].set_index("query_id")
    assert b["baseline_value"].tolist() == pytest.approx(base)
    assert b["value"].tolist() == pytest.approx(other)
    assert b["outcome"].to_dict() == {"q1": "win", "q2": "tie", "q3": "win"}
    c = sample_report.comparison("scheme_b", measure)
    assert (c.wins, c.ties, c.losses, c.n) == (2, 1, 0, 3)


def test_seed_000_means_and_exact_permutation_p(sample_report):
    assert sample_report.means["scheme_a"]["P@3"] == pytest.approx(1 / 3)
    assert sample_report.means["scheme_b"]["R@3"] == 1.0
    c = sample_report.comparison("scheme_b", "P@3")
    # differences (1/3, 0, 1/3): 8 sign patterns, |sum| >= 2/3 for 4 of them
    assert (c.p_permutation, c.permutations, c.exact) == (0.5, 8, True)
    assert c.diff == pytest.approx(2 / 9) and not c.significant and c.direction == ""
    assert sample_report.best("P@3") == ["scheme_b"]


def test_golden_markdown(sample_report):
    assert sample_report.to_markdown() == GOLDEN.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------- planted difference
def planted(n_queries: int = 40, depth: int = 20, seed: int = 1):
    """Qrels with 4 relevant documents per query, run A with them at random ranks, run B = A with the
    relevant documents moved to the top on the even queries."""
    rng = np.random.default_rng(seed)
    qrels, a, b = {}, {}, {}
    for i in range(n_queries):
        q = f"q{i}"
        docs = [f"D{i}_{j}" for j in range(depth)]
        qrels[q] = {d: (int(rng.integers(1, 4)) if j < 4 else 0) for j, d in enumerate(docs[:8])}
        ranking = [docs[j] for j in rng.permutation(depth)]
        a[q] = ranking
        b[q] = sorted(ranking, key=lambda d: -qrels[q].get(d, 0)) if i % 2 == 0 else ranking
    return qrels, a, b


@pytest.mark.parametrize("measure", ["nDCG@10", "P@5", "AP", "RR"])
def test_planted_improvement_is_significant(measure):
    qrels, a, b = planted()
    report = compare(qrels, {"A": a, "B": b}, [measure], baseline="A")
    c = report.comparison("B", measure)
    assert c.p_permutation < 0.01 and c.p_t < 0.01
    assert c.ci_low > 0 and c.significant and c.direction == "better"
    assert c.losses == 0 and c.wins <= 20 and c.wins + c.ties == 40
    assert report._flag("B", measure) == UP


def test_planted_degradation_is_flagged_worse():
    qrels, a, b = planted()
    c = compare(qrels, {"B": b, "A": a}, ["nDCG@10"], baseline="B").comparison("A", "nDCG@10")
    assert c.significant and c.direction == "worse" and c.wins == 0


@pytest.mark.parametrize(
    "tests", [("t", "permutation", "bootstrap"), ("t",), ("bootstrap",), ("permutation",)]
)
def test_identical_runs_are_not_significant(tests):
    qrels, a, _ = planted()
    report = compare(qrels, {"A": a, "copy": dict(a)}, ["nDCG@10", "P@5"], baseline="A", tests=tests)
    for c in report.comparisons:
        assert (c.diff, c.wins, c.ties, c.losses, c.significant) == (0.0, 0, 40, 0, False)
        if "t" in tests:
            assert (c.t, c.p_t, c.p_t_adjusted) == (0.0, 1.0, 1.0)
        if "permutation" in tests:
            assert c.p_permutation == 1.0 and c.p_permutation_adjusted == 1.0 and not c.exact
        if "bootstrap" in tests:
            assert (c.ci_low, c.ci_high) == (0.0, 0.0)


def test_fixed_seed_is_reproducible_and_the_seed_matters():
    qrels, a, b = planted(n_queries=30)
    b = {q: list(reversed(r)) if int(q[1:]) % 3 == 0 else r for q, r in b.items()}  # a noisier B
    runs = {"A": a, "B": b}

    def ps(seed: int) -> tuple[float, float]:
        c = compare(qrels, runs, ["nDCG@10"], seed=seed, n_permutations=2000, n_bootstrap=2000).comparison(
            "B", "nDCG@10"
        )
        return c.p_permutation, c.ci_low

    assert ps(7) == ps(7)
    assert ps(7) != ps(8)


def test_a_third_run_does_not_change_the_others_raw_p_values():
    qrels, a, b = planted()
    two = compare(qrels, {"A": a, "B": b}, ["nDCG@10"], n_permutations=999)
    three = compare(qrels, {"A": a, "B": b, "C": dict(a)}, ["nDCG@10"], n_permutations=999)
    assert two.comparison("B", "nDCG@10").p_permutation == three.comparison("B", "nDCG@10").p_permutation


# ------------------------------------------------------------------------------------ undefined pairs
def test_pairs_undefined_in_either_run_are_dropped_and_counted():
    qrels = {"q1": {"D1": 1}, "q2": {"D2": 1}, "q3": {"D3": 0}, "q4": {"D4": 1}}
    a = {"q1": ["D1"], "q2": ["D9"], "q3": ["D3"], "q4": ["D4"]}
    b = {"q1": ["D1"], "q2": ["D2"], "q3": ["D3"], "q4": ["D8"]}
    report = compare(qrels, {"a": a, "b": b}, ["R@1", "P@1", "FirstRel"])
    r, p, first = (report.comparison("b", m) for m in ("R@1", "P@1", "FirstRel"))
    assert (r.n, r.wins, r.ties, r.losses) == (3, 1, 1, 1)  # q3 has no relevant document: R undefined
    assert (p.n, p.wins, p.ties, p.losses) == (4, 1, 2, 1)
    assert first.n == 1 and (first.wins, first.ties, first.losses) == (
        0,
        1,
        0,
    )  # only q1 has FirstRel in both


def test_first_rel_lower_is_better():
    qrels = {"q1": {"D1": 1}, "q2": {"D2": 1}}
    report = compare(
        qrels, {"a": {"q1": ["D9", "D1"], "q2": ["D2"]}, "b": {"q1": ["D1"], "q2": ["D2"]}}, ["FirstRel"]
    )
    c = report.comparison("b", "FirstRel")
    assert c.diff == -0.5 and (c.wins, c.ties, c.losses) == (1, 1, 0)
    assert report.best("FirstRel") == ["b"]


# ------------------------------------------------------------------------------------- multiple runs
def test_holm_is_applied_per_measure_across_runs():
    qrels, a, b = planted()
    c = {q: r[::-1] for q, r in a.items()}
    report = compare(qrels, {"A": a, "B": b, "C": c, "D": dict(b)}, ["nDCG@10", "P@5"], baseline="A")
    for m in ("nDCG@10", "P@5"):
        rows = [report.comparison(r, m) for r in ("B", "C", "D")]
        for test in ("p_t", "p_permutation"):
            raw = [getattr(x, test) for x in rows]
            assert [getattr(x, test + "_adjusted") for x in rows] == pytest.approx(
                adjust(raw, "holm").tolist()
            )


@pytest.mark.parametrize("correction, factor", [("bonferroni", 2), ("none", 1), (None, 1)])
def test_other_corrections(correction, factor):
    qrels, a, b = planted()
    report = compare(qrels, {"A": a, "B": b, "C": dict(b)}, ["P@5"], correction=correction)
    c = report.comparison("B", "P@5")
    assert c.p_t_adjusted == pytest.approx(min(1.0, factor * c.p_t))


# ------------------------------------------------------------------------------------------ renderings
def test_dataframes_are_chart_ready(sample_report):
    summary = sample_report.to_dataframe()
    assert summary[["run", "measure"]].values.tolist()[:2] == [["scheme_a", "P@3"], ["scheme_a", "R@3"]]
    assert {"mean", "queries", "best", "diff", "ci_low", "p_permutation_adjusted", "pairs", "wins"} <= set(
        summary
    )
    means = sample_report.to_dataframe("means")
    assert means.loc["scheme_b", "R@3"] == 1.0 and list(means.columns) == ["P@3", "R@3", "nDCG@3"]
    wtl = sample_report.to_dataframe("wtl")
    assert wtl[wtl.measure == "P@3"][["outcome", "count"]].values.tolist() == [
        ["win", 2],
        ["tie", 1],
        ["loss", 0],
    ]
    assert len(sample_report.to_dataframe("per_query")) == 2 * 3 * 3


def test_to_dict_is_json_with_nulls_for_undefined():
    qrels = {"q1": {"D1": 1}, "q2": {"D2": 0}}
    report = compare(qrels, {"a": {"q1": ["D1"]}, "b": {"q1": ["D2"]}}, ["R@1"], tests=("t",))
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["per_query"]["a"]["q2"]["R@1"] is None
    assert data["comparisons"][0]["ci_low"] is None and data["comparisons"][0]["n"] == 1
    assert data["comparisons"][0]["p_t"] is None  # one pair: no t-test
    assert data["settings"]["tests"] == ["t"]


def test_text_table(sample_report):
    lines = sample_report.to_text().splitlines()
    assert lines[2:5] == [
        "run                       P@3       R@3    nDCG@3",
        "scheme_a (baseline)  0.3333    0.6667    0.6378",
        "scheme_b             0.5556*   1.0000*   1.0000*",
    ]


def test_markdown_flags_significant_differences_and_escapes_names():
    qrels, a, b = planted()
    md = compare(qrels, {"A|base": a, "B_*x*": b}, ["P@5"], baseline="A|base").to_markdown(max_queries=0)
    assert "| B\\_\\*x\\* | **" in md and f" {UP} |" in md
    assert "A\\|base (baseline)" in md and "Per-query tables left out: 40 queries" in md


def test_html_is_self_contained_and_escaped():
    qrels, a, b = planted(n_queries=10)
    evil = '<script>alert("x")</script>&'
    page = compare(qrels, {"A": a, evil: b}, ["P@5", "nDCG@10"]).to_html()
    assert (
        page.startswith("<!DOCTYPE html>") and page.count("<svg") == 1 + 2 + 2
    )  # means, differences, per query
    assert "<script" not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in page
    without_ns = page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert not re.search(r"https?:|<link|@import|url\(|src=", without_ns)


def test_html_samples_many_queries():
    qrels, a, b = planted(n_queries=450)
    page = compare(qrels, {"A": a, "B": b}, ["P@5"], n_permutations=200, n_bootstrap=200).to_html()
    per_query_svg = page.split("<svg")[-1]
    assert per_query_svg.count("<rect") == 400 and "<table" in page


def test_latex_escapes_and_marks():
    qrels, a, b = planted()
    tex = compare(qrels, {"base_1": a, "B&%": b}, ["P@5"], baseline="base_1").to_latex(label="tab:x_y")
    assert "base\\_1 (baseline) & " in tex and "B\\&\\% & \\textbf{" in tex and "$^{\\uparrow}$" in tex
    assert "\\label{tab:x\\_y}" in tex and "≤" not in tex and "$\\leq$" in tex


def test_markdown_marks_worse_runs():
    qrels, a, b = planted()
    md = compare(qrels, {"B": b, "A": a}, ["P@5"], baseline="B").to_markdown()
    assert "| A | 0." in md and f" {DOWN} |" in md


# --------------------------------------------------------------------------------------------- inputs
def test_runs_accepts_mappings_lists_of_runs_and_dataframes():
    qrels, a, b = planted(n_queries=6)
    ra, rb = Run.from_dict(a, name="ra"), Run.from_dict(b, name="rb")
    by_list = compare(qrels, [ra, rb], ["P@5"], n_permutations=100, n_bootstrap=100)
    by_frame = compare(
        qrels, {"x": ra.to_dataframe(), "y": rb}, ["P@5"], baseline="y", n_permutations=100, n_bootstrap=100
    )
    assert by_list.runs == ["ra", "rb"] and by_list.baseline == "ra"
    assert by_frame.runs == ["x", "y"] and by_frame.comparison("x", "P@5").diff == pytest.approx(
        -by_list.comparison("rb", "P@5").diff
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"baseline": "nope"}, "baseline must name one of the runs ['a', 'b']; got 'nope'"),
        (
            {"tests": ("t", "wilcoxon")},
            "tests must be distinct names among ('t', 'permutation', 'bootstrap'); got ('t', 'wilcoxon')",
        ),
        (
            {"tests": ("t", "t")},
            "tests must be distinct names among ('t', 'permutation', 'bootstrap'); got ('t', 't')",
        ),
        ({"n_permutations": 0}, "n_permutations must be an int >= 1; got 0"),
        ({"n_bootstrap": True}, "n_bootstrap must be an int >= 1; got True"),
        ({"seed": -1}, "seed must be an int >= 0; got -1"),
        ({"alpha": 1.5}, "alpha must be a number strictly between 0 and 1; got 1.5"),
        ({"confidence": 0}, "confidence must be a number strictly between 0 and 1; got 0"),
        ({"correction": "fdr"}, "correction must be one of holm, bonferroni, none; got 'fdr'"),
    ],
)
def test_bad_options(kwargs, message):
    runs = {"a": {"q1": ["D1"]}, "b": {"q1": ["D2"]}}
    with pytest.raises(ValueError, match=re.escape(message)):
        compare({"q1": {"D1": 1}}, runs, ["P@1"], **kwargs)


@pytest.mark.parametrize(
    "runs, message",
    [
        ({"a": {"q1": ["D1"]}}, "runs must hold at least 2 runs; got 1"),
        (
            [Run.from_dict({"q1": ["D1"]}), Run.from_dict({"q1": ["D2"]})],
            "runs[0] has no name; pass runs as a mapping {name: run}",
        ),
        (
            [Run.from_dict({"q1": ["D1"]}, name="x"), Run.from_dict({"q1": ["D2"]}, name="x")],
            "runs[0] and runs[1] are both named 'x'; pass runs as a mapping {name: run} to name them apart",
        ),
        ({"": {"q1": ["D1"]}, "b": {"q1": ["D2"]}}, "run names must be non-empty strings; got ''"),
        (RUN_A, "runs must be a mapping {name: run} or a list of runs; got str"),
    ],
)
def test_bad_runs(runs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        compare({"q1": {"D1": 1}}, runs, ["P@1"])


def test_bad_measure_and_report_lookups(sample_report):
    with pytest.raises(ValueError, match=re.escape("unknown measure 'P10'")):
        compare(QRELS, [RUN_A, RUN_B], ["P10"])
    with pytest.raises(
        ValueError,
        match=re.escape(
            "no comparison for run 'scheme_a' on 'P@3'; runs compared: "
            "['scheme_b'], measures: ['P@3', 'R@3', 'nDCG@3']"
        ),
    ):
        sample_report.comparison("scheme_a", "P@3")
    with pytest.raises(
        ValueError, match=re.escape("what must be one of summary, means, per_query, wtl; got 'x'")
    ):
        sample_report.to_dataframe("x")
    with pytest.raises(ValueError, match=re.escape("max_queries must be an int >= 0; got -1")):
        sample_report.to_markdown(max_queries=-1)
