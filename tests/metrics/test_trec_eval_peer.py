"""Our numbers against trec_eval 9.0.8's own test expectations (usnistgov/trec_eval, folder test/).

The expected files print 4 decimals, so values are compared to half a unit in the last place.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
