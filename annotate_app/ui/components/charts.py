"""Altair charts of the reviewer pages: plain DataFrames in, a chart for ``st.altair_chart`` out.

Labels in tooltips and axes are data values that Vega renders as text (never as HTML).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

__all__ = [
    "matrix_heatmap",
    "confusion_heatmap",
    "diverging_scale",
    "per_query_agreement",
    "per_query_bars",
    "difference_bars",
    "win_loss_bars",
    "run_query_heatmap",
    "COLORS",
]

COLORS = {"win": "#2e7d32", "tie": "#9e9e9e", "loss": "#c62828"}
NEUTRAL = "#f7f7f7"  # the colour of the threshold (diverging scales) and of zero (shares)
UNDEFINED = "#eeeeee"
BELOW, ABOVE, SHARE = "#c62828", "#2e7d32", "#1565c0"
_LABELS = alt.Axis(labelAngle=0, labelOverlap=True)


def diverging_scale(domain: tuple[float, float], center: float | None = None) -> alt.Scale:
    """A linear colour scale from `BELOW` (``domain[0]``) through `NEUTRAL` (``center``, clipped into the
    domain) to `ABOVE` (``domain[1]``)."""
    low, high = domain
    mid = (low + high) / 2 if center is None or center != center else min(max(center, low), high)
    return alt.Scale(domain=[low, mid, high], range=[BELOW, NEUTRAL, ABOVE], clamp=True)


def confusion_heatmap(table: pd.DataFrame, *, row: str = "A", column: str = "B") -> alt.LayerChart:
    """A confusion matrix (counts, rows × columns) coloured by row share: each cell's share of its row, from
    `NEUTRAL` (0: zero cells stay neutral) to `SHARE` (1); each cell prints its count and share."""
    long = table.rename_axis(index=row, columns=column).stack(future_stack=True).rename("pairs").reset_index()
    long[row], long[column] = long[row].astype(str), long[column].astype(str)
    totals = long.groupby(row)["pairs"].transform("sum")
    long["share"] = (long["pairs"] / totals.where(totals > 0)).fillna(0.0)
    long["text"] = [f"{n} ({s:.0%})" if n else "0" for n, s in zip(long["pairs"], long["share"], strict=True)]
    order = [str(x) for x in table.index]
    base = alt.Chart(long).encode(
        x=alt.X(
            f"{column}:N", sort=[str(c) for c in table.columns], title=column, axis=alt.Axis(labelAngle=0)
        ),
        y=alt.Y(f"{row}:N", sort=order, title=row),
    )
    scale = alt.Scale(domain=[0, 1], range=[NEUTRAL, SHARE])
    cells = base.mark_rect().encode(
        color=alt.Color("share:Q", scale=scale, title="row share", legend=alt.Legend(format="%")),
        tooltip=[row, column, "pairs", alt.Tooltip("share:Q", format=".0%")],
    )
    text = base.mark_text(fontSize=13).encode(text="text:N")
    return (cells + text).properties(height=max(120, 50 * len(order)))


def matrix_heatmap(
    values: pd.DataFrame,
    counts: pd.DataFrame | None = None,
    *,
    value: str = "kappa",
    row: str = "annotator",
    column: str = "other",
    domain: tuple[float, float] = (-1.0, 1.0),
    center: float | None = None,
    fmt: str = ".2f",
) -> alt.LayerChart:
    """A square heatmap of ``values`` (rows × columns) with each cell's value printed, and ``counts`` (e.g.
    shared items) printed next to it as ``n=…`` and in the tooltip. Undefined cells stay grey and blank.

    The colour scale diverges around ``center`` (the project's threshold; default: the middle of ``domain``):
    red below it, the neutral `NEUTRAL` at it, green above it, so a value under the threshold never looks
    good."""
    long = values.rename_axis(index=row, columns=column).stack(future_stack=True).rename(value).reset_index()
    long[row], long[column] = long[row].astype(str), long[column].astype(str)
    long["text"] = [format(v, fmt) if v == v else "" for v in long[value]]
    tips = [row, column, alt.Tooltip(value, format=fmt)]
    if counts is not None:
        shared = counts.rename_axis(index=row, columns=column).stack(future_stack=True).rename("shared")
        long = long.merge(shared.reset_index().astype({row: str, column: str}), on=[row, column], how="left")
        long["text"] = [
            f"{t} (n={int(n)})" if t and n == n else t
            for t, n in zip(long["text"], long["shared"], strict=True)
        ]
        tips.append("shared")
    order = [str(x) for x in values.index]
    base = alt.Chart(long).encode(
        x=alt.X(
            f"{column}:N", sort=[str(c) for c in values.columns], title=None, axis=alt.Axis(labelAngle=0)
        ),
        y=alt.Y(f"{row}:N", sort=order, title=None),
    )
    color = alt.condition(
        f"isValid(datum['{value}'])",
        alt.Color(f"{value}:Q", scale=diverging_scale(domain, center), title=value),
        alt.value(UNDEFINED),
    )
    cells = base.mark_rect().encode(color=color, tooltip=tips)
    text = base.mark_text(fontSize=13).encode(text="text:N")
    return (cells + text).properties(height=max(120, 60 * len(order)))


def per_query_agreement(per_query: pd.DataFrame) -> alt.Chart:
    """Percent agreement per query (bars), disagreeing pairs in the tooltip."""
    return (
        alt.Chart(per_query)
        .mark_bar()
        .encode(
            x=alt.X("query_id:N", title="Query", sort=None, axis=_LABELS),
            y=alt.Y("agreement:Q", title="Percent agreement", scale=alt.Scale(domain=[0, 1])),
            tooltip=[
                alt.Tooltip("query_id:N", title="Query"),
                alt.Tooltip("agreement:Q", format=".3f", title="Percent agreement"),
                alt.Tooltip("n_items:Q", title="Pairs"),
                alt.Tooltip("n_disagreeing:Q", title="Disagreements"),
                alt.Tooltip("alpha:Q", format=".3f", title="Krippendorff's α"),
            ],
        )
        .properties(height=240)
    )


def per_query_bars(frame: pd.DataFrame, measure: str) -> alt.Chart:
    """Grouped bars: one group per query, one bar per run (``frame``: run, query_id, value)."""
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("query_id:N", title="query", sort=None, axis=_LABELS),
            xOffset="run:N",
            y=alt.Y("value:Q", title=measure),
            color="run:N",
            tooltip=["run", "query_id", alt.Tooltip("value:Q", format=".4f")],
        )
        .properties(height=260)
    )


def difference_bars(frame: pd.DataFrame, label: str) -> alt.Chart:
    """Per-query differences (``frame``: query_id, diff, outcome), green above zero, red below."""
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("query_id:N", title="query", sort=None, axis=_LABELS),
            y=alt.Y("diff:Q", title=label),
            color=alt.Color("outcome:N", scale=alt.Scale(domain=list(COLORS), range=list(COLORS.values()))),
            tooltip=["query_id", alt.Tooltip("diff:Q", format="+.4f"), "outcome"],
        )
        .properties(height=240)
    )


def win_loss_bars(wtl: pd.DataFrame) -> alt.Chart:
    """Stacked win/tie/loss counts per run and measure against the baseline
    (``Report.to_dataframe("wtl")``)."""
    return (
        alt.Chart(wtl)
        .mark_bar()
        .encode(
            y=alt.Y("measure:N", title=None),
            x=alt.X("count:Q", stack="zero", title="queries"),
            color=alt.Color("outcome:N", scale=alt.Scale(domain=list(COLORS), range=list(COLORS.values()))),
            row=alt.Row("run:N", title=None),
            tooltip=["run", "measure", "outcome", "count"],
        )
        .properties(height=110)
    )


def run_query_heatmap(frame: pd.DataFrame, measure: str) -> alt.Chart:
    """Runs × queries of one measure (``frame``: run, query_id, value; NaN where undefined), coloured from
    `NEUTRAL` (0) to `SHARE` (the largest value, at least 1), undefined cells in `UNDEFINED`."""
    frame = frame.assign(undefined=frame["value"].isna())
    top = max(1.0, float(frame["value"].max())) if frame["value"].notna().any() else 1.0
    scale = alt.Scale(domain=[0, top], range=[NEUTRAL, SHARE])
    runs = list(dict.fromkeys(frame["run"]))
    return (
        alt.Chart(frame)
        .mark_rect()
        .encode(
            x=alt.X("query_id:N", title="query", sort=None, axis=_LABELS),
            y=alt.Y("run:N", title=None, sort=runs),
            color=alt.condition(
                "isValid(datum.value)", alt.Color("value:Q", scale=scale, title=measure), alt.value(UNDEFINED)
            ),
            tooltip=["run", "query_id", alt.Tooltip("value:Q", format=".4f", title=measure)],
        )
        .properties(height=max(80, 36 * len(runs)))
    )
