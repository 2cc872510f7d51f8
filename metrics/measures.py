"""Measure names as text, in ir_measures syntax, parsed into small frozen specs.

``"P(rel=2)@5"`` parses into ``Measure("P", cutoff=5, rel=2)``, which prints back as ``P(rel=2)@5``. Default
parameters are left out of the canonical text (``P(rel=1)@5`` prints as ``P@5``) and aliases print as their
canonical name (``MAP`` → ``AP``, ``MRR`` → ``RR``), so equal measures have equal text.

Specs can also be built in Python: ``P(rel=2) @ 5``, ``nDCG(gain="exp") @ 10``.

>>> parse_measure("MRR@10")
Measure('RR@10')
>>> str(parse_measure("nDCG(gain=exp)@10"))
'nDCG(gain=exp)@10'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metrics import context, ranking
from metrics._choice import Choice
from metrics.errors import MeasureError

__all__ = [
    "Measure",
    "MeasureDef",
    "CutoffPolicy",
    "Gain",
    "REGISTRY",
    "ALIASES",
    "parse_measure",
    "parse_measures",
    "register",
    "compute",
    "markdown_table",
]

Kernel = Callable[[ranking.Ranked, ranking.Params], np.ndarray]


class CutoffPolicy(Choice):
    """Whether a measure name takes ``@k``."""

    REQUIRED = "required"  # P@10; "P" alone is a family, not a measure
    OPTIONAL = "optional"  # AP or AP@10
    NONE = "none"  # R-Prec, FirstRel


class Gain(Choice):
    """nDCG's gain of a grade g: ``lin`` is g (trec_eval), ``exp`` is 2^g − 1."""

    LIN = "lin"
    EXP = "exp"


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

    def describe(self) -> str:
        """``"P: precision at k; relevant in top k / k (...)"``."""
        return f"{self.name}: {self.summary}; {self.formula}"


REGISTRY: dict[str, MeasureDef] = {}
ALIASES: dict[str, str] = {}
_DEFAULTS: dict[str, Any] = {"rel": 1, "gain": Gain.LIN}


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
):
    register(_definition)


def compute(ranked: ranking.Ranked, measure: Measure) -> np.ndarray:
    """Per-query values of ``measure`` (float64, NaN where undefined), aligned with ``ranked.query_ids``.

    The measure's kernel (``measure.definition.compute``) does the work; a measure that ``needs_relevant`` is
    NaN for a query without relevant documents (grade >= ``rel``; nDCG, without ``rel``, counts grades >= 1).
    """
    definition = measure.definition
    values = definition.compute(ranked, measure)
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
    return f"known: {', '.join(sorted(REGISTRY, key=str.lower))} (aliases: {aliases})"


def _check_cutoff(value: Any, text: str = "") -> int | None:
    if value is None:
        return None
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or value < 1:
        where = f" in {text!r}" if text else ""
        raise MeasureError(f"cutoff must be an int >= 1; got {value!r}{where}")
    return int(value)  # a numpy integer as a plain int: specs print, hash and compare as with an int


def _check_param(name: str, value: Any) -> Any:
    if name == "rel":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise MeasureError(f"rel must be an int >= 1; got {value!r}")
    elif name == "gain" and value not in tuple(Gain):
        raise MeasureError(f"gain must be 'lin' or 'exp'; got {value!r}")
    return value


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
        for key, value in params.items():
            if key not in definition.params:
                allowed = ", ".join(definition.params) or "none"
                raise MeasureError(f"{definition.name} has no parameter {key!r}; its parameters: {allowed}")
            _check_param(key, value)
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
    def gain(self) -> Gain:
        return Gain(dict(self.params).get("gain", Gain.LIN))

    def __call__(self, **params: Any) -> Measure:
        return Measure(self.name, self.cutoff, **{**dict(self.params), **params})

    def __matmul__(self, cutoff: int) -> Measure:
        return Measure(self.name, cutoff, **dict(self.params))

    def validate(self) -> Measure:
        """Raise if this measure needs a cutoff and has none (``P`` alone is a family, ``P@10`` a measure)."""
        if self.definition.cutoff == CutoffPolicy.REQUIRED and self.cutoff is None:
            raise MeasureError(f"{self.name} needs a cutoff, e.g. '{self.name}@10'")
        return self

    def __str__(self) -> str:
        params = f"({','.join(f'{k}={v}' for k, v in self.params)})" if self.params else ""
        cutoff = f"@{self.cutoff}" if self.cutoff is not None else ""
        return f"{self.name}{params}{cutoff}"

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


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
    cutoff = _parse_cutoff(match["cutoff"], text)
    params = _parse_params(match["params"], text)
    if _lookup(match["name"]) is None:
        raise MeasureError(f"unknown measure {match['name']!r} in {text!r}; {_known()}")
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


def _parse_params(raw: str | None, text: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in (raw or "").split(","))):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not key or not value:
            raise MeasureError(f"cannot parse parameter {part!r} in {text!r}; expected name=value")
        params[key] = int(value) if re.fullmatch(r"[+-]?\d+", value) else value
    return params


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
