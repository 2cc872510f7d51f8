"""Hostile files (issue 16 items 4, 7, 8, 11; issue 15 item 2): gzip bombs, billions of empty lines, huge
lines, huge headers, huge IDs, odd line breaks in IDs, non-finite JSON, and paths that are not files. Every
reader (and the import services, which call them) refuses them quickly, in bounded memory, with one short
message naming the file, the line and the limit to raise."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from annotate_app.services import imports, projects
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput
from metrics import _ids
from metrics.data import Qrels, Run
from metrics.errors import FormatError, QrelForgeError, quoted
from metrics.formats import (
    iter_run_chunks,
    read_beir_qrels,
    read_chunk_map,
    read_corpus,
    read_qrels,
    read_queries,
    read_run,
)

ROOT = Path(__file__).resolve().parents[2]
INFLATED = (
    "gzip content inflates to more than {} MB (raise the limit with max_inflated_mb= or "
    "QRELFORGE_MAX_INFLATED_MB)"
)
LINE = "{} longer than {} MB (raise the limit with max_line_mb= or QRELFORGE_MAX_LINE_MB)"


def bomb(content: bytes, megabytes: int) -> bytes:
    """A gzip file inflating to ``megabytes`` MiB of ``content`` repeated (1 MiB of it compressed once, its
    member repeated: a valid multi-member gzip file)."""
    block = (content * (2**20 // len(content) + 1))[: 2**20]
    block = block[: block.rfind(b"\n") + 1] if b"\n" in block else block
    member = gzip.compress(block, compresslevel=9)
    return member * (megabytes * 2**20 // len(block))


def stream(name: str, data: bytes) -> io.BytesIO:
    s = io.BytesIO(data)
    s.name = name
    return s


def one_line(exc: BaseException, at_most: int = 400) -> str:
    text = str(exc)
    assert "\n" not in text and len(text) <= at_most, text[:1000]
    return text


# -------------------------------------------------------------------------------------------- gzip bombs
READERS = {
    "run": (read_run, b"q1 Q0 D1 1 1.0 t\n", "r.trec.gz"),
    "qrels": (read_qrels, b"q1 0 D1 1\n", "q.qrels.gz"),
    "corpus csv": (read_corpus, b'D1,"t","x"\n', "d.csv.gz"),
    "corpus jsonl": (read_corpus, b'{"doc_id": "D1", "text": "x"}\n', "d.jsonl.gz"),
    "queries tsv": (read_queries, b"Q1\tx\n", "q.tsv.gz"),
    "chunks": (read_chunk_map, b'{"chunk_id": "c1", "doc_id": "D1"}\n', "c.jsonl.gz"),
}


@pytest.mark.parametrize("kind", READERS)
def test_a_bomb_of_repeated_lines_fails_at_its_first_duplicate(kind):
    read, line, name = READERS[kind]
    header = {"corpus csv": b"doc_id,title,text\n", "queries tsv": b"query_id\ttext\n"}.get(kind, b"")
    data = gzip.compress(header) + bomb(line, 64)
    start = time.monotonic()
    with pytest.raises(FormatError) as info:
        read(stream(name, data))
    assert time.monotonic() - start < 20
    first = 2 if header else 1
    assert re.fullmatch(
        rf"{re.escape(name)}:{first + 1}: duplicate .* \(first on line {first}\).*", one_line(info.value)
    )
    assert len(info.value.problems) == 1000


@pytest.mark.parametrize("kind", ["run", "qrels", "corpus jsonl", "chunks"])
def test_a_bomb_of_empty_lines_stops_at_the_inflated_limit(kind):
    read, _, name = READERS[kind]
    data = bomb(b"\n", 300)
    start = time.monotonic()
    with pytest.raises(FormatError) as info:
        read(stream(name, data), max_inflated_mb=64)
    assert time.monotonic() - start < 30
    assert one_line(info.value) == f"{name}: {INFLATED.format(64)}: {name!r}"


def test_empty_lines_within_the_limit_are_read_fast_and_count():
    data = bomb(b"\n", 200) + gzip.compress(b"q1 Q0 D1 1 1.0 t\n")
    start = time.monotonic()
    run = read_run(stream("r.trec.gz", data))
    assert time.monotonic() - start < 30 and run.name == "t" and len(run) == 1
    pieces = list(iter_run_chunks(stream("r.trec.gz", data), rows=100_000))
    assert sum(len(p) for p in pieces) == 1
    with pytest.raises(FormatError, match=r"r\.trec\.gz:209715202: expected 6 fields"):
        read_run(stream("r.trec.gz", data + gzip.compress(b"bad\n")))


def test_the_inflated_limit_comes_from_the_environment(monkeypatch):
    data = bomb(b"\n", 40)
    monkeypatch.setenv("QRELFORGE_MAX_INFLATED_MB", "32")
    with pytest.raises(FormatError) as info:
        read_corpus(stream("d.jsonl.gz", data))
    assert one_line(info.value) == f"d.jsonl.gz: {INFLATED.format(32)}: 'd.jsonl.gz'"
    assert len(read_corpus(stream("d.jsonl.gz", data), max_inflated_mb=48)) == 0  # the keyword wins
    monkeypatch.setenv("QRELFORGE_MAX_INFLATED_MB", "lots")
    with pytest.raises(QrelForgeError) as bad:
        read_run(stream("r.trec", b""))
    assert str(bad.value) == "QRELFORGE_MAX_INFLATED_MB must be a number of megabytes > 0; got 'lots'"


@pytest.mark.parametrize("value", [0, -1, True, "8", float("inf"), float("nan")])
def test_a_bad_limit_keyword_names_itself(value):
    with pytest.raises(QrelForgeError) as info:
        read_qrels(stream("q.qrels", b"q1 0 D1 1\n"), max_line_mb=value)
    assert str(info.value) == f"max_line_mb must be a number of megabytes > 0; got {value!r}"


# ------------------------------------------------------------------------------------------- long lines
@pytest.mark.parametrize("kind", ["run", "qrels", "corpus jsonl", "corpus csv"])
def test_a_50_mb_line_is_refused_quoting_80_characters(kind, tmp_path):
    read, _, name = READERS[kind]
    path = tmp_path / name.removesuffix(".gz")
    start = b"doc_id,title,text\n" if kind == "corpus csv" else b""
    path.write_bytes(start + b"q1 Q0 " + b"x" * 50 * 2**20 + b" 1 1 t\n")
    began = time.monotonic()
    with pytest.raises(FormatError) as info:
        read(path)
    assert time.monotonic() - began < 20
    line = 2 if start else 1
    unit = "line"
    text = one_line(info.value, 300)
    assert text == f"{path}:{line}: {LINE.format(unit, 16)}: {quoted('q1 Q0 ' + 'x' * 194)}"


def test_a_csv_record_spanning_lines_is_held_to_the_line_limit():
    data = b'doc_id,text\nD1,"' + b"x" * 1000 + b"\n" + b"y\n" * 2**20 + b'"\n'
    with pytest.raises(FormatError) as info:
        read_corpus(stream("d.csv", data), max_line_mb=1)
    # line 2 holds 1005 characters, each later one 2: the record passes 1 MiB on line 2 + 523786
    assert one_line(info.value) == f"d.csv:523788: {LINE.format('record', 1)}: 'y'"


def test_the_line_limit_is_a_keyword_and_an_environment_variable(monkeypatch):
    data = b"q1 Q0 D1 1 1 t\nq1 Q0 " + b"d" * 3000 + b" 1 1 t\n"
    with pytest.raises(FormatError, match=re.escape(f"<stream>:2: {LINE.format('line', 0.001)}")):
        read_run(io.BytesIO(data), max_line_mb=0.001)
    monkeypatch.setenv("QRELFORGE_MAX_LINE_MB", "0.002")
    with pytest.raises(FormatError, match=re.escape(f"<stream>:2: {LINE.format('line', 0.002)}")):
        list(iter_run_chunks(io.BytesIO(data)))


def test_a_bad_line_in_a_huge_file_is_quoted_short():
    long = "q1 Q0 D1 1 notanumber " + "t" * 5_000_000
    with pytest.raises(FormatError) as info:
        read_run(io.StringIO(long + "\n"))
    assert one_line(info.value) == f"<stream>:1: score is not a number: 'notanumber': {quoted(long)}"


# ------------------------------------------------------------------------------- memory, by bytes read
MIB = 2**20
# The line readers' working memory: pieces of about 4 MiB and one line up to the line limit. The shapes below
# inflate to 200 MiB; a reader that joined them (as the readers that cut input by line count did) would grow
# by 400 MB or more.
GROWTH_MB = 120
SHAPES = {  # (file name, content generator)
    "long run lines": (
        "r.trec.gz",
        lambda: (b"q1 Q0 D%d 1 %d t" % (i, i) + b" " * MIB + b"\n" for i in range(200)),
    ),
    "long qrels lines": ("q.qrels.gz", lambda: (b"q1 0 D%d 1" % i + b" " * MIB + b"\n" for i in range(200))),
    "blank lines": ("r.trec.gz", lambda: [*(b"\n" * MIB for _ in range(200)), b"q1 Q0 D1 1 1 t\n"]),
    "one line repeated": ("r.trec", lambda: (b"q1 Q0 D1 1 1.5 t\n" * (MIB // 17) for _ in range(200))),
    "one huge line": (  # just under the 16 MiB line limit, then one more line
        "r.trec.gz",
        lambda: [b"q1 Q0 D0 1 1.5 t" + b" " * (16 * MIB - 1024) + b"\n", b"q1 Q0 D1 2 0.5 t\n"],
    ),
}
READS = {  # how the child reads ``path``: the Python API, the Score page's upload, the import's pieces
    "read_run": "read_run(path)",
    "upload": "read_run(io.BytesIO(path.read_bytes()))",
    "iter_run_chunks": "sum(len(p) for p in iter_run_chunks(path, rows=10_000))",
    "read_qrels": "read_qrels(path)",
}
CHILD = """
import io, re, sys
from pathlib import Path
from metrics.formats import iter_run_chunks, read_qrels, read_run
from metrics.errors import FormatError

def peak():
    return int(re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1)) // 1024

import pyarrow, pyarrow.compute, pyarrow.csv  # numpy alone reads the warm file below; these, the shape
warm = Path(sys.argv[1]).with_name("warm" + Path(sys.argv[1]).name)  # the same kind of file, one line long
for read in (read_run, read_qrels):  # every module the read needs is loaded before the peak is taken
    try:
        read(warm), read(io.BytesIO(warm.read_bytes())), list(iter_run_chunks(warm))
    except FormatError:
        pass
before, path = peak(), Path(sys.argv[1])
try:
    print(repr({read}))
except FormatError as exc:
    print(str(exc.problems[0]).split("/")[-1][:80])
print(peak() - before)
"""


def _write_shape(path: Path, pieces) -> None:
    with open(path, "wb") as f:
        for piece in pieces:
            f.write(gzip.compress(piece, compresslevel=1) if path.suffix == ".gz" else piece)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("shape", "reader", "outcome"),
    [
        ("long run lines", "read_run", "Run('t', 200 rows"),
        ("long run lines", "upload", "Run('t', 200 rows"),
        ("long run lines", "iter_run_chunks", "200"),
        ("long qrels lines", "read_qrels", "Qrels(200 judgments"),
        ("blank lines", "read_run", "Run('t', 1 rows"),
        ("blank lines", "iter_run_chunks", "1"),
        (
            "one line repeated",
            "read_run",
            "r.trec:2: duplicate document 'D1' for query 'q1' (first on line 1)",
        ),
        ("one huge line", "upload", "Run('t', 2 rows"),
        ("one huge line", "read_run", "Run('t', 2 rows"),
    ],
)
def test_hostile_shapes_are_read_in_bounded_memory(shape, reader, outcome, tmp_path):
    """200 MiB of valid but hostile content (long lines, blank lines, a gzip or plain file of one repeated
    line) grows the reading process by at most `GROWTH_MB`, on every reader (a child process's VmHWM)."""
    name, content = SHAPES[shape]
    path = tmp_path / name
    _write_shape(path, content())
    first = next(iter(content())).split(b"\n")[0].strip() or b"q1 Q0 D1 1 1 t"
    _write_shape(tmp_path / f"warm{name}", [first + b"\n"])
    done = subprocess.run(
        [sys.executable, "-c", CHILD.replace("{read}", READS[reader]), str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said, growth = done.stdout.strip().splitlines()
    print(f"{shape} through {reader}: +{growth} MB")
    assert outcome in said
    assert int(growth) < GROWTH_MB, f"{shape} through {reader}: the process grew by {growth} MB"


# ------------------------------------------------------------------------------------- headers and IDs
@pytest.mark.parametrize("columns", [1001, 40_000, 1_000_000])
def test_a_huge_csv_header_is_refused_in_linear_time(columns):
    header = ",".join(f"c{i}" for i in range(columns)).encode()
    start = time.monotonic()
    with pytest.raises(FormatError) as info:
        read_corpus(stream("d.csv", header + b"\n" + b"," * (columns - 1) + b"\n"))
    assert time.monotonic() - start < 10
    assert one_line(info.value).startswith(
        f"d.csv:1: the header has {columns} columns; at most 1000 are read: "
    )


def test_a_header_of_1000_columns_is_read_and_a_repeated_one_named():
    names = ["doc_id", "text", *(f"c{i}" for i in range(998))]
    frame = read_corpus(stream("d.csv", (",".join(names) + "\nD1,x" + "," * 998 + "\n").encode()))
    assert frame.shape == (1, 1001)  # title added
    with pytest.raises(FormatError, match=re.escape("d.csv:1: column 'c1' appears twice in the header")):
        read_corpus(stream("d.csv", b"doc_id,text,c1,c2,c1\n"))


def test_a_300_kb_id_is_refused_at_once():
    lines = [f"q1 Q0 D{i} 1 1 t" for i in range(30_000)] + ["q1 Q0 " + "d" * 300_000 + " 1 1 t"]
    start = time.monotonic()
    with pytest.raises(FormatError) as info:
        read_run(io.StringIO("\n".join(lines) + "\n"))
    assert time.monotonic() - start < 5
    assert one_line(info.value).startswith(
        "<stream>:30001: document ID is longer than 512 bytes (300000 bytes): 'q1 Q0 ddd"
    )


@pytest.mark.parametrize(
    ("read", "data", "message"),
    [
        (
            read_qrels,
            b"q1 0 " + b"d" * 513 + b" 1\n",
            "q.qrels:1: document ID is longer than 512 bytes (513 bytes)",
        ),
        (
            read_beir_qrels,
            b"query-id\tcorpus-id\tscore\n" + b"q" * 600 + b"\tD1\t1\n",
            "q.qrels:2: query-id is longer than 512 bytes (600 bytes)",
        ),
        (
            read_corpus,
            json.dumps({"doc_id": "é" * 257, "text": "x"}).encode() + b"\n",
            "q.qrels:1: doc_id is longer than 512 bytes (514 bytes)",
        ),
        (
            read_chunk_map,
            b'{"chunk_id": "' + b"c" * 513 + b'", "doc_id": "D1"}\n',
            "q.qrels:1: chunk_id is longer than 512 bytes (513 bytes)",
        ),
    ],
)
def test_every_reader_caps_ids_at_512_bytes(read, data, message):
    with pytest.raises(FormatError) as info:
        read(stream("q.qrels", data))
    assert one_line(info.value).startswith(message + ": ")


def test_long_ids_hash_consistently_and_fast():
    long = "x" * 300_000
    values = [long, "a", long, "b" * 600, "b" * 600, "c"]
    start = time.monotonic()
    hashes = _ids.hash_strings(values)
    assert time.monotonic() - start < 1
    assert hashes[0] == hashes[2] and hashes[3] == hashes[4] and len(set(hashes.tolist())) == 4
    assert _ids.hash_strings([long], seed=np.array([1]))[0] != hashes[0]
    with pytest.raises(FormatError, match="doc_id is longer than 512 bytes"):
        Run(["q1"], [long], [1.0])
    with pytest.raises(FormatError, match=re.escape("doc_id is longer than 512 bytes for query 'q1'")):
        Qrels.from_dict({"q1": {long: 1}})


BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("char", BREAKS, ids=[f"U+{ord(c):04X}" for c in BREAKS])
def test_line_and_paragraph_separators_are_refused_in_ids(char):
    doc = f"D{char}1"
    with pytest.raises(FormatError) as info:
        read_run(stream("r.trec", f"q1 Q0 D0 1 2 t\nq1 Q0 {doc} 2 1 t\n".encode()))
    assert str(info.value) == (
        f"r.trec:2: document ID must not contain spaces, tabs or line breaks; got {doc!r}: "
        f"{'q1 Q0 ' + doc + ' 2 1 t'!r}"
    )
    with pytest.raises(FormatError, match="query ID must not contain spaces, tabs or line breaks"):
        read_qrels(stream("q.qrels", f"q{char}1 0 D1 1\n".encode()))
    with pytest.raises(FormatError, match="corpus-id contains a space, tab or line break"):
        read_qrels(stream("q.tsv", f"query-id\tcorpus-id\tscore\nq1\t{doc}\t1\n".encode()))
    with pytest.raises(FormatError, match="d.jsonl:1: doc_id must not contain spaces, tabs or line breaks"):
        read_corpus(stream("d.jsonl", json.dumps({"doc_id": doc, "text": "x"}).encode()))
    with pytest.raises(FormatError, match="doc_id contains a space, tab or line break"):
        Run.from_dict({"q1": {doc: 1.0}})


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            '{"chunk_id": "c 1", "doc_id": "D1"}',
            "chunk_id must not contain spaces, tabs or line breaks; got 'c 1'",
        ),
        (
            '{"chunk_id": "c1", "doc_id": "D\\n1"}',
            "doc_id must not contain spaces, tabs or line breaks; got 'D\\n1'",
        ),
        (
            '{"chunk_id": "c1\\u2028", "doc_id": "D1"}',
            "chunk_id must not contain spaces, tabs or line breaks",
        ),
    ],
)
def test_the_chunk_map_checks_ids_like_every_reader(line, reason):
    with pytest.raises(FormatError) as info:
        read_chunk_map(stream("c.jsonl", f'{{"chunk_id": "c0", "doc_id": "D0"}}\n{line}\n'.encode()))
    assert str(info.value).startswith(f"c.jsonl:2: {reason}")


# ---------------------------------------------------------------------------------------- JSON numbers
@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("NaN", "a metadata field holds NaN or infinity (not valid JSON)"),
        ("-Infinity", "a metadata field holds NaN or infinity (not valid JSON)"),
        ("1e400", "a metadata field holds a number beyond the float64 range: '1e400'"),
    ],
)
def test_non_finite_json_numbers_are_line_errors(value, reason):
    data = f'{{"doc_id": "D1", "text": "ok"}}\n{{"doc_id": "D2", "text": "x", "n": {value}}}\n'
    with pytest.raises(FormatError) as info:
        read_corpus(stream("d.jsonl", data.encode()))
    assert str(info.value) == f"d.jsonl:2: {reason}: {data.splitlines()[1]!r}"
    assert read_corpus(stream("d.jsonl", b'{"doc_id": "D1", "text": "x", "n": 1e300}\n'))["n"][0] == 1e300


# -------------------------------------------------------------------------------------- not a file
def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.trec"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda tmp: tmp, "is a directory, not a file"),
        (_fifo, "is not a regular file (a FIFO)"),
        (lambda tmp: Path("/dev/null"), "is not a regular file (a character device)"),
        (lambda tmp: tmp / "missing.trec", "no such file"),
    ],
    ids=["directory", "fifo", "dev-null", "missing"],
)
def test_a_path_that_is_not_a_file_says_what_it_is(make, what, tmp_path, db):
    path = make(tmp_path)
    for read in (read_run, read_qrels, read_corpus, read_chunk_map):
        with pytest.raises(FormatError) as info:
            read(path)
        assert str(info.value) == f"{path}: {what}: {quoted(str(path))}"
    projects.create_project(db, SYSTEM, "p")
    with pytest.raises(InvalidInput) as refused:
        imports.import_documents(db, SYSTEM, "p", path)
    assert str(refused.value) == f"{path}: {what.split(' (')[0]}"


# ------------------------------------------------------------------------- the CLI, in its own process
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"q1 Q0 D1 1 1.0 t\n", "r.trec.gz:2: duplicate document 'D1' for query 'q1' (first on line 1)"),
        (b"\n", "r.trec.gz: " + INFLATED.format(256)),
    ],
    ids=["duplicate lines", "empty lines"],
)
def test_qrelforge_score_refuses_a_bomb_in_bounded_memory(content, message, tmp_path):
    run = tmp_path / "r.trec.gz"
    run.write_bytes(bomb(content, 1024))
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 D1 1\n")
    env = {"QRELFORGE_MAX_INFLATED_MB": "256", "PYTHONPATH": str(ROOT)}
    code = (  # VmHWM: this process's peak (ru_maxrss would count the forking test process's too)
        "import re, runpy, sys; sys.argv = ['qrelforge', 'score', sys.argv[1], sys.argv[2]]\n"
        "try:\n    runpy.run_module('annotate_app.cli', run_name='__main__')\n"
        "finally:\n    status = open('/proc/self/status').read()\n"
        "    print(int(re.search(r'VmHWM:\\s+(\\d+)', status).group(1)) // 1024, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(qrels), str(run)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
        cwd=tmp_path,
    )
    *lines, peak = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"qrelforge: error: {message.replace('r.trec.gz', str(run))}"), lines[0]
    assert len(lines[0]) < 400
    assert int(peak) < 600, f"peak RSS {peak} MB"


# ------------------------------------------------------------------------------- one long line, held once
LONG = 8 << 20  # a long line, well past the line reader's threshold for splitting bytes before decoding


def _upload_of(lines: list[bytes]) -> io.BytesIO:
    stream = io.BytesIO(gzip.compress(b"".join(lines), compresslevel=1))
    stream.name = "long.trec.gz"
    return stream


@pytest.mark.parametrize("padding", ["end", "middle"])
def test_a_long_line_costs_about_twice_its_size_while_it_is_read(padding):
    """A gzip upload of one long run line (padded with blanks, as a hostile but valid line is): what the
    readers allocate at once (tracemalloc's peak) stays under 2.5 times the line: the piece and the line cut
    from it, never a decoded copy of it beside them."""
    import tracemalloc

    def line_of(pad: bytes) -> bytes:
        return b"q1 Q0 D0 1 1.5 t" + pad if padding == "end" else b"q1" + pad + b"Q0 D0 1 1.5 t"

    read_run(_upload_of([line_of(b"  ") + b"\n"]))  # the same path, short: its modules loaded first
    line = line_of(b" " * LONG)
    tracemalloc.start()
    try:
        run = read_run(_upload_of([line + b"\n", b"q1 Q0 D1 2 0.5 t\n"]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert run.doc_id.to_pylist() == ["D0", "D1"] and run.name == "t"
    assert peak < 2.5 * len(line), f"peak {peak / len(line):.2f} times the line"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"q1 Q0 D0 1 abc t", "score is not a number: 'abc'"),
        (b"q1 Q0 D0 1", "expected 6 fields (qid Q0 docid rank score tag), got 4"),
        (b"q1 Q0 D0 1\r 1.5 t", "carriage return inside a line"),
    ],
    ids=["score", "fields", "carriage return"],
)
def test_a_long_bad_line_is_named_as_a_short_one_is(line, reason):
    """A long line split before it is decoded is refused with the reason and the text a short one gets."""
    for pad in (b"", b" " * LONG):
        with pytest.raises(FormatError) as info:
            read_run(_upload_of([b"q1 Q0 D1 1 0.5 t\n", line + pad + b"\n"]))
        problem = info.value.problems[0]
        assert (problem.line, problem.reason) == (2, reason)
        assert problem.text == (line + pad).decode()
