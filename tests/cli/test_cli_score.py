"""`qrelforge score`: formats, exit statuses and one-line errors, in-process and as a real subprocess."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from annotate_app.cli import main
from metrics import Qrels, read_qrels
from metrics.fingerprint import qrels_sha256

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
QRELS, RUN_A, RUN_B = (str(SAMPLE / n) for n in ("qrels.trec", "run_a.trec", "run_b.trec"))


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_table_shows_both_schemes_and_the_query_counts(capsys):
    code, out, _ = run_cli(capsys, "score", QRELS, RUN_A, RUN_B, "-m", "P@3", "-m", "R@3")
    assert code == 0
    assert out.splitlines()[:3] == [
        "run          P@3     R@3",
        "scheme_a  0.3333  0.6667",
        "scheme_b  0.5556  1.0000",
    ]
    assert "scheme_b: 3 queries evaluated, 0 missing from the run (scored 0)" in out


def test_default_measures(capsys):
    code, out, _ = run_cli(capsys, "score", QRELS, RUN_A)
    assert code == 0 and out.split()[:6] == ["run", "P@10", "R@100", "nDCG@10", "AP", "RR"]


def test_json_with_per_query(capsys):
    code, out, _ = run_cli(
        capsys, "score", QRELS, RUN_A, RUN_B, "-m", "P@3", "-m", "R@3", "--format", "json", "--per-query"
    )
    data = json.loads(out)
    assert code == 0 and data["measures"] == ["P@3", "R@3"]
    assert [r["name"] for r in data["runs"]] == ["scheme_a", "scheme_b"]
    assert data["runs"][0]["per_query"]["q1"] == {"P@3": pytest.approx(1 / 3), "R@3": 0.5}
    assert data["runs"][1]["counts"] == {"evaluated": 3, "missing": 0, "extra": 0, "no_relevant": 0}


def test_json_undefined_values_are_null(tmp_path, capsys):
    qrels = tmp_path / "q.trec"
    qrels.write_text("q1 0 D1 1\nq2 0 D2 0\n")
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 D1 1 1 s\nq2 Q0 D2 1 1 s\n")
    _, out, _ = run_cli(capsys, "score", str(qrels), str(run), "-m", "R@1", "--format", "json", "--per-query")
    data = json.loads(out)["runs"][0]
    assert data["per_query"]["q2"]["R@1"] is None and data["n"]["R@1"] == 1


def test_trec_layout(capsys):
    _, out, _ = run_cli(capsys, "score", QRELS, RUN_B, "-m", "P@3", "--format", "trec", "--per-query")
    lines = out.splitlines()
    assert lines[0].split("\t") == ["runid".ljust(22), "all", "scheme_b"]
    assert lines[-1].split("\t") == ["P@3".ljust(22), "all", "0.5556"]
    assert lines[2].split("\t") == ["P@3".ljust(22), "q1", "0.6667"]


def test_csv(capsys):
    _, out, _ = run_cli(capsys, "score", QRELS, RUN_A, "-m", "P@3", "--format", "csv", "--per-query")
    assert out.splitlines()[0] == "run,query_id,P@3" and out.splitlines()[-1].startswith("scheme_a,all,0.333")


def test_output_file(tmp_path, capsys):
    target = tmp_path / "scores.json"
    code, out, _ = run_cli(capsys, "score", QRELS, RUN_A, "--format", "json", "-o", str(target))
    assert code == 0 and out == "" and json.loads(target.read_text())["runs"][0]["name"] == "scheme_a"


@pytest.mark.parametrize(
    "args, message",
    [
        (["-m", "P@0"], "qrelforge: error: cutoff must be an int >= 1; got 0 in 'P@0'"),
        (["-m", "Foo@3"], "qrelforge: error: unknown measure 'Foo' in 'Foo@3'"),
        (
            ["--corpus", "{small}"],
            "run_a.trec:1: unknown document ID 'D1' for query 'q1': not in the corpus (6 unknown",
        ),
        (["--corpus", str(SAMPLE / "queries.jsonl")], "queries.jsonl:1: missing doc_id (or _id, docid, id)"),
        (["--strict", "--corpus", str(SAMPLE / "docs.jsonl")], None),
    ],
)
def test_bad_input_is_one_line_and_status_2(tmp_path, capsys, args, message):
    small = tmp_path / "small.jsonl"
    small.write_text('{"doc_id": "D3", "text": "x"}\n')
    code, _, err = run_cli(capsys, "score", QRELS, RUN_A, *(a.format(small=small) for a in args))
    if message is None:
        assert code == 0 and err == ""
        return
    assert code == 2 and err.count("\n") == 1 and message in err


def test_malformed_run_file_names_its_line(tmp_path, capsys):
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 D1 1 0.9 s\nq1 Q0 D2 2 abc s\n")
    code, _, err = run_cli(capsys, "score", QRELS, str(bad))
    assert (
        code == 2 and err == f"qrelforge: error: {bad}:2: score is not a number: 'abc': 'q1 Q0 D2 2 abc s'\n"
    )


def test_console_script_exit_status_and_no_traceback(tmp_path):
    exe = Path(sys.executable).with_name("qrelforge")
    ok = subprocess.run(
        [str(exe), "score", QRELS, RUN_B, "-m", "P@3"], capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0 and "0.5556" in ok.stdout
    bad = subprocess.run(
        [str(exe), "score", QRELS, str(tmp_path / "nope.trec")], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "no such file" in bad.stderr


def _imports_of_a_json_report(qrels: str, runs: list[str], target: Path) -> str:
    code = (
        "import sys; from annotate_app.cli import main; "
        f"main(['score', {qrels!r}, *{runs!r}, '--format', 'json', '-o', {str(target)!r}]); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pyarrow', 'pandas'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=SAMPLE.parent
    )
    return out.stdout.strip()


def test_the_json_report_of_plain_trec_files_imports_neither_pyarrow_nor_pandas(tmp_path):
    target = tmp_path / "report.json"
    assert _imports_of_a_json_report(QRELS, [RUN_A, RUN_B], target) == "[]"
    fp = json.loads(target.read_text())["fingerprint"]
    assert fp["qrels"]["sha256"] == hashlib.sha256(Path(QRELS).read_bytes()).hexdigest()
    assert fp["qrels"]["content_sha256"] == qrels_sha256(
        Qrels.from_dataframe(read_qrels(QRELS).to_dataframe())
    )
    assert [r["sha256"] for r in fp["runs"]] == [
        hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in (RUN_A, RUN_B)
    ]


def test_the_json_report_of_files_read_by_arrow_never_imports_pandas(tmp_path):
    qrels, run = tmp_path / "q.trec", tmp_path / "r.trec"
    qrels.write_text("q1 0 D1 1\nq1 0 Dé 2\n", encoding="utf-8")  # not ASCII: Arrow's reader
    run.write_text("q1 Q0 D1 1 0.9 t\nq1 Q0 Dé 2 0.5 t\n", encoding="utf-8")
    target = tmp_path / "report.json"
    assert _imports_of_a_json_report(str(qrels), [str(run)], target) == "['pyarrow']"
    fp = json.loads(target.read_text())["fingerprint"]
    assert fp["qrels"]["content_sha256"] == hashlib.sha256("q1 0 D1 1\nq1 0 Dé 2\n".encode()).hexdigest()


@pytest.mark.parametrize("missing", ["qrels", "run"])
def test_a_missing_file_of_a_json_report_is_one_line(tmp_path, capsys, missing):
    nope = str(tmp_path / "nope.trec")
    files = [nope, RUN_A] if missing == "qrels" else [QRELS, nope]
    code, out, err = run_cli(capsys, "score", *files, "--format", "json")
    assert (code, out, err.count("\n")) == (2, "", 1) and "no such file" in err and nope in err


# Where the runs stand among the options: each order reads the same two runs.
ORDERS = [
    ("score", QRELS, RUN_A, RUN_B, "-m", "P@3"),
    ("score", QRELS, "-m", "P@3", RUN_A, RUN_B),
    ("score", "-m", "P@3", QRELS, RUN_A, RUN_B),
    ("score", QRELS, "-m", "P@3", "--per-query", RUN_A, RUN_B),
]


@pytest.mark.parametrize("argv", ORDERS)
def test_runs_may_come_after_the_options(capsys, argv):
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:3]] == ["scheme_a", "scheme_b"]


def test_a_path_after_the_runs_and_an_option_is_refused(capsys):
    code = None
    with pytest.raises(SystemExit) as exit_info:
        code = main(["score", QRELS, RUN_A, "-m", "P@3", RUN_B])
    assert code is None and exit_info.value.code == 2
    assert f"unrecognized arguments: {RUN_B}" in capsys.readouterr().err


@pytest.mark.parametrize(("given", "expected"), [(None, "0"), ("1", "1")])
def test_score_asks_numpy_for_small_pages_unless_the_user_chose(monkeypatch, given, expected):
    """Before numpy is imported, `qrelforge score` turns numpy's transparent huge pages off
    (``NUMPY_MADVISE_HUGEPAGE=0``); a value the user set stays."""
    from annotate_app.cli.scoring import score

    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "placeholder")  # restored to what it was afterwards
    if given is None:
        monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE")
    else:
        monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", given)
    monkeypatch.delitem(sys.modules, "numpy")  # as when the command starts
    score._small_pages()
    assert os.environ.get("NUMPY_MADVISE_HUGEPAGE") == expected
