"""The gate's result values: agreement figures, the confusion of two annotators, a disagreement with its
labels side by side, and what blocks a release. `gate` returns them; they are importable from `gate` and, for
the pages, from `types` as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from annotate_app.services.types import AdjudicationInfo, LabelInfo
from annotate_app.store.enums import AgreementMode, Statistic, Weights

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AgreementSummary", "Confusion", "Disagreement", "Blockers"]


@dataclass(frozen=True, eq=False)
class AgreementSummary:
    """The agreement gate's figures, over the pairs with all N labels (excluded pairs left out).

    ``value`` is the project's ``statistic`` (NaN when undefined, which fails the gate); ``passes`` is
    ``value >= threshold``; ``band`` its Landis & Koch band. ``pairwise``/``pairwise_n``: annotator ×
    annotator kappa and shared-pair counts. ``per_query``: one row per query
    (metrics.agreement.group_agreement columns). ``warnings``: why a figure is undefined, if one is.
    """

    statistic: Statistic
    value: float
    threshold: float
    passes: bool
    band: str
    mode: AgreementMode
    weights: Weights | None
    n_pairs: int
    n_annotators: int
    n_labels: int
    percent_agreement: float
    mean_pairwise_kappa: float
    fleiss_kappa: float | None
    krippendorff_alpha: float
    disagreements: int
    unadjudicated: int
    pairwise: pd.DataFrame
    pairwise_n: pd.DataFrame
    per_query: pd.DataFrame
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The scalar figures (what a release stores)."""
        keys = (
            "statistic",
            "value",
            "threshold",
            "passes",
            "band",
            "mode",
            "weights",
            "n_pairs",
            "n_annotators",
            "n_labels",
            "percent_agreement",
            "mean_pairwise_kappa",
            "fleiss_kappa",
            "krippendorff_alpha",
            "disagreements",
            "unadjudicated",
        )
        out = {k: getattr(self, k) for k in keys}
        return {k: (None if isinstance(v, float) and v != v else v) for k, v in out.items()}


@dataclass(frozen=True, eq=False)
class Confusion:
    """Two annotators' grades on the pairs both labelled: ``table`` rows are ``annotator_a``'s grades, columns
    ``annotator_b``'s, over the whole scale; ``kappa`` is Cohen's kappa in the project's agreement mode."""

    annotator_a: str
    annotator_b: str
    table: pd.DataFrame
    n_pairs: int
    kappa: float


@dataclass(frozen=True)
class Disagreement:
    """A pair whose labels disagree, with every annotator's grade and reason side by side."""

    pair_id: int
    query_id: str
    query_text: str
    doc_id: str
    doc_title: str
    doc_text: str
    labels: tuple[LabelInfo, ...]
    disagreement: float
    spread: float
    adjudication: AdjudicationInfo | None
    prior_grades: tuple[tuple[str, int], ...] = ()

    @property
    def resolved(self) -> bool:
        return self.adjudication is not None and self.adjudication.valid


@dataclass(frozen=True)
class Blockers:
    """Why a release cannot be made yet. ``hard`` blockers always stop it; a low agreement only stops it
    without a written justification. ``unfilled``: why the project's fill judge fills none of the missing
    pairs ("" when none is set or it passes calibration)."""

    missing_labels: int
    stale_labels: int
    unadjudicated: int
    no_pairs: bool
    agreement: float
    threshold: float
    statistic: Statistic
    unfilled: str = ""
    passages: str = ""  # why the passages' agreement stops a release ("" when it does not)

    @property
    def below_threshold(self) -> bool:
        return not (self.agreement >= self.threshold)

    @property
    def hard(self) -> tuple[str, ...]:
        out = []
        if self.no_pairs:
            out.append("no pairs to release")
        if self.missing_labels:
            why = f"; no judge fills them: {self.unfilled}" if self.unfilled else ""
            out.append(f"{self.missing_labels} pairs lack their labels (label them or exclude them){why}")
        if self.stale_labels:
            out.append(
                f"{self.stale_labels} labels were made on an older document version (re-judge or exclude)"
            )
        if self.unadjudicated:
            out.append(f"{self.unadjudicated} disagreements are not adjudicated")
        if self.passages:
            out.append(self.passages)
        return tuple(out)

    @property
    def ok(self) -> bool:
        """True when a release needs no justification."""
        return not self.hard and not self.below_threshold

    @property
    def agreement_message(self) -> str:
        """E.g. ``"cohen 0.667 is below the threshold 0.700"`` ("" when the threshold is reached)."""
        if not self.below_threshold:
            return ""
        if self.agreement != self.agreement:
            return f"{self.statistic} is undefined, so it does not reach the threshold {self.threshold:.3f}"
        return f"{self.statistic} {self.agreement:.3f} is below the threshold {self.threshold:.3f}"

    def messages(self) -> tuple[str, ...]:
        low = (
            (f"{self.agreement_message} (a reviewer may release with a written justification)",)
            if self.below_threshold
            else ()
        )
        return self.hard + low
