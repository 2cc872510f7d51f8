"""metrics.fingerprint: hashes (file, partitions, canonical qrels and run text), the measures as parsed specs,
the semantics in force, and the Markdown and HTML sections (escaped; no fence an ID can close)."""

from __future__ import annotations

import hashlib
import io

import pytest

from metrics import Qrels, Run
from metrics.compare import compare
from metrics.errors import QrelForgeError
from metrics.fingerprint import (
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
