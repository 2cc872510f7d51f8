"""The disagreement queue's orders: worst first, or least certain first by the Dawid–Skene posterior."""

from __future__ import annotations

import pandas as pd
import pytest

from annotate_app.services import gate, labels, queue
from annotate_app.services._disagreement_order import uncertain_first
from annotate_app.services.errors import InvalidInput

# three raters; item 1: 2 against 1, item 2: 1, 1 and 1 on three grades (the least certain), item 3 unanimous
TABLE = pd.DataFrame(
    {
        "item": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
        "rater": ["a", "b", "c"] * 4,
        "label": [0, 0, 1, 0, 1, 2, 2, 2, 2, 1, 1, 1],
    }
)


def test_least_certain_first_on_a_hand_table():
    ranked = pd.DataFrame({"item": [1, 2], "disagreement": [0.5, 0.4], "spread": [1, 2]})
    out = uncertain_first(ranked, TABLE, [0, 1, 2])
    assert out["item"].tolist() == [2, 1]
    assert out["confidence"].is_monotonic_increasing


def test_both_orders_hold_the_same_pairs(demo, actors):
    for who, shift in ((actors["alice"], 0), (actors["bob"], 1)):
        while (view := queue.next_pair(demo, who, "demo")) is not None:
            grade = (len(view.doc_id) + shift * (view.pair_id % 3 == 0)) % 4
            labels.save_label(demo, who, "demo", view.pair_id, grade=grade, reason="judged it")
    worst = gate.disagreements(demo, actors["rita"], "demo")
    least = gate.disagreements(demo, actors["rita"], "demo", order="least_certain")
    assert sorted(d.pair_id for d in worst) == sorted(d.pair_id for d in least) and worst


def test_an_unknown_order_is_refused(demo, actors):
    with pytest.raises(InvalidInput, match="order must be one of worst, least_certain"):
        gate.disagreements(demo, actors["rita"], "demo", order="random")
