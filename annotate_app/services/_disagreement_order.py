"""The orders of the disagreement queue: worst first (the grades' weighted disagreement) or least certain
first (the Dawid–Skene posterior of the pair's most probable grade, lowest first)."""

from __future__ import annotations

import warnings
from enum import StrEnum

import pandas as pd

from annotate_app.services.errors import InvalidInput
from metrics.agreement import dawid_skene

__all__ = ["DisagreementOrder", "check_order", "uncertain_first"]


class DisagreementOrder(StrEnum):
    """How the disagreement queue is ordered (`gate.disagreements`)."""

    WORST = "worst"
    LEAST_CERTAIN = "least_certain"


def check_order(value: object) -> DisagreementOrder:
    """``value`` as a `DisagreementOrder`; InvalidInput naming the choices otherwise."""
    if isinstance(value, str) and value in DisagreementOrder._value2member_map_:
        return DisagreementOrder(value)
    choices = ", ".join(o.value for o in DisagreementOrder)
    raise InvalidInput(f"order must be one of {choices}; got {value!r}")


def uncertain_first(ranked: pd.DataFrame, table: pd.DataFrame, grades: list[int]) -> pd.DataFrame:
    """``ranked`` (one row per pair, column ``item``) reordered by the Dawid–Skene ``confidence`` of each
    pair, fitted on ``table`` (every complete pair's labels: ``item``, ``rater``, ``label``), lowest first;
    ties keep ``ranked``'s order. The confidence is added as a column."""
    if ranked.empty or table.empty:
        return ranked.assign(confidence=pd.Series(dtype=float))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dawid_skene(table[["item", "rater", "label"]], labels=grades)
    confidence = fit.confidence.reindex(ranked["item"].to_numpy()).to_numpy()
    return ranked.assign(confidence=confidence).sort_values("confidence", kind="stable", na_position="last")
