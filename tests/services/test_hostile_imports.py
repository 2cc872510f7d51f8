"""Hostile files through the import services (documents and queries as JSONL/CSV/TSV, runs, prior qrels), on
SQLite and PostgreSQL.

Property: whatever the bytes — random, invalid UTF-8, BOM, CRLF, NUL, truncated, gzip'd, huge fields,
duplicate IDs, formula-like or SQL-like text, NaN/infinity metadata — an import either completes (every row of
the file is in the database, exactly as `metrics.formats` reads it) or raises `InvalidInput` whose problems
name the file and the line of each bad row; and then the database holds exactly what it held before.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import re
import uuid

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from service_table import fingerprint
from sqlalchemy import text

from annotate_app.services import imports, projects
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput
from metrics import FormatError, read_corpus, read_qrels, read_queries, read_run

FUZZ = settings(
    max_examples=int(os.environ.get("QF_FUZZ_EXAMPLES", "30")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
HOSTILE_TEXT = [
    '=HYPERLINK("http://evil.example","click")',
    "+1+1",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1",
    "\r=1",
    "'; DROP TABLE documents; --",
    'a "quoted", comma\nand newline',
    "100% _wild_ \\",
    "<script>x</script>",
    "中文，全角＝１",
    "a\x00b",
    "\u202eevil",
    "x" * 150_000,
]
IDS = st.one_of(
    st.sampled_from([f"D{i}" for i in range(8)]),
    st.sampled_from(["=1+1", "D'1", "D;--", "D\x00", "D 1", "d" * 300, "D\u200b", "%_"]),
)
TEXT = st.one_of(st.text(max_size=30), st.sampled_from(HOSTILE_TEXT))
EXTRA = st.one_of(st.none(), st.floats(), st.text(max_size=10), st.lists(st.floats(), max_size=2))
MUTATIONS = st.lists(
    st.sampled_from(["bom", "crlf", "badutf8", "truncate", "nul", "dup", "gzip", "random"]), max_size=2
)


# ----------------------------------------------------------------------------------------------- files
def _records(rows, kind: str) -> list[dict]:
    key = "doc_id" if kind == "documents" else "query_id"
    out = []
    for ident, title, body, extra in rows:
        rec = {key: ident, "text": body}
        if kind == "documents":
            rec["title"] = title
        if extra is not None:
            rec["extra"] = extra
        out.append(rec)
    return out


def _serialise(records: list[dict], fmt: str) -> bytes:
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode(
            "utf-8", "surrogatepass"
        )
    buffer = io.StringIO()
    columns = list(dict.fromkeys(k for r in records for k in r)) or ["doc_id", "text"]
    writer = csv.writer(buffer, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
    writer.writerow(columns)
    for r in records:
        writer.writerow(["" if r.get(c) is None else str(r.get(c)) for c in columns])
    return buffer.getvalue().encode("utf-8", "surrogatepass")


def _mutate(data: bytes, mutations: list[str], draw) -> bytes:
    for m in mutations:
        at = draw(st.integers(0, len(data)))
        if m == "bom":
            data = b"\xef\xbb\xbf" + data
        elif m == "crlf":
            data = data.replace(b"\n", b"\r\n")
        elif m in ("badutf8", "nul"):
            data = data[:at] + (b"\xff\xfe" if m == "badutf8" else b"\x00") + data[at:]
        elif m == "truncate":
            data = data[:at]
        elif m == "gzip":
            data = gzip.compress(data, mtime=0)
        elif m == "dup":  # the last line again
            data += data[data.rfind(b"\n", 0, max(len(data) - 1, 0)) + 1 :]
        else:
            data = draw(st.binary(max_size=200))
    return data


@st.composite
def record_files(draw, kind: str):
    fmt = draw(st.sampled_from(["jsonl", "csv", "tsv"]))
    rows = draw(st.lists(st.tuples(IDS, TEXT, TEXT, EXTRA), max_size=5))
    data = _mutate(_serialise(_records(rows, kind), fmt), draw(MUTATIONS), draw)
    return f"upload.{fmt}", data


@st.composite
def trec_files(draw, kind: str):
    n_fields = 6 if kind == "run" else 4
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        qid = draw(st.sampled_from(["q0", "q1", "q2", "q9", "q'1", "q\x00"]))
        doc = draw(IDS)
        value = draw(st.sampled_from(["1", "0.5", "-3", "nan", "inf", "1e400", "x", "9" * 30, "2"]))
        fields = [qid, "Q0" if kind == "run" else "0", doc, "1", value, "tag"][:n_fields]
        if kind == "qrels":
            fields[3] = value
        sep = draw(st.sampled_from([" ", "\t", "  "]))
        lines.append(sep.join(fields[: draw(st.integers(n_fields - 1, n_fields))]))
    data = ("\n".join(lines) + "\n").encode("utf-8")
    return f"upload.{'trec' if kind == 'run' else 'qrels'}", _mutate(data, draw(MUTATIONS), draw)


# ---------------------------------------------------------------------------------------------- oracle
@pytest.fixture
def project(db):
    projects.create_project(db, SYSTEM, "p")
    docs = "".join(json.dumps({"doc_id": f"D{i}", "text": f"text {i}"}) + "\n" for i in range(8))
    imports.import_documents(db, SYSTEM, "p", docs.encode(), filename="seed.jsonl")
    queries = "".join(json.dumps({"query_id": f"q{i}", "text": f"query {i}"}) + "\n" for i in range(3))
    imports.import_queries(db, SYSTEM, "p", queries.encode(), filename="seed.jsonl")
    return db


def _stream(name: str, data: bytes) -> io.BytesIO:
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def _check_refusal(exc: InvalidInput, name: str) -> None:
    """Every problem names the upload and its line (a gzip upload that is not gzip: the file itself)."""
    assert exc.problems, exc
    for p in exc.problems:
        assert p.source == name, p
        assert p.line is not None or p.reason.startswith("not a valid gzip file"), p
    assert str(exc).startswith(f"{name}:"), str(exc)


def _attempt(db, import_call, name: str, data: bytes):
    before = fingerprint(db)
    try:
        report = import_call()
    except InvalidInput as exc:
        _check_refusal(exc, name)
        assert fingerprint(db) == before, "a refused import changed the database"
        event("refused")
        return None
    event("imported")
    return report


def _current_docs(db) -> dict[str, tuple[str, str]]:
    sql = (
        "SELECT d.external_id, v.title, v.text FROM documents d JOIN document_versions v "
        "ON v.document_id = d.id AND v.version = d.version"
    )
    with db.read() as s:
        return {r[0]: (r[1], r[2]) for r in s.execute(text(sql))}


def _clean(value):
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else value


# ----------------------------------------------------------------------------------------------- tests
@FUZZ
@given(record_files("documents"))
@example(("upload.csv", b"doc_id,title,text\nD1,t," + b"y" * 200_000 + b"\n"))  # beyond csv's 128 KiB default
@example(("upload.jsonl", b'{"doc_id": "D1", "text": "\\ud800"}\n'))  # a lone surrogate
@example(("upload.jsonl", b'{"doc_id": "D1", "text": "ok", "n": Infinity}\n'))
@example(("upload.jsonl", b'{"doc_id": "D1", "text": "' + b"[" * 5 + b'", "n": ' + b"[" * 100_000 + b"}\n"))
@example(("upload.csv", b"doc_id,text,text\nD1,a,b\n"))
def test_documents_import_completely_or_not_at_all(project, upload):
    name, data = upload
    report = _attempt(
        project, lambda: imports.import_documents(project, SYSTEM, "p", data, filename=name), name, data
    )
    if report is not None:
        expected = read_corpus(_stream(name, data))
        stored = _current_docs(project)
        for rec in expected.to_dict(orient="records"):
            assert stored[rec["doc_id"]] == (_clean(rec["title"]), rec["text"])


@FUZZ
@given(record_files("queries"))
def test_queries_import_completely_or_not_at_all(project, upload):
    name, data = upload
    report = _attempt(
        project, lambda: imports.import_queries(project, SYSTEM, "p", data, filename=name), name, data
    )
    if report is not None:
        with project.read() as s:
            stored = dict(s.execute(text("SELECT external_id, text FROM queries")).all())
        for rec in read_queries(_stream(name, data)).to_dict(orient="records"):
            assert stored[rec["query_id"]] == rec["text"]


@FUZZ
@given(trec_files("run"))
def test_runs_import_completely_or_not_at_all(project, upload):
    name, data = upload
    run_name = f"run-{uuid.uuid4().hex[:8]}"
    report = _attempt(
        project,
        lambda: imports.import_run(project, SYSTEM, "p", data, name=run_name, filename=name),
        name,
        data,
    )
    if report is not None:
        with project.read() as s:
            n = s.execute(
                text("SELECT count(*) FROM run_entries e JOIN runs r ON r.id = e.run_id WHERE r.name = :n"),
                {"n": run_name},
            ).scalar()
        assert n == report.added == len(read_run(_stream(name, data)))


@FUZZ
@given(trec_files("qrels"))
def test_prior_qrels_import_completely_or_not_at_all(project, upload):
    name, data = upload
    prior = f"prior-{uuid.uuid4().hex[:8]}"
    report = _attempt(
        project,
        lambda: imports.import_qrels(project, SYSTEM, "p", data, name=prior, filename=name),
        name,
        data,
    )
    if report is not None:
        with project.read() as s:
            n = s.execute(
                text("SELECT count(*) FROM prior_judgments WHERE source = :n"), {"n": prior}
            ).scalar()
        assert n == report.added == len(read_qrels(_stream(name, data)))


# ---------------------------------------------------------------------------------- worked examples
@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "d.jsonl",
            b'{"doc_id": "D1", "text": "\\ud800"}\n',
            "d.jsonl:1: invalid JSON (a \\u escape encodes a lone surrogate, not a character): "
            '\'{"doc_id": "D1", ',
        ),
        (
            "d.jsonl",
            b'{"doc_id": "D1", "text": "a\\u0000b"}\n',
            "d.jsonl:1: text contains a NUL character (U+0000)",
        ),
        ("d.csv", b"doc_id,text\nD1,ok\nD\x002,bad\n", "d.csv:3: doc_id contains a NUL character (U+0000)"),
        (
            "d.jsonl",
            b'{"doc_id": "D1", "text": "ok"}\n{"doc_id": "D2", "text": "x", "n": Infinity}\n',
            "d.jsonl:2: a metadata field holds NaN or infinity (not valid JSON)",
        ),
        (
            "d.jsonl",
            b'{"doc_id": "D1", "text": "x", "n": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n",
            "d.jsonl:1: invalid JSON (nested too deeply)",
        ),
        (
            "d.jsonl",
            b'{"doc_id": "D1", "text": "x", "n": ' + b"7" * 5000 + b"}\n",
            "d.jsonl:1: invalid JSON (a number has too many digits)",
        ),
        ("d.csv", b"doc_id,text,text\nD1,a,b\n", "d.csv:1: column 'text' appears twice in the header"),
        ("d.tsv", b"doc_id\ttext\n" + b"D1\tok\n" * 2, "d.tsv:3: duplicate doc_id 'D1' (first on line 2)"),
        (
            "d.jsonl",
            b'{"doc_id": "' + b"d" * 300 + b'", "text": "x"}\n',
            "d.jsonl:1: doc_id longer than 255 characters",
        ),
        ("d.csv", b"\xef\xbb\xbfdoc_id,text\r\nD1,ok\r\nD2,\xff\r\n", "d.csv:3: not valid UTF-8 (byte "),
    ],
    ids=[
        "surrogate",
        "NUL text",
        "NUL id",
        "infinity",
        "deep",
        "digits",
        "header",
        "duplicate",
        "long id",
        "bad UTF-8",
    ],
)
def test_bad_documents_name_their_line_and_import_nothing(project, name, data, message):
    before = fingerprint(project)
    with pytest.raises(InvalidInput, match="^" + re.escape(message)):
        imports.import_documents(project, SYSTEM, "p", data, filename=name)
    assert fingerprint(project) == before


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl"])
def test_hostile_text_is_data_stored_verbatim(project, fmt):
    """Formula-like, SQL-like, HTML and huge texts (150 000 characters, beyond the csv module's default field
    limit) import exactly, in every format, with a BOM and CRLF line ends."""
    texts = [t for t in HOSTILE_TEXT if "\x00" not in t and not (fmt != "jsonl" and "\r" in t)]
    records = [{"doc_id": f"H{i}", "title": t[:50], "text": t} for i, t in enumerate(texts)]
    data = _serialise(records, fmt)
    data = b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n") if fmt != "jsonl" else data
    imports.import_documents(project, SYSTEM, "p", data, filename=f"h.{fmt}")
    stored = _current_docs(project)
    for rec in records:
        expected = rec["text"].replace("\n", "\r\n") if fmt != "jsonl" else rec["text"]
        assert stored[rec["doc_id"]] == (
            rec["title"].replace("\n", "\r\n") if fmt != "jsonl" else rec["title"],
            expected,
        )


def test_formats_reader_agrees_on_what_a_file_holds():
    """The oracle itself: metrics reads the same bytes the service imported (sanity check of the helpers)."""
    data = _serialise([{"doc_id": "D1", "text": "=1+1", "title": "@x"}], "csv")
    frame = read_corpus(_stream("x.csv", data))
    assert frame.to_dict(orient="records") == [{"doc_id": "D1", "title": "@x", "text": "=1+1"}]
    with pytest.raises(FormatError):
        read_corpus(_stream("x.jsonl", b"{"))


# -------------------------------------------------------------------------- reader regressions (metrics)
@pytest.mark.parametrize(
    ("read", "name", "data", "message"),
    [
        (
            read_qrels,
            "q.trec",
            b"q1 0 D1 " + b"9" * 5000 + b"\n",
            "q.trec:1: relevance grade out of the 64-bit integer range: '999999999999999999999999999999'",
        ),
        (
            read_qrels,
            "q.trec",
            b"q1 0 D1 9223372036854775808\n",
            "q.trec:1: relevance grade out of the 64-bit integer range: '9223372036854775808'",
        ),
        (
            read_qrels,
            "q.tsv",
            b"query-id\tcorpus-id\tscore\nq1\tD1\t-9223372036854775809\n",
            "q.tsv:2: relevance grade out of the 64-bit integer range",
        ),
        (
            read_corpus,
            "d.jsonl",
            b'{"doc_id": "D1", "text": "x", "n": ' + b"[" * 100_000 + b"}\n",
            "d.jsonl:1: invalid JSON (nested too deeply)",
        ),
        (
            read_corpus,
            "d.jsonl",
            b'{"doc_id": "D1", "text": "x", "n": ' + b"1" * 5000 + b"}\n",
            "d.jsonl:1: invalid JSON (a number has too many digits)",
        ),
        (
            read_queries,
            "q.jsonl",
            b'{"query_id": "q1", "text": "\\udfff"}\n',
            "q.jsonl:1: invalid JSON (a \\u escape encodes a lone surrogate, not a character)",
        ),
        (
            read_corpus,
            "d.tsv",
            b"doc_id\ttext\tdoc_id\nD1\tx\tD2\n",
            "d.tsv:1: column 'doc_id' appears twice in the header",
        ),
    ],
    ids=["grade digits", "grade int64", "BEIR grade", "deep JSON", "JSON digits", "surrogate", "header"],
)
def test_readers_turn_every_hostile_line_into_a_line_error(read, name, data, message):
    """Found by the service-level fuzzing above: before, these escaped `metrics.formats` as ValueError,
    OverflowError, RecursionError or UnicodeEncodeError (a duplicate header column was read silently, the last
    column winning)."""
    with pytest.raises(FormatError, match="^" + re.escape(message)):
        read(_stream(name, data))


def test_a_csv_field_longer_than_the_csv_modules_default_is_read():
    frame = read_corpus(_stream("d.csv", b"doc_id,text\nD1," + b"y" * 300_000 + b"\n"))
    assert len(frame.loc[0, "text"]) == 300_000


@pytest.mark.parametrize(
    ("chunk", "reason"),
    [
        ("c\\u0000", "chunk_id contains a NUL character (U+0000)"),
        ("c" * 300, "chunk_id longer than 255 characters"),
    ],
    ids=["NUL", "long"],
)
def test_a_chunk_id_the_database_cannot_store_is_a_line_error(project, chunk, reason):
    before = fingerprint(project)
    data = b'{"chunk_id": "ok", "doc_id": "D1"}\n{"chunk_id": "' + chunk.encode() + b'", "doc_id": "D2"}\n'
    with pytest.raises(InvalidInput, match="^" + re.escape(f"c.jsonl:2: {reason}")):
        imports.import_chunk_map(project, SYSTEM, "p", data, filename="c.jsonl")
    assert fingerprint(project) == before
