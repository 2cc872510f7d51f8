"""Altair charts of the reviewer pages: plain DataFrames in, a chart for ``st.altair_chart`` out.

Labels in tooltips and axes are data values that Vega renders as text (never as HTML).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

__all__ = [
    "matrix_heatmap",
    "per_query_agreement",
    "per_query_bars",
    "difference_bars",
    "win_loss_bars",
    "COLORS",
]

COLORS = {"win": "#2e7d32", "tie": "#9e9e9e", "loss": "#c62828"}
_LABELS = alt.Axis(labelAngle=0, labelOverlap=True)


def matrix_heatmap(
    values: pd.DataFrame,
    counts: pd.DataFrame | None = None,
    *,
    value: str = "kappa",
    row: str = "annotator",
    column: str = "other",
    domain: tuple[float, float] = (-1.0, 1.0),
    fmt: str = ".2f",
) -> alt.LayerChart:
    """A square heatmap of ``values`` (rows × columns) with each cell's value printed, and ``counts`` (e.g.
    shared items) printed next to it as ``n=…`` and in the tooltip. Undefined cells stay grey and blank."""
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
        alt.Color(f"{value}:Q", scale=alt.Scale(scheme="redyellowgreen", domain=list(domain))),
        alt.value("#eeeeee"),
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
            x=alt.X("query_id:N", title="query", sort=None, axis=_LABELS),
            y=alt.Y("agreement:Q", scale=alt.Scale(domain=[0, 1])),
            tooltip=[
                "query_id",
                alt.Tooltip("agreement:Q", format=".3f"),
                "n_items",
                "n_disagreeing",
                alt.Tooltip("alpha:Q", format=".3f"),
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
