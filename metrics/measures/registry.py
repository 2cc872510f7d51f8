"""The one list of measures: each name's cutoff policy, parameters, meaning, formula and kernel.

`register` adds a `MeasureDef`; `REGISTRY` (name -> definition) and `ALIASES` (alias -> name) are what
`metrics.measures.spec` parses against, what `metrics.evaluate` computes and what `markdown_table` prints for
the README. The kernels live beside it, one module per family: `metrics.measures.ranking` (rank measures),
`metrics.measures._trec` (trec_eval's set, count and incomplete-judgment measures), `metrics.measures._user`
(ERR, RBP) and `metrics.measures.context` (RAG context measures).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from metrics._choice import Choice
from metrics.errors import MeasureError
from metrics.measures import _trec, _user, context, ranking

__all__ = [
    "MeasureDef",
    "CutoffPolicy",
    "Gain",
    "GainMap",
    "Aggregate",
    "Family",
    "REGISTRY",
    "ALIASES",
    "MIN_GEO_MEAN",
    "register",
    "markdown_table",
]

Kernel = Callable[[ranking.Ranked, ranking.Params], np.ndarray]
GainMap = ranking.GainMap
MIN_GEO_MEAN = 0.00001  # trec_eval's floor under a value before its log, for geometric means (trec_eval.h)


class CutoffPolicy(Choice):
    """Whether a measure name takes ``@k``."""

    REQUIRED = "required"  # P@10; "P" alone is a family, not a measure
    OPTIONAL = "optional"  # AP or AP@10
    NONE = "none"  # R-Prec, FirstRel
    RECALL = "recall"  # IPrec@0.5: ``@`` takes a recall level in [0, 1], kept as the parameter ``recall``


class Gain(Choice):
    """nDCG's gain of a grade g: ``lin`` is g (trec_eval), ``exp`` is 2^g − 1."""

    LIN = "lin"
    EXP = "exp"


class Aggregate(Choice):
    """How `metrics.evaluate.Result.mean` summarizes a measure's per-query values."""

    MEAN = "mean"  # arithmetic mean over the queries where it is defined
    GEOMETRIC = "geometric"  # exp(mean(log(max(v, MIN_GEO_MEAN)))), trec_eval's gm_map


class Family(Choice):
    """Which group a measure is listed in (error messages)."""

    RANK = "rank"
    TREC = "trec_eval"  # trec_eval's set, count, incomplete-judgment and summary measures
    USER = "user model"  # ERR, RBP
    EVIDENCE = "evidence passages"  # EvidenceRecall, ...: chunk runs scored against passages


@dataclass(frozen=True, kw_only=True)
class MeasureDef:
    """What a measure name accepts, means and computes.

    ``compute`` is the kernel (`metrics.measures.ranking` and its siblings): per-query values from the ranked
    rows and the measure's parameters. ``needs_relevant``: undefined (NaN per query, None in results) for a
    query without relevant documents. ``summary`` and ``formula`` are what the measure table
    (`markdown_table`, the README) says.
    """

    name: str
    cutoff: CutoffPolicy
    params: tuple[str, ...]
    needs_relevant: bool
    summary: str
    formula: str
    compute: Kernel
    aliases: tuple[str, ...] = ()
    higher_is_better: bool = True  # False when a smaller value is the better one (FirstRel)
    undefined: str = ""  # when not needs_relevant: when it is undefined anyway, for the table
    condensable: bool = True  # takes judged_only=True (the condensed list), as every rank measure
    aggregate: Aggregate = Aggregate.MEAN
    family: Family = Family.RANK
    requires: str = ""  # an input beyond qrels and run ("passages"); without it the measure is refused

    def describe(self) -> str:
        """``"P: precision at k; relevant in top k / k (...)"``."""
        return f"{self.name}: {self.summary}; {self.formula}"


REGISTRY: dict[str, MeasureDef] = {}
ALIASES: dict[str, str] = {}
_DEFAULTS: dict[str, Any] = {"rel": 1, "gain": Gain.LIN, "judged_only": False, "p": 0.8, "beta": 1.0}


def register(definition: MeasureDef, *aliases: str) -> MeasureDef:
    """Add a measure name, with ``definition.aliases`` and any further ``aliases``, to the registry.

    Args:
        definition: what the name accepts, means and computes.
        aliases: more names for it (case-insensitive, as every name).

    Returns:
        ``definition``, so that a module can keep it.
    """
    REGISTRY[definition.name] = definition
    for alias in (*definition.aliases, *aliases):
        ALIASES[alias] = definition.name
    return definition


_REQUIRED, _OPTIONAL, _NONE = CutoffPolicy.REQUIRED, CutoffPolicy.OPTIONAL, CutoffPolicy.NONE
for _definition in (
    MeasureDef(
        name="P",
        cutoff=_REQUIRED,
        params=("rel",),
        needs_relevant=False,
        summary="precision at k",
        formula="relevant in top k / k (k even when fewer than k were returned)",
        compute=ranking.precision,
        aliases=("Precision",),
    ),
    MeasureDef(
        name="R",
        cutoff=_REQUIRED,
        params=("rel",),
        needs_relevant=True,
        summary="recall at k",
        formula="relevant in top k / relevant judged",
        compute=ranking.recall,
        aliases=("Recall",),
    ),
    MeasureDef(
        name="F1",
        cutoff=_REQUIRED,
        params=("rel",),
        needs_relevant=True,
        summary="F1 at k",
        formula="2·P@k·R@k / (P@k + R@k), 0 when both are 0",
        compute=ranking.f1,
    ),
    MeasureDef(
        name="nDCG",
        cutoff=_OPTIONAL,
        params=("gain",),
        needs_relevant=True,
        summary="normalized discounted cumulative gain",
        formula="Σ gain_i / log2(i+1) over ranks i ≤ k, divided by the ideal ranking's; gain = grade "
        "(gain=lin, trec_eval) or 2^grade − 1 (gain=exp); grades ≤ 0 give no gain",
        compute=ranking.ndcg,
        aliases=("NDCG",),
    ),
    MeasureDef(
        name="AP",
        cutoff=_OPTIONAL,
        params=("rel",),
        needs_relevant=True,
        summary="average precision",
        formula="Σ P@i over relevant ranks i ≤ k, divided by all relevant judged",
        compute=ranking.average_precision,
        aliases=("MAP",),
    ),
    MeasureDef(
        name="RR",
        cutoff=_OPTIONAL,
        params=("rel",),
        needs_relevant=False,
        summary="reciprocal rank",
        formula="1 / rank of the first relevant document (within k), 0 when none",
        compute=ranking.reciprocal_rank,
        aliases=("MRR",),
    ),
    MeasureDef(
        name="R-Prec",
        cutoff=_NONE,
        params=("rel",),
        needs_relevant=True,
        summary="R-precision",
        formula="relevant in top R / R, R = relevant judged",
        compute=ranking.r_precision,
        aliases=("Rprec", "RPrec"),
    ),
    MeasureDef(
        name="Success",
        cutoff=_REQUIRED,
        params=("rel",),
        needs_relevant=False,
        summary="success at k",
        formula="1 if a relevant document is in the top k, else 0",
        compute=ranking.success,
    ),
    MeasureDef(
        name="Judged",
        cutoff=_REQUIRED,
        params=(),
        needs_relevant=False,
        summary="judged rate at k",
        formula="judged documents in top k / min(k, returned); 0 when nothing was returned",
        compute=ranking.judged,
        condensable=False,
    ),
    MeasureDef(
        name="FirstRel",
        cutoff=_NONE,
        params=("rel",),
        needs_relevant=False,
        summary="rank of the first relevant document",
        formula="1-based rank of the first relevant document; lower is better",
        compute=ranking.first_rel,
        higher_is_better=False,
        undefined="when no relevant document was returned",
    ),
    MeasureDef(
        name="ContextPrecision",
        cutoff=_REQUIRED,
        params=("rel",),
        needs_relevant=True,
        summary="context precision at k (RAG, from human qrels)",
        formula="Σ P@i over relevant ranks i ≤ k / relevant in top k; 0 when none in top k",
        compute=context.context_precision,
        aliases=("CtxP",),
    ),
    MeasureDef(
        name="ContextRecall",
        cutoff=_REQUIRED,
        params=("rel",),
        needs_relevant=True,
        summary="context recall at k (RAG, from human qrels)",
        formula="relevant in top k / relevant judged (equals R@k on human qrels)",
        compute=context.context_recall,
        aliases=("CtxR",),
    ),
    MeasureDef(
        name="ERR",
        cutoff=_OPTIONAL,
        params=(),
        needs_relevant=False,
        summary="expected reciprocal rank (gdeval)",
        formula="Σ R_i / i · Π_{j<i} (1 − R_j) over ranks i ≤ k, R = (2^grade − 1) / 16 (grades 0..4)",
        compute=_user.err,
        family=Family.USER,
    ),
    MeasureDef(
        name="RBP",
        cutoff=_OPTIONAL,
        params=("p", "rel"),
        needs_relevant=False,
        summary="rank-biased precision (p=0.8 by default)",
        formula="(1 − p) Σ p^(i−1) over relevant ranks i ≤ k",
        compute=_user.rbp,
        family=Family.USER,
    ),
    MeasureDef(
        name="RBPResidual",
        cutoff=_OPTIONAL,
        params=("p",),
        needs_relevant=False,
        summary="RBP's residual, what RBP may gain if every unjudged document were relevant",
        formula="(1 − p) Σ p^(i−1) over unjudged ranks i ≤ d, + p^d, d = min(k, returned); a negative "
        "grade counts as unjudged",
        compute=_user.rbp_residual,
        aliases=("RBP_resid",),
        higher_is_better=False,  # a smaller residual: fewer unknowns
        condensable=False,
        family=Family.USER,
    ),
    MeasureDef(
        name="Bpref",
        cutoff=_NONE,
        params=("rel",),
        needs_relevant=True,
        summary="binary preference (trec_eval bpref)",
        formula="mean over the R relevant of 1 − min(judged non-relevant above, R) / min(judged "
        "non-relevant, R); unjudged documents are skipped",
        compute=_trec.bpref,
        aliases=("BPref",),
        family=Family.TREC,
    ),
    MeasureDef(
        name="infAP",
        cutoff=_NONE,
        params=("rel",),
        needs_relevant=True,
        summary="inferred average precision (trec_eval infAP)",
        formula="AP estimated from a judged sample of the pool; a negative grade is pooled but unjudged",
        compute=_trec.inferred_ap,
        family=Family.TREC,
    ),
    MeasureDef(
        name="GMAP",
        cutoff=_OPTIONAL,
        params=("rel",),
        needs_relevant=True,
        summary="geometric mean average precision (trec_eval gm_map)",
        formula="per query AP; the mean is exp(mean log max(AP, 0.00001))",
        compute=ranking.average_precision,
        aliases=("gm_map",),
        aggregate=Aggregate.GEOMETRIC,
        family=Family.TREC,
    ),
    MeasureDef(
        name="IPrec",
        cutoff=CutoffPolicy.RECALL,
        params=("rel", "recall"),
        needs_relevant=True,
        summary="interpolated precision at recall r (trec_eval iprec_at_recall)",
        formula="best precision at or below the rank of the c-th relevant, c = floor(r·R + 0.9); 0 when "
        "fewer were returned",
        compute=_trec.iprec_at_recall,
        family=Family.TREC,
    ),
    MeasureDef(
        name="SetP",
        cutoff=_NONE,
        params=("rel",),
        needs_relevant=False,
        summary="set precision (trec_eval set_P)",
        formula="relevant returned / returned; 0 when nothing was returned",
        compute=_trec.set_precision,
        family=Family.TREC,
    ),
    MeasureDef(
        name="SetR",
        cutoff=_NONE,
        params=("rel",),
        needs_relevant=True,
        summary="set recall (trec_eval set_recall)",
        formula="relevant returned / relevant judged",
        compute=_trec.set_recall,
        family=Family.TREC,
    ),
    MeasureDef(
        name="SetF",
        cutoff=_NONE,
        params=("rel", "beta"),
        needs_relevant=True,
        summary="set F (trec_eval set_F; beta=1 by default)",
        formula="(1 + beta)·SetP·SetR / (beta·SetP + SetR), 0 when nothing relevant was returned; beta is "
        "trec_eval's x, the usual β²",
        compute=_trec.set_f,
        family=Family.TREC,
    ),
    MeasureDef(
        name="NumRet",
        cutoff=_NONE,
        params=(),
        needs_relevant=False,
        summary="documents returned (trec_eval num_ret)",
        formula="number of documents the run returned for the query",
        compute=_trec.num_ret,
        family=Family.TREC,
    ),
    MeasureDef(
        name="NumRel",
        cutoff=_NONE,
        params=("rel",),
        needs_relevant=False,
        summary="relevant documents (trec_eval num_rel)",
        formula="relevant judged, returned or not",
        compute=_trec.num_rel,
        condensable=False,
        family=Family.TREC,
    ),
    MeasureDef(
        name="NumRelRet",
        cutoff=_NONE,
        params=("rel",),
        needs_relevant=False,
        summary="relevant documents returned (trec_eval num_rel_ret)",
        formula="relevant judged among the returned",
        compute=_trec.num_rel_ret,
        family=Family.TREC,
    ),
):
    register(_definition)


def _needs_passages(ranked: ranking.Ranked, measure: ranking.Params) -> np.ndarray:
    """The kernel of the evidence measures: they need passages and chunks, which qrels do not hold."""
    raise MeasureError(
        f"{measure} needs evidence passages and chunks: qrelforge score --passages PASSAGES --chunks CHUNKS "
        "RUN, or metrics.passages.score_chunk_run"
    )


for _name, _summary, _formula in (
    ("EvidenceRecall", "evidence recall at k (character level)", "|E ∩ T| / |E|"),
    ("EvidencePrecision", "evidence precision at k (character level)", "|E ∩ T| / |T|, 0 when T is empty"),
    (
        "EvidenceIoU",
        "evidence IoU at k (character level, as Chroma's chunking evaluation)",
        "|E ∩ T| / |E ∪ T|",
    ),
):
    register(
        MeasureDef(
            name=_name,
            cutoff=_REQUIRED,
            params=("rel",),
            needs_relevant=True,
            summary=_summary,
            formula=f"{_formula}; E: the characters of the query's passages of grade ≥ rel, T: those of the "
            "top k chunks (needs --passages and --chunks)",
            compute=_needs_passages,
            condensable=False,
            family=Family.EVIDENCE,
            requires="passages",
        )
    )


def markdown_table() -> str:
    """The measure table of the README (section "Measure names"), from the registry.

    Returns:
        The Markdown table: a row per registered measure, its name forms, meaning and formula, and whether
        it is undefined for a query without relevant documents.

    >>> print(markdown_table().splitlines()[2])
    | `P@k` | precision at k: relevant in top k / k (k even when fewer than k were returned) | no (0) |
    """
    rows = ["| name | meaning | undefined without relevant documents |", "|---|---|---|"]
    for d in REGISTRY.values():
        forms = {
            CutoffPolicy.REQUIRED: [f"`{d.name}@k`"],
            CutoffPolicy.OPTIONAL: [f"`{d.name}`", f"`{d.name}@k`"],
            CutoffPolicy.NONE: [f"`{d.name}`"],
            CutoffPolicy.RECALL: [f"`{d.name}@r`"],
        }[d.cutoff]
        if d.needs_relevant:
            undefined = "yes"
        else:
            undefined = f"no; undefined {d.undefined}" if d.undefined else "no (0)"
        meaning = f"{d.summary}: {d.formula}".replace("|", "\\|")  # |E| would end the cell
        rows.append(f"| {', '.join(forms)} | {meaning} | {undefined} |")
    return "\n".join(rows) + "\n"


def _lookup(name: str) -> MeasureDef | None:
    folded = {k.lower(): k for k in [*REGISTRY, *ALIASES]}
    key = folded.get(name.lower())
    return None if key is None else REGISTRY[ALIASES.get(key, key)]


def _known() -> str:
    aliases = ", ".join(f"{a}={c}" for a, c in sorted(ALIASES.items()))
    groups = {f: sorted((n for n, d in REGISTRY.items() if d.family == f), key=str.lower) for f in Family}
    rank = ", ".join(groups.pop(Family.RANK))
    more = "".join(f"; {family}: {', '.join(names)}" for family, names in groups.items() if names)
    return f"known: {rank} (aliases: {aliases}){more}"
