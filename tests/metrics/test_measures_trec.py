"""The trec_eval, gdeval and ir_measures measures beyond the core ones, checked per query against their
references on randomized collections (ties, graded and negative labels, unjudged documents, queries missing
from the run or from the qrels, queries without relevant documents).

References: trec_eval 9.0.8 through pytrec_eval (Bpref, infAP, set_P, set_recall, set_F, num_ret, num_rel,
num_rel_ret, gm_map, iprec_at_recall, ndcg with gains, and ``-J`` for the judged-only variants, as
ir_measures' pytrec_eval provider passes ``judged_only``); gdeval.pl through ir_measures' gdeval provider
(ERR@k). No RBP provider of ir_measures is installed here (trectools and cwl_eval are missing), so RBP and its
residual are checked against the definition (Moffat & Zobel 2008), one document at a time.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import pytrec_eval
from test_oracles import _neg, random_case

from metrics import evaluate, parse_measure
from metrics.errors import MeasureError

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import ir_measures

SEEDS = range(12)
LEVELS = [i / 10 for i in range(11)]  # pytrec_eval's default iprec_at_recall levels
TREC = {  # our name -> pytrec_eval key; the family is the key without a cutoff suffix
    "Bpref{tag}": "bpref",
    "infAP{tag}": "infAP",
    "SetP{tag}": "set_P",
    "SetR{tag}": "set_recall",
    "SetF{tag}": "set_F",
    "NumRet": "num_ret",
    "NumRel{tag}": "num_rel",
    "NumRelRet{tag}": "num_rel_ret",
    **{f"IPrec{{tag}}@{level:g}": f"iprec_at_recall_{level:.2f}" for level in LEVELS},
}
FAMILIES = {"bpref", "infAP", "set_P", "set_recall", "set_F", "num_ret", "num_rel", "num_rel_ret"}


def names(rel: int, *, judged_only: bool = False) -> dict[str, str]:
    params = [f"rel={rel}"] * (rel != 1) + ["judged_only=True"] * judged_only
    tag = f"({','.join(params)})" if params else ""
    return {ours.format(tag=tag): key for ours, key in TREC.items()}


def trec_eval(qrels, run, families, *, rel=1, judged_only=False) -> dict:
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, families, relevance_level=rel, judged_docs_only_flag=judged_only
    )
    return evaluator.evaluate(run)


def compare(ours: dict, theirs: dict, mapping: dict[str, str], qrels: dict, rel: int) -> int:
    """Assert equality per query; where ours is None (no relevant document) trec_eval says 0."""
    compared = 0
    for qid, values in theirs.items():
        for name, key in mapping.items():
            mine = ours[qid][name]
            if math.isnan(values[key]):  # iprec_at_recall divides 0 by 0 when nothing was returned
                assert key.startswith("iprec") and values["num_ret"] == 0 and mine in (0.0, None)
            elif mine is None:
                assert values[key] == 0.0, (qid, name)
                assert not any(g >= rel for g in qrels[qid].values()), (qid, name)
            else:
                assert mine == pytest.approx(values[key], abs=1e-9), (qid, name, mine, values[key])
                compared += 1
    return compared


@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("seed", SEEDS)
def test_trec_eval_measures_match_pytrec_eval_per_query(seed, rel):
    qrels, run = random_case(seed)
    mapping = names(rel)
    ours = evaluate(qrels, run, list(mapping)).per_query_dict()
    theirs = trec_eval(qrels, run, FAMILIES | {"iprec_at_recall"}, rel=rel)
    assert compare(ours, theirs, mapping, qrels, rel) > 150


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_judged_only_variants_match_trec_eval_dash_j(seed):
    qrels, run = random_case(seed)
    mapping = {
        **{k: v for k, v in names(1, judged_only=True).items() if not k.startswith(("NumRel(", "NumRet"))},
        "NumRet(judged_only=True)": "num_ret",
        "P(judged_only=True)@5": "P_5",
        "R(judged_only=True)@10": "recall_10",
        "AP(judged_only=True)": "map",
        "RR(judged_only=True)": "recip_rank",
        "nDCG(judged_only=True)@10": "ndcg_cut_10",
        "R-Prec(judged_only=True)": "Rprec",
        "Success(judged_only=True)@5": "success_5",
    }
    ours = evaluate(qrels, run, list(mapping)).per_query_dict()
    families = FAMILIES | {
        "iprec_at_recall",
        "P",
        "recall",
        "map",
        "recip_rank",
        "ndcg_cut",
        "Rprec",
        "success",
    }
    theirs = trec_eval(qrels, run, families, judged_only=True)
    assert compare(ours, theirs, mapping, qrels, 1) > 300
    # The condensed list is not the full one: values move.
    plain = [str(parse_measure(name)(judged_only=False)) for name in mapping]
    full = evaluate(qrels, run, plain).per_query_dict()
    moved = sum(full[q][p] != ours[q][j] for q in theirs for p, j in zip(plain, mapping, strict=True))
    assert moved > 20


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_judged_only_matches_ir_measures(seed):
    qrels, run = random_case(seed)
    texts = [
        "P(judged_only=True)@5",
        "AP(judged_only=True)",
        "nDCG(judged_only=True)@10",
        "RR(judged_only=True)",
    ]
    ours = evaluate(qrels, run, texts).per_query_dict()
    compared = 0
    for metric in ir_measures.iter_calc([ir_measures.parse_measure(t) for t in texts], qrels, run):
        mine = ours[metric.query_id][str(parse_measure(str(metric.measure)))]
        if mine is not None:
            assert mine == pytest.approx(metric.value, abs=1e-9), (metric.query_id, str(metric.measure))
            compared += 1
    assert compared > 50


@pytest.mark.parametrize("beta", [0.5, 2.0, 3.0])
@pytest.mark.parametrize("seed", SEEDS[:4])
def test_set_f_beta_is_trec_eval_set_f_x(seed, beta):
    qrels, run = random_case(seed)
    name = f"SetF(beta={beta:g})"
    ours = evaluate(qrels, run, [name]).per_query_dict()
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {f"set_F.{beta}"}).evaluate(run)
    assert compare(ours, theirs, {name: "set_F"}, qrels, 1) > 10


@pytest.mark.parametrize("seed", SEEDS)
def test_gmap_is_the_geometric_mean_of_ap_with_trec_eval_floor(seed):
    qrels, run = random_case(seed)
    result = evaluate(qrels, run, ["GMAP", "AP"])
    theirs = trec_eval(qrels, run, {"gm_map", "map"})
    per_query = result.per_query_dict()
    logs = []
    for qid in result.query_ids:
        assert per_query[qid]["GMAP"] == per_query[qid]["AP"]  # per query, GMAP is AP
        if per_query[qid]["AP"] is None:
            continue
        # pytrec_eval reports trec_eval's per-query log(max(AP, MIN_GEO_MEAN)); missing queries score AP 0
        logs.append(theirs[qid]["gm_map"] if qid in theirs else math.log(0.00001))
    assert result.mean["GMAP"] == pytest.approx(math.exp(np.mean(logs)), rel=1e-12)
    assert result.mean["GMAP"] < result.mean["AP"]


def test_gmap_floors_a_zero_ap():
    result = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": ["a"], "q2": ["c"]}, ["GMAP"])
    assert result.mean["GMAP"] == pytest.approx(math.sqrt(1.0 * 0.00001))


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_ndcg_with_a_gain_map_matches_trec_eval_gains(seed):
    qrels, run = random_case(seed)
    gains = {0: 0, 1: 1, 2: 3, 3: 7}
    ours = evaluate(qrels, run, ["nDCG(gain={0:0,1:1,2:3,3:7})@10", "nDCG(gain={0:0,1:1,2:3,3:7})"])
    ours_q = ours.per_query_dict()
    parsed = [ir_measures.nDCG(gains=gains) @ 10, ir_measures.nDCG(gains=gains)]
    compared = 0
    for metric in ir_measures.iter_calc(parsed, qrels, run):
        name = "nDCG(gain={0:0,1:1,2:3,3:7})" + ("@10" if "@10" in str(metric.measure) else "")
        mine = ours_q[metric.query_id][name]
        if mine is not None:
            assert mine == pytest.approx(metric.value, abs=1e-9), (metric.query_id, name)
            compared += 1
    assert compared > 20
    # A grade left out of the map gains its own value: {2:3,3:7} is the same map.
    same = evaluate(qrels, run, ["nDCG(gain={2:3,3:7})@10"]).per_query_dict()
    assert [v["nDCG(gain={2:3,3:7})@10"] for v in same.values()] == [
        v["nDCG(gain={0:0,1:1,2:3,3:7})@10"] for v in ours_q.values()
    ]


def test_a_gain_map_differs_from_exp_only_where_it_should():
    qrels, run = random_case(1)
    ours = evaluate(qrels, run, ["nDCG(gain={1:1,2:3,3:7})@10", "nDCG(gain=exp)@10"]).per_query_dict()
    for row in ours.values():  # 2^g - 1 is 1, 3, 7 for grades 1, 2, 3
        assert row["nDCG(gain={1:1,2:3,3:7})@10"] == row["nDCG(gain=exp)@10"]


# ------------------------------------------------------------------------------------------------ gdeval
def numeric_case(seed: int):
    """Like random_case, with numeric query IDs (gdeval wants them) and no ties only in single precision
    (gdeval compares doubles)."""
    qrels, run = random_case(seed)
    rename = {q: str(100 + int(q[1:])) for q in {*qrels, *run}}
    qrels = {rename[q]: docs for q, docs in qrels.items()}
    run = {rename[q]: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in run.items()}
    return qrels, run


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_err_matches_gdeval(seed):
    qrels, run = numeric_case(seed)
    ours = evaluate(qrels, run, ["ERR@5", "ERR@20"]).per_query_dict()
    compared = 0
    for metric in ir_measures.gdeval.iter_calc([ir_measures.ERR @ 5, ir_measures.ERR @ 20], qrels, run):
        mine = ours[metric.query_id][str(metric.measure)]
        assert mine == pytest.approx(metric.value, abs=6e-6), (metric.query_id, str(metric.measure))  # %.5f
        compared += 1
    assert compared > 20


# --------------------------------------------------------------------------------------------------- RBP
def reference_rbp(grades: list[int | None], p: float, rel: int, k: int | None) -> tuple[float, float]:
    """RBP and its residual one document at a time (Moffat & Zobel 2008, §4): grades in rank order, None
    (or a negative grade) for an unjudged document."""
    depth = len(grades) if k is None else min(k, len(grades))
    value = residual = 0.0
    for i, grade in enumerate(grades[:depth]):
        weight = (1 - p) * p**i
        if grade is not None and grade >= rel:
            value += weight
        if grade is None or grade < 0:
            residual += weight
    return value, residual + p**depth


@pytest.mark.parametrize(("p", "rel", "k"), [(0.8, 1, None), (0.5, 2, None), (0.95, 1, 10), (0.8, 1, 100)])
@pytest.mark.parametrize("seed", SEEDS[:6])
def test_rbp_and_residual_match_the_definition(seed, p, rel, k):
    qrels, run = random_case(seed)
    spec = parse_measure("RBP") @ k if k else parse_measure("RBP")
    rbp = spec(p=p, rel=rel)
    residual = parse_measure("RBPResidual")(p=p) @ k if k else parse_measure("RBPResidual")(p=p)
    ours = evaluate(qrels, run, [rbp, residual]).per_query_dict()
    for qid, judged in qrels.items():
        ranked = sorted(run.get(qid, {}).items(), key=lambda x: (-np.float32(x[1]), _neg(x[0])))
        value, rest = reference_rbp([judged.get(d) for d, _ in ranked], p, rel, k)
        assert ours[qid][str(rbp)] == pytest.approx(value, abs=1e-12), qid
        assert ours[qid][str(residual)] == pytest.approx(rest, abs=1e-12), qid
        assert 0.0 <= value <= value + rest <= 1.0 + 1e-12


def test_rbp_default_persistence_is_ir_measures_default():
    assert str(parse_measure("RBP(p=0.8)")) == "RBP" and parse_measure("RBP").p == 0.8
    assert str(ir_measures.RBP) == "RBP" and ir_measures.RBP.SUPPORTED_PARAMS["p"].default == 0.8


# ------------------------------------------------------------------------------------------ names, errors
@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("nDCG(gain={0:0,1:1,2:3,3:7})@10", "nDCG(gain={0:0,1:1,2:3,3:7})@10"),
        ("nDCG(gain={ 3:7, 1:1.5 })@10", "nDCG(gain={1:1.5,3:7})@10"),
        ("P(judged_only=True)@10", "P(judged_only=True)@10"),
        ("P(judged_only=False)@10", "P@10"),
        ("IPrec@0.5", "IPrec@0.5"),
        ("IPrec@1.0", "IPrec@1"),
        ("IPrec(rel=2)@0", "IPrec(rel=2)@0"),
        ("RBP(p=0.8)", "RBP"),
        ("RBP(p=0.9,rel=2)@10", "RBP(p=0.9,rel=2)@10"),
        ("RBP_resid(p=0.5)", "RBPResidual(p=0.5)"),
        ("SetF(beta=2.0)", "SetF(beta=2)"),
        ("gm_map", "GMAP"),
        ("BPref", "Bpref"),
    ],
)
def test_new_names_print_back(text, canonical):
    measure = parse_measure(text)
    assert str(measure) == canonical
    assert parse_measure(str(measure)) == measure and hash(parse_measure(canonical)) == hash(measure)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("IPrec", "IPrec needs a recall level in [0, 1], e.g. 'IPrec@0.5' (in 'IPrec')"),
        ("IPrec@1.5", "recall must be a number in [0, 1]; got 1.5 (in 'IPrec@1.5')"),
        ("IPrec@half", "recall level must be a number in [0, 1]; got 'half' in 'IPrec@half'"),
        ("RBP(p=1)", "p must be a number in (0, 1); got 1 (in 'RBP(p=1)')"),
        ("RBP(p=x)", "p must be a number in (0, 1); got 'x' (in 'RBP(p=x)')"),
        ("SetF(beta=0)", "beta must be a number > 0; got 0 (in 'SetF(beta=0)')"),
        ("P(judged_only=1)@5", "judged_only must be True or False; got 1 (in 'P(judged_only=1)@5')"),
        ("Judged(judged_only=True)@5", "Judged has no parameter 'judged_only'; its parameters: none"),
        ("NumRel(judged_only=True)", "NumRel has no parameter 'judged_only'; its parameters: rel"),
        ("nDCG(gain={1:x})@5", "cannot parse gain '1:x' in 'nDCG(gain={1:x})@5'"),
        ("nDCG(gain={1})@5", "cannot parse gain '1' in 'nDCG(gain={1})@5'"),
        ("nDCG(gain={-1:2})@5", "gain must map grades (ints >= 0) to numbers; got -1: 2.0"),
        ("Bpref@10", "Bpref takes no cutoff; got 'Bpref@10'"),
        ("Foo", "; trec_eval: Bpref, GMAP, infAP, IPrec, NumRel, NumRelRet, NumRet, SetF, SetP, SetR; "),
    ],
)
def test_bad_new_names_are_rejected_with_the_bad_value(text, message):
    with pytest.raises(MeasureError) as caught:
        parse_measure(text)
    assert message in str(caught.value)


def test_python_specs_of_the_new_measures():
    from metrics.measures import IPrec, P, nDCG

    assert IPrec @ 0.5 == parse_measure("IPrec@0.5")
    assert nDCG(gain={0: 0, 1: 1, 2: 3, 3: 7}) @ 10 == parse_measure("nDCG(gain={0:0,1:1,2:3,3:7})@10")
    assert P(judged_only=True) @ 10 == parse_measure("P(judged_only=True)@10")


def test_judged_only_costs_only_when_asked_for():
    from metrics.evaluate import as_qrels, as_run
    from metrics.measures.ranking import rank_run

    qrels, run = random_case(0)
    ranked = rank_run(as_qrels(qrels), as_run(run))
    evaluate(qrels, run, ["P@5"])
    assert ranked._condensed is None
    assert ranked.condensed() is ranked.condensed()


ODD_LEVELS = (0.05, 0.34, 0.37, 0.66, 0.95)  # where floor(r·R + 0.9) is not the exact ceil(r·R)


@pytest.mark.parametrize("seed", SEEDS)
def test_iprec_at_odd_recall_levels_rounds_as_trec_eval(seed):
    qrels, run = random_case(seed)
    mapping = {f"IPrec@{level:g}": f"iprec_at_recall_{level:.2f}" for level in ODD_LEVELS}
    ours = evaluate(qrels, run, list(mapping)).per_query_dict()
    family = "iprec_at_recall." + ",".join(f"{level:g}" for level in ODD_LEVELS)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {family, "num_ret"}).evaluate(run)
    assert compare(ours, theirs, mapping, qrels, 1) > 50
