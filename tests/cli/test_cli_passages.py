"""`qrelforge passages chunk-qrels`, `passages chunkers` and `score --passages ... --chunks ...` (with its
`verify`), on the sample corpus's long documents: outputs, and one error line for each bad input."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from annotate_app.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
PASSAGES, PARAGRAPHS, WINDOWS, DOCS, RUN, DOC_QRELS = (
    str(SAMPLE / n)
    for n in (
        "passages.jsonl",
        "chunks_paragraphs.jsonl",
        "chunks_windows.jsonl",
        "long_docs.jsonl",
        "run_chunks.trec",
        "qrels_long.trec",
    )
)


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# --------------------------------------------------------------------------------------------- chunk-qrels
def relevant(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.endswith(" 0")]


@pytest.mark.parametrize(
    ("chunks", "options", "expected"),
    [
        (  # one paragraph holds each passage whole
            PARAGRAPHS,
            [],
            ["q1 0 L1-p2 3", "q1 0 L1-p4 2", "q2 0 L2-p1 3", "q2 0 L2-p2 1", "q3 0 L3-p1 3", "q3 0 L3-p3 2"],
        ),
        (  # L1-w1 holds 97 of the 296 characters of q1's grade-3 passage, L1-w2 the other 199
            WINDOWS,
            ["--docs", DOCS],
            ["q1 0 L1-w2 3", "q1 0 L1-w3 2", "q2 0 L2-w0 3", "q2 0 L2-w1 1", "q3 0 L3-w0 3", "q3 0 L3-w2 2"],
        ),
        (  # 199/296 < 0.9: that passage grades no window any more
            WINDOWS,
            ["--docs", DOCS, "--min-overlap", "0.9"],
            ["q2 0 L2-w1 1", "q3 0 L3-w2 2"],
        ),
    ],
)
def test_chunk_qrels_of_a_chunking(capsys, chunks, options, expected):
    code, out, err = run_cli(capsys, "passages", "chunk-qrels", PASSAGES, chunks, *options)
    assert (code, err) == (0, "") and relevant(out) == expected


def test_chunk_qrels_lists_every_chunk_of_a_judged_document_and_writes_a_file(tmp_path, capsys):
    target = tmp_path / "chunks.qrels"
    code, out, _ = run_cli(capsys, "passages", "chunk-qrels", PASSAGES, PARAGRAPHS, "-o", str(target))
    lines = target.read_text().splitlines()
    assert (code, out, len(lines)) == (0, "", 20)
    assert lines[:3] == ["q1 0 L1-p0 0", "q1 0 L1-p1 0", "q1 0 L1-p2 3"]


def test_chunks_in_csv_and_tsv_with_offsets(tmp_path, capsys):
    rows = [("x", "L1", 0, 1500), ("y", "L1", 1500, 2722), ("z", "L2", 0, 2374), ("w", "L3", 0, 2118)]
    for name, sep in (("c.csv", ","), ("c.tsv", "\t")):
        text = sep.join(("chunk_id", "doc_id", "start", "end")) + "\n"
        text += "".join(sep.join(map(str, r)) + "\n" for r in rows)
        code, out, _ = run_cli(capsys, "passages", "chunk-qrels", PASSAGES, write(tmp_path, name, text))
        assert code == 0 and out.splitlines() == ["q1 0 x 3", "q1 0 y 2", "q2 0 z 3", "q3 0 w 3"]


TEXT_CHUNKS = '{"chunk_id": "a", "doc_id": "L1", "text": "Model A"}\n'


@pytest.mark.parametrize(
    ("files", "options", "message"),
    [
        (
            {"chunks.jsonl": TEXT_CHUNKS},
            [],
            "chunks.jsonl:1: chunk given by its text: pass --docs DOCS: "
            '\'{"chunk_id": "a", "doc_id": "L1", "text": "Model A"}\'',
        ),
        (
            {"chunks.jsonl": TEXT_CHUNKS + '{"chunk_id": "b", "doc_id": "L1", "text": "no such words"}\n'},
            ["--docs", DOCS],
            "chunks.jsonl:2: chunk text not found in document 'L1': "
            '\'{"chunk_id": "b", "doc_id": "L1", "text": "no such words"}\'',
        ),
        (
            {"chunks.jsonl": '{"chunk_id": "a", "doc_id": "L9", "text": "Model A"}\n'},
            ["--docs", DOCS],
            "chunks.jsonl:1: document 'L9' is not in the corpus: "
            '\'{"chunk_id": "a", "doc_id": "L9", "text": "Model A"}\'',
        ),
        (
            {"chunks.csv": "chunk_id,doc_id,start,end\nx,L1,0,1500\ny,L1,1500,many\n"},
            [],
            "chunks.csv:3: end must be an int >= 0; got 'many': 'y,L1,1500,many'",
        ),
        (
            {"chunks.csv": "chunk_id,doc_id,start,end\nx,L1,0,1500\nx,L2,0,10\n"},
            [],
            "chunks.csv:3: duplicate chunk_id 'x' (first on line 2): 'x,L2,0,10'",
        ),
        (
            {"chunks.csv": "chunk_id,doc_id,start,end\nx,L1,0,9999\n"},
            ["--docs", DOCS],
            "chunks.csv:2: span [0, 9999) is out of range (document length 2722): 'x,L1,0,9999'",
        ),
        (
            {"chunks.csv": "chunk_id,doc_id,start,end\nx,L1,0,1500\n"},
            [],
            f"{PASSAGES}:3: document 'L2' has no chunk in chunks.csv (4 passages in all): 'L2'",
        ),
    ],
)
def test_chunk_qrels_refuses_bad_chunks_in_one_line(tmp_path, capsys, files, options, message):
    ((name, text),) = files.items()
    path = write(tmp_path, name, text)
    code, out, err = run_cli(capsys, "passages", "chunk-qrels", PASSAGES, path, *options)
    assert (code, out) == (2, "")
    assert err == f"qrelforge: error: {message.replace(name, path, 1)}\n"


def test_chunk_qrels_refuses_a_bad_passage_naming_its_line(tmp_path, capsys):
    line = '{"query_id": "q1", "doc_id": "L1", "doc_version": 1, "start": 40, "end": 30, "grade": 2}'
    path = write(tmp_path, "p.jsonl", line + "\n")
    code, _, err = run_cli(capsys, "passages", "chunk-qrels", path, PARAGRAPHS)
    assert code == 2
    assert err == (
        f"qrelforge: error: {path}:1: span [40, 30) ends before it starts: {line[:80]!r}... (88 characters)\n"
    )


@pytest.mark.parametrize("value", ["0", "1.5", "half"])
def test_min_overlap_must_be_a_fraction(capsys, value):
    with pytest.raises(SystemExit) as exited:
        main(["passages", "chunk-qrels", PASSAGES, PARAGRAPHS, "--min-overlap", value])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert err.splitlines()[-1] == (
        "qrelforge passages chunk-qrels: error: argument --min-overlap: must be a number in (0, 1]; "
        f"got {value!r}"
    )


# ------------------------------------------------------------------------------------------------ chunkers
def test_chunkers_compares_two_chunkings(capsys):
    code, out, _ = run_cli(capsys, "passages", "chunkers", PASSAGES, PARAGRAPHS, WINDOWS, "--docs", DOCS)
    assert code == 0
    assert [line.split() for line in out.splitlines()] == [
        ["chunking", "chunks", *(f"EvidenceRecall@{k}" for k in (1, 3, 5, 10))]
        + ["chunks_per_passage", "chars_per_chunk"],
        ["chunks_paragraphs.jsonl", "20", "0.5582", "1.0000", "1.0000", "1.0000", "1.00", "359.0"],
        ["chunks_windows.jsonl", "16", "0.4804", "0.9692", "1.0000", "1.0000", "1.67", "450.9"],
    ]


def test_chunkers_as_json(capsys):
    code, out, _ = run_cli(
        capsys, "passages", "chunkers", PASSAGES, PARAGRAPHS, "--rel", "3", "--format", "json"
    )
    data = json.loads(out)
    assert code == 0 and data["rel"] == 3
    (row,) = data["chunkings"]
    assert row["chunking"] == "chunks_paragraphs.jsonl" and row["file"] == PARAGRAPHS
    # grade 3 only: one passage per query, each inside one paragraph
    assert row["EvidenceRecall(rel=3)@1"] == 1.0 and row["chunks_per_passage"] == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([PARAGRAPHS, PARAGRAPHS], f"chunks file {PARAGRAPHS!r} is given twice"),
        ([WINDOWS], f"{WINDOWS}:1: chunk given by its text: pass --docs DOCS: "),
    ],
)
def test_chunkers_refuses_bad_input_in_one_line(capsys, args, message):
    code, out, err = run_cli(capsys, "passages", "chunkers", PASSAGES, *args)
    assert (code, out) == (2, "")
    assert err.startswith(f"qrelforge: error: {message}") and err.count("\n") == 1


# ------------------------------------------------------------------------------------- score --passages
CHUNK_RUN = ["--passages", PASSAGES, "--chunks", PARAGRAPHS, RUN]


def test_score_a_chunk_run_against_passages(capsys):
    measures = ["R@1", "EvidenceRecall@1", "EvidencePrecision@1", "EvidenceIoU@1", "nDCG@3"]
    code, out, _ = run_cli(
        capsys, "score", *CHUNK_RUN, *(a for m in measures for a in ("-m", m)), "--per-query"
    )
    lines = [line.split() for line in out.splitlines() if line.strip()]
    assert code == 0
    assert lines[:2] == [["run", *measures], ["para_run", "0.1667", "0.1797", "0.1378", "0.1018", "0.5257"]]
    assert lines[-3:] == [
        ["q1", "0.0000", "0.0000", "0.0000", "0.0000", "0.3520"],
        ["q2", "0.0000", "0.0000", "0.0000", "0.0000", "0.5213"],
        ["q3", "0.5000", "0.5391", "0.4133", "0.3054", "0.7039"],
    ]


def test_an_evidence_measure_is_undefined_for_a_query_without_evidence(capsys):
    # grade >= 3: one passage per query, found at rank 1 for q3 only; grade >= 4: no query has evidence
    code, out, _ = run_cli(
        capsys,
        "score",
        *CHUNK_RUN,
        "-m",
        "EvidenceRecall(rel=3)@1",
        "-m",
        "EvidenceRecall(rel=4)@1",
        "--format",
        "json",
    )
    run = json.loads(out)["runs"][0]
    assert code == 0
    assert run["mean"] == {"EvidenceRecall(rel=3)@1": 1 / 3, "EvidenceRecall(rel=4)@1": None}
    assert run["n"] == {"EvidenceRecall(rel=3)@1": 3, "EvidenceRecall(rel=4)@1": 0}


def test_a_json_report_of_a_chunk_run_verifies(tmp_path, capsys):
    report = str(tmp_path / "r.json")
    measures = ["-m", "EvidenceIoU@3", "-m", "R@3", "--per-query", "--format", "json", "-o", report]
    assert run_cli(capsys, "score", *CHUNK_RUN, *measures)[0] == 0
    fp = json.loads(Path(report).read_text())["fingerprint"]
    assert fp["qrels"]["file"] == PASSAGES and fp["qrels"]["source"] == "chunk_qrels"
    assert fp["semantics"]["passages"]["min_overlap"] == 0.5
    assert fp["semantics"]["passages"]["docs_sha256"] is None
    code, out, _ = run_cli(capsys, "verify", report, *CHUNK_RUN)
    assert (code, out) == (0, f"{report}: all 14 numbers hold\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [RUN],
            "the report was made with --passages and --chunks; pass the same files with --passages "
            "PASSAGES --chunks CHUNKS to recompute it",
        ),
        (
            ["--passages", PASSAGES, RUN],
            "the report was made with --passages and --chunks; pass the same "
            "files with --passages PASSAGES --chunks CHUNKS to recompute it",
        ),
        (
            ["--passages", PASSAGES, "--chunks", WINDOWS, RUN],
            f"--chunks {WINDOWS} differs from the file the report was made from (sha256 ",
        ),
        (
            ["--chunks", PARAGRAPHS, DOC_QRELS, RUN],
            f"--chunks {PARAGRAPHS!r} is only used with --passages PASSAGES",
        ),
    ],
)
def test_verify_needs_the_report_s_passages_and_chunks(tmp_path, capsys, args, message):
    report = str(tmp_path / "r.json")
    run_cli(capsys, "score", *CHUNK_RUN, "-m", "EvidenceRecall@1", "--format", "json", "-o", report)
    if args == [RUN]:
        args = [PASSAGES, RUN]  # QRELS given as the passages file, without --passages
    code, out, err = run_cli(capsys, "verify", report, *args)
    assert (code, out) == (2, "") and err.startswith(f"qrelforge: error: {message}") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        ([], "the report was made with --docs; pass the same file with --docs FILE"),
        (
            ["--docs", str(SAMPLE / "docs.jsonl")],
            f"--docs {SAMPLE / 'docs.jsonl'} differs from the file the report was made from (sha256 ",
        ),
        (["--docs", DOCS], None),
    ],
)
def test_verify_a_report_of_chunks_given_by_text_needs_the_same_documents(tmp_path, capsys, docs, message):
    windows_run = write(tmp_path, "w.trec", "q1 Q0 L1-w2 1 2 w\nq1 Q0 L1-w1 2 1 w\nq3 Q0 L3-w0 1 1 w\n")
    report = str(tmp_path / "r.json")
    chunk_run = ["--passages", PASSAGES, "--chunks", WINDOWS, windows_run]
    options = ["-m", "EvidenceRecall@1", "--format", "json", "-o", report]
    assert run_cli(capsys, "score", *chunk_run, "--docs", DOCS, *options)[0] == 0
    code, out, err = run_cli(capsys, "verify", report, *chunk_run, *docs)
    if message is None:
        assert (code, out, err) == (0, f"{report}: all 6 numbers hold\n", "")
    else:
        assert (code, out) == (2, "") and err.startswith(f"qrelforge: error: {message}")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--chunks", PARAGRAPHS, DOC_QRELS, RUN],
            f"--chunks {PARAGRAPHS!r} is only used with --passages PASSAGES",
        ),
        (["--min-overlap", "0.3", DOC_QRELS, RUN], "--min-overlap 0.3 is only used with --passages PASSAGES"),
        (
            ["--passages", PASSAGES, RUN],
            f"--passages {PASSAGES!r} needs --chunks CHUNKS: the chunking of the runs",
        ),
        (
            [*CHUNK_RUN, "--chunk-map", PARAGRAPHS],
            f"--chunk-map {PARAGRAPHS!r} does not go with --passages (chunks are scored as chunks)",
        ),
        (
            [DOC_QRELS, RUN, "-m", "EvidenceIoU@5"],
            "EvidenceIoU@5 needs evidence passages: --passages PASSAGES --chunks CHUNKS",
        ),
        ([DOC_QRELS], "the following arguments are required: RUN"),
        (
            ["--passages", PASSAGES, "--chunks", WINDOWS, "--docs", DOCS, RUN],
            f"{RUN}: chunk 'L1-p1' of query 'q1' is not in the chunks (15 unknown in all)",
        ),
    ],
)
def test_score_refuses_bad_chunk_run_options_in_one_line(capsys, args, message):
    code, out, err = run_cli(capsys, "score", *args)
    assert (code, out, err) == (2, "", f"qrelforge: error: {message}\n")


# ----------------------------------------------------------------------------- document credit overstates
def readme_console() -> list[tuple[str, str]]:
    """(command, output) of each console block of the README's section on passages from the command line."""
    readme = (SAMPLE.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Evidence passages from the command line")
    section = readme[start : readme.index("\n## ", start + 1)]
    blocks = re.findall(r"```console\n(.*?)```", section, flags=re.S)
    return [(block.split("\n", 1)[0], block.split("\n", 1)[1]) for block in blocks]


def test_the_readme_walks_through_three_commands():
    assert [command.split()[:3] for command, _ in readme_console()] == [
        ["$", "qrelforge", "score"],  # by document (--chunk-map)
        ["$", "qrelforge", "score"],  # by chunk, against the passages
        ["$", "qrelforge", "passages"],
    ]


@pytest.mark.parametrize(("command", "output"), readme_console())
def test_the_readme_s_numbers_are_the_tool_s(capsys, monkeypatch, command, output):
    monkeypatch.chdir(SAMPLE.parent)
    code, out, err = run_cli(capsys, *shlex.split(command.removeprefix("$ qrelforge ")))
    assert (code, err) == (0, "")
    assert out.rstrip("\n") == output.rstrip("\n")


def test_document_credit_overstates_the_chunk_run(capsys):
    """Mapped to documents, the chunk run finds every relevant document at rank 1; scored as chunks against
    the passages, it does not."""
    _, by_document, _ = run_cli(capsys, "score", DOC_QRELS, RUN, "--chunk-map", PARAGRAPHS, "-m", "R@1")
    _, by_chunk, _ = run_cli(capsys, "score", *CHUNK_RUN, "-m", "R@1", "-m", "EvidenceRecall@1")
    assert by_document.splitlines()[1].split() == ["para_run", "1.0000"]
    assert by_chunk.splitlines()[1].split() == ["para_run", "0.1667", "0.1797"]
