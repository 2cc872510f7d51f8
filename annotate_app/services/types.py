"""The values services return: small frozen dataclasses (and DataFrames for tables), never ORM objects.

Pages can keep them in session state, compare them, and render them; nothing in them touches the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "GradeScale",
    "UserInfo",
    "ProjectSettings",
    "ProjectInfo",
    "GuidelinesInfo",
    "MemberInfo",
    "ImportPreview",
    "ImportReport",
    "PoolReport",
    "PairInfo",
    "LabelInfo",
    "PairView",
    "Progress",
    "AnnotatorProgress",
    "ProjectStatus",
    "AgreementSummary",
    "Disagreement",
    "AdjudicationInfo",
    "Blockers",
    "ReleaseInfo",
    "AuditInfo",
    "Confusion",
    "DEFAULT_GRADE_SCALE",
]

GradeScale = tuple[tuple[int, str], ...]
DEFAULT_GRADE_SCALE: GradeScale = (
    (0, "Not relevant"),
    (1, "Related, does not answer"),
    (2, "Partly answers"),
    (3, "Fully answers"),
)


@dataclass(frozen=True)
class UserInfo:
    id: int
    username: str
    display_name: str
    role: str
    active: bool
    locked_until: datetime | None
    last_login_at: datetime | None
    created_at: datetime


@dataclass(frozen=True)
class ProjectSettings:
    """A project's judging and agreement rules (validated by `projects.check_settings`).

    ``grade_scale``: (grade, label) pairs in increasing grade order. ``annotators_per_pair``: N distinct
    annotators judge each pair. ``statistic``: ``"cohen"`` (mean pairwise Cohen's kappa; with two annotators
    exactly Cohen's kappa), ``"fleiss"`` or ``"krippendorff"`` (alpha, nominal in binary mode, ordinal in
    weighted mode), which must reach ``threshold``. ``agreement_mode``: ``"binary"`` (grades ≥
    ``relevance_cutoff`` are relevant) or ``"weighted"`` (kappa with ``weights`` over the whole scale).
    ``min_reason_length``: characters a reason (or a skip reason) needs. ``claim_timeout_minutes``: an
    unlabelled claim older than this is given to someone else when the queue runs dry.
    """

    grade_scale: GradeScale = DEFAULT_GRADE_SCALE
    annotators_per_pair: int = 2
    statistic: str = "cohen"
    threshold: float = 0.7
    relevance_cutoff: int = 1
    agreement_mode: str = "binary"
    weights: str = "linear"
    min_reason_length: int = 5
    claim_timeout_minutes: int = 60

    @property
    def grades(self) -> tuple[int, ...]:
        return tuple(g for g, _ in self.grade_scale)


@dataclass(frozen=True)
class ProjectInfo:
    id: int
    name: str
    title: str
    settings: ProjectSettings
    guidelines_version: int | None
    created_at: datetime


@dataclass(frozen=True)
class GuidelinesInfo:
    version: int
    markdown: str
    author: str
    created_at: datetime


@dataclass(frozen=True)
class MemberInfo:
    username: str
    role: str
    quota: int | None


@dataclass(frozen=True)
class ImportPreview:
    """What a file would import: row count, columns, the first rows, and every problem (nothing written)."""

    kind: str
    source: str
    n_rows: int
    columns: tuple[str, ...]
    sample: tuple[dict, ...]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class ImportReport:
    """What an import did. ``added``/``changed``/``unchanged`` count rows; ``stale_labels`` counts labels made
    on a document version that this import replaced."""

    kind: str
    source: str
    name: str
    added: int
    changed: int = 0
    unchanged: int = 0
    stale_labels: int = 0

    def __str__(self) -> str:
        extra = f", {self.stale_labels} labels now stale" if self.stale_labels else ""
        return (
            f"{self.kind} {self.name}: {self.added} added, {self.changed} changed, "
            f"{self.unchanged} unchanged{extra}"
        )


@dataclass(frozen=True)
class PoolReport:
    runs: tuple[str, ...]
    depth: int
    budget: int | None
    added: int
    already_pooled: int
    over_budget: int
    per_query: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        return (
            f"pooled {', '.join(self.runs)} at depth {self.depth}: {self.added} new pairs, "
            f"{self.already_pooled} already in the pool, {self.over_budget} over the budget"
        )


@dataclass(frozen=True)
class PairInfo:
    pair_id: int
    query_id: str
    doc_id: str
    origin: str
    excluded: bool
    sources: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class LabelInfo:
    """One label version. ``stale``: judged on an older version of the document than the current one."""

    pair_id: int
    query_id: str
    doc_id: str
    annotator: str
    version: int
    grade: int
    reason: str
    unsure: bool
    seconds: float | None
    doc_version: int
    stale: bool
    created_at: datetime
    doc_title: str = ""


@dataclass(frozen=True)
class PairView:
    """Everything the judging screen shows for one pair — and nothing about other annotators' labels.

    ``current``: the caller's own latest label when re-judging (edit or stale); None for a fresh pair.
    """

    pair_id: int
    project: str
    query_id: str
    query_text: str
    query_meta: dict[str, Any]
    doc_id: str
    doc_title: str
    doc_text: str
    doc_meta: dict[str, Any]
    doc_version: int
    grade_scale: tuple[tuple[int, str], ...]
    min_reason_length: int
    guidelines_version: int | None
    guidelines: str
    current: LabelInfo | None = None

    @property
    def stale(self) -> bool:
        return self.current is not None and self.current.doc_version != self.doc_version


@dataclass(frozen=True)
class Progress:
    """``done`` of ``total`` (``fraction`` in [0, 1]; 1.0 when there is nothing to do)."""

    done: int
    total: int

    @property
    def fraction(self) -> float:
        return 1.0 if self.total == 0 else self.done / self.total


@dataclass(frozen=True)
class AnnotatorProgress:
    username: str
    done: int
    active: int
    skipped: int
    stale: int
    quota: int | None
    available: int

    @property
    def progress(self) -> Progress:
        """Own labels against what this annotator could still take (bounded by the quota)."""
        total = self.done + self.active + self.available
        return Progress(self.done, total if self.quota is None else min(total, self.quota))


@dataclass(frozen=True)
class ProjectStatus:
    """Where a project stands. ``labels``: current labels (slots done) of ``slots`` = pairs × N."""

    project: str
    pairs: int
    excluded: int
    complete: int
    in_progress: int
    untouched: int
    labels: int
    slots: int
    stale: int
    disagreements: int
    adjudicated: int
    releases: int
    annotators: tuple[AnnotatorProgress, ...]

    @property
    def progress(self) -> Progress:
        return Progress(self.labels, self.slots)


@dataclass(frozen=True, eq=False)
class AgreementSummary:
    """The agreement gate's figures, over the pairs with all N labels (excluded pairs left out).

    ``value`` is the project's ``statistic`` (NaN when undefined, which fails the gate); ``passes`` is
    ``value >= threshold``; ``band`` its Landis & Koch band. ``pairwise``/``pairwise_n``: annotator ×
    annotator kappa and shared-pair counts. ``per_query``: one row per query (metrics.agreement.group_agreement
    columns). ``warnings``: why a figure is undefined, if one is.
    """

    statistic: str
    value: float
    threshold: float
    passes: bool
    band: str
    mode: str
    weights: str | None
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
class AdjudicationInfo:
    pair_id: int
    reviewer: str
    grade: int
    reason: str
    created_at: datetime
    valid: bool


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
    without a written justification."""

    missing_labels: int
    stale_labels: int
    unadjudicated: int
    no_pairs: bool
    agreement: float
    threshold: float
    statistic: str

    @property
    def below_threshold(self) -> bool:
        return not (self.agreement >= self.threshold)

    @property
    def hard(self) -> tuple[str, ...]:
        out = []
        if self.no_pairs:
            out.append("no pairs to release")
        if self.missing_labels:
            out.append(f"{self.missing_labels} pairs lack their labels (label them or exclude them)")
        if self.stale_labels:
            out.append(
                f"{self.stale_labels} labels were made on an older document version (re-judge or exclude)"
            )
        if self.unadjudicated:
            out.append(f"{self.unadjudicated} disagreements are not adjudicated")
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


@dataclass(frozen=True)
class ReleaseInfo:
    project: str
    version: int
    created_by: str
    created_at: datetime
    statistic: str
    agreement_value: float | None
    threshold: float
    justification: str | None
    content_hash: str
    corpus_hash: str
    guidelines_version: int | None
    n_qrels: int
    counts: dict[str, int]
    annotators: tuple[str, ...]
    agreement: dict[str, Any]
    note: str = ""

    @property
    def below_threshold(self) -> bool:
        return self.agreement_value is None or self.agreement_value < self.threshold


@dataclass(frozen=True)
class AuditInfo:
    id: int
    at: datetime
    actor: str
    action: str
    project_id: int | None
    target: str
    details: dict[str, Any]
