"""`metrics.stats.ppi.ppi_run`: PPI of one run from qrels (what ``score --ppi`` and the Score page compute)
equals `ppi_mean` on the per-query values computed by hand; a measure without a shared query is an error
naming it."""

from __future__ import annotations

import pandas as pd
import pytest

from metrics.errors import QrelForgeError
from metrics.stats.ppi import ppi_mean, ppi_run

HUMAN = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 0, "d4": 1}}
JUDGE = {"q1": {"d1": 1}, "q2": {"d2": 1, "d5": 1}, "q3": {"d3": 1, "d4": 1}, "q4": {"d6": 1}}
RUN = {"q1": ["d1"], "q2": ["d2"], "q3": ["d3", "d4"], "q4": ["d7", "d6"]}


@pytest.mark.parametrize(
    ("measure", "judge_values", "human_values"),
    [
        # P@1 per query by hand: judge q1..q4 = 1, 1, 1, 0; human q1..q3 = 1, 1, 0
        ("P@1", [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0]),
        # P@2: judge 1/2, 1/2, 1, 1/2; human 1/2, 1/2, 1/2
        ("P@2", [0.5, 0.5, 1.0, 0.5], [0.5, 0.5, 0.5]),
    ],
)
def test_ppi_run_is_ppi_mean_of_the_per_query_values(measure, judge_values, human_values):
    got = ppi_run(HUMAN, JUDGE, RUN, [measure], name="A")[measure]
    want = ppi_mean(
        pd.DataFrame({"A": judge_values}, index=["q1", "q2", "q3", "q4"]),
        pd.DataFrame({"A": human_values}, index=["q1", "q2", "q3"]),
    )["A"]
    assert got == want


def test_a_measure_without_a_shared_query_is_an_error():
    with pytest.raises(QrelForgeError, match=r"^R@1 of run 'A': no query has both human and judge values$"):
        ppi_run({"q1": {"d1": 0}}, {"q1": {"d1": 1}}, {"q1": ["d1"]}, ["R@1"], name="A")
