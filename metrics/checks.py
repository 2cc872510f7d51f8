"""Threshold checks, a CI gate: does a run's mean on each measure reach its minimum / stay under its maximum?

`check_thresholds` scores a run and checks its means (`CheckResult`, one `CheckRow` per threshold);
`parse_threshold` reads ``"R@5=0.7"``. ``qrelforge check`` exits 1 when a threshold is missed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from metrics._choice import Choice
from metrics._text import _fmt, _grid, _json_ready
from metrics.errors import QrelForgeError
from metrics.evaluate import evaluate
from metrics.measures import Measure, parse_measure

__all__ = ["check_thresholds", "check_slices", "parse_threshold", "CheckResult", "CheckRow", "Bound"]


class Bound(Choice):
    """Which side of its threshold a mean must stay on."""

    MIN = "min"  # mean >= threshold
    MAX = "max"  # mean <= threshold


def parse_threshold(text: str) -> tuple[Measure, float]:
    """Read a threshold written ``MEASURE=VALUE``.

    Args:
        text: e.g. ``"R@5=0.7"``; blanks around ``=`` are allowed.

    Returns:
        ``(measure, value)``, the value a finite float.

    Raises:
        QrelForgeError: no ``=``, or a value that is not a finite number.
        MeasureError: an unknown measure.

    >>> parse_threshold("nDCG@10 = 0.5")
    (Measure('nDCG@10'), 0.5)
    """
    if not isinstance(text, str) or "=" not in text:
        raise QrelForgeError(f"threshold must look like MEASURE=VALUE, e.g. 'R@5=0.7'; got {text!r}")
    name, _, raw = text.rpartition("=")
    measure = parse_measure(name.strip())
    try:
        value = float(raw.strip())
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise QrelForgeError(f"threshold value must be a finite number; got {raw.strip()!r} in {text!r}")
    return measure, value


@dataclass(frozen=True)
class CheckRow:
    """One threshold: the run's mean on ``measure`` must be >= (``bound="min"``) or <= (``"max"``) it."""

    measure: str
    value: float | None
    bound: str
    threshold: float
    passed: bool

    def describe(self) -> str:
        if self.value is None:
            return f"{self.measure} is undefined (no query where it is defined)"
        op = "<" if self.bound == Bound.MIN else ">"
        kind = "minimum" if self.bound == Bound.MIN else "maximum"
        return f"{self.measure} = {self.value:.4f} {op} {self.threshold:g} ({kind})"


@dataclass(frozen=True)
class CheckResult:
    """The outcome of `check_thresholds`: one row per threshold; ``passed`` when every row passed."""

    run: str | None
    rows: tuple[CheckRow, ...]
    queries: int

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)

    @property
    def failures(self) -> list[CheckRow]:
        return [r for r in self.rows if not r.passed]

    @property
    def values(self) -> dict[str, float | None]:
        return {r.measure: r.value for r in self.rows}

    def message(self) -> str:
        """``PASS: ...`` or ``FAIL: ...`` naming every measure that missed its threshold."""
        if self.passed:
            return f"PASS: {len(self.rows)} threshold{'s' if len(self.rows) > 1 else ''} met"
        fails = self.failures
        return (
            f"FAIL: {len(fails)} of {len(self.rows)} threshold{'s' if len(self.rows) > 1 else ''} missed: "
            + "; ".join(r.describe() for r in fails)
        )

    def to_text(self) -> str:
        rows = [["measure", "value", "threshold", "result"]]
        rows += [
            [
                r.measure,
                _fmt(r.value),
                f"{'>=' if r.bound == Bound.MIN else '<='} {r.threshold:g}",
                "pass" if r.passed else "FAIL",
            ]
            for r in self.rows
        ]
        return f"run {self.run} ({self.queries} quer{'y' if self.queries == 1 else 'ies'})\n" + _grid(
            rows, "lrrl"
        )

    def to_dict(self) -> dict[str, Any]:
        return _json_ready(
            {
                "run": self.run,
                "queries": self.queries,
                "passed": self.passed,
                "rows": [asdict(r) for r in self.rows],
            }
        )


def _thresholds(items: Any, bound: str) -> list[tuple[Measure, float, str]]:
    if isinstance(items, str):
        items = [items]
    pairs = (
        [(parse_measure(k), v) for k, v in items.items()]
        if isinstance(items, Mapping)
        else [parse_threshold(t) for t in items]
    )
    out = []
    for measure, value in pairs:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise QrelForgeError(f"threshold for {measure} must be a finite number; got {value!r}")
        out.append((measure, float(value), bound))
    return out


def check_thresholds(
    qrels: Any, run: Any, *, minimum: Any = (), maximum: Any = (), corpus: Any = None
) -> CheckResult:
    """Score ``run`` and check its means against thresholds, as CI does.

    Each minimum must be reached (mean >= value), each maximum not exceeded (mean <= value); an undefined
    mean fails. A measure may have one minimum and one maximum.

    Args:
        qrels: anything `metrics.evaluate` accepts.
        run: anything `metrics.evaluate` accepts.
        minimum: the minimums: a mapping ``{measure: value}`` or texts ``"R@5=0.7"``.
        maximum: the maximums, in the same forms.
        corpus: as in `metrics.evaluate`.

    Returns:
        A `CheckResult`: a row per threshold, ``passed`` when every row passed, and its ``message()``.

    Raises:
        QrelForgeError: no threshold, two minimums (or maximums) of one measure, or a bad threshold; and the
            errors of `metrics.evaluate`.

    >>> r = check_thresholds({"q1": {"D1": 1}}, {"q1": ["D2", "D1"]}, minimum=["RR=0.5", "P@1=0.5"])
    >>> r.passed, r.message()
    (False, 'FAIL: 1 of 2 thresholds missed: P@1 = 0.0000 < 0.5 (minimum)')
    """
    wanted = _wanted(minimum, maximum)
    return _check(evaluate(qrels, run, [m for m, _, _ in wanted], corpus=corpus), wanted)


def check_slices(
    qrels: Any,
    run: Any,
    tags: Any,
    *,
    by: str = "tag",
    minimum: Any = (),
    maximum: Any = (),
    corpus: Any = None,
) -> dict[str, CheckResult]:
    """`check_thresholds` within each slice of the queries (`metrics.slices`).

    Every threshold applies to the slice's own means.

    Args:
        qrels, run, minimum, maximum, corpus: as in `check_thresholds`.
        tags: the queries' tags, as `metrics.slices.query_tags` reads them.
        by: ``"tag"`` or ``"tag:KEY"``.

    Returns:
        ``{slice: CheckResult}``, ordered as `metrics.slices.query_slices`.

    Raises:
        QrelForgeError: as `check_thresholds`; a bad ``by`` or tag.

    >>> r = check_slices({"q1": {"D1": 1}, "q2": {"D2": 1}}, {"q1": ["D1"], "q2": ["D9", "D2"]},
    ...                  {"q1": ["head"], "q2": ["tail"]}, minimum=["RR=0.6"])
    >>> {s: c.message() for s, c in r.items()}
    {'head': 'PASS: 1 threshold met', 'tail': 'FAIL: 1 of 1 threshold missed: RR = 0.5000 < 0.6 (minimum)'}
    """
    from metrics.slices import slice_results

    wanted = _wanted(minimum, maximum)
    result = evaluate(qrels, run, [m for m, _, _ in wanted], corpus=corpus)
    return {name: _check(part, wanted) for name, part in slice_results(result, tags, by=by).items()}


def _wanted(minimum: Any, maximum: Any) -> list[tuple[Measure, float, str]]:
    wanted = _thresholds(minimum, Bound.MIN) + _thresholds(maximum, Bound.MAX)
    if not wanted:
        raise QrelForgeError("check_thresholds needs at least one minimum or maximum threshold; got none")
    seen: dict[tuple[str, str], float] = {}
    for measure, value, bound in wanted:
        key = (str(measure), bound)
        if key in seen:
            raise QrelForgeError(f"{measure} has two {bound}imum thresholds: {seen[key]:g} and {value:g}")
        seen[key] = value
    return wanted


def _check(result: Any, wanted: list[tuple[Measure, float, str]]) -> CheckResult:
    rows = []
    for measure, value, bound in wanted:
        mean = result.mean[str(measure)]
        ok = mean is not None and (mean >= value if bound == Bound.MIN else mean <= value)
        rows.append(CheckRow(measure=str(measure), value=mean, bound=bound, threshold=value, passed=bool(ok)))
    return CheckResult(run=result.name, rows=tuple(rows), queries=result.counts.evaluated)
