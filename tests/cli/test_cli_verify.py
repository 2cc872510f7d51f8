"""`qrelforge verify REPORT.json QRELS RUN...`: exit 0 "all N numbers hold", 1 listing each differing number,
2 on bad input (a file that is not the one the report was made from, named with its hash)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from annotate_app.cli import main
from metrics.fingerprint import file_sha256

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
QRELS, RUN_A, RUN_B = (str(SAMPLE / n) for n in ("qrels.trec", "run_a.trec", "run_b.trec"))
QUERIES = (
    '{"query_id": "q1", "text": "a", "tags": ["head", "lang:en"]}\n'
    '{"query_id": "q2", "text": "b", "tags": ["tail", "lang:zh"]}\n'
    '{"query_id": "q3", "text": "c", "tags": ["tail"]}\n'
)
M = ["-m", "P@3", "-m", "RR"]
FAST = ["--permutations", "200", "--bootstrap", "200"]


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _report(capsys, tmp_path, *args: str) -> str:
    queries = tmp_path / "queries.jsonl"
    queries.write_text(QUERIES, encoding="utf-8")
    path = tmp_path / "report.json"
    args = tuple(str(queries) if a == "Q" else a for a in args)
    code, out, _ = run_cli(capsys, *args, "--format", "json")
    assert code in (0, 1)
    path.write_text(out, encoding="utf-8")
    return str(path)


REPORTS = {
    "score": ("score", QRELS, RUN_A, RUN_B, *M, "--per-query"),
    "score by tag": ("score", QRELS, RUN_A, RUN_B, *M, "--per-query", "--by", "tag", "--queries", "Q"),
    "compare": ("compare", QRELS, RUN_A, RUN_B, *M, *FAST),
    "compare by tag:lang": ("compare", QRELS, RUN_A, RUN_B, *M, *FAST, "--by", "tag:lang", "--queries", "Q"),
    "check": ("check", QRELS, RUN_A, "--min", "RR=0.7", "--max", "P@3=0.9"),
    "check by tag": ("check", QRELS, RUN_A, "--min", "RR=0.7", "--by", "tag", "--queries", "Q"),
}
COUNTS = {
    "score": 28,
    "score by tag": 116,
    "compare": 64,
    "compare by tag:lang": 220,
    "check": 5,
    "check by tag": 15,
}


@pytest.mark.parametrize("kind", list(REPORTS))
def test_every_number_of_an_untouched_report_holds(capsys, tmp_path, kind):
    report = _report(capsys, tmp_path, *REPORTS[kind])
    runs = [RUN_A, RUN_B] if "check" not in kind else [RUN_A]
    code, out, err = run_cli(capsys, "verify", report, QRELS, *runs)
    assert (code, out, err) == (0, f"{report}: all {COUNTS[kind]} numbers hold\n", "")


def _edit(path: str, change) -> None:
    data = json.loads(Path(path).read_text())
    change(data)
    Path(path).write_text(json.dumps(data))


@pytest.mark.parametrize(
    "kind, change, lines",
    [
        (
            "score",
            lambda d: d["runs"][0]["mean"].update({"P@3": 0.5}),
            ["P@3, run scheme_a, mean: stored 0.5, recomputed 0.3333333333333333"],
        ),
        (
            "score by tag",
            lambda d: (
                d["runs"][1]["per_query"]["q2"].update({"RR": 0.25}),
                d["slices"]["slices"][0]["runs"][0]["mean"].update({"RR": 0.1}),
            ),
            [
                "RR, run scheme_b, query q2: stored 0.25, recomputed 1.0",
                "slice head; RR, run scheme_a, mean: stored 0.1, recomputed 1.0",
            ],
        ),
        (
            "compare",
            lambda d: (
                d["comparisons"][0].update({"diff": 0.9}),
                d["means"]["scheme_a"].update({"RR": None}),
            ),
            [
                "RR, run scheme_a, mean: stored None, recomputed 0.8333333333333334",
                "P@3, run scheme_b, diff: stored 0.9, recomputed 0.2222222222222222",
            ],
        ),
        (
            "check",
            lambda d: d["rows"][1].update({"value": 0.1}),
            ["P@3, mean: stored 0.1, recomputed 0.3333333333333333"],
        ),
    ],
)
def test_each_differing_number_is_listed_exit_1(capsys, tmp_path, kind, change, lines):
    report = _report(capsys, tmp_path, *REPORTS[kind])
    _edit(report, change)
    runs = [RUN_A, RUN_B] if "check" not in kind else [RUN_A]
    code, out, err = run_cli(capsys, "verify", report, QRELS, *runs)
    n = len(lines)
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"{report}: {n} of {COUNTS[kind]} numbers differ{'s' if n == 1 else ''}:",
        *(f"  {line}" for line in lines),
    ]


def test_a_changed_run_file_is_bad_input(capsys, tmp_path):
    report = _report(capsys, tmp_path, *REPORTS["score"])
    changed = tmp_path / "x.trec"
    shutil.copy(RUN_B, changed)
    with changed.open("a") as f:
        f.write("q1 Q0 D99 100 0.0001 scheme_b\n")
    code, out, err = run_cli(capsys, "verify", report, QRELS, RUN_A, str(changed))
    assert (code, out) == (2, "")
    assert err == (
        f"qrelforge: error: RUN {changed} differs from the file the report was made from (sha256 "
        f"{file_sha256(changed)[:16]}… here, {file_sha256(RUN_B)[:16]}… in the report)\n"
    )


def test_verify_a_page_download_against_the_exported_release(capsys, tmp_path):
    """A report whose qrels came from a release has no file hash: the qrels file is checked by content."""
    report = _report(capsys, tmp_path, *REPORTS["score"])
    _edit(report, lambda d: d["fingerprint"]["qrels"].update({"sha256": None, "file": None, "release": 1}))
    reordered = tmp_path / "release.trec"
    reordered.write_text("".join(reversed(Path(QRELS).read_text().splitlines(keepends=True))))
    code, out, _ = run_cli(capsys, "verify", report, str(reordered), RUN_A, RUN_B)
    assert (code, out) == (0, f"{report}: all 28 numbers hold\n")


@pytest.mark.parametrize(
    "setup, args, message",
    [
        (
            "score",
            ["R", QRELS, RUN_A],
            "the report was made from 2 runs; got 1 RUN (give them in the report's order)",
        ),
        ("score", ["R", QRELS, RUN_A, "missing.trec"], "RUN missing.trec: no such file"),
        (
            "score",
            ["R", RUN_A, RUN_A, RUN_B],
            f"QRELS {RUN_A} differs from the file the report was made from",
        ),
        (
            "not json",
            ["R", QRELS, RUN_A],
            "REPORT R: not a JSON report (Expecting value: line 1 column 1 (char 0))",
        ),
        (
            "no fingerprint",
            ["R", QRELS, RUN_A],
            "REPORT R: no fingerprint of score, compare or check (a JSON report made with --format json)",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, tmp_path, setup, args, message):
    if setup == "score":
        report = _report(capsys, tmp_path, *REPORTS["score"])
    else:
        report = str(tmp_path / "r.json")
        Path(report).write_text("nope" if setup == "not json" else '{"runs": []}')
    code, out, err = run_cli(capsys, "verify", *[report if a == "R" else a for a in args])
    assert (code, out) == (2, "")
    assert err.startswith(f"qrelforge: error: {message.replace('REPORT R', f'REPORT {report}')}")


# ------------------------------------------------------------------------------------------- --chunk-map
CHUNK_RUN = (
    "q1 Q0 c1a 1 0.9 chunked\nq1 Q0 c3a 2 0.8 chunked\nq1 Q0 c1b 3 0.7 chunked\nq1 Q0 c2a 4 0.6 chunked\n"
    "q2 Q0 c3a 1 0.9 chunked\nq2 Q0 c1a 2 0.5 chunked\n"
)
CHUNKS = "chunk_id\tdoc_id\nc1a\tD1\nc1b\tD1\nc2a\tD2\nc3a\tD3\n"


def _chunk_report(capsys, tmp_path) -> tuple[str, str, str]:
    """A score report of a chunk-level run made with --chunk-map: (report, run, chunk map)."""
    run, chunks = tmp_path / "chunked.trec", tmp_path / "chunks.tsv"
    run.write_text(CHUNK_RUN, encoding="utf-8")
    chunks.write_text(CHUNKS, encoding="utf-8")
    report = _report(
        capsys, tmp_path, "score", QRELS, str(run), *M, "--per-query", "--chunk-map", str(chunks)
    )
    return report, str(run), str(chunks)


def test_a_chunk_map_report_verifies_with_its_chunk_map(capsys, tmp_path):
    report, run, chunks = _chunk_report(capsys, tmp_path)
    code, out, err = run_cli(capsys, "verify", report, QRELS, run, "--chunk-map", chunks)
    assert (code, out, err) == (0, f"{report}: all 14 numbers hold\n", "")


def test_a_chunk_map_report_recomputed_without_the_map_would_differ(capsys, tmp_path):
    """The map matters: the same run scored without it gives other numbers (so verify must use it)."""
    report, run, _ = _chunk_report(capsys, tmp_path)
    (tmp_path / "plain").mkdir()
    plain = _report(capsys, tmp_path / "plain", "score", QRELS, run, *M, "--per-query")
    assert json.loads(Path(plain).read_text())["runs"] != json.loads(Path(report).read_text())["runs"]


@pytest.mark.parametrize(
    "case, message",
    [
        (
            "changed map",
            "--chunk-map {changed} differs from the file the report was made from (sha256 {here}… here, "
            "{stored}… in the report)",
        ),
        (
            "no map given",
            "the report was made with --chunk-map (sha256 {stored}…); pass the same file with "
            "--chunk-map FILE to recompute it",
        ),
        ("missing map", "--chunk-map {missing}: no such file"),
        ("map for a plain report", "--chunk-map {chunks}: the report was made without --chunk-map"),
        ("corpus for a plain report", "--corpus {docs}: the report was made without --corpus"),
    ],
)
def test_a_chunk_map_that_is_not_the_reports_is_bad_input(capsys, tmp_path, case, message):
    report, run, chunks = _chunk_report(capsys, tmp_path)
    changed, missing, docs = tmp_path / "changed.tsv", tmp_path / "missing.tsv", str(SAMPLE / "docs.jsonl")
    changed.write_text(CHUNKS.replace("c2a\tD2", "c2a\tD4"), encoding="utf-8")
    args = {
        "changed map": [report, QRELS, run, "--chunk-map", str(changed)],
        "no map given": [report, QRELS, run],
        "missing map": [report, QRELS, run, "--chunk-map", str(missing)],
        "map for a plain report": ["PLAIN", QRELS, RUN_A, RUN_B, "--chunk-map", chunks],
        "corpus for a plain report": ["PLAIN", QRELS, RUN_A, RUN_B, "--corpus", docs],
    }[case]
    if args[0] == "PLAIN":
        (tmp_path / "plain").mkdir()
        args[0] = _report(capsys, tmp_path / "plain", *REPORTS["score"])
    code, out, err = run_cli(capsys, "verify", *args)
    assert (code, out) == (2, "")
    expected = message.format(
        changed=changed,
        missing=missing,
        chunks=chunks,
        docs=docs,
        here=file_sha256(changed)[:16],
        stored=file_sha256(chunks)[:16],
    )
    assert err == f"qrelforge: error: {expected}\n"


def test_a_corpus_report_verifies_with_or_without_its_corpus(capsys, tmp_path):
    docs = str(SAMPLE / "docs.jsonl")
    report = _report(capsys, tmp_path, *REPORTS["score"], "--corpus", docs)
    for extra in ([], ["--corpus", docs]):
        code, out, err = run_cli(capsys, "verify", report, QRELS, RUN_A, RUN_B, *extra)
        assert (code, out, err) == (0, f"{report}: all 28 numbers hold\n", "")
    other = tmp_path / "docs.jsonl"
    other.write_text(Path(docs).read_text(encoding="utf-8") + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "verify", report, QRELS, RUN_A, RUN_B, "--corpus", str(other))
    assert (code, out) == (2, "")
    assert err == (
        f"qrelforge: error: --corpus {other} differs from the file the report was made from (sha256 "
        f"{file_sha256(other)[:16]}… here, {file_sha256(docs)[:16]}… in the report)\n"
    )
