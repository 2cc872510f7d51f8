"""Randomized cross-checks of every ranking measure against pytrec_eval and ir_measures, per query.

The data mixes score ties (broken by document ID), scores equal only in single precision, graded and
negative labels, unjudged documents, queries missing from the run or from the qrels, and queries without any
relevant document. Where our semantics deliberately differ (a measure that divides by the number of relevant
documents is undefined for a query without any, where trec_eval says 0), the test asserts the difference
itself.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import pytrec_eval

from metrics import evaluate

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import ir_measures

SEEDS = range(12)
TREC = {  # our name -> (pytrec_eval measure family, key in its output)
    "P@{k}": ("P", "P_{k}"),
    "R@{k}": ("recall", "recall_{k}"),
    "AP": ("map", "map"),
    "AP@{k}": ("map_cut", "map_cut_{k}"),
    "RR": ("recip_rank", "recip_rank"),
    "nDCG": ("ndcg", "ndcg"),
    "nDCG@{k}": ("ndcg_cut", "ndcg_cut_{k}"),
    "R-Prec": ("Rprec", "Rprec"),
    "Success@{k}": ("success", "success_{k}"),
}
CUTOFFS = (5, 10)  # cutoffs pytrec_eval computes by default for every family


def random_case(seed: int):
    """Qrels {qid: {doc: grade}} and run {qid: {doc: score}} with every awkward case in it."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i:03d}" for i in range(60)]
    qrels, run = {}, {}
    for q in range(25):
        qid = f"q{q}"
        judged = rng.choice(docs, size=rng.integers(1, 25), replace=False)
        grades = rng.choice([-1, 0, 0, 1, 2, 3], size=len(judged)) if q % 7 else np.zeros(len(judged), int)
        if q % 11 != 5:  # some queries exist only in the run
            qrels[qid] = {str(d): int(g) for d, g in zip(judged, grades, strict=True)}
        if q % 9 != 4:  # some qrels queries are missing from the run
            retrieved = rng.choice(docs, size=rng.integers(1, 40), replace=False)
            scores = np.round(rng.normal(size=len(retrieved)), 1)  # many exact ties
            scores[::5] = 1.0 + rng.integers(0, 2, size=len(scores[::5])) * 1e-9  # ties only in float32
            run[qid] = {str(d): float(s) for d, s in zip(retrieved, scores, strict=True)}
    return qrels, run


def our_names(rel: int) -> dict[str, tuple[str, str]]:
    tag = "" if rel == 1 else f"(rel={rel})"
    out = {}
    for ours, (family, key) in TREC.items():
        name = (
            ours
            if ours.startswith("nDCG")
            else ours.replace("@", tag + "@", 1)
            if "@" in ours
            else ours + tag
        )
        for k in CUTOFFS if "{k}" in ours else (None,):
            out[name.format(k=k)] = (family, key.format(k=k))
    return out


@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("seed", SEEDS)
def test_matches_pytrec_eval_per_query(seed, rel):
    qrels, run = random_case(seed)
    names = our_names(rel)
    ours = evaluate(qrels, run, list(names)).per_query_dict()
    families = {family for family, _ in names.values()}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, families, relevance_level=rel).evaluate(run)
    compared = 0
    for qid, values in theirs.items():
        for name, (_, key) in names.items():
            if ours[qid][name] is None:  # no relevant document: undefined for us, 0 for trec_eval
                assert values[key] == 0.0, (qid, name)
                assert not any(g >= (1 if name.startswith("nDCG") else rel) for g in qrels[qid].values())
            else:
                assert ours[qid][name] == pytest.approx(values[key], abs=1e-9), (qid, name)
                compared += 1
    assert compared > 200


@pytest.mark.parametrize("seed", SEEDS)
def test_missing_queries_score_zero_and_extra_are_ignored(seed):
    qrels, run = random_case(seed)
    result = evaluate(qrels, run, ["P@5", "AP", "RR", "nDCG@10", "R@10"])
    missing = sorted(set(qrels) - set(run))
    assert sorted(result.missing_queries) == missing
    assert sorted(result.extra_queries) == sorted(set(run) - set(qrels))
    per_query = result.per_query_dict()
    for qid in missing:
        defined = any(g >= 1 for g in qrels[qid].values())
        assert per_query[qid]["P@5"] == 0.0 and per_query[qid]["RR"] == 0.0
        assert per_query[qid]["AP"] == (0.0 if defined else None)


IR_MEASURES = [
    "P@5",
    "P(rel=2)@10",
    "R@10",
    "AP",
    "AP(rel=2)",
    "RR",
    "RR@5",
    "nDCG@10",
    "nDCG",
    "R-Prec",
    "Success@5",
    "Judged@10",
]


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_matches_ir_measures_per_query(seed):
    qrels, run = random_case(seed)
    # Judged@k: ir_measures breaks score ties by doc ID ascending, trec_eval (and we) descending;
    # untie scores.
    untied = {
        q: {d: s + i * 1e-3 for i, (d, s) in enumerate(sorted(docs.items()))} for q, docs in run.items()
    }
    ours = evaluate(qrels, untied, IR_MEASURES).per_query_dict()
    parsed = [ir_measures.parse_measure(m.replace("R-Prec", "Rprec")) for m in IR_MEASURES]
    compared = 0
    for metric in ir_measures.iter_calc(parsed, qrels, untied):
        name = str(metric.measure).replace("Rprec", "R-Prec")
        mine = ours[metric.query_id][_canonical(name)]
        if mine is not None:
            assert mine == pytest.approx(metric.value, abs=1e-9), (metric.query_id, name)
            compared += 1
    assert compared > 100


def _canonical(name: str) -> str:
    from metrics import parse_measure

    return str(parse_measure(name))


def test_first_rel_and_f1_against_reference_formulas():
    qrels, run = random_case(3)
    result = evaluate(qrels, run, ["FirstRel", "F1@5", "P@5", "R@5"]).per_query_dict()
    for qid, values in result.items():
        ranked = sorted(run.get(qid, {}).items(), key=lambda x: (-np.float32(x[1]), _neg(x[0])))
        ranks = [i + 1 for i, (d, _) in enumerate(ranked) if qrels[qid].get(d, 0) >= 1]
        assert values["FirstRel"] == (ranks[0] if ranks else None)
        p, r = values["P@5"], values["R@5"]
        want = None if r is None else (0.0 if p + r == 0 else 2 * p * r / (p + r))
        assert values["F1@5"] == (pytest.approx(want) if want is not None else None)


def _neg(doc_id: str) -> tuple:
    return tuple(-b for b in doc_id.encode())
