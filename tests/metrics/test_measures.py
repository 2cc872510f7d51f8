"""Measure names: parsing, canonical printing, aliases and error messages."""

from __future__ import annotations

import re

import pytest

from metrics import Measure, MeasureError, parse_measure, parse_measures
from metrics.measures import AP, P, nDCG


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("P@10", "P@10"),
        ("R@100", "R@100"),
        ("F1@5", "F1@5"),
        ("nDCG@10", "nDCG@10"),
        ("nDCG", "nDCG"),
        ("nDCG(gain=exp)@10", "nDCG(gain=exp)@10"),
        ("nDCG(gain=lin)@10", "nDCG@10"),
        ("AP", "AP"),
        ("AP@10", "AP@10"),
        ("RR", "RR"),
        ("RR@10", "RR@10"),
        ("R-Prec", "R-Prec"),
        ("Success@1", "Success@1"),
        ("Judged@10", "Judged@10"),
        ("FirstRel", "FirstRel"),
        ("P(rel=2)@5", "P(rel=2)@5"),
        ("P(rel=1)@5", "P@5"),
        ("MAP", "AP"),
        ("MRR", "RR"),
        ("MRR@10", "RR@10"),
        ("Recall@5", "R@5"),
        ("Precision@3", "P@3"),
        ("NDCG@10", "nDCG@10"),
        ("map", "AP"),
        ("Rprec", "R-Prec"),
        ("AP(rel=3)@100", "AP(rel=3)@100"),
        (" P@10 ", "P@10"),
    ],
)
def test_parse_prints_back_canonical_text(text, canonical):
    measure = parse_measure(text)
    assert str(measure) == canonical
    assert parse_measure(str(measure)) == measure


@pytest.mark.parametrize(
    "text, message",
    [
        ("Foo@10", "unknown measure 'Foo' in 'Foo@10'; known: AP, "),
        ("Foo", "FirstRel, Judged, nDCG, P, R, R-Prec, RR, Success (aliases: "),
        ("P@0", "cutoff must be an int >= 1; got 0 in 'P@0'"),
        ("P@-3", "cutoff must be an int >= 1; got -3 in 'P@-3'"),
        ("P@1.5", "cutoff must be an int >= 1; got '1.5' in 'P@1.5'"),
        ("P@True", "cutoff must be an int >= 1; got 'True' in 'P@True'"),
        ("P@", "cutoff must be an int >= 1; got '' in 'P@'"),
        ("P", "P needs a cutoff, e.g. 'P@10' (in 'P')"),
        ("R-Prec@5", "R-Prec takes no cutoff; got 'R-Prec@5' (in 'R-Prec@5')"),
        ("P(gain=exp)@5", "P has no parameter 'gain'; its parameters: rel (in 'P(gain=exp)@5')"),
        ("P(rel=0)@5", "rel must be an int >= 1; got 0 (in 'P(rel=0)@5')"),
        ("P(rel=x)@5", "rel must be an int >= 1; got 'x' (in 'P(rel=x)@5')"),
        ("nDCG(gain=log)@5", "gain must be 'lin' or 'exp'; got 'log' (in 'nDCG(gain=log)@5')"),
        ("P(rel)@5", "cannot parse parameter 'rel' in 'P(rel)@5'; expected name=value"),
        ("P@@5", "cannot parse measure 'P@@5'; expected NAME, NAME@k or NAME(param=value)@k"),
        ("", "cannot parse measure ''"),
    ],
)
def test_bad_names_are_rejected_with_the_bad_value(text, message):
    with pytest.raises(MeasureError, match=re.escape(message)):
        parse_measure(text)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: P @ True, "cutoff must be an int >= 1; got True"),
        (lambda: P @ 2.0, "cutoff must be an int >= 1; got 2.0"),
        (lambda: P @ 0, "cutoff must be an int >= 1; got 0"),
        (lambda: Measure("P", rel=True), "rel must be an int >= 1; got True"),
        (lambda: Measure("Nope"), "unknown measure 'Nope'"),
        (lambda: parse_measure(10), "measure must be a str or Measure; got int 10"),
        (lambda: parse_measures([]), "measures must name at least one measure; got none"),
    ],
)
def test_python_built_specs_validate_too(build, message):
    with pytest.raises(MeasureError, match=re.escape(message)):
        build()


def test_python_syntax_builds_the_same_specs():
    assert P(rel=2) @ 5 == parse_measure("P(rel=2)@5")
    assert nDCG(gain="exp") @ 10 == parse_measure("nDCG(gain=exp)@10")
    assert parse_measure("MAP@10") == AP @ 10
    assert hash(P @ 5) == hash(parse_measure("Precision@5"))


def test_specs_are_frozen():
    spec = parse_measure("P@5")
    with pytest.raises(AttributeError):
        spec.cutoff = 6


def test_parse_measures_keeps_order_and_drops_repeats():
    assert [str(m) for m in parse_measures(["P@5", "MAP", "Precision@5", "AP", "nDCG@10"])] == [
        "P@5",
        "AP",
        "nDCG@10",
    ]
    assert [str(m) for m in parse_measures("RR")] == ["RR"]


def test_measure_is_a_value_error():
    with pytest.raises(ValueError):
        parse_measure("P@0")
