"""`qrelforge baseline bm25` and `qrelforge fuse`: outputs, the shipped sample run, one-line errors, a real
subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from annotate_app.cli import main
from metrics import evaluate, read_run

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_corpus"
DOCS, QUERIES, QRELS = (str(SAMPLE / n) for n in ("docs.jsonl", "queries.jsonl", "qrels.trec"))
RUN_A, RUN_B = str(SAMPLE / "run_a.trec"), str(SAMPLE / "run_b.trec")


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_shipped_bm25_run_is_what_the_command_writes(tmp_path, capsys):
    # sample_corpus/README.md gives this exact command
    out = tmp_path / "run_bm25.trec"
    code, _, err = run_cli(capsys, "baseline", "bm25", "--corpus", DOCS, "--queries", QUERIES, "-o", str(out))
    assert code == 0 and err.startswith("bm25: 6 documents (") and "3 queries searched" in err
    assert out.read_bytes() == (SAMPLE / "run_bm25.trec").read_bytes()


def test_bm25_to_stdout_with_options(capsys):
    code, out, err = run_cli(
        capsys,
        "baseline",
        "bm25",
        "--corpus",
        DOCS,
        "--queries",
        QUERIES,
        "-k",
        "2",
        "--k1",
        "1.2",
        "--b",
        "0.5",
        "--tag",
        "bm25_k2",
        "-o",
        "-",
    )
    lines = out.splitlines()
    assert code == 0 and len(lines) == 6 and all(line.endswith(" bm25_k2") for line in lines)
    assert [line.split()[2] for line in lines] == ["D1", "D2", "D3", "D4", "D5", "D6"]
    assert "6 rows -> -" in err


def test_bm25_reports_queries_that_retrieve_nothing(tmp_path, capsys):
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        '{"query_id": "q1", "text": "电池"}\n{"query_id": "q2", "text": "zzz"}\n', encoding="utf-8"
    )
    code, out, err = run_cli(
        capsys, "baseline", "bm25", "--corpus", DOCS, "--queries", str(queries), "-o", "-"
    )
    assert code == 0 and {line.split()[0] for line in out.splitlines()} == {"q1"}
    assert err.rstrip().endswith("; retrieved nothing for q2")


def test_fuse_rrf_of_the_two_schemes(tmp_path, capsys):
    out = tmp_path / "rrf.trec"
    code, _, err = run_cli(capsys, "fuse", RUN_A, RUN_B, "--method", "rrf", "--tag", "rrf_ab", "-o", str(out))
    assert code == 0
    assert err == f"fuse: 2 runs (scheme_a, scheme_b) with rrf (k=60): 3 queries, 12 rows -> {out}\n"
    # q1: A ranks D1 D3 D4, B ranks D2 D1 D3. D1 1/61 + 1/62 = 0.0325225, D3 1/62 + 1/63 = 0.0320020,
    # D2 1/61 = 0.0163934, D4 1/63 = 0.0158730.
    lines = out.read_text().splitlines()[:4]
    assert [line.split()[2:4] for line in lines] == [["D1", "1"], ["D3", "2"], ["D2", "3"], ["D4", "4"]]
    assert float(lines[0].split()[4]) == pytest.approx(1 / 61 + 1 / 62)
    assert read_run(out).name == "rrf_ab"


@pytest.mark.parametrize(
    ("options", "first"),
    [
        (["--method", "combsum"], "D1"),  # A: D1 1, D3 0.25, D4 0; B: D2 1, D1 0.9123, D3 0
        (["--method", "combmnz", "--norm", "zscore"], "D1"),
        (
            ["--method", "rrf", "-k", "0", "--depth", "1"],
            "D2",
        ),  # top 1 only: D1 (A) and D2 (B) tie at 1 -> D2
    ],
)
def test_fuse_methods(options, first, capsys):
    code, out, _ = run_cli(capsys, "fuse", RUN_A, RUN_B, *options, "-o", "-")
    assert code == 0 and out.splitlines()[0].split()[2] == first


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["fuse", RUN_A, "--norm", "zscore", "-o", "-"],
            "qrelforge: error: --norm applies to combsum and combmnz, not to rrf; got --norm zscore",
        ),
        (
            ["fuse", RUN_A, "--method", "combsum", "-k", "10", "-o", "-"],
            "qrelforge: error: -k (the RRF constant) applies to rrf only; got -k 10 with --method combsum",
        ),
        (
            ["fuse", RUN_A, "--depth", "0", "-o", "-"],
            "qrelforge: error: depth must be an int >= 1 or None; got 0",
        ),
        (
            ["fuse", RUN_A, "--tag", "my run", "-o", "-"],
            "qrelforge: error: --tag must be a non-empty word without spaces; got 'my run'",
        ),
        (["fuse", "missing.trec", "-o", "-"], "qrelforge: error: missing.trec: no such file: 'missing.trec'"),
        (
            ["baseline", "bm25", "--corpus", DOCS, "--queries", QUERIES, "-k", "0", "-o", "-"],
            "qrelforge: error: k must be an int >= 1; got 0",
        ),
        (
            ["baseline", "bm25", "--corpus", DOCS, "--queries", QUERIES, "--b", "1.5", "-o", "-"],
            "qrelforge: error: b must be a number in [0.0, 1.0]; got 1.5",
        ),
        (
            ["baseline", "bm25", "--corpus", QRELS, "--queries", QUERIES, "-o", "-"],
            f"qrelforge: error: {QRELS}:1: invalid JSON (Expecting value at column 1): 'q1 0 D1 2' "
            "(and 11 more problems)",
        ),
    ],
)
def test_errors_are_one_line_with_status_2(args, message, capsys):
    code, out, err = run_cli(capsys, *args)
    assert (code, out, err) == (2, "", message + "\n")


def test_sample_corpus_bm25_schemes_and_rrf_scored_together(tmp_path, capsys):
    rrf_path = tmp_path / "rrf_ab.trec"
    run_cli(capsys, "fuse", RUN_A, RUN_B, "--tag", "rrf_ab", "-o", str(rrf_path))
    code, out, _ = run_cli(
        capsys,
        "score",
        QRELS,
        str(SAMPLE / "run_bm25.trec"),
        RUN_A,
        RUN_B,
        str(rrf_path),
        "-m",
        "P@3",
        "-m",
        "R@3",
        "-m",
        "AP",
    )
    assert code == 0 and out.splitlines()[:5] == [
        "run          P@3     R@3      AP",
        "bm25      0.5556  1.0000  1.0000",
        "scheme_a  0.3333  0.6667  0.5833",
        "scheme_b  0.5556  1.0000  1.0000",
        "rrf_ab    0.5556  1.0000  0.8889",
    ]
    assert evaluate(QRELS, rrf_path, ["P@3"]).mean["P@3"] == pytest.approx(5 / 9)


def test_real_subprocess(tmp_path):
    out = tmp_path / "run.trec"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "annotate_app.cli",
            "baseline",
            "bm25",
            "--corpus",
            DOCS,
            "--queries",
            QUERIES,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr.startswith("bm25: 6 documents")
    assert out.read_bytes() == (SAMPLE / "run_bm25.trec").read_bytes()
