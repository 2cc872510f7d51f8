"""Hostile numbers (issue 15 item 2): each is refused with the project's own error naming the value, or gives
a correct value; never a bare OverflowError, a silent hole in a mean, or a misleading warning."""

from __future__ import annotations

import io
import re
import warnings

import numpy as np
import pytest

from metrics import evaluate
from metrics.agreement import krippendorff_alpha
from metrics.errors import EvaluationError, FormatError, QrelForgeError
from metrics.formats import read_run
from metrics.measures import Measure, parse_measure
from metrics.retrieval.fusion import fuse

RUN = {"q1": {"d1": 1.0, "d2": 0.5}}


@pytest.mark.parametrize("grade", [2**63, -(2**63) - 1, 10**30])
def test_a_grade_beyond_int64_in_a_mapping_is_a_format_error(grade):
    with pytest.raises(FormatError) as info:
        evaluate({"q1": {"d1": grade}}, RUN, ["P@5"])
    assert str(info.value) == (
        f"qrels: grade of 'd1' for query 'q1' must be an int in the 64-bit range: '{grade}'"
    )


def test_the_int64_extremes_are_grades():
    result = evaluate({"q1": {"d1": 2**63 - 1, "d2": -(2**63)}}, RUN, ["P@1"])
    assert result.mean == {"P@1": 1.0}


def test_a_score_beyond_float64_is_refused_naming_it():
    with pytest.raises(FormatError) as info:
        read_run(io.StringIO("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 1e400 t\n"))
    assert str(info.value) == "<stream>:2: score out of the float64 range: '1e400': 'q1 Q0 d2 2 1e400 t'"
    with pytest.raises(FormatError, match=re.escape("score out of the float64 range: '-1E+999'")):
        read_run(io.StringIO("q1 Q0 d1 1 -1E+999 t\n"))


def test_the_words_inf_and_infinity_stay_scores():
    run = read_run(io.StringIO("q1 Q0 d1 1 inf t\nq1 Q0 d2 2 -Infinity t\n"))
    assert run.to_dict() == {"q1": {"d1": float("inf"), "d2": float("-inf")}}


def test_exponential_gains_that_overflow_are_an_error_not_a_hole():
    qrels = {"q1": {"d1": 1024}, "q2": {"d1": 1}}
    with pytest.raises(EvaluationError) as info:
        evaluate(qrels, {"q1": {"d1": 1.0}, "q2": {"d1": 1.0}}, ["nDCG(gain=exp)", "P@1"])
    assert str(info.value) == (
        "nDCG(gain=exp): the exponential gains (2**grade - 1) of query 'q1' overflow a float64, e.g. grade "
        "1024 of document 'd1'; use gain=lin or grades below 1024"
    )


def test_large_exponential_gains_that_fit_give_correct_values():
    result = evaluate({"q1": {"d1": 1023, "d2": 1}}, RUN, ["nDCG(gain=exp)"])
    assert result.mean == {"nDCG(gain=exp)": 1.0} and result.n == {"nDCG(gain=exp)": 1}
    linear = evaluate({"q1": {"d1": 1024}}, RUN, ["nDCG"])  # gain=lin is never an overflow
    assert linear.mean == {"nDCG": 1.0}


@pytest.mark.parametrize("level", ["interval", "ratio"])
@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), 10**400])
def test_krippendorff_refuses_non_finite_values(level, bad):
    if level == "ratio" and bad == float("-inf"):
        bad = float("inf")
    shown = "inf" if bad == float("inf") else "-inf" if bad == float("-inf") else str(bad)[:80] + "..."
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "fewer than two values" warning on the way
        with pytest.raises(QrelForgeError) as info:
            krippendorff_alpha([[1.0, 2.0, bad], [1.0, 2.0, 3.0]], level=level)
    assert str(info.value) == f"level={level!r} needs finite ratings; got {shown}"


def test_krippendorff_missing_values_stay_missing():
    alpha = krippendorff_alpha([[1.0, 2.0, float("nan")], [1.0, 2.0, 3.0]], level="interval")
    assert np.isfinite(alpha)
    assert alpha == krippendorff_alpha([[1.0, 2.0, None], [1.0, 2.0, 3.0]], level="interval")


@pytest.mark.parametrize("cutoff", [np.int64(5), np.int32(5), np.uint8(5)])
def test_numpy_integer_cutoffs_are_cutoffs(cutoff):
    measure = Measure("P", cutoff)
    assert measure == Measure("P", 5) and str(measure) == "P@5" and type(measure.cutoff) is int
    assert str(Measure("nDCG") @ cutoff) == "nDCG@5"
    assert parse_measure("P@5") == measure
    assert evaluate({"q1": {"d1": 1}}, RUN, [measure]).mean == {"P@5": 0.2}
    assert len(fuse([RUN, RUN], depth=cutoff)) == 2  # fusion took one already


@pytest.mark.parametrize("cutoff", [True, np.bool_(True), np.int64(0), 5.0, np.float64(5)])
def test_bools_and_floats_are_not_cutoffs(cutoff):
    with pytest.raises(QrelForgeError, match=re.escape(f"cutoff must be an int >= 1; got {cutoff!r}")):
        Measure("P", cutoff)
