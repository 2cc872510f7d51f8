"""The private text helpers of the reports: numbers as text, aligned and Markdown tables, escaping of outside
text (`_md`, `_tex`, `_e`), and how a difference between two runs reads (`_sign`, `Outcome`, `Flag`).

Imports only numpy at import time, so every module may use it; nothing here knows a report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Any

import numpy as np

from metrics._choice import Choice

_TIE = 1e-12  # per-query differences at most this far from 0 are ties


class Flag(Choice):
    """The marks of a significant difference with the baseline."""

    UP = "▲"  # significantly better
    DOWN = "▼"  # significantly worse


class Outcome(Choice):
    """One query's outcome for a run against the baseline."""

    WIN = "win"
    TIE = "tie"
    LOSS = "loss"


# ------------------------------------------------------------------------------------------------ numbers
def _shown(value: Any) -> Any:
    """A value as Python shows it, so that messages print ``3``, not ``np.int64(3)``, and ``'linear'``, not
    ``<Weights.LINEAR: 'linear'>``."""
    if isinstance(value, StrEnum):
        return value.value
    return value.item() if isinstance(value, np.generic) else value


def _fmt(value: float | None, digits: int = 4) -> str:
    """``value`` with ``digits`` decimals; ``undef`` for None or NaN."""
    return "undef" if value is None or value != value else f"{value:.{digits}f}"


def _signed(value: float | None, digits: int = 4) -> str:
    return "undef" if value is None or value != value else f"{value:+.{digits}f}"


def _p(value: float | None) -> str:
    """A p-value: ``-`` when there is none, ``<0.0001`` below 1e-4, else four decimals."""
    return "-" if value is None or value != value else ("<0.0001" if value < 1e-4 else f"{value:.4f}")


def _py(value: Any) -> Any:
    """A numpy scalar as a plain Python value; NaN as None."""
    value = value.item() if isinstance(value, np.generic) else value
    return None if isinstance(value, float) and value != value else value


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def _json_ready(value: Any) -> Any:
    """Plain Python types for ``json.dumps``: NaN becomes None, numpy scalars become Python numbers."""
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ------------------------------------------------------------------------------------------------- layout
def _grid(rows: list[list[str]], align: str | None = None) -> str:
    """Plain-text columns, two spaces apart; ``align`` holds l or r per column (default: the first column
    left-aligned, the others right-aligned).

    >>> print(_grid([["run", "P@5"], ["bm25", "0.5"]]), end="")
    run   P@5
    bm25  0.5
    """
    align = align if align is not None else "l" + "r" * (len(rows[0]) - 1)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(r, widths, align, strict=True))
        for r in rows
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _table(header: list[str], rows: list[list[str]], align: str) -> str:
    """A Markdown table; ``align`` holds one of l / r / c per column."""
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


def _rows(frame: Any) -> Iterator[Any]:
    """The rows of a DataFrame as named tuples (``frame.itertuples()``), typed ``Any``: pandas' stubs type
    each field as any scalar, while a rendering knows each column's type."""
    return frame.itertuples()


def _few(items: Sequence[Any], limit: int = 10) -> str:
    """The first ``limit`` items (repr), and how many more.

    >>> _few(["q1", "q2", "q3"], limit=2)
    "'q1', 'q2' and 1 more"
    """
    shown = ", ".join(repr(x) for x in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


# ----------------------------------------------------------------------------------------------- escaping
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|&#"})


def _md(text: Any) -> str:
    """Markdown-escaped text for a table cell or a heading (no emphasis, links, HTML or cell breaks)."""
    return " ".join(str(text).split()).translate(_MD_SPECIAL)


_TEX_SPECIAL = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
    "≤": "$\\leq$",
    "Δ": "$\\Delta$",
    "→": "$\\rightarrow$",
    "·": "\\textperiodcentered{}",
    "−": "-",
    Flag.UP.value: "$\\uparrow$",
    Flag.DOWN.value: "$\\downarrow$",
}


def _tex(text: Any) -> str:
    """LaTeX-escaped text (special characters, the few non-ASCII symbols of our legends, ▲/▼ as arrows)."""
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in " ".join(str(text).split()))


def _e(text: Any) -> str:
    """HTML-escaped text (quotes too), safe in element content and attribute values."""
    import html  # (HTML reports only: the scoring path never imports it)

    return html.escape(str(text), quote=True)


# ----------------------------------------------------------------------------------- reading a difference
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def _sign(measure: str) -> float:
    """+1 when a larger value of ``measure`` (canonical text, e.g. ``"P@5"``) is better, -1 when a smaller one
    is (`MeasureDef.higher_is_better`, False for FirstRel).

    >>> _sign("P@5"), _sign("FirstRel")
    (1.0, -1.0)
    """
    from metrics.measures import REGISTRY

    match = _NAME.match(measure)
    definition = REGISTRY.get(match[0]) if match is not None else None
    return -1.0 if definition is not None and not definition.higher_is_better else 1.0


def _lower_is_better() -> list[str]:
    """The registered measures where a smaller value is the better one, sorted."""
    from metrics.measures import REGISTRY

    return sorted(name for name, d in REGISTRY.items() if not d.higher_is_better)


def _outcomes(signed: np.ndarray) -> np.ndarray:
    """Per signed difference (larger is better): win, loss, or tie within ``_TIE``; None for NaN."""
    out = np.full(len(signed), None, dtype=object)
    out[signed > _TIE], out[signed < -_TIE] = Outcome.WIN, Outcome.LOSS
    out[np.abs(signed) <= _TIE] = Outcome.TIE
    return out
