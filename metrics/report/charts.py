"""Self-contained inline SVG charts: numbers and labels in, one ``<svg>`` element out (no script, no external
resource, numpy only). Every text is HTML-escaped, so names can never inject markup.

`svg_bar_panels`, `svg_intervals`, `svg_sorted_bars` and `svg_line_chart`; the charts know nothing of
reports: `metrics.report` picks their numbers, colours and tooltips.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metrics._text import _e

__all__ = [
    "svg_bar_panels",
    "svg_intervals",
    "svg_sorted_bars",
    "svg_line_chart",
    "PALETTE",
    "GOOD",
    "BAD",
    "NEUTRAL",
]

PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
)  # Okabe-Ito
GOOD, BAD, NEUTRAL = "#1a7f37", "#b42318", "#555"  # better, worse, neither


# ---------------------------------------------------------------------------------------------- primitives


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{_e(label)}" '
        f'font-family="sans-serif" font-size="11">' + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, text: Any, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{_e(text)}</text>'


def _rect(x: float, y: float, w: float, h: float, fill: str, tip: str = "") -> str:
    title = f"<title>{_e(tip)}</title>" if tip else ""
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{max(h, 0):.1f}" '
        f'fill="{fill}">{title}</rect>'
    )


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str = "#999", extra: str = "") -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}"{extra}/>'


def _y_axis(
    top: float, bottom: float, left: float, right: float, lo: float, hi: float, ticks: int = 5
) -> list[str]:
    """Horizontal grid lines with labels at ``ticks`` evenly spaced values from ``lo`` to ``hi``."""
    out = []
    for v in np.linspace(lo, hi, ticks):
        y = bottom - (v - lo) / ((hi - lo) or 1) * (bottom - top)
        out += [_line(left, y, right, y, "#e5e5e5"), _text(left - 4, y + 4, f"{v:.2f}", "end")]
    return out


def _legend(labels: Sequence[str], x: float, y: float) -> list[str]:
    out = []
    for i, label in enumerate(labels):
        out += [
            _rect(x, y + 16 * i - 9, 10, 10, PALETTE[i % len(PALETTE)]),
            _text(x + 14, y + 16 * i, label, "start"),
        ]
    return out


# -------------------------------------------------------------------------------------------------- charts
def svg_bar_panels(
    panels: Sequence[tuple[str, Sequence[float], Sequence[str]]], series: Sequence[str], *, label: str
) -> str:
    """Bar panels side by side, each on its own scale from 0 to max(1, largest value).

    Args:
        panels: ``(title, values, tips)`` each: a panel with one bar per ``series``; NaN draws no bar.
        series: the bars' names, in palette colours, with a legend below.
        label: the chart's accessible name.

    Returns:
        The SVG element.

    >>> svg_bar_panels([("P@5", [0.2, float("nan")], ["a: 0.2", "b: undef"])], ["a", "b"], label="means")[:4]
    '<svg'
    """
    bar, top, plot_h, panel_gap = 16, 16, 150, 56
    body, x = [], 44.0
    for title, raw, tips in panels:
        values = np.asarray(raw, dtype=np.float64)
        hi = max(1.0, float(np.nanmax(values))) if np.isfinite(values).any() else 1.0
        right = x + len(series) * bar + 8
        body += _y_axis(top, top + plot_h, x, right, 0.0, hi, ticks=3)
        for i, tip in enumerate(tips):
            h = 0.0 if np.isnan(values[i]) else values[i] / hi * plot_h
            body.append(_rect(x + 4 + i * bar, top + plot_h - h, bar - 2, h, PALETTE[i % len(PALETTE)], tip))
        body.append(_text((x + right) / 2, top + plot_h + 14, title))
        x = right + panel_gap
    body += _legend(series, 44, top + plot_h + 32)
    return _svg(max(x - panel_gap + 16, 200), top + plot_h + 40 + 16 * len(series), body, label)


def svg_intervals(
    labels: Sequence[str], points: np.ndarray, colors: Sequence[str], tips: Sequence[str], *, label: str
) -> str:
    """Dots with whiskers, one row per label, on a scale symmetric around a vertical zero line.

    The scale spans 1.1 × the largest magnitude (±1 when nothing is finite).

    Args:
        labels: the rows' names.
        points: one row per label: the dot at ``[i, 0]``, the whisker from ``[i, 1]`` to ``[i, 2]`` (either
            left out when NaN).
        colors: each row's colour.
        tips: each row's tooltip.
        label: the chart's accessible name.

    Returns:
        The SVG element.

    >>> import numpy as np
    >>> svg_intervals(["a"], np.array([[0.1, 0.0, 0.2]]), ["#000"], ["a: +0.1"], label="diffs")[:4]
    '<svg'
    """
    finite = np.isfinite(points).any()
    extent = (float(np.nanmax(np.abs(points))) * 1.1 if finite else 0.0) or 1.0
    left, row_h, width = 150, 20, 520
    scale = (width - left - 20) / (2 * extent)
    zero = left + extent * scale
    body = [_line(zero, 8, zero, 12 + row_h * len(labels), "#666")]
    for i, (name, (point, lo, hi)) in enumerate(zip(labels, points, strict=True)):
        y = 20 + i * row_h
        body.append(_text(left - 8, y + 4, name, "end"))
        if np.isfinite(lo):
            body.append(_line(zero + lo * scale, y, zero + hi * scale, y, colors[i], ' stroke-width="2"'))
        if np.isfinite(point):
            body.append(
                f'<circle cx="{zero + point * scale:.1f}" cy="{y:.1f}" r="4" fill="{colors[i]}">'
                f"<title>{_e(tips[i])}</title></circle>"
            )
    axis_y = 24 + row_h * len(labels)
    body += [
        _text(left, axis_y, f"{-extent:+.3g}"),
        _text(zero, axis_y, "0"),
        _text(width - 20, axis_y, f"{extent:+.3g}"),
    ]
    return _svg(width, axis_y + 8, body, label)


def svg_sorted_bars(
    values: np.ndarray, names: Sequence[str], *, label: str, tie: float, max_bars: int = 400
) -> str:
    """``values`` sorted from largest to smallest as bars from zero.

    Up in green (> ``tie``), down in red (< -``tie``), thin grey marks for ties; tooltips ``name: +value``.
    Above ``max_bars`` values, ``max_bars`` evenly spaced quantiles of the sorted values are drawn instead
    (tooltips without names).

    Args:
        values: the values.
        names: each value's name.
        label: the chart's accessible name.
        tie: the largest magnitude drawn as a tie.
        max_bars: the most bars drawn.

    Returns:
        The SVG element.

    >>> import numpy as np
    >>> svg_sorted_bars(np.array([0.1, -0.2]), ["q1", "q2"], label="per query", tie=0.0)[:4]
    '<svg'
    """
    order = np.argsort(-values, kind="stable")
    diffs = values[order]
    shown: np.ndarray | None = np.asarray(names, dtype=object)[order]
    if len(diffs) > max_bars:
        diffs, shown = np.quantile(diffs, np.linspace(0, 1, max_bars))[::-1], None
    extent = float(np.abs(diffs).max()) if len(diffs) and np.abs(diffs).max() > 0 else 1.0
    left, width, half = 48, 560, 60
    bar = (width - left - 10) / max(len(diffs), 1)
    body = _y_axis(8, 8 + 2 * half, left, width - 10, -extent, extent)
    for i, v in enumerate(diffs):
        h = abs(v) / extent * half
        color = GOOD if v > tie else BAD if v < -tie else "#999"
        tip = f"{shown[i]}: {v:+.4f}" if shown is not None else f"{v:+.4f}"
        y = 8 + half - h if v > 0 else 8 + half
        body.append(_rect(left + i * bar, y, max(bar - 1, 0.5), max(h, 1.0), color, tip))
    return _svg(width, 2 * half + 20, body, label)


def svg_line_chart(
    series: Mapping[str, Sequence[float | None]], *, x_labels: Sequence[str], title: str
) -> str:
    """A standalone SVG line chart, e.g. a measure's history across CI checks.

    Values share a y axis from min(0, lowest) to max(1, highest).

    Args:
        series: ``{name: values}``, one line each, None for gaps.
        x_labels: the labels along the x axis, one per value.
        title: the chart's title.

    Returns:
        The SVG document.

    >>> svg_line_chart({"AP": [0.1, None, 0.3]}, x_labels=["1", "2", "3"], title="AP")[:4]
    '<svg'
    """
    values = np.array([list(s) for s in series.values()], dtype=np.float64).reshape(len(series), -1)
    lo = min(0.0, float(np.nanmin(values))) if np.isfinite(values).any() else 0.0
    hi = max(1.0, float(np.nanmax(values))) if np.isfinite(values).any() else 1.0
    left, top, plot_w, plot_h = 48, 28, 520, 180
    n = values.shape[1]
    x = left + (np.arange(n) * plot_w / max(n - 1, 1) if n > 1 else np.full(n, plot_w / 2))
    body = [_text(left, 16, title, "start", ' font-weight="bold"')] + _y_axis(
        top, top + plot_h, left, left + plot_w, lo, hi
    )
    for i, row in enumerate(values):
        y = top + plot_h - (row - lo) / (hi - lo) * plot_h
        color = PALETTE[i % len(PALETTE)]
        ok = np.isfinite(y)
        body.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="2" points="'
            + " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(x[ok], y[ok], strict=True))
            + '"/>'
        )
        body += [
            f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{color}"><title>{_e(x_labels[j])}: '
            f"{row[j]:.4f}</title></circle>"
            for j, (a, b) in enumerate(zip(x, y, strict=True))
            if ok[j]
        ]
    if n:
        body += [
            _text(x[0], top + plot_h + 14, x_labels[0], "start"),
            _text(x[-1], top + plot_h + 14, x_labels[-1], "end"),
        ]
    body += _legend(list(series), left, top + plot_h + 34)
    return _svg(left + plot_w + 20, top + plot_h + 44 + 16 * len(series), body, title)
