"""`qrelforge score|compare|check --by tag --queries FILE`: per-slice numbers equal the command on the qrels
cut to the slice; compare's tests within each slice; check's thresholds in every slice; fingerprints in every
JSON, Markdown and HTML report; exact errors."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from annotate_app.cli import main
from metrics.fingerprint import file_sha256, qrels_sha256
from metrics.formats import read_qrels

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
QRELS, RUN_A, RUN_B = (str(SAMPLE / n) for n in ("qrels.trec", "run_a.trec", "run_b.trec"))
QUERIES = (
    '{"query_id": "q1", "text": "a", "tags": ["head", "lang:en"]}\n'
    '{"query_id": "q2", "text": "b", "tags": ["tail", "lang:zh"]}\n'
    '{"query_id": "q3", "text": "c", "tags": ["tail"]}\n'
)
M = ["-m", "P@3", "-m", "RR"]


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def queries(tmp_path) -> str:
    path = tmp_path / "queries.jsonl"
    path.write_text(QUERIES, encoding="utf-8")
    return str(path)


def _cut_qrels(tmp_path, keep: list[str]) -> str:
    path = tmp_path / f"qrels-{'-'.join(keep)}.trec"
    lines = [line for line in Path(QRELS).read_text().splitlines(keepends=True) if line.split()[0] in keep]
    path.write_text("".join(lines))
    return str(path)


# -------------------------------------------------------------------------------------------------- score
def test_score_table_has_one_block_per_slice(capsys, queries):
    code, out, _ = run_cli(capsys, "score", QRELS, RUN_A, RUN_B, *M, "--by", "tag:lang", "--queries", queries)
    assert code == 0
    blocks = out.split("\nslice ")
    assert [b.splitlines()[0] for b in blocks[1:]] == [
        "en (1 query; --by tag:lang)",
        "zh (1 query; --by tag:lang)",
        "(untagged) (1 query; --by tag:lang)",
    ]
    assert blocks[1].splitlines()[1:4] == [
        "run          P@3      RR",
        "scheme_a  0.3333  1.0000",
        "scheme_b  0.6667  1.0000",
    ]


@pytest.mark.parametrize("by", ["tag", "tag:lang"])
def test_score_json_slices_equal_score_on_the_qrels_cut_to_the_slice(capsys, tmp_path, queries, by):
    code, out, _ = run_cli(
        capsys, "score", QRELS, RUN_A, RUN_B, *M, "--by", by, "--queries", queries, "--format", "json"
    )
    data = json.loads(out)
    assert code == 0 and data["slices"]["by"] == by
    assert data["slices"]["tags"] == {"q1": ["head", "lang:en"], "q2": ["tail", "lang:zh"], "q3": ["tail"]}
    members = {"head": ["q1"], "tail": ["q2", "q3"], "lang:en": ["q1"], "lang:zh": ["q2"], "en": ["q1"]}
    members |= {"zh": ["q2"], "(untagged)": ["q3"]}
    for part in data["slices"]["slices"]:
        _, alone, _ = run_cli(
            capsys, "score", _cut_qrels(tmp_path, members[part["name"]]), RUN_A, RUN_B, *M, "--format", "json"
        )
        expected = json.loads(alone)["runs"]
        assert part["queries"] == len(members[part["name"]])
        assert [r["mean"] for r in part["runs"]] == [r["mean"] for r in expected], part["name"]


def test_score_csv_has_a_slice_column(capsys, queries):
    code, out, _ = run_cli(
        capsys, "score", QRELS, RUN_A, *M, "--by", "tag", "--queries", queries, "--format", "csv"
    )
    assert code == 0 and out.splitlines() == [
        "slice,run,query_id,P@3,RR",
        "(all),scheme_a,all,0.3333333333333333,0.8333333333333334",
        "head,scheme_a,all,0.3333333333333333,1.0",
        "lang:en,scheme_a,all,0.3333333333333333,1.0",
        "lang:zh,scheme_a,all,0.3333333333333333,1.0",
        "tail,scheme_a,all,0.3333333333333333,0.75",
    ]


def test_score_json_carries_the_fingerprint(capsys, queries):
    code, out, _ = run_cli(capsys, "score", QRELS, RUN_A, "-m", "P(rel=2)@3", "--format", "json")
    fp = json.loads(out)["fingerprint"]
    assert code == 0 and fp["command"] == "score" and fp["measures"] == ["P(rel=2)@3"]
    assert fp["qrels"]["sha256"] == file_sha256(QRELS)
    assert fp["qrels"]["content_sha256"] == qrels_sha256(read_qrels(QRELS))
    assert fp["runs"] == [{"name": "scheme_a", "file": RUN_A, "sha256": file_sha256(RUN_A)}]
    assert fp["semantics"]["relevance_level"] == {"P(rel=2)@3": 2}
    assert fp["parameters"] == {"per_query": False, "by": None}


# ------------------------------------------------------------------------------------------------ compare
def test_compare_tests_within_each_slice(capsys, tmp_path, queries):
    code, out, _ = run_cli(
        capsys, "compare", QRELS, RUN_A, RUN_B, *M, "--by", "tag", "--queries", queries, "--format", "json"
    )
    data = json.loads(out)
    [tail] = [s for s in data["slices"]["slices"] if s["name"] == "tail"]
    _, alone, _ = run_cli(
        capsys, "compare", _cut_qrels(tmp_path, ["q2", "q3"]), RUN_A, RUN_B, *M, "--format", "json"
    )
    expected = json.loads(alone)
    assert code == 0 and tail["queries"] == 2
    assert tail["comparisons"] == expected["comparisons"] and tail["means"] == expected["means"]
    assert [c["n"] for c in tail["comparisons"]] == [2, 2]
    assert list(data)[-1] == "fingerprint" and data["fingerprint"]["parameters"]["by"] == "tag"


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_compare_markdown_and_html_carry_slices_then_the_fingerprint(capsys, queries, fmt):
    code, out, _ = run_cli(
        capsys, "compare", QRELS, RUN_A, RUN_B, *M, "--by", "tag:lang", "--queries", queries, "--format", fmt
    )
    assert code == 0
    heads = ["Slice en (1 query; --by tag:lang)", "Slice zh (1 query; --by tag:lang)", "Fingerprint"]
    marks = [f"# {h}" if fmt == "markdown" else h for h in heads]
    at = [out.index(m) for m in marks]
    assert at == sorted(at) and file_sha256(RUN_B) in out


# -------------------------------------------------------------------------------------------------- check
def test_check_fails_when_a_slice_misses_a_threshold(capsys, queries):
    code, out, err = run_cli(
        capsys, "check", QRELS, RUN_A, "--min", "RR=0.7", "--by", "tag:lang", "--queries", queries
    )
    assert code == 1
    assert (
        err
        == "qrelforge check: slice (untagged): FAIL: 1 of 1 threshold missed: RR = 0.5000 < 0.7 (minimum)\n"
    )
    assert "slice en: run scheme_a (1 query)" in out


def test_check_passes_in_every_slice(capsys, queries):
    code, out, err = run_cli(
        capsys, "check", QRELS, RUN_A, "--min", "RR=0.5", "--by", "tag", "--queries", queries
    )
    assert (code, err) == (0, "") and out.endswith("PASS: 1 threshold met in all 4 slices too\n")


def test_check_json_carries_slices_and_fingerprint(capsys, queries):
    code, out, _ = run_cli(
        capsys,
        "check",
        QRELS,
        RUN_A,
        "--min",
        "RR=0.7",
        "--by",
        "tag:lang",
        "--queries",
        queries,
        "--format",
        "json",
    )
    data = json.loads(out)
    assert code == 1 and data["passed"] is False
    assert [(s["name"], s["passed"], s["queries"]) for s in data["slices"]["slices"]] == [
        ("en", True, 1),
        ("zh", True, 1),
        ("(untagged)", False, 1),
    ]
    assert data["fingerprint"]["parameters"] == {
        "minimum": ["RR=0.7"],
        "maximum": [],
        "name": None,
        "by": "tag:lang",
    }


# ------------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["score", QRELS, RUN_A, "--by", "tag"],
            "--by tag needs --queries FILE or -p PROJECT",
        ),
        (
            ["score", QRELS, RUN_A, "--queries", "q.jsonl"],
            "--queries 'q.jsonl' is only used with --by tag or --by tag:KEY",
        ),
        (
            ["compare", QRELS, RUN_A, RUN_B, "--by", "lang", "--queries", "Q"],
            "by must be 'tag' or 'tag:KEY' (e.g. 'tag:lang'); got 'lang'",
        ),
        (
            ["check", QRELS, RUN_A, "--min", "RR=1", "--by", "tag:a b", "--queries", "Q"],
            "by must be 'tag' or 'tag:KEY' (e.g. 'tag:lang'); got 'tag:a b'",
        ),
        (
            ["score", QRELS, RUN_A, "--by", "tag", "--queries", "Q", "--format", "trec"],
            "--by works with --format table, json or csv",
        ),
    ],
)
def test_bad_slicing_is_one_line_exit_2(capsys, queries, args, message):
    args = [queries if a == "Q" else a for a in args]
    code, out, err = run_cli(capsys, *args)
    assert (code, out, err) == (2, "", f"qrelforge: error: {message}\n")


def test_a_bad_tag_in_the_queries_file_names_its_line(capsys, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"query_id": "q1", "text": "a", "tags": ["ok"]}\n{"query_id": "q2", "text": "b", "tags": "x"}\n'
    )
    code, _, err = run_cli(capsys, "score", QRELS, RUN_A, "--by", "tag", "--queries", str(path))
    assert code == 2
    assert err.startswith(f"qrelforge: error: {path}:2: tags must be a list of strings; got str 'x'")


# ------------------------------------------------------------------------------------------- -p PROJECT
@pytest.fixture
def tagged_project(cli, queries) -> str:
    """A project ``demo`` whose stored queries carry QUERIES' tags (imported from the queries file)."""
    assert cli("init", "--project", "demo")[0] == 0
    assert (
        cli("import", "queries", "-p", "demo", queries)[1]
        == "queries queries.jsonl: 3 added, 0 changed, 0 unchanged\n"
    )
    return "demo"


def _without_fingerprint(document: dict) -> dict:
    return {k: v for k, v in document.items() if k != "fingerprint"}


@pytest.mark.parametrize(
    "command",
    [
        ["score", QRELS, RUN_A, RUN_B, *M],
        ["compare", QRELS, RUN_A, RUN_B, *M],
        ["check", QRELS, RUN_A, "--min", "RR=0.7"],
    ],
)
@pytest.mark.parametrize("by", ["tag", "tag:lang"])
def test_the_project_s_stored_tags_slice_as_the_queries_file_does(cli, tagged_project, queries, command, by):
    from_file = cli(*command, "--by", by, "--queries", queries, "--format", "json")
    from_project = cli(*command, "--by", by, "-p", tagged_project, "--format", "json")
    assert (from_project[0], from_project[2]) == (from_file[0], from_file[2])
    stored, read = json.loads(from_project[1]), json.loads(from_file[1])
    assert stored["slices"]["tags"] == {"q1": ["head", "lang:en"], "q2": ["tail", "lang:zh"], "q3": ["tail"]}
    assert _without_fingerprint(stored) == _without_fingerprint(read)
    assert stored["fingerprint"]["queries"] == {"project": "demo"}
    assert read["fingerprint"]["queries"] == {"file": queries, "sha256": file_sha256(queries)}


@pytest.mark.parametrize("command", [["score", QRELS, RUN_A, RUN_B], ["compare", QRELS, RUN_A, RUN_B]])
def test_a_report_sliced_by_the_project_s_tags_verifies_without_the_database(
    cli, tagged_project, tmp_path, monkeypatch, command
):
    report = tmp_path / "report.json"
    code, out, _ = cli(*command, *M, "--by", "tag", "-p", tagged_project, "--format", "json")
    report.write_text(out, encoding="utf-8")
    monkeypatch.delenv("QRELFORGE_DATABASE_URL")
    code, out, err = cli("verify", report, *command[1:])
    assert (code, err) == (0, "") and out.endswith(" numbers hold\n")


def test_the_only_project_of_db_and_qrelforge_project_give_the_tags_too(cli, tagged_project, monkeypatch):
    table = cli("score", QRELS, RUN_A, *M, "--by", "tag:lang", "-p", tagged_project)
    assert table[0] == 0 and "slice zh (1 query; --by tag:lang)" in table[1]
    assert (
        cli("score", QRELS, RUN_A, *M, "--by", "tag:lang", "--db", os.environ["QRELFORGE_DATABASE_URL"])
        == table
    )
    monkeypatch.setenv("QRELFORGE_PROJECT", tagged_project)
    assert cli("score", QRELS, RUN_A, *M, "--by", "tag:lang") == table


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["score", QRELS, RUN_A, "--by", "tag", "--queries", "Q", "-p", "demo"],
            "--by takes its tags from --queries FILE or from -p PROJECT, not both",
        ),
        (
            ["compare", QRELS, RUN_A, RUN_B, "-p", "demo"],
            "--project 'demo' is only used with --by tag|tag:KEY",
        ),
        (
            ["check", QRELS, RUN_A, "--min", "RR=1", "-p", "demo"],
            "--project 'demo' is only used with --by tag|tag:KEY",
        ),
        (
            ["score", QRELS, RUN_A, "-p", "demo"],
            "--project 'demo' is only used with --ppi JUDGE or --by tag|tag:KEY",
        ),
        (
            ["check", QRELS, RUN_A, "--min", "RR=1", "--by", "tag", "-p", "nope"],
            "project 'nope' does not exist",
        ),
        (["compare", QRELS, RUN_A, RUN_B, "--by", "tag"], "--by tag needs --queries FILE or -p PROJECT"),
        (
            ["check", QRELS, RUN_A, "--min", "RR=1", "--by", "tag:lang"],
            "--by tag:lang needs --queries FILE or -p PROJECT",
        ),
    ],
)
def test_bad_project_slicing_is_one_line_exit_2(cli, tagged_project, queries, args, message):
    args = [queries if a == "Q" else a for a in args]
    assert cli(*args) == (2, "", f"qrelforge: error: {message}\n")


# ------------------------------------------------------------------------------------------ check --history
@pytest.mark.parametrize(
    "by, runs",
    [
        (None, ["scheme_a"]),
        ("tag", ["scheme_a[head]", "scheme_a[lang:en]", "scheme_a[lang:zh]", "scheme_a[tail]", "scheme_a"]),
        ("tag:lang", ["scheme_a[en]", "scheme_a[zh]", "scheme_a[(untagged)]", "scheme_a"]),
    ],
)
def test_check_history_records_each_slice_then_the_check(capsys, tmp_path, queries, by, runs):
    history = tmp_path / "history.csv"
    sliced = ["--by", by, "--queries", queries] if by else []
    code, _, _ = run_cli(capsys, "check", QRELS, RUN_A, "--min", "RR=0.7", "--history", str(history), *sliced)
    with history.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert code == (1 if by == "tag:lang" else 0)
    assert [r["run"] for r in rows] == runs
    assert [(r["status"], r["failed"]) for r in rows if r["run"] == "scheme_a[(untagged)]"] == (
        [("fail", "RR")] if by == "tag:lang" else []
    )
