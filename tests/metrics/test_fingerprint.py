"""metrics.fingerprint: hashes (file, partitions, canonical qrels and run text), the measures as parsed specs,
the semantics in force, and the Markdown and HTML sections (escaped; no fence an ID can close)."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import Qrels, Run, _ids, read_qrels
from metrics.compare import compare
from metrics.errors import QrelForgeError
from metrics.fingerprint import (
    FileDigests,
    file_sha256,
    fingerprint,
    fingerprint_html,
    fingerprint_markdown,
    qrels_sha256,
    run_sha256,
    semantics,
    tool_version,
)
from metrics.formats import read_run, write_qrels

ROOT = Path(__file__).resolve().parents[2]
QRELS = {"q2": {"D2": 1}, "q1": {"D9": 0, "D1": 2}}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_qrels_hash_is_that_of_the_sorted_trec_text_a_release_exports():
    text = io.StringIO()
    q = Qrels.from_dict(QRELS)
    write_qrels(q, text)
    assert qrels_sha256(q) == _sha("q1 0 D1 2\nq1 0 D9 0\nq2 0 D2 1\n")
    assert qrels_sha256(q) == _sha("".join(sorted(text.getvalue().splitlines(keepends=True))))


def test_a_run_hashes_by_its_ranked_content_not_its_file_layout(tmp_path):
    shuffled = tmp_path / "a.trec"
    shuffled.write_text("q1 Q0 D2 2 0.5 tagA\nq1 Q0 D1 1 0.9 tagA\n")
    other_tag = tmp_path / "b.trec"
    other_tag.write_text("q1 Q0 D1 1 0.9 tagB\nq1 Q0 D2 2 0.5 tagB\n")
    assert run_sha256(read_run(shuffled)) == run_sha256(read_run(other_tag)) == _sha("q1 D1 0.9\nq1 D2 0.5\n")
    assert file_sha256(shuffled) == _sha(shuffled.read_text()) != file_sha256(other_tag)


def test_a_partitioned_run_hashes_its_files_in_name_order(tmp_path):
    (tmp_path / "p2.trec").write_text("q2 Q0 D1 1 1 t\n")
    (tmp_path / "p1.trec").write_text("q1 Q0 D1 1 1 t\n")
    lines = f"{_sha('q1 Q0 D1 1 1 t' + chr(10))}  p1.trec\n{_sha('q2 Q0 D1 1 1 t' + chr(10))}  p2.trec\n"
    assert file_sha256(tmp_path) == _sha(lines) == file_sha256(str(tmp_path / "p*.trec"))
    with pytest.raises(QrelForgeError) as info:
        file_sha256(str(tmp_path / "none*.trec"))
    assert (
        str(info.value)
        == f"{str(tmp_path / 'none*.trec')!r} is not a file, nor a directory or glob holding files"
    )


@pytest.mark.parametrize(
    "measures, key, expected",
    [
        (["MAP", "P@10"], "undefined_without_relevant_documents", ["AP"]),
        (
            ["R@5", "nDCG(gain=exp)@10", "RR"],
            "undefined_without_relevant_documents",
            ["R@5", "nDCG(gain=exp)@10"],
        ),
        (["P(judged_only=True)@5", "P@5"], "judged_only", ["P(judged_only=True)@5"]),
        (["P(rel=2)@5", "AP"], "relevance_level", {"P(rel=2)@5": 2, "AP": 1}),
        (["AP", "GMAP"], "aggregate", {"AP": "mean", "GMAP": "geometric"}),
    ],
)
def test_semantics(measures, key, expected):
    assert semantics(measures)[key] == expected


def test_the_fingerprint_names_its_inputs(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 D1 1 0.9 mine\n")
    fp = fingerprint(
        QRELS,
        {"file": str(path), "memory": {"q1": ["D1"]}},
        ["P(rel=2)@5"],
        release=3,
        command="compare",
        parameters={"seed": 0},
        rules={"strict": True},
    )
    assert fp["tool"] == {"name": "qrelforge", "version": tool_version()}
    assert (fp["command"], fp["parameters"], fp["measures"]) == ("compare", {"seed": 0}, ["P(rel=2)@5"])
    assert fp["qrels"] == {
        "source": "qrels",
        "release": 3,
        "file": None,
        "sha256": None,
        "content_sha256": qrels_sha256(Qrels.from_dict(QRELS)),
    }
    assert fp["runs"] == [
        {"name": "file", "file": str(path), "sha256": _sha(path.read_text())},
        {"name": "memory", "file": None, "content_sha256": run_sha256(Run.from_dict({"q1": ["D1"]}))},
    ]
    assert fp["semantics"]["strict"] is True and "queries" not in fp


@pytest.mark.parametrize("name", ["run```x", "a````b"])
def test_markdown_fence_is_longer_than_any_backticks_inside(name):
    fp = fingerprint(QRELS, {name: {"q1": ["D1"]}}, ["RR"])
    text = fingerprint_markdown(fp)
    fence = text.split("\n")[2].removesuffix("json")
    assert text.startswith("## Fingerprint\n\n") and len(fence) == name.count("`") + 1
    assert text.endswith(f"\n{fence}\n") and name in text


def test_html_section_escapes_ids():
    fp = fingerprint(QRELS, {"<script>x</script>": {"q1": ["D1"]}}, ["RR"])
    html = fingerprint_html(fp)
    assert (
        "<script>" not in html and "&lt;script&gt;" in html and html.startswith('<section id="fingerprint">')
    )


def test_a_compare_report_carries_its_fingerprint_in_json_markdown_and_html():
    report = compare(QRELS, {"a": {"q1": ["D1"], "q2": []}, "b": {"q1": [], "q2": ["D2"]}}, ["RR"])
    assert "fingerprint" not in report.to_dict() and "Fingerprint" not in report.to_markdown()
    report.fingerprint = fingerprint(QRELS, {"a": {}, "b": {}}, ["RR"], command="compare")
    assert report.to_dict()["fingerprint"] == report.fingerprint
    assert report.to_markdown().endswith(fingerprint_markdown(report.fingerprint))
    assert fingerprint_html(report.fingerprint) + "\n</body></html>\n" in report.to_html()


# ----------------------------------------------------------------------------- the qrels hash, pinned
# Digests computed with the implementation before `metrics._canonical` (Python tuples sorted, one f-string
# line per row, the IDs taken from Arrow) on the same inputs: the hash recorded in reports must not change.
def _reference_text(q: Qrels) -> bytes:
    """The canonical text as the old implementation wrote it: the specification."""
    rows = sorted(zip(q.query_id.to_pylist(), q.doc_id.to_pylist(), q.relevance.tolist(), strict=True))
    return "".join(f"{qid} 0 {doc} {grade}\n" for qid, doc, grade in rows).encode()


UNICODE = {
    "é": {"日本": 2, "a": 1, "Z": 0, "\U0001f600": 3, "e\u0301": 1, "\uffff": 2, "\U00010000": 1},
    "e": {"ä": -1, "a\x00": 1, "a": 2, "a\x00b": 0, "a\x01": 3, "ab": 1, "A": 5},
    "\U0001d11e": {"x": 1},
    "ß": {"ss": 2, "\u00df": 1},
}
LONG = {
    "q" * 40: {"d" * 512: 1, "d" * 511 + "c": 2, "d" * 300: 0, "d" * 8: 1, "d" * 9: 2, "d" * 7: 3},
    "q" * 39 + "r": {"d" * 64: 1, "d" * 63 + "\u00e9": 2},
}


def _generated(n_queries: int, per_query: int) -> list[tuple[str, str, int]]:
    """Rows from sha256 of counters (no random generator whose stream could change): queries out of order,
    numeric IDs whose string and numeric orders differ, grades -1..3, (query, document) pairs unique."""
    rows, seen = [], set()
    for q in range(n_queries):
        for j in range(per_query):
            h = hashlib.sha256(f"{q}:{j}".encode()).digest()
            qid, doc = str(100_000 + (q * 7919) % n_queries), str(int.from_bytes(h[:4], "big") % 10_000_000)
            if (qid, doc) not in seen:
                seen.add((qid, doc))
                rows.append((qid, doc, h[4] % 4 - (1 if h[5] == 0 else 0)))
    return rows


def _qrels_file(tmp_path, name: str, text: str) -> Qrels:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return read_qrels(path)


GENERATED = _generated(300, 60)
PINNED = {
    # plain TREC files: the numpy reader's packed IDs, or Arrow's reader (64-bit grades)
    "numeric IDs, 64-bit grades": (
        lambda tmp: _qrels_file(
            tmp,
            "numeric.qrels",
            "10 0 9 1\n9 0 10 2\n10 0 100 0\n2 0 1 -3\n10 0 11 4611686018427387904\n"
            "9 0 9 -9223372036854775808\n1 0 1 1\n",
        ),
        "efbce2856aeddc7130f9fa915c5f9dcb31aeea14ae92b66c592c83c56e21cced",
    ),
    "IDs prefixes of others": (
        lambda tmp: _qrels_file(
            tmp, "prefix.qrels", "q1x 0 d 1\nq1 0 d 1\nq10 0 d 2\nq1 0 d0 0\nq1 0 d! 3\nq1 0 D 1\n"
        ),
        "e574b4de20ce6649aedd117e02477e258c2562b625e05feb7da0425045165834",
    ),
    "unicode file": (
        lambda tmp: _qrels_file(
            tmp,
            "unicode.qrels",
            "".join(
                f"{q} 0 {d} {g}\n" for q, ds in UNICODE.items() for d, g in ds.items() if "\x00" not in d
            ),
        ),
        "9f961fa7149cf221f5a6272bf0501d7ea6a3842ad9bab09913c98264bad29325",
    ),
    "BEIR TSV": (
        lambda tmp: _qrels_file(
            tmp, "qrels.tsv", "query-id\tcorpus-id\tscore\nq2\tdoc-b\t1\nq1\tdoc-a\t2\nq1\tdoc-\u00e9\t0\n"
        ),
        "c809571d6d6030d3773d4a3f6779d6ac0acd52cbfbf11264a9a2e002c0264a46",
    ),
    # mappings, frames and Arrow columns
    "unicode, astral and NUL-ended IDs": (
        lambda tmp: Qrels.from_dict(UNICODE),
        "3f8d7efbd39a3e2598f07f05617d7c9664c123573e8c2da95bb51aef3bfdeac6",
    ),
    "IDs up to 512 bytes": (
        lambda tmp: Qrels.from_dict(LONG),
        "5bbf76f4777fd9ef25642d829fdeb31bcdf3a662bfadb6e6e24ef5c8a86f9cb4",
    ),
    "float grades in a DataFrame": (
        lambda tmp: Qrels.from_dataframe(
            pd.DataFrame(
                {
                    "query_id": ["q2", "q1", "q1", "q3"],
                    "doc_id": ["b", "\u00e9t\u00e9", "a", "b"],
                    "relevance": [2.0, 1.0, -1.0, 0.0],
                }
            )
        ),
        "b10d76406a54f4c3adb81948f3cf31fc9ed5201fe3f833621d7ff2f36285d721",
    ),
    "chunked Arrow columns": (
        lambda tmp: Qrels(
            pa.chunked_array([["q2", "q1"], ["q1", "q\u00e9", "q2"]]),
            pa.chunked_array([["d1", "d2"], ["d1", "d3", "d\u00e9"]]),
            [1, 2, 0, 3, 1],
        ),
        "31aa4f8c56ed295414c496a5945907890d48d05a422a604190ca3669ebd1e9db",
    ),
    "a duplicate pair, ordered by grade": (
        lambda tmp: Qrels(["q1", "q1", "q0", "q1"], ["d", "d", "d", "c"], [2, 1, 0, 1], _validated=True),
        "da7e041763f1f15a53fb8f3c19c19b7f37b2dcfeaec5a255d5d01c59ef2ca8b8",
    ),
    "one row": (
        lambda tmp: Qrels.from_dict({"q": {"d": 0}}),
        "309e95ad28ca8ab26fa0c5a8a063b99a6bd270284fc235e971e90cda7a63eb29",
    ),
    "17 938 rows read from a file": (
        lambda tmp: _qrels_file(tmp, "generated.qrels", "".join(f"{q} 0 {d} {g}\n" for q, d, g in GENERATED)),
        "c798709179a11b5835ff59b8258676f6d3e2b3b5c15d3d7c66b70ebcba7c644c",
    ),
    "the same rows as columns": (
        lambda tmp: Qrels(*(list(column) for column in zip(*GENERATED, strict=True))),
        "c798709179a11b5835ff59b8258676f6d3e2b3b5c15d3d7c66b70ebcba7c644c",
    ),
}


@pytest.mark.parametrize("make, digest", PINNED.values(), ids=PINNED.keys())
def test_the_qrels_hash_is_the_one_reports_recorded(tmp_path, make, digest):
    qrels = make(tmp_path)
    assert qrels_sha256(qrels) == digest
    assert hashlib.sha256(_reference_text(qrels)).hexdigest() == digest


def test_the_pinned_cases_cover_packed_and_arrow_ids(tmp_path):
    kinds = {type(make(tmp_path)._docs()).__name__ for make, _ in PINNED.values()}
    assert kinds == {"Packed", "StringArray", "ChunkedArray"}


_ID = st.text(
    st.characters(
        blacklist_categories=("Cs",), blacklist_characters=" \t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    ),
    min_size=1,
    max_size=20,
) | st.sampled_from(
    ["a", "a\x00", "a\x00\x00", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "é" * 9, "x" * 70]
)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["q1", "q10", "q2", "é", "Q"]) | _ID,
        st.dictionaries(_ID, st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 3), min_size=1, max_size=12),
        min_size=1,
        max_size=6,
    )
)
def test_the_qrels_hash_equals_the_reference_on_any_ids(mapping):
    qrels = Qrels.from_dict(mapping)
    assert qrels_sha256(qrels) == hashlib.sha256(_reference_text(qrels)).hexdigest()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["q1", "q10", "q2", "7", "10"]),
            st.text("0123456789abcXYZ_-.", min_size=1, max_size=19),
            st.integers(-5, 5),
        ),
        min_size=1,
        max_size=40,
        unique_by=lambda row: row[:2],
    )
)
def test_the_qrels_hash_of_a_plain_file_equals_the_reference(rows):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "q.trec"
        path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
        packed, reference = read_qrels(path), read_qrels(path)
    assert isinstance(packed._docs(), _ids.Packed)
    assert qrels_sha256(packed) == hashlib.sha256(_reference_text(reference)).hexdigest()


def test_hashing_plain_qrels_imports_neither_pyarrow_nor_pandas(tmp_path):
    path = tmp_path / "q.trec"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in GENERATED))
    code = (
        "import sys; from metrics import read_qrels; from metrics.fingerprint import qrels_sha256; "
        f"print(qrels_sha256(read_qrels({str(path)!r}))); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'pandas')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == [PINNED["17 938 rows read from a file"][1], "[]"]


# ------------------------------------------------------------------------------------- background digests
def test_file_digests_equal_file_sha256_and_raise_on_the_callers_thread(tmp_path):
    (tmp_path / "a.trec").write_text("q1 Q0 D1 1 1 t\n")
    (tmp_path / "b.trec").write_text("q2 Q0 D1 1 1 t\n")
    given = [str(tmp_path / "a.trec"), str(tmp_path), str(tmp_path / "*.trec"), str(tmp_path / "none")]
    digests = FileDigests(given)
    for path in given[:3]:
        assert digests(path) == file_sha256(path)
    assert digests(tmp_path / "b.trec") == file_sha256(tmp_path / "b.trec")  # not given: hashed on call
    with pytest.raises(QrelForgeError) as info:
        digests(given[3])
    assert str(info.value) == f"{given[3]!r} is not a file, nor a directory or glob holding files"
