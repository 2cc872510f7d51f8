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
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from metrics.errors import MeasureError

__all__ = ["Measure", "MeasureDef", "REGISTRY", "ALIASES", "parse_measure", "parse_measures", "register"]


@dataclass(frozen=True)
class MeasureDef:
    """What a measure name accepts and means."""

    name: str
    cutoff: str  # "required", "optional" or "none"
    params: tuple[str, ...]
    needs_relevant: bool
    summary: str
    formula: str = ""
    higher_is_better: bool = True  # False when a smaller value is the better one (FirstRel)


REGISTRY: dict[str, MeasureDef] = {}
ALIASES: dict[str, str] = {}
_DEFAULTS: dict[str, Any] = {"rel": 1, "gain": "lin"}


def register(definition: MeasureDef, *aliases: str) -> MeasureDef:
    """Add a measure name (and its aliases) to the registry."""
    REGISTRY[definition.name] = definition
    for alias in aliases:
        ALIASES[alias] = definition.name
    return definition


for _d, _aliases in [
    (
        MeasureDef(
            "P",
            "required",
            ("rel",),
            False,
            "precision at k",
            "relevant in top k / k (k even when fewer than k were returned)",
        ),
        ("Precision",),
    ),
    (
        MeasureDef("R", "required", ("rel",), True, "recall at k", "relevant in top k / relevant judged"),
        ("Recall",),
    ),
    (
        MeasureDef("F1", "required", ("rel",), True, "F1 at k", "2·P@k·R@k / (P@k + R@k), 0 when both are 0"),
        (),
    ),
    (
        MeasureDef(
            "nDCG",
            "optional",
            ("gain",),
            True,
            "normalized discounted cumulative gain",
            "Σ gain_i / log2(i+1) over ranks i ≤ k, divided by the ideal ranking's; gain = grade (lin) or "
            "2^grade − 1 (exp); grades ≤ 0 give no gain",
        ),
        ("NDCG",),
    ),
    (
        MeasureDef(
            "AP",
            "optional",
            ("rel",),
            True,
            "average precision",
            "Σ P@i over relevant ranks i ≤ k, divided by all relevant judged",
        ),
        ("MAP",),
    ),
    (
        MeasureDef(
            "RR",
            "optional",
            ("rel",),
            False,
            "reciprocal rank",
            "1 / rank of the first relevant document (within k), 0 when none",
        ),
        ("MRR",),
    ),
    (
        MeasureDef(
            "R-Prec", "none", ("rel",), True, "R-precision", "relevant in top R / R, R = relevant judged"
        ),
        ("Rprec", "RPrec"),
    ),
    (
        MeasureDef(
            "Success",
            "required",
            ("rel",),
            False,
            "success at k",
            "1 if a relevant document is in the top k, else 0",
        ),
        (),
    ),
    (
        MeasureDef(
            "Judged",
            "required",
            (),
            False,
            "judged rate at k",
            "judged documents in top k / min(k, returned); 0 when nothing was returned",
        ),
        (),
    ),
    (
        MeasureDef(
            "ContextPrecision",
            "required",
            ("rel",),
            True,
            "context precision at k (RAG)",
            "Σ P@i over relevant ranks i ≤ k / relevant in top k; 0 when none in top k",
        ),
        ("CtxP",),
    ),
    (
        MeasureDef(
            "ContextRecall",
            "required",
            ("rel",),
            True,
            "context recall at k (RAG)",
            "relevant in top k / relevant judged (equals R@k on human qrels)",
        ),
        ("CtxR",),
    ),
    (
        MeasureDef(
            "FirstRel",
            "none",
            ("rel",),
            False,
            "rank of the first relevant document",
            "1-based rank of the first relevant document; undefined (None) when none was returned",
            higher_is_better=False,
        ),
        (),
    ),
]:
    register(_d, *_aliases)


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
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        where = f" in {text!r}" if text else ""
        raise MeasureError(f"cutoff must be an int >= 1; got {value!r}{where}")
    return value


def _check_param(name: str, value: Any) -> Any:
    if name == "rel":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise MeasureError(f"rel must be an int >= 1; got {value!r}")
    elif name == "gain" and value not in ("lin", "exp"):
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
        if definition.cutoff == "none" and self.cutoff is not None:
            raise MeasureError(f"{definition.name} takes no cutoff; got {str(self)!r}")

    @property
    def definition(self) -> MeasureDef:
        return REGISTRY[self.name]

    @property
    def rel(self) -> int:
        return dict(self.params).get("rel", 1)

    @property
    def gain(self) -> str:
        return dict(self.params).get("gain", "lin")

    def __call__(self, **params: Any) -> Measure:
        return Measure(self.name, self.cutoff, **{**dict(self.params), **params})

    def __matmul__(self, cutoff: int) -> Measure:
        return Measure(self.name, cutoff, **dict(self.params))

    def validate(self) -> Measure:
        """Raise if this measure needs a cutoff and has none (``P`` alone is a family, ``P@10`` a measure)."""
        if self.definition.cutoff == "required" and self.cutoff is None:
            raise MeasureError(f"{self.name} needs a cutoff, e.g. '{self.name}@10'")
        return self

    def __str__(self) -> str:
        params = f"({','.join(f'{k}={v}' for k, v in self.params)})" if self.params else ""
        cutoff = f"@{self.cutoff}" if self.cutoff is not None else ""
        return f"{self.name}{params}{cutoff}"

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def with_cutoff(self, cutoff: int | None) -> Measure:
        return replace(self) if cutoff == self.cutoff else Measure(self.name, cutoff, **dict(self.params))


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
