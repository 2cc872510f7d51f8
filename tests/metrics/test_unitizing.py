"""Krippendorff's unitizing alpha (`metrics.agreement.unitizing_alpha`) against the published worked
examples (Krippendorff 2004 and 1995, as DKPro Statistics transcribes them; see
tests/fixtures/passages/SOURCES.md), DKPro's own values, and a plain-loop oracle on random studies; and the
character-overlap F1 between raters."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.agreement import pairwise_span_f1, unitizing_alpha
from metrics.errors import QrelForgeError, UndefinedMetricWarning

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passages"


def _study(name: str, stretch: float = 1.0):
    """A fixture as (spans table, lengths): DKPro's units (offset, length, rater, category) on one item,
    shifted to start at 0 and scaled as DKPro's ``createExample(stretch)`` scales them (int truncation)."""
    data = json.loads((FIXTURES / name).read_text())
    begin, length = data["continuum"]["begin"], data["continuum"]["length"]
    rows = []
    for offset, size, rater, category in data["units"]:
        start = int(offset * stretch) - int(begin * stretch)
        rows.append(("x", rater, start, start + int(size * stretch), category))
    table = pd.DataFrame(rows, columns=["item", "rater", "start", "end", "category"])
    return data, table, {"x": int(length * stretch)}


def _printed(value: float, printed: float, digits: int) -> bool:
    """``value`` shows as ``printed`` at ``digits`` decimals (rounded, or cut as the 1995 paper cuts 1/36)."""
    return abs(value - printed) < 10**-digits


# ------------------------------------------------------------------------------- published worked examples
def test_krippendorff_2004_each_category_equals_the_book_to_four_decimals():
    data, table, lengths = _study("unitizing_krippendorff2004.json")
    result = unitizing_alpha(table, lengths, category="category")
    got = result.categories.round(4)[["observed", "expected", "alpha"]].to_dict("index")
    assert got == {c: {k: round(v, 4) for k, v in values.items()} for c, values in data["published"].items()}


def test_krippendorff_2004_overall_alpha():
    data, table, lengths = _study("unitizing_krippendorff2004.json")
    result = unitizing_alpha(table, lengths, category="category")
    parts = result.categories.round(4)
    # exact: 1 - (0.014444 + 0) / (0.053222 + 0.048979) = 0.85867; printed 0.8591 = the same on rounded parts
    assert result.alpha == pytest.approx(0.85867, abs=5e-6)
    assert round(1 - parts["observed"].sum() / parts["expected"].sum(), 4) == data["overall"]["alpha"]
    assert abs(result.alpha - data["overall"]["alpha"]) <= data["overall"]["tolerance"]
    assert (result.raters, result.length) == (2, 300)


@pytest.mark.parametrize("pair", ["A", "B", "C", "D"])
def test_krippendorff_1995_observed_disagreement_equals_the_paper(pair):
    data, table, lengths = _study("unitizing_krippendorff1995.json")
    result = unitizing_alpha(table, lengths, category="category")
    published = data["published"]["observed"]
    assert _printed(result.categories.loc[pair, "observed"], published[pair], published["digits"])


@pytest.mark.parametrize("pair", ["A", "D"])
def test_krippendorff_1995_expected_disagreement_and_alpha_in_the_continuous_limit(pair):
    data, table, lengths = _study("unitizing_krippendorff1995.json", stretch=50_000)
    row = unitizing_alpha(table, lengths, category="category").categories.loc[pair]
    for part in ("expected", "alpha"):
        published = data["published"][part]
        assert _printed(row[part], published[pair], published["digits"]), (part, row[part])


@pytest.mark.parametrize("pair", ["B", "C"])
def test_krippendorff_1995_b_and_c_within_dkpros_tolerance_of_the_papers_slips(pair):
    """The paper's D_e of B and C does not follow from the formula (SOURCES.md); DKPro's tolerances."""
    data, table, lengths = _study("unitizing_krippendorff1995.json", stretch=50_000)
    row = unitizing_alpha(table, lengths, category="category").categories.loc[pair]
    for part in ("expected", "alpha"):
        assert abs(row[part] - data["published"][part][pair]) <= data["dkpro_tolerance"][part]
    assert not _printed(row["expected"], data["published"]["expected"][pair], 4)  # the slip is real


def test_krippendorff_1995_c_at_half_size_equals_dkpro():
    data, table, lengths = _study("unitizing_krippendorff1995.json", stretch=0.5)
    table = table[table["category"] == "C"]  # the other pairs have units of length 1, 0 at half size
    row = unitizing_alpha(table, lengths, category="category").categories.loc["C"]
    want = data["dkpro_stretched"]["C"]
    assert abs(row["observed"] - want["observed"]) < want["tolerance"]
    assert abs(row["expected"] - want["expected"]) < want["tolerance"]


def test_dkpro_example_equals_dkpro():
    data, table, lengths = _study("unitizing_dkpro_example.json")
    row = unitizing_alpha(table, lengths, category="category").categories.loc["A"]
    for part, value in data["expected_values"]["A"].items():
        assert abs(row[part] - value) < data["tolerance"], part


# ------------------------------------------------------------------------------------ oracle: plain loops
def _oracle(units: dict, raters: int, lengths: list[int]) -> dict:
    """Per category (D_o, D_e), written from the formulas with loops: each rater's segments are found by
    walking the continuum character by character (a gap ends at an item boundary)."""
    total = sum(lengths)
    boundaries = set(np.cumsum([0, *lengths]).tolist())
    out = {}
    for category in sorted({c for _, _, _, c in units}):
        covered = [[None] * total for _ in range(raters)]
        for rater, start, end, c in units:
            if c == category:
                for x in range(start, end):
                    covered[rater][x] = (start, end)
        segments = []
        for r in range(raters):
            segs, x = [], 0
            while x < total:
                if covered[r][x] is not None:
                    s, e = covered[r][x]
                    segs.append((s, e, True))
                    x = e
                else:
                    s = x
                    x += 1
                    while x < total and covered[r][x] is None and x not in boundaries:
                        x += 1
                    segs.append((s, x, False))
            segments.append(segs)
        observed = 0.0
        for i in range(raters):
            for j in range(raters):
                if i == j:
                    continue
                for sg, eg, ug in segments[i]:
                    for sh, eh, uh in segments[j]:
                        if min(eg, eh) <= max(sg, sh):
                            continue
                        if ug and uh:
                            observed += (sg - sh) ** 2 + (eg - eh) ** 2
                        elif ug and sh <= sg and eg <= eh:
                            observed += (eg - sg) ** 2
                        elif uh and sg <= sh and eh <= eg:
                            observed += (eh - sh) ** 2
        observed /= raters * (raters - 1) * total**2
        unit_lengths = [e - s for segs in segments for s, e, u in segs if u]
        gaps = [e - s for segs in segments for s, e, u in segs if not u]
        n = len(unit_lengths)
        inner = sum(
            (n - 1) * (2 * b**3 - 3 * b**2 + b) / 3 + b**2 * sum(max(0, g - b + 1) for g in gaps)
            for b in unit_lengths
        )
        den = raters * total * (raters * total - 1) - sum(b * (b - 1) for b in unit_lengths)
        out[category] = (observed, 2 / total * inner / den)
    return out


@st.composite
def _studies(draw):
    raters = draw(st.integers(2, 4))
    lengths = draw(st.lists(st.integers(1, 15), min_size=1, max_size=3))
    offsets = np.cumsum([0, *lengths]).tolist()
    units = []
    for rater in range(raters):
        for category in draw(st.lists(st.sampled_from("xy"), max_size=2, unique=True)):
            for item, length in enumerate(lengths):
                cuts = sorted(draw(st.sets(st.integers(0, length), max_size=6)))
                for s, e in zip(cuts[::2], cuts[1::2], strict=False):
                    if draw(st.booleans()):
                        units.append((rater, offsets[item] + s, offsets[item] + e, category))
    return raters, lengths, units


@settings(max_examples=200, deadline=None)
@given(_studies())
def test_unitizing_alpha_equals_the_loop_oracle(study):
    raters, lengths, units = study
    offsets = np.cumsum([0, *lengths]).tolist()
    rows = []
    for rater, s, e, c in units:
        item = max(i for i, o in enumerate(offsets[:-1]) if o <= s)
        rows.append((f"i{item}", f"r{rater}", s - offsets[item], e - offsets[item], c))
    table = pd.DataFrame(rows, columns=["item", "rater", "start", "end", "category"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        result = unitizing_alpha(
            table,
            {f"i{i}": n for i, n in enumerate(lengths)},
            category="category",
            raters=[f"r{r}" for r in range(raters)],
        )
    oracle = _oracle(units, raters, lengths)
    assert sorted(result.categories.index) == sorted(oracle)
    for category, (observed, expected) in oracle.items():
        assert result.categories.loc[category, "observed"] == pytest.approx(observed, rel=1e-9, abs=1e-12)
        assert result.categories.loc[category, "expected"] == pytest.approx(expected, rel=1e-9, abs=1e-12)


# ------------------------------------------------------------------------------------------- edge cases
def test_identical_unitizations_agree_perfectly_and_no_units_is_undefined():
    table = pd.DataFrame({"item": ["d"] * 2, "rater": ["a", "b"], "start": [2, 2], "end": [5, 5]})
    assert unitizing_alpha(table, {"d": 10}).alpha == 1.0
    empty = pd.DataFrame({"item": ["d"] * 2, "rater": ["a", "b"], "start": [None] * 2, "end": [None] * 2})
    with pytest.warns(UndefinedMetricWarning, match="unitizing alpha is undefined"):
        assert np.isnan(unitizing_alpha(empty, {"d": 10}).alpha)


def test_units_filling_the_continuum_leave_alpha_undefined():
    table = pd.DataFrame({"item": ["d"] * 2, "rater": ["a", "b"], "start": [0, 0], "end": [1, 1]})
    with pytest.warns(UndefinedMetricWarning, match="expected disagreement is 0"):
        assert np.isnan(unitizing_alpha(table, {"d": 1}).alpha)


def test_a_rater_without_spans_unitized_every_item_as_gap():
    table = pd.DataFrame({"item": ["d"], "rater": ["a"], "start": [0], "end": [4]})
    with_c = unitizing_alpha(table, {"d": 10}, raters=["a", "c"])
    explicit = pd.concat(
        [table, pd.DataFrame({"item": ["d"], "rater": ["c"], "start": [None], "end": [None]})]
    )
    assert with_c.alpha == unitizing_alpha(explicit, {"d": 10}).alpha < 0


SPAN = {"item": ["d", "d"], "rater": ["a", "b"], "start": [0, 2], "end": [4, 6]}


@pytest.mark.parametrize(
    ("change", "lengths", "kwargs", "message"),
    [
        ({}, {"d": 10}, {"category": "kind"}, "table has no column 'kind'; its columns are"),
        ({"item": ["d", "e"]}, {"d": 10}, {}, "item 'e' of the table has no length in lengths"),
        ({}, {"d": 0}, {}, "lengths must map each item to an int > 0; got {'d': 0}"),
        (
            {"rater": ["a", "a"], "start": [0, 5]},
            {"d": 10},
            {},
            r"needs at least 2 raters; got 1 \(\['a'\]\)",
        ),
        ({}, {"d": 10}, {"raters": ["a", "c"]}, r"rater 'b' of the table is not in raters=\['a', 'c'\]"),
        (
            {"end": [4, 2]},
            {"d": 10},
            {},
            r"span \[2, 2\) of rater 'b' on item 'd' is empty \(item length 10\)",
        ),
        ({"end": [4, 11]}, {"d": 10}, {}, r"span \[2, 11\) of rater 'b' on item 'd' is out of its item"),
        ({"start": [0, 2.5]}, {"d": 10}, {}, "column 'start' must hold ints; got 2.5 at row 1"),
        (
            {"rater": ["a", "a"]},
            {"d": 10},
            {"raters": ["a", "b"]},
            r"spans of rater 'a' on item 'd' overlap: \[0, 4\) and \[2, 6\)",
        ),
    ],
)
def test_unitizing_alpha_refuses_bad_input_naming_it(change, lengths, kwargs, message):
    with pytest.raises(QrelForgeError, match=message):
        unitizing_alpha(pd.DataFrame({**SPAN, **change}), lengths, **kwargs)


# --------------------------------------------------------------------------------- character-overlap F1
def test_pairwise_span_f1_table():
    table = pd.DataFrame(
        {
            "item": ["d1", "d1", "d1", "d2", "d2", "d3"],
            "rater": ["a", "b", "c", "a", "b", "a"],
            "start": [0, 5, None, 0, 0, 0],
            "end": [10, 15, None, 4, 4, 9],
        }
    )
    result = pairwise_span_f1(table)
    # a-b share d1 and d2: A = 10 + 4, B = 10 + 4, both = 5 + 4 -> 2*9/28; d3 only a judged (not shared)
    # a-c share d1: c marked nothing -> 0; b-c share d1 -> 0
    assert result.table.to_dict("records") == [
        {
            "rater_a": "a",
            "rater_b": "b",
            "items": 2,
            "chars_a": 14,
            "chars_b": 14,
            "overlap": 9,
            "f1": 18 / 28,
        },
        {"rater_a": "a", "rater_b": "c", "items": 1, "chars_a": 10, "chars_b": 0, "overlap": 0, "f1": 0.0},
        {"rater_a": "b", "rater_b": "c", "items": 1, "chars_a": 10, "chars_b": 0, "overlap": 0, "f1": 0.0},
    ]
    assert result.mean == pytest.approx((18 / 28) / 3)
    assert result.pooled == pytest.approx(18 / 48)


def test_pairwise_span_f1_is_undefined_when_neither_marked_anything():
    table = pd.DataFrame({"item": ["d", "d"], "rater": ["a", "b"], "start": [None] * 2, "end": [None] * 2})
    result = pairwise_span_f1(table)
    assert np.isnan(result.table["f1"].iloc[0]) and result.mean is None and result.pooled is None


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ([0, None], [4, 6], "row 1 has only one of 'start' and 'end'"),
        ([0, 6], [4, 6], r"span \[6, 6\) is empty or reversed \(rater 'b'\)"),
    ],
)
def test_pairwise_span_f1_refuses_bad_spans(start, end, message):
    with pytest.raises(QrelForgeError, match=message):
        pairwise_span_f1(pd.DataFrame({"item": ["d", "d"], "rater": ["a", "b"], "start": start, "end": end}))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["d1", "d2"]), st.sampled_from("abc"), st.integers(0, 20), st.integers(1, 8)
        ),
        min_size=1,
        max_size=12,
    )
)
def test_pairwise_span_f1_equals_sets_of_characters(spans):
    table = pd.DataFrame(
        [(d, r, s, s + n) for d, r, s, n in spans], columns=["item", "rater", "start", "end"]
    )
    result = pairwise_span_f1(table)
    marks = {(d, r, x) for d, r, s, n in spans for x in range(s, s + n)}
    for row in result.table.itertuples():
        shared = {d for d, r, *_ in spans if r == row.rater_a} & {d for d, r, *_ in spans if r == row.rater_b}
        a = {(d, x) for d, r, x in marks if r == row.rater_a and d in shared}
        b = {(d, x) for d, r, x in marks if r == row.rater_b and d in shared}
        assert (row.chars_a, row.chars_b, row.overlap) == (len(a), len(b), len(a & b))
        if a or b:
            assert row.f1 == pytest.approx(2 * len(a & b) / (len(a) + len(b)))
