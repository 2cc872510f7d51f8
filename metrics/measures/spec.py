"""Measure names as text, in ir_measures syntax, parsed into small frozen specs (`Measure`).

Default parameters are left out and aliases print as their canonical name, so equal measures have equal
text (``P(rel=1)@5`` is ``P@5``, ``MAP`` is ``AP``). Specs also build in Python: ``nDCG(gain="exp") @ 10``.
Parameters: ``rel``, ``gain`` (nDCG), ``p`` (RBP), ``beta`` (SetF), ``judged_only``; IPrec takes a recall
level for ``@``.

>>> parse_measure("MRR@10")
Measure('RR@10')
>>> str(parse_measure("nDCG(gain=exp)@10"))
'nDCG(gain=exp)@10'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metrics.errors import MeasureError
from metrics.measures import ranking
from metrics.measures.registry import (
    _DEFAULTS,
    REGISTRY,
    CutoffPolicy,
    Gain,
    GainMap,
    MeasureDef,
    _known,
    _lookup,
)

__all__ = [
    "Measure",
    "parse_measure",
    "parse_measures",
    "compute",
    # the specs of the registered measures, for Python use
    "P",
    "R",
    "F1",
    "nDCG",
    "AP",
    "RR",
    "RPrec",
    "Success",
    "Judged",
    "FirstRel",
    "ERR",
    "RBP",
    "Bpref",
    "infAP",
    "GMAP",
    "IPrec",
    "SetP",
    "SetR",
    "SetF",
    "NumRet",
    "NumRel",
    "NumRelRet",
]


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
    """Parse ``NAME``, ``NAME@k`` or ``NAME(param=value,...)@k`` into a validated `Measure`.

    Args:
        text: the measure's text (names are case-insensitive; aliases allowed), or a `Measure`, validated.

    Returns:
        The measure, its name canonical and default parameters left out.

    Raises:
        MeasureError: unknown name or parameter, bad value, or a cutoff missing or not allowed; the message
            quotes ``text``.

    >>> parse_measure("p(rel=2)@5")
    Measure('P(rel=2)@5')
    >>> parse_measure("P")
    Traceback (most recent call last):
    ...
    metrics.errors.MeasureError: P needs a cutoff, e.g. 'P@10' (in 'P')
    """
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
    """Parse several measures, keeping their order and dropping repeats.

    Args:
        items: measure texts or `Measure` objects; one string is one measure.

    Returns:
        The distinct measures, in the order first given.

    Raises:
        MeasureError: as `parse_measure`, or when ``items`` names no measure.

    >>> parse_measures(["AP", "MAP", "nDCG@10"])
    (Measure('AP'), Measure('nDCG@10'))
    """
    if isinstance(items, str | Measure):
        items = [items]
    out: dict[str, Measure] = {}
    for item in items:
        measure = parse_measure(item)
        out.setdefault(str(measure), measure)
    if not out:
        raise MeasureError("measures must name at least one measure; got none")
    return tuple(out.values())


def compute(ranked: ranking.Ranked, measure: Measure) -> np.ndarray:
    """Per-query values of ``measure``, aligned with ``ranked.query_ids``.

    The measure's kernel (``measure.definition.compute``) does the work, on the condensed list when
    ``judged_only``; a measure that ``needs_relevant`` is NaN for a query without relevant documents (grade
    >= ``rel``; nDCG, without ``rel``, counts grades >= 1).

    Args:
        ranked: a run joined to qrels (`metrics.measures.ranking.rank_run`).
        measure: a validated measure.

    Returns:
        float64 values, one per query, NaN where undefined.
    """
    definition = measure.definition
    values = definition.compute(ranked.condensed() if measure.judged_only else ranked, measure)
    if definition.needs_relevant:
        values = np.where(ranked.relevant_count(measure.rel) == 0, np.nan, values)
    return values


# Module-level specs for Python use: ``from metrics.measures import P, nDCG``; ``P(rel=2) @ 5``.
P, R, F1, nDCG, AP, RR = (Measure(n) for n in ("P", "R", "F1", "nDCG", "AP", "RR"))
RPrec, Success, Judged, FirstRel = (Measure(n) for n in ("R-Prec", "Success", "Judged", "FirstRel"))
ERR, RBP, Bpref, infAP, GMAP, IPrec = (Measure(n) for n in ("ERR", "RBP", "Bpref", "infAP", "GMAP", "IPrec"))
SetP, SetR, SetF, NumRet, NumRel, NumRelRet = (
    Measure(n) for n in ("SetP", "SetR", "SetF", "NumRet", "NumRel", "NumRelRet")
)
