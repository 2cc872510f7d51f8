"""How a release turns each pair's labels into its grade: `Aggregation`, the one list of aggregations (the
CLI's ``--aggregate``, the Release page's selector and `releases.create_release` read it), the model fit
behind a model aggregation (`model_grades`) and the lines it adds to a release's content hash
(`canonical_aggregation`).

Majority vote (the default) takes a pair's unanimous or majority grade and the reviewer's adjudication of a
disagreement. A model aggregation (Dawid–Skene, MACE) fits `metrics.agreement` on the labels the gate counts
(the complete pairs' current labels; gold draws' labels are not among them, so none enters twice, and gold
grades do not pin the fit) and gives each pair the posterior's most probable grade, ties to the lowest grade;
adjudicated pairs keep the reviewer's grade. The fit is deterministic (fixed parameters, fixed seed, rows in
(pair, annotator) order) and its confidences are rounded to `DIGITS` decimals, so a re-run gives the same
release and hash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from annotate_app.services.errors import InvalidInput

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Aggregation",
    "ModelGrades",
    "check_aggregation",
    "model_grades",
    "canonical_aggregation",
    "DIGITS",
]

DIGITS = 6
"""Decimals of a stored (and hashed) posterior confidence."""


class Aggregation(StrEnum):
    """A release's aggregation: ``(value, label, help)`` a member; the first is the default."""

    label: str
    help: str

    def __new__(cls, value: str, label: str, help: str) -> Aggregation:
        member = str.__new__(cls, value)
        member._value_ = value
        member.label, member.help = label, help
        return member

    MAJORITY = (
        "majority",
        "Majority vote",
        "the unanimous or majority grade; a disagreement takes the reviewer's adjudication",
    )
    DAWID_SKENE = (
        "dawid-skene",
        "Dawid–Skene",
        "the most probable grade under Dawid–Skene (per-annotator confusion matrices); adjudicated pairs "
        "keep the reviewer's grade",
    )
    MACE = (
        "mace",
        "MACE",
        "the most probable grade under MACE (per-annotator competence); adjudicated pairs keep the "
        "reviewer's grade",
    )

    @property
    def parameters(self) -> dict[str, Any]:
        """The model's fixed parameters (empty for majority vote), recorded in the release."""
        return dict(_PARAMETERS.get(self, {}))


_PARAMETERS: dict[Aggregation, dict[str, Any]] = {
    Aggregation.DAWID_SKENE: {"max_iter": 100, "tol": 1e-6, "smoothing": 0.0},
    Aggregation.MACE: {"training": "vb", "max_iter": 50, "tol": 1e-6, "restarts": 10, "seed": 0},
}
_FITS = {Aggregation.DAWID_SKENE: "dawid_skene", Aggregation.MACE: "mace"}  # in `metrics.agreement`


def check_aggregation(value: object) -> Aggregation:
    """``value`` as an `Aggregation`; InvalidInput naming the choices otherwise."""
    found = {a.value: a for a in Aggregation}.get(value) if isinstance(value, str) else None
    if found is None:
        choices = ", ".join(repr(a.value) for a in Aggregation)
        raise InvalidInput(f"aggregation must be one of {choices}; got {value!r}")
    return found


@dataclass(frozen=True, eq=False)
class ModelGrades:
    """A model aggregation's result per pair (Series indexed by pair id): ``grades`` (the most probable
    grade) and ``confidence`` (its posterior probability, rounded to `DIGITS` decimals)."""

    grades: pd.Series
    confidence: pd.Series


def model_grades(aggregation: Aggregation, table: pd.DataFrame, scale: list[int]) -> ModelGrades | None:
    """Fit ``aggregation``'s model on ``table`` (columns ``item`` = pair id, ``rater``, ``label``; the
    gate's `agreement_table`) on the grade ``scale``; None for majority vote or an empty table."""
    name = _FITS.get(aggregation)
    if name is None or table.empty:
        return None
    from metrics import agreement  # imported on use: the CLI reads `Aggregation` without the models

    fit = getattr(agreement, name)
    ordered = table.sort_values(["item", "rater"], kind="stable").reset_index(drop=True)
    result = fit(ordered[["item", "rater", "label"]], labels=scale, **aggregation.parameters)
    return ModelGrades(grades=result.labels.astype(int), confidence=result.confidence.round(DIGITS))


def canonical_aggregation(record: dict | None, confidences: list[tuple[str, str, float]]) -> str:
    """The lines a release's content hash adds for a model aggregation: ``aggregation<TAB>name<TAB>
    parameters as sorted JSON``, then ``query_id<TAB>doc_id<TAB>confidence`` (`DIGITS` decimals) sorted;
    empty for majority vote (``record`` None or named ``majority``), so its hash is the qrels' alone.

    >>> canonical_aggregation({"name": "dawid-skene", "parameters": {"tol": 1e-06}}, [("q1", "D1", 0.75)])
    'aggregation\\tdawid-skene\\t{"tol":1e-06}\\nq1\\tD1\\t0.750000\\n'
    >>> canonical_aggregation(None, [])
    ''
    """
    if record is None or record.get("name", Aggregation.MAJORITY) == Aggregation.MAJORITY:
        return ""
    parameters = json.dumps(record.get("parameters", {}), sort_keys=True, separators=(",", ":"))
    head = f"aggregation\t{record['name']}\t{parameters}\n"
    return head + "".join(f"{q}\t{d}\t{c:.{DIGITS}f}\n" for q, d, c in sorted(confidences))
