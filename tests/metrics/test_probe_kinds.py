"""The injection and length probes' transforms, the one list of probe kinds, and the intervals of the probe
summary, against hand computation and scipy."""

from __future__ import annotations

import doctest
import math
import re

import numpy as np
import pytest
from scipy import stats

from metrics.errors import QrelForgeError
from metrics.stats import probe
from metrics.stats.probe import (
    INJECTIONS,
    PROBES,
    ProbeKind,
    inject_relevance,
    pad_length,
    probe_summary,
    probe_transform,
    stuff_query_terms,
)

EN = "Solar panels convert light. They work best in direct sun! Costs fell."
ZH = "为 A 型设备更换电池之前，请先关机。设备仍连着电源时，不要打开电池仓盖。等待五分钟。"


def _inserted(original: str, changed: str, language: str) -> str:
    """The one injection sentence of `language` found in `changed`, the rest being `original`."""
    for template in INJECTIONS[language]:
        pattern = re.escape(template).replace(re.escape("{query}"), ".+?")
        found = re.search(pattern, changed)
        if found:
            rest = (changed[: found.start()] + changed[found.end() :]).replace(" ", "")
            assert rest == original.replace(" ", "")
            return template
    raise AssertionError(f"no {language} injection in {changed!r}")


@pytest.mark.parametrize(
    ("document", "query", "language"), [(EN, "solar cost?", "en"), (ZH, "怎么换电池？", "zh")]
)
def test_injection_inserts_one_sentence_of_the_documents_language(document, query, language):
    seen = set()
    for seed in range(30):
        changed = inject_relevance(document, query, seed=seed)
        assert changed == inject_relevance(document, query, seed=seed)  # reproducible
        seen.add(_inserted(document, changed, language))
    assert len(seen) >= 3  # the sentences vary


def test_injection_varies_across_documents_with_one_seed():
    documents = [f"Document number {i} talks about topic {i}." for i in range(20)]
    sentences = {_inserted(d, inject_relevance(d, "topic", seed=0), "en") for d in documents}
    assert len(sentences) >= 3


def test_injection_fills_the_query_without_its_final_mark():
    texts = {inject_relevance("Cats.", "cat naps?", seed=s) for s in range(40)}
    assert any("cat naps." in t for t in texts) and not any("naps?" in t for t in texts)


def test_length_pads_with_other_documents_of_the_same_language():
    fillers = ["Wind turbines spin.", "风力发电机转动。", EN, "Hydro dams store water for later use."]
    padded = pad_length(EN, fillers, seed=3)
    assert padded.startswith(EN + "\n\n")
    added = padded[len(EN) + 2 :].split("\n\n")
    assert set(added) <= {"Wind turbines spin.", "Hydro dams store water for later use."}
    assert padded == pad_length(EN, fillers, seed=3)
    # English fillers run out before doubling the length: both were added
    assert sorted(added) == sorted(["Wind turbines spin.", "Hydro dams store water for later use."])


def test_length_adds_at_least_factor_times_the_document():
    fillers = [f"Filler sentence number {i}." for i in range(50)]
    for factor in (0.5, 1.0, 2.0):
        padded = pad_length(EN, fillers, seed=0, factor=factor)
        added = [len(text) for text in padded[len(EN) + 2 :].split("\n\n")]
        assert sum(added) >= factor * len(EN) > sum(added) - added[-1]  # the last filler was the one needed


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: pad_length(EN, [EN, " "], seed=0),
            "fillers must hold a text other than the document; got none",
        ),
        (lambda: pad_length(EN, "text", seed=0), "fillers must be a sequence of texts; got str"),
        (lambda: pad_length(EN, ["x"], seed=0, factor=0), "factor must be a number > 0; got 0"),
        (lambda: pad_length(EN, [None], seed=0), "filler must be a string; got NoneType"),
        (lambda: inject_relevance(EN, "q", seed=-1), "seed must be a non-negative integer; got -1"),
        (lambda: inject_relevance(None, "q", seed=0), "document_text must be a string; got NoneType"),
        (
            lambda: probe_transform("bribe", EN, "q", seed=0),
            "probe kind must be one of stuffing, injection, length; got 'bribe'",
        ),
    ],
)
def test_errors(call, message):
    with pytest.raises(QrelForgeError) as error:
        call()
    assert str(error.value) == message


def test_one_transform_per_kind():
    assert set(PROBES) == set(ProbeKind)
    assert probe_transform("stuffing", EN, "solar", seed=2) == stuff_query_terms(EN, "solar", seed=2)
    assert probe_transform(ProbeKind.INJECTION, EN, "solar", seed=2) == inject_relevance(EN, "solar", seed=2)
    assert probe_transform("length", EN, "q", seed=2, fillers=["x."]) == pad_length(EN, ["x."], seed=2)


def test_summary_intervals_against_scipy():
    before, after = [0, 1, 2, 1, 3, 0, 0], [1, 1, 1, 3, 3, 2, 0]
    res = probe_summary(before, after)
    change = np.subtract(after, before)
    low, high = stats.t.interval(0.95, len(change) - 1, loc=change.mean(), scale=stats.sem(change))
    assert res.mean_rise_ci == pytest.approx((low, high))
    wilson = stats.binomtest(3, 7).proportion_ci(method="wilson")
    assert res.share_raised_ci == pytest.approx((wilson.low, wilson.high))


def test_summary_of_one_pair_and_of_no_change():
    one = probe_summary([0], [2])
    assert all(math.isnan(x) for x in one.mean_rise_ci) and one.share_raised_ci[0] > 0
    none = probe_summary([0, 0, 0], [0, 0, 0])
    assert none.mean_rise_ci == (0.0, 0.0) and none.share_raised_ci[0] == 0.0


def test_doctests():
    assert doctest.testmod(probe).failed == 0
