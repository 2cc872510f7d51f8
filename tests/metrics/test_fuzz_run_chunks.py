"""`metrics.formats.iter_run_chunks` against `read_run`, the reference: for any chunk size and any size of
the pieces the input is cut into (by bytes) the chunks hold exactly read_run's rows (in file order, with its
name), and a bad file raises the same problems, line for line — duplicates across pieces, blank lines, comment
lines, runs of spaces and tabs, CRLF, BOM, invalid UTF-8, gzip included. A hash collision between (query,
document) pairs of different pieces never becomes an error."""

from __future__ import annotations

import gzip
import io
import os
import re
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import metrics.formats._pieces as pieces  # where the input is cut, PIECE_BYTES at a time
import metrics.formats._trec as formats  # the TREC reader, where _pair_keys lives
from metrics import FormatError, read_run
from metrics.formats import iter_run_chunks

FUZZ = settings(
    max_examples=int(os.environ.get("QF_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
SEP = st.sampled_from([" ", " ", " ", "\t", "  ", " \t "])
# Few IDs, so that pairs repeat (across pieces too); an ID may look like a BOM'd or non-ASCII one.
QID = st.sampled_from(["q1", "q2", "q3", "问题"])
DOC = st.sampled_from(["D1", "D2", "D3", "文档", "\ufeffD1"])
SCORE = st.sampled_from(["1", "0.5", "-2", "1e3", "inf", "3", "0.25"])
BAD = st.sampled_from(
    [
        b"q1 Q0 D1 1",
        b"q1 Q0 D2 1 nan t",
        b"q1 Q0 D3 1 x t",
        b"q2 Q0 D\xff 1 1 t",
        b"q2 Q0 D1\r 1 1 t",
        b"q3 Q0 D2 1 1",
    ]
)


@st.composite
def run_files(draw) -> bytes:
    """Run lines, mostly valid (pairs repeat now and then), with blank and bad lines, BOM and CRLF."""
    lines = []
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.integers(0, 9))
        if kind < 7:
            sep = draw(SEP)
            fields = [draw(QID), "Q0", draw(DOC), "1", draw(SCORE), "tag"] + (["x"] if kind == 6 else [])
            lines.append(sep.join(fields).encode())
        elif kind == 7:
            lines.append(draw(st.sampled_from([b"", b"  ", b"\t", b"# a comment", b" #q1 Q0 D1 1 1 t"])))
        else:
            lines.append(draw(BAD))
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    bom = draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))
    return bom + end.join(lines) + (end if draw(st.booleans()) else b"")


def outcome(read):
    """("rows", (query IDs, doc IDs, scores, names)) or ("error", problems as text)."""
    try:
        pieces = read()
    except FormatError as exc:
        return "error", [str(p) for p in exc.problems]
    pieces = pieces if isinstance(pieces, list) else [pieces]
    rows = (
        [q for p in pieces for q in p.query_id.to_pylist()],
        [d for p in pieces for d in p.doc_id.to_pylist()],
        [s for p in pieces for s in p.score.tolist()],
        {p.name for p in pieces},
    )
    return "rows", rows


def assert_same(data: bytes, rows: int, piece: int) -> None:
    """The chunks against the whole file read in one piece, the input cut into pieces of ``piece`` bytes."""
    whole = outcome(lambda: read_run(io.BytesIO(data)))
    with mock.patch.multiple(pieces, PIECE_BYTES=piece, GATHER_BYTES=piece):
        chunked = outcome(lambda: list(iter_run_chunks(io.BytesIO(data), rows=rows)))
        assert outcome(lambda: read_run(io.BytesIO(gzip.compress(data)))) == whole
    assert chunked == whole


@FUZZ
@given(run_files(), st.integers(1, 6), st.integers(1, 60))
@example(b"q1 Q0 D1 1 1 t\n\nq1 Q0 D1 1 2 t\n", 1, 1)
@example(b"q1 Q0 D1 1 nan t\nq1 Q0 D1 1 1 t\nq2 Q0 D1 1 1 t\nq1 Q0 D1 1 1 t\n", 2, 16)
@example(b"\xef\xbb\xbfq1 Q0 D1 1 1 t\r\n\xef\xbb\xbfq1 Q0 D1 1 1 t\r\n", 1, 1)
@example(b"# c\nq1 Q0 D1 1 1 t\n# q1 Q0 D1 1 1 t\nq1 Q0 D2 1 1 t\n", 1, 20)
@example(b"", 3, 4)
def test_chunks_hold_read_runs_rows_or_raise_its_problems(data, rows, piece):
    assert_same(data, rows, piece)


def _one_hash(rows, take=None):
    """The same hash for every pair (of the rows at positions ``take``, when given), as `_pair_keys` gives."""
    return np.zeros(len(rows) if take is None else len(take), dtype=np.uint64)


@FUZZ
@given(run_files(), st.integers(1, 4), st.integers(1, 60))
def test_a_hash_collision_is_never_an_error(data, rows, piece):
    """Every pair given the same hash: each repeat is checked exactly, and only true duplicates are errors."""
    with mock.patch.object(formats, "_pair_keys", _one_hash):
        assert_same(data, rows, piece)


@pytest.mark.parametrize("rows", [1, 2, 3, 1000])
def test_a_gzip_file_is_read_in_pieces(tmp_path, rows):
    text = "".join(f"q{q} Q0 D{d} {d + 1} {10 - d} run\n" for q in range(3) for d in range(5))
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(text.encode()))
    pieces = list(iter_run_chunks(path, rows=rows))
    assert [len(p) for p in pieces] == [min(rows, 15 - i) for i in range(0, 15, rows)]
    assert outcome(lambda: pieces) == outcome(lambda: read_run(path))


@pytest.mark.parametrize(
    ("data", "rows", "message"),
    [
        (
            b"q1 Q0 D1 1 1 t\nq1 Q0 D2 1 1 t\n\nq1 Q0 D1 1 1 t\n",
            1,
            "<stream>:4: duplicate document 'D1' for query 'q1' (first on line 1): 'q1 Q0 D1 1 1 t'",
        ),
        (b"q1 Q0 D1 1 1 t\n" * 3 + b"q1 Q0 D9 1\n", 2, "<stream>:2: duplicate document 'D1' for query 'q1'"),
        (
            b"q1 Q0 D1 1 1 t\nq1 Q0 D2 1 1 t\nq1 Q0 D3 1 nan t\n",
            2,
            "<stream>:3: score is not a number: 'nan'",
        ),
    ],
)
@pytest.mark.parametrize("piece", [1, 16, None], ids=["piece of 1 byte", "16 bytes", "default"])
def test_errors_name_the_line_in_the_whole_file(data, rows, message, piece, monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_BYTES", piece or pieces.PIECE_BYTES)
    with pytest.raises(FormatError, match="^" + re.escape(message)):
        list(iter_run_chunks(io.BytesIO(data), rows=rows))


def test_no_piece_is_yielded_after_a_bad_line(monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_BYTES", 20)  # the first piece: lines 1 and 2 (30 bytes)
    data = b"q1 Q0 D1 1 1 t\nq1 Q0 D2 1 1 t\nq1 Q0 D3 1\nq1 Q0 D4 1 1 t\n"
    got = []
    with pytest.raises(FormatError, match=re.escape("<stream>:3: expected 6 fields")):
        got.extend(len(p) for p in iter_run_chunks(io.BytesIO(data), rows=2))
    assert got == [2]


@pytest.mark.parametrize("rows", [0, -1, True, 1.5, "2"])
def test_rows_must_be_a_positive_int(rows):
    with pytest.raises(ValueError, match=re.escape(f"rows must be an int >= 1; got {rows!r}")):
        iter_run_chunks(io.BytesIO(b""), rows=rows)


@FUZZ
@given(run_files(), st.integers(1, 4), st.integers(1, 60))
def test_pairs_met_far_back_are_checked_exactly(data, rows, piece):
    """Every piece's earlier rows beyond the look-back (so the gathered rows' pairs move to held hashes),
    every pair given the same hash: still only true duplicates are errors."""
    with (
        mock.patch.object(pieces, "_SPAN_MIN", 0),
        mock.patch.object(formats, "_pair_keys", _one_hash),
    ):
        assert_same(data, rows, piece)
