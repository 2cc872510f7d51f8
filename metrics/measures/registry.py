"""Measure names as text, in ir_measures syntax, parsed into small frozen specs.

``"P(rel=2)@5"`` parses into ``Measure("P", cutoff=5, rel=2)``, which prints back as ``P(rel=2)@5``. Default
parameters are left out of the canonical text (``P(rel=1)@5`` prints as ``P@5``) and aliases print as their
canonical name (``MAP`` → ``AP``, ``MRR`` → ``RR``), so equal measures have equal text.

Specs can also be built in Python: ``P(rel=2) @ 5``, ``nDCG(gain="exp") @ 10``.

Parameters: ``rel=N`` (relevance threshold), ``gain=lin|exp|{grade:gain,...}`` (nDCG), ``p=0.8`` (RBP's
persistence), ``beta=1`` (SetF), ``judged_only=True`` (any measure but Judged, NumRel and RBPResidual: the
condensed list, `metrics.ranking.Ranked.condensed`). IPrec takes a recall level for ``@``: ``IPrec@0.5``.

>>> parse_measure("MRR@10")
Measure('RR@10')
>>> str(parse_measure("nDCG(gain=exp)@10"))
'nDCG(gain=exp)@10'
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metrics import _trec, _user, context, ranking
from metrics._choice import Choice
from metrics.errors import MeasureError

__all__ = [
    "Measure",
    "MeasureDef",
    "CutoffPolicy",
    "Gain",
    "GainMap",
    "Aggregate",
    "Family",
    "REGISTRY",
    "ALIASES",
    "parse_measure",
    "parse_measures",
    "register",
    "compute",
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


@dataclass(frozen=True, kw_only=True)
class MeasureDef:
    """What a measure name accepts, means and computes.

    ``compute`` is the kernel (`metrics.ranking`): per-query values from the ranked rows and the measure's
    parameters. ``needs_relevant``: undefined (NaN per query, None in results) for a query without relevant
    documents. ``summary`` and ``formula`` are what the measure table (`markdown_table`, the README) says.
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

    def describe(self) -> str:
        """``"P: precision at k; relevant in top k / k (...)"``."""
        return f"{self.name}: {self.summary}; {self.formula}"


REGISTRY: dict[str, MeasureDef] = {}
ALIASES: dict[str, str] = {}
_DEFAULTS: dict[str, Any] = {"rel": 1, "gain": Gain.LIN, "judged_only": False, "p": 0.8, "beta": 1.0}


def register(definition: MeasureDef, *aliases: str) -> MeasureDef:
    """Add a measure name (with ``definition.aliases`` and any further ``aliases``) to the registry."""
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


def compute(ranked: ranking.Ranked, measure: Measure) -> np.ndarray:
    """Per-query values of ``measure`` (float64, NaN where undefined), aligned with ``ranked.query_ids``.

    The measure's kernel (``measure.definition.compute``) does the work; a measure that ``needs_relevant`` is
    NaN for a query without relevant documents (grade >= ``rel``; nDCG, without ``rel``, counts grades >= 1).
    """
    definition = measure.definition
    values = definition.compute(ranked.condensed() if measure.judged_only else ranked, measure)
    if definition.needs_relevant:
        values = np.where(ranked.relevant_count(measure.rel) == 0, np.nan, values)
    return values


def markdown_table() -> str:
    """The measure table of the README (section "Measure names"), from the registry.

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
        rows.append(f"| {', '.join(forms)} | {d.summary}: {d.formula} | {undefined} |")
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


def _check_cutoff(value: Any, text: str = "") -> int | None:
    if value is None:
        return None
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or value < 1:
        where = f" in {text!r}" if text else ""
        raise MeasureError(f"cutoff must be an int >= 1; got {value!r}{where}")
    return int(value)  # a numpy integer as a plain int: specs print, hash and compare as with an int


def _check_param(name: str, value: Any) -> Any:
    """The parameter's value, checked and normalized (a gain mapping becomes a `GainMap`)."""
    if name == "rel":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise MeasureError(f"rel must be an int >= 1; got {value!r}")
    elif name == "gain":
        return _check_gain(value)
    elif name == "judged_only" and not isinstance(value, bool):
        raise MeasureError(f"judged_only must be True or False; got {value!r}")
    elif name in _NUMBERS:
        low, high, closed, shown = _NUMBERS[name]
        number = _real(value)
        if number is None or not (low <= number <= high if closed else low < number < high):
            raise MeasureError(f"{name} must be a number {shown}; got {value!r}")
        return number
    return value


_NUMBERS = {  # name -> (low, high, bounds included, as shown in the message)
    "p": (0.0, 1.0, False, "in (0, 1)"),
    "beta": (0.0, math.inf, False, "> 0"),
    "recall": (0.0, 1.0, True, "in [0, 1]"),
}


def _real(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _check_gain(value: Any) -> Any:
    if isinstance(value, GainMap) or (isinstance(value, str) and value in tuple(Gain)):
        return value
    if isinstance(value, Mapping) and value:
        for grade, gain in value.items():
            if isinstance(grade, bool) or not isinstance(grade, int) or grade < 0 or _real(gain) is None:
                raise MeasureError(
                    f"gain must map grades (ints >= 0) to numbers; got {grade!r}: {gain!r} in {value!r}"
                )
        return GainMap(value)
    raise MeasureError(f"gain must be 'lin' or 'exp'; got {value!r}")


@dataclass(frozen=True)
class Measure:
    """A measure with its parameters: ``Measure("P", cutoff=5, rel=2)`` is ``P(rel=2)@5``."""

    name: str
    cutoff: int | None = None
    params: tuple[tuple[str, Any], ...] = field(default=())

    def __init__(self, name: str, cutoff: int | None = None, **params: Any):
        definition = _lookup(name) if isinstance(name, str) else None
        if definition is None:
            raise MeasureError(f"unknown measure {name!r}; {_known()}")
        if definition.cutoff == CutoffPolicy.RECALL and cutoff is not None:
            cutoff, params = None, {**params, "recall": cutoff}
        for key, value in params.items():
            if key not in definition.params and not (key == "judged_only" and definition.condensable):
                allowed = ", ".join(definition.params) or "none"
                raise MeasureError(f"{definition.name} has no parameter {key!r}; its parameters: {allowed}")
            params[key] = _check_param(key, value)
        cleaned = tuple(sorted((k, v) for k, v in params.items() if v != _DEFAULTS.get(k)))
        object.__setattr__(self, "name", definition.name)
        object.__setattr__(self, "cutoff", _check_cutoff(cutoff))
        object.__setattr__(self, "params", cleaned)
        self._check_cutoff_policy(definition)

    def _check_cutoff_policy(self, definition: MeasureDef) -> None:
        if definition.cutoff == CutoffPolicy.NONE and self.cutoff is not None:
            raise MeasureError(f"{definition.name} takes no cutoff; got {str(self)!r}")

    @property
    def definition(self) -> MeasureDef:
        return REGISTRY[self.name]

    @property
    def rel(self) -> int:
        return dict(self.params).get("rel", 1)

    @property
    def gain(self) -> Gain | GainMap:
        value = dict(self.params).get("gain", Gain.LIN)
        return value if isinstance(value, GainMap) else Gain(value)

    @property
    def judged_only(self) -> bool:
        return bool(dict(self.params).get("judged_only", False))

    @property
    def p(self) -> float:
        return float(dict(self.params).get("p", _DEFAULTS["p"]))

    @property
    def beta(self) -> float:
        return float(dict(self.params).get("beta", _DEFAULTS["beta"]))

    @property
    def recall(self) -> float:
        return float(dict(self.params).get("recall", math.nan))

    def __call__(self, **params: Any) -> Measure:
        return Measure(self.name, self.cutoff, **{**dict(self.params), **params})

    def __matmul__(self, cutoff: int) -> Measure:
        return Measure(self.name, cutoff, **dict(self.params))

    def validate(self) -> Measure:
        """Raise if this measure needs a cutoff and has none (``P`` alone is a family, ``P@10`` a measure)."""
        if self.definition.cutoff == CutoffPolicy.REQUIRED and self.cutoff is None:
            raise MeasureError(f"{self.name} needs a cutoff, e.g. '{self.name}@10'")
        if self.definition.cutoff == CutoffPolicy.RECALL and "recall" not in dict(self.params):
            raise MeasureError(f"{self.name} needs a recall level in [0, 1], e.g. '{self.name}@0.5'")
        return self

    def __str__(self) -> str:
        shown = [(k, v) for k, v in self.params if k != "recall"]
        params = f"({','.join(f'{k}={_shown(v)}' for k, v in shown)})" if shown else ""
        recall = dict(self.params).get("recall")
        at = self.cutoff if recall is None else _shown(recall)
        cutoff = f"@{at}" if at is not None else ""
        return f"{self.name}{params}{cutoff}"

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


def _shown(value: Any) -> str:
    """A parameter value as measure text: an integral float as an int (``beta=2``), others as str()."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


_SYNTAX = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9_-]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>[^@]*))?")


def parse_measure(text: str | Measure) -> Measure:
    """Parse ``NAME``, ``NAME@k``, ``NAME(param=value,...)@k`` into a validated `Measure`."""
    if isinstance(text, Measure):
        return text.validate()
    if not isinstance(text, str):
        raise MeasureError(f"measure must be a str or Measure; got {type(text).__name__} {text!r}")
    match = _SYNTAX.fullmatch(text.strip())
    if match is None:
        raise MeasureError(f"cannot parse measure {text!r}; expected NAME, NAME@k or NAME(param=value)@k")
    definition = _lookup(match["name"])
    if definition is None:
        raise MeasureError(f"unknown measure {match['name']!r} in {text!r}; {_known()}")
    params = _parse_params(match["params"], text)
    if definition.cutoff == CutoffPolicy.RECALL:
        cutoff, params = None, {**params, **_parse_recall(match["cutoff"], text)}
    else:
        cutoff = _parse_cutoff(match["cutoff"], text)
    try:
        return Measure(match["name"], cutoff, **params).validate()
    except MeasureError as exc:
        raise MeasureError(f"{exc} (in {text!r})") from None


def _parse_cutoff(raw: str | None, text: str) -> int | None:
    if raw is None:
        return None
    if not re.fullmatch(r"[+-]?\d+", raw.strip()):
        raise MeasureError(f"cutoff must be an int >= 1; got {raw!r} in {text!r}")
    return _check_cutoff(int(raw), text)


def _parse_recall(raw: str | None, text: str) -> dict[str, float]:
    if raw is None:
        return {}
    try:
        return {"recall": float(raw)}
    except ValueError:
        raise MeasureError(f"recall level must be a number in [0, 1]; got {raw!r} in {text!r}") from None


def _parse_params(raw: str | None, text: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    parts = re.split(r",(?![^{]*\})", raw or "")  # commas inside {...} (a gain map) do not split
    for part in filter(None, (p.strip() for p in parts)):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not key or not value:
            raise MeasureError(f"cannot parse parameter {part!r} in {text!r}; expected name=value")
        params[key] = _parse_value(value, text)
    return params


def _parse_value(value: str, text: str) -> Any:
    """An int, a float, True/False, a gain map ``{grade:gain,...}``, or the text itself."""
    if re.fullmatch(r"[+-]?\d+", value):
        return int(value)
    if value in ("True", "False"):
        return value == "True"
    if value.startswith("{") and value.endswith("}"):
        return _parse_gain_map(value, text)
    try:
        return float(value)
    except ValueError:
        return value


def _parse_gain_map(value: str, text: str) -> dict[int, float]:
    mapping: dict[int, float] = {}
    for pair in filter(None, (p.strip() for p in value[1:-1].split(","))):
        grade, sep, gain = (s.strip() for s in pair.partition(":"))
        try:
            mapping[int(grade)] = float(gain)
        except ValueError:
            raise MeasureError(
                f"cannot parse gain {pair!r} in {text!r}; expected {{grade:gain,...}} with numbers"
            ) from None
        if not sep:
            raise MeasureError(f"cannot parse gain {pair!r} in {text!r}; expected grade:gain")
    return mapping


def parse_measures(items: Iterable[str | Measure] | str) -> tuple[Measure, ...]:
    """Parse several measures, keeping their order and dropping repeats."""
    if isinstance(items, str | Measure):
        items = [items]
    out: dict[str, Measure] = {}
    for item in items:
        measure = parse_measure(item)
        out.setdefault(str(measure), measure)
    if not out:
        raise MeasureError("measures must name at least one measure; got none")
    return tuple(out.values())


# Module-level specs for Python use: ``from metrics.measures import P, nDCG``; ``P(rel=2) @ 5``.
P, R, F1, nDCG, AP, RR = (Measure(n) for n in ("P", "R", "F1", "nDCG", "AP", "RR"))
RPrec, Success, Judged, FirstRel = (Measure(n) for n in ("R-Prec", "Success", "Judged", "FirstRel"))
ERR, RBP, Bpref, infAP, GMAP, IPrec = (Measure(n) for n in ("ERR", "RBP", "Bpref", "infAP", "GMAP", "IPrec"))
SetP, SetR, SetF, NumRet, NumRel, NumRelRet = (
    Measure(n) for n in ("SetP", "SetR", "SetF", "NumRet", "NumRel", "NumRelRet")
)
