"""`qrelforge compare`, `qrelforge check` and `qrelforge ab`: outputs, exit statuses (0 / 1 / 2) and one-line
errors, through annotate_app.cli.main."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from annotate_app.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_corpus"
GOLDEN = ROOT / "tests" / "fixtures" / "compare_sample.md"
QRELS, RUN_A, RUN_B = (str(SAMPLE / n) for n in ("qrels.trec", "run_a.trec", "run_b.trec"))
SEED_000 = ["-m", "P@3", "-m", "R@3", "-m", "nDCG@3"]


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# -------------------------------------------------------------------------------------------- compare
def test_compare_markdown_is_the_golden_report(capsys):
    code, out, err = run_cli(
        capsys, "compare", QRELS, RUN_A, RUN_B, "--baseline", "scheme_a", *SEED_000, "--format", "markdown"
    )
    report, fingerprint = out.split("\n## Fingerprint\n", 1)
    assert (code, err) == (0, "") and report == GOLDEN.read_text(encoding="utf-8")
    assert (
        json.loads(fingerprint.strip().removeprefix("```json").removesuffix("```"))["runs"][1]["file"]
        == RUN_B
    )


def test_compare_flags_scheme_b_per_query_in_json(capsys):
    code, out, _ = run_cli(capsys, "compare", QRELS, RUN_A, RUN_B, *SEED_000, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["baseline"] == "scheme_a" and data["best"]["P@3"] == ["scheme_b"]
    p3 = next(c for c in data["comparisons"] if c["measure"] == "P@3")
    assert (p3["wins"], p3["ties"], p3["losses"], p3["p_permutation"]) == (2, 1, 0, 0.5)
    assert data["per_query"]["scheme_b"]["q2"]["R@3"] == 1.0


def test_compare_table_and_files(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "compare", QRELS, RUN_A, RUN_B, *SEED_000)
    assert code == 0 and out.splitlines()[0] == "baseline scheme_a, 3 queries"
    assert "scheme_b  P@3      +0.2222  [+0.0000, +0.3333]  0.1835     0.5000  2/1/0  3" in out
    html, tex = tmp_path / "r.html", tmp_path / "r.tex"
    assert run_cli(capsys, "compare", QRELS, RUN_A, RUN_B, "--format", "html", "-o", str(html))[:2] == (0, "")
    assert run_cli(capsys, "compare", QRELS, RUN_A, RUN_B, "--format", "latex", "-o", str(tex))[0] == 0
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>") and "<svg" in html.read_text(
        encoding="utf-8"
    )
    assert "\\begin{tabular}" in tex.read_text(encoding="utf-8")


def test_compare_options_reach_the_tests(capsys):
    code, out, _ = run_cli(
        capsys,
        "compare",
        QRELS,
        RUN_B,
        RUN_A,
        "-m",
        "P@3",
        "--format",
        "json",
        "--permutations",
        "4",
        "--bootstrap",
        "50",
        "--seed",
        "3",
        "--alpha",
        "0.1",
        "--correction",
        "none",
        "--tests",
        "permutation,t",
    )
    data = json.loads(out)
    c = data["comparisons"][0]
    assert code == 0 and data["baseline"] == "scheme_b" and c["run"] == "scheme_a"
    assert data["settings"] == {
        "tests": ["permutation", "t"],
        "n_permutations": 4,
        "n_bootstrap": 50,
        "seed": 3,
        "alpha": 0.1,
        "confidence": 0.95,
        "correction": "none",
    }
    assert c["permutations"] == 4 and not c["exact"] and c["ci_low"] is None


def test_runs_sharing_a_tag_are_named_by_file(tmp_path, capsys):
    copy = tmp_path / "copy.trec"
    copy.write_text(Path(RUN_A).read_text())
    code, out, _ = run_cli(capsys, "compare", QRELS, RUN_A, str(copy), "-m", "P@3", "--format", "json")
    assert code == 0 and json.loads(out)["runs"] == ["run_a.trec", "copy.trec"]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["compare", QRELS, RUN_A, RUN_B, "--baseline", "bm25"],
            "baseline must name one of the runs ['scheme_a', 'scheme_b']; got 'bm25'",
        ),
        (["compare", QRELS, RUN_A], "runs must hold at least 2 runs; got 1"),
        (["compare", QRELS, RUN_A, RUN_A], f"run file {RUN_A!r} is given twice"),
        (
            ["compare", QRELS, RUN_A, RUN_B, "--tests", "t,sign"],
            "tests must be distinct names among ('t', 'permutation', 'bootstrap'); got ('t', 'sign')",
        ),
        (["compare", QRELS, RUN_A, RUN_B, "-m", "P@0"], "cutoff must be an int >= 1; got 0 in 'P@0'"),
        (["compare", QRELS, RUN_A, "missing.trec"], "missing.trec: no such file: 'missing.trec'"),
        (
            ["compare", QRELS, RUN_A, RUN_B, "--max-queries", "-1"],
            "--max-queries must be an int >= 0; got -1",
        ),
    ],
)
def test_compare_bad_input_is_one_line_and_status_2(capsys, args, message):
    code, out, err = run_cli(capsys, *args)
    assert (code, out) == (2, "") and err == f"qrelforge: error: {message}\n"


@pytest.mark.parametrize("option, value", [("--permutations", "0"), ("--seed", "-2"), ("--alpha", "1")])
def test_compare_bad_numbers_are_usage_errors(capsys, option, value):
    with pytest.raises(SystemExit) as exc:
        main(["compare", QRELS, RUN_A, RUN_B, option, value])
    assert exc.value.code == 2 and f"argument {option}: must be" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- check
def test_check_fails_naming_every_missed_measure(capsys):
    code, out, err = run_cli(
        capsys, "check", QRELS, RUN_A, "--min", "R@3=0.7", "--min", "nDCG@3=0.7", "--min", "P@3=0.3"
    )
    assert code == 1
    assert out.splitlines() == [
        "run scheme_a (3 queries)",
        "measure   value  threshold  result",
        "R@3      0.6667     >= 0.7  FAIL",
        "nDCG@3   0.6378     >= 0.7  FAIL",
        "P@3      0.3333     >= 0.3  pass",
    ]
    assert err == (
        "qrelforge check: FAIL: 2 of 3 thresholds missed: R@3 = 0.6667 < 0.7 (minimum); "
        "nDCG@3 = 0.6378 < 0.7 (minimum)\n"
    )


def test_check_passes_with_status_0(capsys):
    code, out, err = run_cli(capsys, "check", QRELS, RUN_B, "--min", "R@3=0.7", "--max", "FirstRel=1")
    assert (code, err) == (0, "") and out.endswith("PASS: 2 thresholds met\n")


def test_check_json(capsys):
    code, out, _ = run_cli(
        capsys, "check", QRELS, RUN_A, "--min", "R@3=0.7", "--format", "json", "--name", "nightly"
    )
    data = json.loads(out)
    assert code == 1 and data["run"] == "nightly" and data["passed"] is False
    assert data["rows"] == [
        {"measure": "R@3", "value": pytest.approx(2 / 3), "bound": "min", "threshold": 0.7, "passed": False}
    ]


def test_check_history_appends_rows_and_widens_its_header(tmp_path, capsys):
    history = tmp_path / "history.csv"
    assert run_cli(capsys, "check", QRELS, RUN_A, "--min", "R@3=0.7", "--history", str(history))[0] == 1
    assert (
        run_cli(
            capsys, "check", QRELS, RUN_B, "--min", "R@3=0.7", "--min", "P@3=0.5", "--history", str(history)
        )[0]
        == 0
    )
    with open(history, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["timestamp", "run", "qrels", "status", "failed", "R@3", "P@3"]
    assert [(r["run"], r["status"], r["failed"], r["R@3"], r["P@3"]) for r in rows] == [
        ("scheme_a", "fail", "R@3", repr(2 / 3), ""),
        ("scheme_b", "pass", "", "1.0", rows[1]["P@3"]),
    ]
    assert float(rows[1]["P@3"]) == pytest.approx(5 / 9)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", r["timestamp"]) for r in rows)


def test_check_trend_and_plot(tmp_path, capsys):
    history, plot = tmp_path / "h.csv", tmp_path / "h.svg"
    for run in (RUN_A, RUN_B, RUN_A):
        run_cli(
            capsys, "check", QRELS, run, "--min", "R@3=0.7", "--history", str(history), "--name", "nightly"
        )
    code, out, err = run_cli(capsys, "check", "--history", str(history), "--trend", "--plot", str(plot))
    assert (code, err) == (0, "")
    assert out.splitlines()[1].split() == [
        "nightly",
        "R@3",
        "3",
        "0.6667",
        "0.6667",
        "0.6667",
        "1.0000",
        "▁█▁",
    ]
    assert out.splitlines()[-1].startswith("last check: ") and out.endswith(" nightly: fail (R@3)\n")
    svg = plot.read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "nightly · R@3" in svg and "<polyline" in svg


def test_check_history_is_csv_safe(tmp_path, capsys):
    history = tmp_path / "h.csv"
    run_cli(capsys, "check", QRELS, RUN_A, "--min", "R@3=0.1", "--history", str(history), "--name", "=cmd()")
    assert "'=cmd()" in history.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["check", QRELS, RUN_A],
            "check needs at least one threshold: --min MEASURE=VALUE or --max MEASURE=VALUE",
        ),
        (
            ["check", QRELS, RUN_A, "--min", "R@3"],
            "threshold must look like MEASURE=VALUE, e.g. 'R@5=0.7'; got 'R@3'",
        ),
        (
            ["check", QRELS],
            "check needs QRELS and RUN (or only --history FILE with --trend/--plot to show the history)",
        ),
        (
            ["check", "--trend"],
            "check needs QRELS and RUN (or only --history FILE with --trend/--plot to show the history)",
        ),
        (["check", QRELS, RUN_A, "--min", "R@3=1", "--trend"], "--trend and --plot need --history FILE"),
    ],
)
def test_check_bad_input(capsys, args, message):
    code, out, err = run_cli(capsys, *args)
    assert (code, err) == (2, f"qrelforge: error: {message}\n")


def test_check_rejects_a_file_that_is_not_a_history(tmp_path, capsys):
    bad = tmp_path / "h.csv"
    bad.write_text("when,what\n1,2\n")
    code, _, err = run_cli(capsys, "check", QRELS, RUN_A, "--min", "R@3=0.1", "--history", str(bad))
    assert code == 2 and err == (
        f"qrelforge: error: {bad}:1: not a qrelforge check history (expected a header "
        "starting with timestamp,run,qrels,status,failed): 'when,what'\n"
    )
    assert bad.read_text() == "when,what\n1,2\n"


# ------------------------------------------------------------------------------------------------- ab
CSV_LOG = """user_id,group,query,feedback,timestamp
u1,A,退货,1,2024-05-01T10:00:00Z
u1,A,发票,0,2024-05-01T10:05:00Z
u2,B,退货,1,2024-05-01T11:00:00
u3,B,电池,1,1714557600
u4,A,电池,0,2024-05-02
u5,B,发票,1,2024-05-02
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_ab_table(tmp_path, capsys):
    code, out, err = run_cli(capsys, "ab", write(tmp_path, "log.csv", CSV_LOG))
    assert (code, err) == (0, "")
    assert out.splitlines()[:3] == [
        "group  users  interactions  satisfied    rate   95% CI (Wilson)",
        "A          2             3          1  0.3333  [0.0615, 0.7923]",
        "B          3             3          3  1.0000  [0.4385, 1.0000]",
    ]
    assert "B       A  +0.6667  1.732  0.0833      0.4000    0.4000           no" in out


def test_ab_jsonl_and_json_output(tmp_path, capsys):
    lines = [
        json.dumps(
            {
                "user_id": i,
                "group": "AB"[i % 2],
                "query": "q",
                "feedback": i % 3 != 0,
                "timestamp": f"2024-05-0{1 + i % 9}",
            }
        )
        for i in range(1, 9)
    ]
    lines = [line.replace("true", "1").replace("false", "0") for line in lines]
    code, out, _ = run_cli(
        capsys, "ab", write(tmp_path, "log.jsonl", "\n".join(lines) + "\n"), "--format", "json"
    )
    data = json.loads(out)
    assert code == 0 and [a["interactions"] for a in data["arms"]] == [4, 4] and data["control"] == "A"


def test_ab_mixed_users(tmp_path, capsys):
    path = write(tmp_path, "log.csv", CSV_LOG + "u2,A,q,0,2024-05-03\n")
    code, _, err = run_cli(capsys, "ab", path)
    assert code == 2 and err == (
        f"qrelforge: error: {path}: 1 user appears in more than one group "
        "(allow_mixed=True, or --allow-mixed, drops them): 'u2' (B at line 4, A at line 8)\n"
    )
    code, out, _ = run_cli(capsys, "ab", path, "--allow-mixed")
    assert code == 0 and "note: dropped 1 user seen in more than one group (2 rows): 'u2'" in out


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("log.csv", CSV_LOG + "u9,B,q,yes,2024-05-03\n", "{path}:8: feedback must be 0 or 1: 'yes'"),
        (
            "log.csv",
            CSV_LOG + "u9,B,q,1\n",
            "{path}:8: expected 5 fields as in the header, got 4: 'u9,B,q,1'",
        ),
        (
            "log.csv",
            "user,group,query,feedback,timestamp\nu1,A,q,1,2024\n",
            "{path}:1: header lacks column ['user_id']: 'user,group,query,feedback,timestamp'",
        ),
        ("log.csv", "user_id,group,query,feedback,timestamp\n", "{path}: no interactions in the log: ''"),
        ("log.jsonl", '{"user_id": "u1"}\n[1]\n', "{path}:2: expected a JSON object, got list: '[1]'"),
        (
            "log.jsonl",
            '{"user_id": "u1", "group": "A", "query": "q", "feedback": 1}\n',
            "{path}: missing column ['timestamp']: \"['user_id', 'group', 'query', 'feedback']\"",
        ),
        (
            "log.csv",
            CSV_LOG.replace("A,", "A,", 1)
            .replace("u5,B", "u5,A")
            .replace("u3,B", "u3,A")
            .replace("u2,B", "u2,A"),
            "{path}: an A/B test needs at least two groups; got ['A']",
        ),
    ],
)
def test_ab_bad_input(tmp_path, capsys, name, text, message):
    path = write(tmp_path, name, text)
    code, out, err = run_cli(capsys, "ab", path)
    assert (code, out) == (2, "") and err == f"qrelforge: error: {message.format(path=path)}\n"
