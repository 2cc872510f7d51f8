"""Our numbers against trec_eval's own test expectations (usnistgov/trec_eval, folder test/): 9.0.8's, and
10.0's comment lines and IDs holding ``#``.

The expected files print 4 decimals, so values are compared to half a unit in the last place.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from annotate_app.cli import main
from metrics import evaluate, read_qrels, read_run

PEER = Path(__file__).resolve().parents[3] / "shared" / "peer-tests" / "trec_eval"
if not PEER.is_dir():  # the checkout may sit elsewhere; CI has ../shared next to it
    PEER = Path("/work/shared/peer-tests/trec_eval")

CUTS = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
}
OURS = {
    "P": "P{rel}@{k}",
    "recall": "R{rel}@{k}",
    "map_cut": "AP{rel}@{k}",
    "ndcg_cut": "nDCG@{k}",
    "success": "Success{rel}@{k}",
}


def _measure_map(rel: int) -> dict[str, str]:
    """trec_eval name -> our measure name, for relevance level ``rel``."""
    tag = "" if rel == 1 else f"(rel={rel})"
    names = {"map": f"AP{tag}", "recip_rank": f"RR{tag}", "Rprec": f"R-Prec{tag}", "ndcg": "nDCG"}
    for family, cuts in CUTS.items():
        names.update({f"{family}_{k}": OURS[family].format(rel=tag, k=k) for k in cuts})
    return names


def _expected(name: str) -> dict[tuple[str, str], float]:
    """(trec measure, query or 'all') -> value, for the measures we implement."""
    out = {}
    for line in (PEER / name).read_text().splitlines():
        fields = re.split(r"\s+", line.strip())
        if len(fields) == 3 and re.fullmatch(r"-?\d+\.\d+", fields[2]):
            out[(fields[0], fields[1])] = float(fields[2])
    return out


CASES = [  # expected file, qrels, run, relevance level
    ("out.test.aq", "qrels.test", "results.test", 1),
    ("out.test.aqc", "qrels.test", "results.trunc", 1),
    ("out.test.aql", "qrels.rel_level", "results.test", 2),
]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def case(request):
    expected_file, qrels_file, run_file, rel = request.param
    names = _measure_map(rel)
    result = evaluate(read_qrels(PEER / qrels_file), read_run(PEER / run_file), list(names.values()))
    return _expected(expected_file), names, result


def test_every_per_query_value_matches(case):
    expected, names, result = case
    per_query = result.per_query_dict()
    checked = 0
    for (trec_name, qid), want in expected.items():
        if trec_name in names and qid != "all":
            got = per_query[qid][names[trec_name]]
            assert got is not None, (trec_name, qid)
            assert got == pytest.approx(want, abs=5.01e-5), (trec_name, qid)
            checked += 1
    assert checked > 50


def test_every_mean_matches(case):
    expected, names, result = case
    checked = 0
    for trec_name, ours in names.items():
        if (trec_name, "all") in expected:
            assert result.mean[ours] == pytest.approx(expected[(trec_name, "all")], abs=5.01e-5), trec_name
            checked += 1
    assert checked == len(names)


def test_truncated_run_counts_missing_query_as_zero():
    result = evaluate(read_qrels(PEER / "qrels.test"), read_run(PEER / "results.trunc"), ["AP", "P@10"])
    assert result.counts.missing == 1 and result.missing_queries == ["302"]
    assert result.per_query_dict()["302"] == {"AP": 0.0, "P@10": 0.0}


def test_run_fields_after_the_sixth_are_ignored():
    run = read_run(PEER / "results.trunc")
    assert len(run) == 584 and run.name == "STANDARD"


# ------------------------------------------------------------------------------- trec_eval 10.0's comments
TEN = Path(__file__).resolve().parents[1] / "fixtures" / "trec_eval"  # its small test files (SOURCES.md)
TEN_LARGE = PEER.parent / "cases" / "trec_eval"  # its larger ones, in the shared peer-test folder
# trec_eval's default measures -> ours (num_ret, num_rel and num_rel_ret: trec_eval prints their sum)
DEFAULT_SET = {
    "map": "AP",
    "gm_map": "GMAP",
    "Rprec": "R-Prec",
    "bpref": "Bpref",
    "recip_rank": "RR",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    **{f"P_{k}": f"P@{k}" for k in CUTS["P"]},
}
SUMS = {"num_ret", "num_rel", "num_rel_ret"}


def _printed(text: str) -> dict[str, str]:
    """measure -> value of the 'all' lines of trec_eval's (or `qrelforge score --format trec`'s) output."""
    return {f[0]: f[2] for f in (line.split() for line in text.splitlines()) if len(f) == 3 and f[1] == "all"}


def test_qrels_comment_lines_are_skipped_as_trec_eval_10_does():
    """``qrels.test.with-comments`` is ``qrels.test`` with three ``#`` comment lines and one document ID
    holding a ``#``: the same judgments, that ID kept whole."""
    plain = read_qrels(PEER / "qrels.test").to_dict()
    commented = read_qrels(TEN / "qrels.test.with-comments").to_dict()
    assert commented["301"].pop("CR#93E-1860") == plain["301"].pop("CR93E-1860") == 0
    assert commented == plain


def test_score_prints_what_trec_eval_10_prints_for_its_comment_files(capsys):
    """`qrelforge score --format trec` on trec_eval 10's own files equals its ``out.test`` (the means of
    trec_eval's default measures, to its 4 decimals). Not compared: iprec_at_recall, whose cut-off trec_eval
    10 rounds with lround where ours is 9.0.8's floor(r·R + 0.9)."""
    args = [str(TEN / "qrels.test.with-comments"), str(PEER / "results.test"), "--format", "trec"]
    assert main(["score", *args, *(x for m in DEFAULT_SET.values() for x in ("-m", m))]) == 0
    ours, expected = _printed(capsys.readouterr().out), _printed((TEN / "out.test").read_text())
    num_q = int(ours["num_q"])
    assert (ours["runid"], num_q) == (expected["runid"], int(expected["num_q"])) == ("STANDARD", 3)
    for trec_name, name in DEFAULT_SET.items():
        got = f"{round(float(ours[name]) * num_q)}" if trec_name in SUMS else ours[name]
        assert got == expected[trec_name], trec_name


def test_ids_holding_a_hash_read_as_trec_eval_10_reads_them():
    """The TREC 2024 RAG files of trec_eval 10's tests (``doc_00_880019750#4_1633802806``: every ID holds a
    ``#``) against its ``out.comment.test``. trec_eval averages a query without relevant documents as 0; ours
    leaves it out of the means of the measures it leaves undefined, so those are compared as mean·n/num_q
    (GMAP: its geometric mean with trec_eval's floor of 0.00001 for each)."""
    qrels = read_qrels(TEN_LARGE / "qrels.comment.test")
    run = read_run(TEN_LARGE / "results.comment.test")
    expected = _printed((TEN / "out.comment.test").read_text())
    result = evaluate(qrels, run, list(DEFAULT_SET.values()))
    num_q = result.counts.evaluated
    assert (run.name, num_q, len(run), len(qrels)) == ("comment.test", int(expected["num_q"]), 30100, 5890)
    for trec_name, name in DEFAULT_SET.items():
        mean, n = result.mean[name], result.n[name]
        if name == "GMAP":  # a geometric mean: trec_eval's missing queries count as log(0.00001)
            value = math.exp((n * math.log(mean) + (num_q - n) * math.log(1e-5)) / num_q)
        else:
            value = mean * n * (1 if trec_name in SUMS else 1 / num_q)
        assert value == pytest.approx(float(expected[trec_name]), abs=5.01e-5), trec_name


def test_iprec_on_the_comment_files_equals_pytrec_eval_per_query():
    """Interpolated precision on files whose queries' rows do not come in the order of their codes (these
    files once raised IndexError). trec_eval 10 rounds the recall levels differently (``lround``), so the
    oracle is pytrec_eval, trec_eval 9's rule, which ours follows."""
    import pytrec_eval

    qrels = read_qrels(TEN_LARGE / "qrels.comment.test")
    run = read_run(TEN_LARGE / "results.comment.test")
    levels = {"0.00": "IPrec@0", "0.10": "IPrec@0.1", "0.50": "IPrec@0.5", "1.00": "IPrec@1"}
    result = evaluate(qrels, run, list(levels.values()))
    oracle = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), {"iprec_at_recall"}).evaluate(run.to_dict())
    judged = result.per_query.dropna().index
    assert len(judged) == 30
    for level, name in levels.items():
        ours = result.per_query[name].loc[judged]
        assert ours.to_dict() == pytest.approx({q: oracle[q][f"iprec_at_recall_{level}"] for q in judged})
