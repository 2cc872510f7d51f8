"""The lean scoring path: the numpy-only reader of plain TREC files (`metrics.formats._plain`), packed
document IDs, hashed (query, document) pairs confirmed exactly, and trec_eval's order kept sparse. Each must
give exactly what the Arrow and line readers and the exact lookups give, and decline what they refuse."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from metrics import Qrels, Run, _ids, evaluate, read_qrels, read_run
from metrics._ids import _order, _pairs
from metrics.formats import _lines, _plain
from metrics.measures import ranking

ROOT = Path(__file__).resolve().parents[2]
MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR", "P@3", "Judged@5", "R-Prec"]


def _src(text: str | bytes) -> _lines._Source:
    data = text.encode() if isinstance(text, str) else text
    return _lines._resolve(io.BytesIO(data))


def _rows(rows) -> tuple[list[str], list[str], list[float]]:
    values = rows.score if isinstance(rows, Run) else rows.relevance
    return rows.query_id.to_pylist(), rows.doc_id.to_pylist(), values.tolist()


@pytest.fixture
def no_plain(monkeypatch):
    """Read with the Arrow and line readers only (the reference for the plain reader)."""
    from metrics.formats import _trec

    monkeypatch.setattr(_trec, "plain_run", lambda src: None)
    monkeypatch.setattr(_trec, "plain_qrels", lambda src: None)


PLAIN_RUNS = {
    "grouped": "q1 Q0 D1 1 0.9 sys\nq1 Q0 D2 2 0.5 sys\nq2 Q0 D3 1 1.5 sys\n",
    "no final newline": "q1 Q0 D1 1 0.9 sys\nq2 Q0 D3 1 1.5 sys",
    "signs and forms": "q1 Q0 a 1 -0.0 t\nq1 Q0 b 2 +.5 t\nq1 Q0 c 3 1. t\nq1 Q0 d 4 -2e-3 t\n"
    "q1 Q0 e 5 1E+2 t\n",
    "short decimals": "q1 Q0 a 1 -0.0 t\nq1 Q0 b 2 +.5 t\nq1 Q0 c 3 1. t\nq1 Q0 d 4 -12.345678 t\n"
    "q1 Q0 e 5 007 t\nq1 Q0 f 6 999999999999999 t\nq1 Q0 g 7 0.000000000000001 t\nq1 Q0 h 8 -.1 t\n",
    "long mantissa": "q1 Q0 a 1 0.12345678901234567890123 t\nq1 Q0 b 2 123456789012345678 t\n",
    "queries interleaved": "q2 Q0 a 1 1 t\nq1 Q0 a 1 2 t\nq2 Q0 b 2 0.5 t\nq1 Q0 b 2 0.1 t\n",
    "long ids": f"{'q' * 40} Q0 {'d' * 512} 1 0.5 t\n{'q' * 40} Q0 {'d' * 511}x 2 0.25 t\n",
}


@pytest.mark.parametrize("text", PLAIN_RUNS.values(), ids=PLAIN_RUNS.keys())
def test_plain_run_equals_the_reference_readers(text, no_plain):
    plain = _plain.plain_run(_src(text))
    assert plain is not None and isinstance(plain._docs(), _ids.Packed)
    reference = read_run(io.StringIO(text))
    assert _rows(plain) == _rows(reference)
    assert np.array_equal(plain.score.view(np.uint64), reference.score.view(np.uint64))  # -0.0 too
    assert plain.query_ids == reference.query_ids and len(plain) == len(reference)


@pytest.mark.parametrize(
    ("doc", "from_words"),
    [("D1", True), ("d" * 8, True), ("d" * 9, True), ("d" * 64, True), ("d" * 65, False), ("d" * 512, False)],
)
def test_plain_reader_hashes_document_ids_as_hash_strings(doc, from_words):
    """IDs of at most 64 bytes are cut from their words, and hashed there exactly as `_ids.hash_strings`
    hashes the packed column; longer ones are gathered byte by byte and hashed later."""
    text = f"q1 Q0 {doc} 1 0.5 t\nq1 Q0 x{doc[1:]} 2 0.25 t\nq2 Q0 {doc[:-1]} 1 1.5 t\n"
    hashes = _plain._read(_src(text), fields=6, value_field=4, grade=False)[3]
    assert (hashes is not None) == from_words
    plain = _plain.plain_run(_src(text))
    assert plain is not None
    assert plain._docs().values(np.arange(3)) == [doc, f"x{doc[1:]}", doc[:-1]]
    assert plain.doc_hashes().tolist() == _ids.hash_strings(plain._docs()).tolist()
    assert plain.doc_hashes().tolist() == _ids.hash_strings(pa.array([doc, f"x{doc[1:]}", doc[:-1]])).tolist()


def test_plain_reader_tells_query_ids_apart_byte_by_byte():
    """IDs sharing their first 8 bytes, prefixes of each other, of every length to 20 bytes, coming back
    later: the plain reader's query codes are those of the reference reader."""
    rng = np.random.default_rng(8)
    pool = ["q", "q1", "q10", "abcdefgh", "abcdefgi", "abcdefghi", "abcdefghij" * 2, "x" * 16, "x" * 17]
    ids = [pool[i] for i in rng.integers(0, len(pool), 300)]
    text = "".join(f"{q} Q0 d{i} {i} {i / 7:.4f} t\n" for i, q in enumerate(ids))
    plain = _plain.plain_run(_src(text))
    assert plain is not None
    assert plain.query_id.to_pylist() == ids


NOT_PLAIN_RUNS = {
    "tab": "q1\tQ0 D1 1 0.9 sys\n",
    "crlf": "q1 Q0 D1 1 0.9 sys\r\n",
    "double space": "q1 Q0  D1 1 0.9 sys\n",
    "leading space": " q1 Q0 D1 1 0.9 sys\n",
    "empty first field": " Q0 D1 1 0.9 sys\n",
    "trailing space": "q1 Q0 D1 1 0.9 sys \n",
    "empty line": "q1 Q0 D1 1 0.9 sys\n\nq1 Q0 D2 2 0.5 sys\n",
    "bom": "\ufeffq1 Q0 D1 1 0.9 sys\n",
    "non-ascii": "q1 Q0 Dé 1 0.9 sys\n",
    "nul byte": "q1 Q0 D\x001 1 0.9 sys\n",
    "vertical tab": "q1 Q0 D\x0b1 1 0.9 sys\n",
    "control byte as a separator": "q1 Q0 D1\x011 0.9 sys\nq1 Q0 D2 2 0.5 sys\n",
    "control byte in an id": "q1 Q0 D\x011 1 0.9 sys\n",
    "seven fields": "q1 Q0 D1 1 0.9 sys extra\n",
    "five fields": "q1 Q0 D1 1 0.9\n",
    "underscore score": "q1 Q0 D1 1 1_0 sys\n",
    "inf score": "q1 Q0 D1 1 inf sys\n",
    "nan score": "q1 Q0 D1 1 nan sys\n",
    "huge score": "q1 Q0 D1 1 1e400 sys\n",
    "bad score": "q1 Q0 D1 1 1.2.3 sys\n",
    "sign inside": "q1 Q0 D1 1 5- sys\n",
    "lone point": "q1 Q0 D1 1 . sys\n",
    "lone sign": "q1 Q0 D1 1 - sys\n",
    "two signs": "q1 Q0 D1 1 +-1 sys\n",
    "duplicate pair": "q1 Q0 D1 1 0.9 sys\nq1 Q0 D1 2 0.5 sys\n",
    "id too long": f"q1 Q0 {'d' * 513} 1 0.9 sys\n",
    "query too long": f"{'q' * 513} Q0 d 1 0.9 sys\n",
}


@pytest.mark.parametrize("text", NOT_PLAIN_RUNS.values(), ids=NOT_PLAIN_RUNS.keys())
def test_plain_run_declines_what_it_does_not_read_alike(text):
    assert _plain.plain_run(_src(text)) is None


def test_plain_reader_declines_gzip_and_long_lines():
    import gzip

    assert _plain.plain_run(_src(gzip.compress(PLAIN_RUNS["grouped"].encode()))) is None
    src = _lines._resolve(io.BytesIO(PLAIN_RUNS["grouped"].encode()), _lines.reader_limits(max_line_mb=1e-5))
    assert _plain.plain_run(src) is None  # 10-byte lines: the line reader reports the long line


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("q1 Q0 D1 1 0.9 sys\n Q0 D2 2 0.5 sys\n", "empty first field"),
        ("q1 Q0 D1 1 0.9 sys\n\nq1 Q0 D2 2 0.5 sys\n", "empty line"),
    ],
)
def test_plain_run_declines_an_empty_field_at_a_block_start(text, where, monkeypatch):
    """With 19-byte blocks the second line starts a block, with 1 MB ones it is inside the first: its empty
    first field (five more fields, so the counts of spaces and newlines are right) is found either way."""
    monkeypatch.setattr(_plain, "_BLOCK", 19)
    assert _plain._blocks(text.encode())[0] == (0, 19)
    assert _plain.plain_run(_src(text)) is None, where
    monkeypatch.setattr(_plain, "_BLOCK", 1 << 20)
    assert _plain.plain_run(_src(text)) is None, where


def test_a_piece_a_little_over_a_block_is_read_as_one_block(monkeypatch):
    """A piece is whole lines a little over its size (`_pieces.GATHER_BYTES`, the block size): it is one
    block, not a block and a second one of a few bytes; longer input is still cut at lines."""
    monkeypatch.setattr(_plain, "_BLOCK", 72)
    text = "".join(f"q1 Q0 D{i} {i} 0.9 sys\n" for i in range(1, 9))  # 19 bytes a line
    assert _plain._blocks(text[:76].encode()) == [(0, 76)]
    assert _plain._blocks(text.encode()) == [(0, 57), (57, 114), (114, 152)]
    assert _plain.plain_run(_src(text)) is not None


DECIMALS = {
    "0.9": 0.9,
    "-0.0": -0.0,
    "+.5": 0.5,
    "1.": 1.0,
    "-.1": -0.1,
    "007": 7.0,
    "12.345678": 12.345678,
    "999999999999999": 999999999999999.0,  # 15 digits
    "0.00000000000001": 1e-14,  # 15 digits, the leading zero too
    "-9.99999999999999": -9.99999999999999,
    "0.000000000000001": None,  # 16 digits: the general parse
    "1e5": None,
    "1E5": None,
    "1.2.3": None,
    "5-": None,
    "+-1": None,
    ".": None,
    "-": None,
}


@pytest.mark.parametrize(("text", "expected"), DECIMALS.items(), ids=DECIMALS.keys())
def test_short_decimals_parse_bit_for_bit_as_float(text, expected):
    """None: the field is not a short decimal (the general parse takes its block)."""
    raw, length = _cells([text])
    got = _plain._decimals(raw, length)
    _same_bits(got, expected)


def test_random_short_decimals_equal_float():
    rng = np.random.default_rng(5)
    signs, wholes, fracs = (
        rng.choice(["", "-", "+"], 20_000),
        rng.integers(0, 8, 20_000),
        rng.integers(1, 8, 20_000),
    )
    texts = [
        f"{sign}{int(rng.integers(0, 10**whole)) if whole else ''}.{int(rng.integers(0, 10**frac)):0{frac}d}"
        for sign, whole, frac in zip(signs, wholes, fracs, strict=True)
    ]
    raw, length = _cells(texts)
    got = _plain._decimals(raw, length)
    assert got is not None
    assert got.view(np.uint64).tolist() == np.array([float(t) for t in texts]).view(np.uint64).tolist()


def _same_bits(got: np.ndarray | None, expected: float | None) -> None:
    """``got`` is None when ``expected`` is, else exactly ``[expected]`` (-0.0 apart from 0.0)."""
    if expected is None:
        assert got is None
    else:
        assert got is not None
        assert got.view(np.uint64).tolist() == np.array([expected]).view(np.uint64).tolist()


def _cells(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The fields NUL-padded to a multiple of 8 bytes, one row each (as `_plain._numbers` lays them out)."""
    width = max(len(t) for t in texts) + 7 >> 3 << 3
    raw = np.frombuffer(b"".join(t.encode().ljust(width, b"\0") for t in texts), dtype=np.uint8)
    return raw.reshape(len(texts), width), np.array([len(t) for t in texts])


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("q1 0 D1 2\nq1 0 D2 0\nq2 0 D1 -1\n", True),
        ("q1 0 D1 +5\nq1 0 D2 007\n", True),
        ("q1 0 D1 1.5\n", False),
        ("q1 0 D1 " + "9" * 19 + "\n", False),
        ("q1 0 D1 2 extra\n", False),
        ("q1 0 D1 2\nq1 0 D1 3\n", False),
    ],
    ids=["grades", "signs-and-zeros", "fraction", "19-digits", "five-fields", "duplicate"],
)
def test_plain_qrels(text, plain, no_plain):
    got = _plain.plain_qrels(_src(text))
    assert (got is not None) == plain
    if plain:
        assert _rows(got) == _rows(read_qrels(io.StringIO(text)))


def _random_files(seed: int, queries: int = 30, depth: int = 60) -> tuple[str, str]:
    """Qrels and a run with float32 score ties, queries only in the qrels and only in the run."""
    rng = np.random.default_rng(seed)
    run, qrels = [], []
    for q in range(queries):
        docs = rng.choice(500, size=depth, replace=False)
        scores = np.round(rng.normal(5, 1, size=depth), 1)  # many ties
        if q % 7 != 3:  # some queries only in the qrels
            run += [f"Q{q} Q0 d{d} {i} {s} r" for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
        judged = rng.choice(docs, size=10, replace=False)
        if q % 11 != 5:  # some queries only in the run
            qrels += [f"Q{q} 0 d{d} {int(g)}" for d, g in zip(judged, rng.integers(-1, 4, 10), strict=True)]
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scores_from_plain_files_equal_the_arrow_path(seed, monkeypatch):
    qrels_text, run_text = _random_files(seed)
    lean = evaluate(read_qrels(io.StringIO(qrels_text)), read_run(io.StringIO(run_text)), MEASURES)
    assert isinstance(read_run(io.StringIO(run_text))._docs(), _ids.Packed)
    from metrics.formats import _trec

    monkeypatch.setattr(_trec, "plain_run", lambda src: None)
    monkeypatch.setattr(_trec, "plain_qrels", lambda src: None)
    full = evaluate(read_qrels(io.StringIO(qrels_text)), read_run(io.StringIO(run_text)), MEASURES)
    assert lean.to_dict() == full.to_dict()
    assert lean.extra_queries == full.extra_queries and lean.missing_queries == full.missing_queries


@pytest.mark.parametrize("seed", [0, 3])
def test_hash_collisions_never_change_a_score(seed):
    """Every document hashing alike makes every pair a candidate (and two judgments share a hash): the
    exact comparisons alone decide, as without hashes."""
    qrels_text, run_text = _random_files(seed)
    expected = evaluate(read_qrels(io.StringIO(qrels_text)), read_run(io.StringIO(run_text)), MEASURES)
    qrels, run = read_qrels(io.StringIO(qrels_text)), read_run(io.StringIO(run_text))
    qrels._doc_hashes = np.zeros(len(qrels), dtype=np.uint64)
    run._doc_hashes = np.zeros(len(run), dtype=np.uint64)
    assert evaluate(qrels, run, MEASURES).to_dict() == expected.to_dict()
    qrels, run = read_qrels(io.StringIO(qrels_text)), read_run(io.StringIO(run_text))
    for rows in (qrels, run):  # 64 hash values: many documents share one
        rows._doc_hashes = rows.doc_hashes() & np.uint64(0x3F)
    assert evaluate(qrels, run, MEASURES).to_dict() == expected.to_dict()


REPEATS = {  # (groups, documents, a pair repeats); stretches of 2 rows of whole groups
    "none": ([0, 0, 1, 1, 2], [1, 2, 1, 2, 1], False),
    "within a group": ([0, 0, 1, 1, 1], [1, 2, 3, 4, 3], True),
    "a group longer than a stretch": ([0, 0, 0, 0, 0, 1], [1, 2, 3, 4, 1, 1], True),
    "first and last row": ([0, 0, 0, 0, 0], [9, 2, 3, 4, 9], True),
    "a group in two places": ([0, 1, 0, 1], [1, 1, 2, 2], False),
    "a group in two places, repeating": ([0, 1, 0, 1], [1, 1, 1, 2], True),
    "groups of one size": ([0, 0, 1, 1, 2, 2], [1, 2, 1, 2, 1, 2], False),
    "groups of one size, repeating": ([0, 0, 1, 1, 2, 2], [1, 2, 3, 4, 5, 5], True),
    "groups of one row": ([0, 1, 2], [1, 1, 1], False),
    "one group": ([0, 0, 0], [1, 2, 1], True),
    "one row": ([0], [1], False),
    "no row": ([], [], False),
}


@pytest.mark.parametrize(("groups", "docs", "repeats"), REPEATS.values(), ids=REPEATS.keys())
@pytest.mark.parametrize("stretch", [2, 4096])
def test_may_repeat_pairs_sorts_stretches_of_whole_groups(groups, docs, repeats, stretch, monkeypatch):
    monkeypatch.setattr(_pairs, "_SORT_ROWS", stretch)
    hashes = _ids.hash_strings(pa.array([str(d) for d in docs], type=pa.string()))
    assert _ids.may_repeat_pairs(np.array(groups, dtype=np.int32), hashes) is repeats


def test_group_cuts_keep_groups_whole(monkeypatch):
    monkeypatch.setattr(_pairs, "_SORT_ROWS", 3)
    groups = np.array([0, 0, 1, 1, 1, 1, 1, 2, 3, 3], dtype=np.int32)
    assert _ids._group_cuts(groups) == [0, 7, 10]
    monkeypatch.setattr(_pairs, "_SORT_ROWS", 2)
    assert _ids._group_cuts(groups) == [0, 2, 7, 8, 10]
    assert _ids._group_cuts(np.array([0, 1, 0], dtype=np.int32)) is None


def test_hash_matches_refuses_a_table_holding_a_hash_twice():
    docs = np.array([1, 2, 3], dtype=np.uint64)
    groups = np.zeros(3, dtype=np.int32)
    table = _ids.pair_hashes(docs, groups)
    rows, at = _ids.hash_matches(docs, groups, table[[2, 0]])
    assert rows.tolist() == [0, 2] and at.tolist() == [1, 0]
    assert _ids.hash_matches(docs, groups, table[[0, 0]]) is None


def test_descending_key_orders_as_float32_descending():
    scores = np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, 1e-40, -1e-40, 3e38, 1e300, 2.0000001, 2.0])
    key = _ids._descending_key(scores)
    with np.errstate(over="ignore"):
        s32 = scores.astype(np.float32) + np.float32(0)
    for i in range(len(scores)):
        for j in range(len(scores)):
            assert (key[i] < key[j]) == (s32[i] > s32[j]), (scores[i], scores[j])
    with np.errstate(over="ignore"):
        same = scores.astype(np.float32)
    before = same.copy()
    _ids._descending_key(same)
    assert np.array_equal(same, before)  # a float32 input is not modified


@pytest.mark.parametrize("packed", [False, True], ids=["arrow", "packed"])
def test_sparse_order_equals_a_full_sort(packed):
    rng = np.random.default_rng(5)
    groups = np.repeat(np.arange(50, dtype=np.int32), 40)
    scores = np.concatenate([np.sort(np.round(rng.normal(0, 1, 40), 1))[::-1] for _ in range(50)])
    docs = [f"d{v}" for v in rng.integers(0, 10**6, len(scores))]
    column = _ids.Packed(*_packed(docs)) if packed else _ids.as_strings(docs)
    order = _ids.trec_order_sparse(groups, scores, column)
    assert order.order is None and len(order.at)  # sorted, with ties: only those are reordered
    shuffled = rng.permutation(len(scores))
    full = _ids.trec_order(groups[shuffled], scores[shuffled], _ids.as_strings([docs[i] for i in shuffled]))
    expected = shuffled[full]
    assert order.full(len(scores)).tolist() == expected.tolist()
    positions = np.arange(len(scores))
    assert order.rows(positions).tolist() == expected.tolist()
    assert order.gather(positions).tolist() == expected.tolist()


ORDERS = {  # (groups, scores): rows to put in trec_eval's order (group, score descending, ID descending)
    "grouped, unsorted, ties": ([0, 0, 0, 1, 1, 2, 2, 2, 2], [1, 3, 3, 2, 2, 5, 1, 5, 5]),
    "grouped, one group": ([0, 0, 0, 0], [1, 2, 2, 3]),
    "a group in two places": ([0, 1, 0, 1, 0], [1, 2, 3, 2, 1]),
    "grouped, groups descending": ([2, 2, 1, 0, 0], [1, 2, 3, 2, 2]),
    "one row": ([0], [1]),
}


@pytest.mark.parametrize(("groups", "scores"), ORDERS.values(), ids=ORDERS.keys())
@pytest.mark.parametrize("stretch", [1, 2, 3, 1 << 16])
@pytest.mark.parametrize("packed", [False, True], ids=["arrow", "packed"])
def test_full_order_sorts_stretches_of_whole_groups(groups, scores, stretch, packed, monkeypatch):
    monkeypatch.setattr(_order, "_ORDER_ROWS", stretch)
    docs = [f"d{i % 3}{i}" for i in range(len(groups))]
    column = _cell_column(docs) if packed else _ids.as_strings(docs)
    order = _ids.trec_order(np.array(groups, dtype=np.int32), np.array(scores, dtype=float), column)
    expected = sorted(
        range(len(groups)), key=lambda i: (groups[i], -scores[i], [-b for b in docs[i].encode()])
    )
    assert order.tolist() == expected


def _packed(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    raw = [v.encode() for v in values]
    offsets = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in raw], out=offsets[1:])
    return offsets, np.frombuffer(b"".join(raw), dtype=np.uint8)


def _cell_column(values: list[str]) -> _ids.Packed:
    """The column held as cells (one row of 8-byte words a string, zero past its end), as the reader does."""
    raw = [v.encode() for v in values]
    width = max((len(r) for r in raw), default=0) + 7 >> 3 << 3
    cells = np.frombuffer(b"".join(r.ljust(width, b"\0") for r in raw), dtype=np.uint8)
    return _ids.Packed.from_cells(cells.reshape(len(raw), width), np.array([len(r) for r in raw]))


@pytest.mark.parametrize("held", ["bytes", "cells"])
def test_packed_column_matches_arrow(held):
    values = ["a", "", "héllo", "x" * 600, "b"]
    column = (lambda: _ids.Packed(*_packed(values))) if held == "bytes" else (lambda: _cell_column(values))
    assert column().to_arrow().to_pylist() == values
    assert column().take(np.array([4, 0, 3])).to_arrow().to_pylist() == ["b", "a", "x" * 600]
    assert column().values(np.array([2, 1])) == ["héllo", ""]
    assert column().raw(np.array([3])) == [b"x" * 600]
    assert _ids.hash_strings(column()).tolist() == _ids.hash_strings(_ids.as_strings(values)).tolist()
    assert column().data.tobytes() == "".join(values).encode()


def test_the_plain_reader_never_packs_the_ids_it_scores():
    """A run's IDs stay cells through scoring: only the rows compared with judgments are packed."""
    qrels_text, run_text = _random_files(2)
    run = read_run(io.StringIO(run_text))
    evaluate(read_qrels(io.StringIO(qrels_text)), run, MEASURES)
    assert run._docs()._cells is not None
    assert run.doc_id.to_pylist() == [line.split()[2] for line in run_text.splitlines()]


EQUAL_AT = {
    "equal": ("d17", "d17", True),
    "same length": ("d17", "d18", False),
    "first byte": ("x17", "d17", False),
    "prefix": ("d1", "d17", False),
    "longer": ("d170", "d17", False),
    "both empty": ("", "", True),
    "one empty": ("", "d", False),
    "long equal": ("y" * 600, "y" * 600, True),
    "long last byte": ("y" * 599 + "a", "y" * 600, False),
}


@pytest.mark.parametrize(
    ("packed", "held"),
    [(False, "bytes"), (True, "bytes"), (False, "cells"), (True, "cells"), ("cells", "cells")],
    ids=["arrow-right", "packed-both", "arrow-right-cells", "packed-both-cells", "cells-both"],
)
def test_equal_at_compares_ids_exactly(packed, held):
    """Pairs of every kind at once, among other rows (the packed-packed comparison is vectorized; two
    columns of cells of different widths compare cells)."""
    left = ["pad"] + [a for a, _, _ in EQUAL_AT.values()] + ["tail"]
    right = ["tail"] + [b for _, b, _ in EQUAL_AT.values()][::-1]
    rows = np.arange(1, len(EQUAL_AT) + 1)
    at = np.arange(len(EQUAL_AT), 0, -1)
    if packed == "cells":
        right.append("w" * 700)  # a wider column than the left one
        b = _cell_column(right)
    else:
        b = _ids.Packed(*_packed(right)) if packed else _ids.as_strings(right)
    a = _ids.Packed(*_packed(left)) if held == "bytes" else _cell_column(left)
    got = _ids.equal_at(a, rows, b, at)
    assert dict(zip(EQUAL_AT, got.tolist(), strict=True)) == {k: v[2] for k, v in EQUAL_AT.items()}
    assert _ids.equal_at(a, rows[:0], b, at[:0]).tolist() == []


def test_rows_keep_query_codes_and_rebuild_strings_on_demand(no_plain):
    run = read_run(io.StringIO(PLAIN_RUNS["queries interleaved"]))
    assert run._query_id is None  # the reader kept the codes only
    assert run.query_id.to_pylist() == ["q2", "q1", "q2", "q1"]
    assert len(run) == 4 and run.query_ids == ["q2", "q1"]


def test_chunked_take_and_bincount():
    import pyarrow as pa

    column = pa.chunked_array([pa.array(["a", "b"]), pa.array([], pa.string()), pa.array(["c", "d", "e"])])
    assert _ids.take(column, np.array([4, 0, 2, 2])).to_pylist() == ["e", "a", "c", "c"]
    codes = np.random.default_rng(0).integers(0, 9, size=600_000).astype(np.int32)
    assert _ids.bincount(codes, 3).tolist() == np.bincount(codes, minlength=3).tolist()


def test_scoring_plain_files_never_imports_pyarrow(tmp_path):
    qrels_text, run_text = _random_files(4)
    (tmp_path / "q").write_text(qrels_text)
    (tmp_path / "r").write_text(run_text)
    qrels, run = str(tmp_path / "q"), str(tmp_path / "r")
    code = (
        "import sys; from metrics import evaluate, read_qrels, read_run, render, parse_measures; "
        f"r = evaluate(read_qrels({qrels!r}), read_run({run!r}), {MEASURES!r}); "
        "render.score_output([r], parse_measures(" + repr(MEASURES) + "), fmt='csv', per_query=False); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'pandas')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_rank_run_fallback_lookup_equals_the_hashed_one(monkeypatch):
    qrels_text, run_text = _random_files(6)
    qrels, run = read_qrels(io.StringIO(qrels_text)), read_run(io.StringIO(run_text))
    hashed = ranking.rank_run(qrels, run)
    monkeypatch.setattr(_ids, "hash_matches", lambda *args: None)
    exact = ranking.rank_run(qrels, run)
    for name in ("qidx", "pos", "grade", "returned", "row"):
        assert getattr(hashed, name).tolist() == getattr(exact, name).tolist(), name
    assert Qrels and hashed.query_ids == exact.query_ids


@pytest.mark.parametrize(
    ("block", "end"),
    [(b"", 0), (b"a\nb\n", 3), (b"a\nb\n", 4), (b"\n\n\n", 2), (b"x" * 100 + b"\n", 101), (b"a\r\nb", 4)],
)
def test_newlines_counts_as_bytes_count(block, end):
    """The line numbering of the block scan (`_lines._newlines`, numpy's compare) is `bytes.count`'s."""
    assert _lines._newlines(block, end) == block.count(b"\n", 0, end)
