"""The Score page's slices and fingerprints: a slice selector over the queries' tags (`metrics.slices`), the
slice means, a run × query heatmap, and the fingerprint (`metrics.fingerprint`) of every download.

Tags come from the imported queries file; names reach Markdown only escaped. The JSON download is a
``qrelforge score --format json`` document that ``qrelforge verify`` checks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from annotate_app.services.auth import Actor
from annotate_app.ui import review_cache, state
from annotate_app.ui.components import names
from annotate_app.ui.escape import escape_name
from metrics.evaluate import Result

__all__ = [
    "Chosen",
    "MAX_HEATMAP_QUERIES",
    "choose_slice",
    "shown_results",
    "slice_overview",
    "heatmap",
    "page_fingerprint",
    "json_report",
]

MAX_HEATMAP_QUERIES = 200
ALL = ""


@dataclass(frozen=True)
class Chosen:
    """The slice picked: its slicing (``by``), name, positions of its queries, and the tags."""

    by: str
    name: str
    rows: np.ndarray
    tags: dict[str, tuple[str, ...]]


def _by_label(by: str) -> str:
    if by == ALL:
        return "All queries (no slices)"
    return "Each tag" if by == "tag" else f"Tag {by.partition(':')[2]}: one slice per value"


def choose_slice(actor: Actor, project: str, query_ids: Sequence[str]) -> Chosen | None:
    """The slice selector: slicing, then the slice (with its query count); None for all queries."""
    from metrics.slices import query_slices

    tags = review_cache.query_tags(actor, project)
    if not any(tags.values()):
        st.caption("No query has tags: import queries with a `tags` field to score slices.")
        return None
    keys = sorted({t.partition(":")[0] for ts in tags.values() for t in ts if ":" in t})
    options = [ALL, "tag", *(f"tag:{k}" for k in keys)]
    ss = st.session_state
    if ss.get(state.SCORE_SLICE_BY) not in options:
        ss[state.SCORE_SLICE_BY] = ALL
    left, right = st.columns(2)
    by = left.selectbox("Slices", options, format_func=_by_label, key=state.SCORE_SLICE_BY)
    if by == ALL:
        return None
    slices = query_slices(query_ids, tags, by=by)
    if ss.get(state.SCORE_SLICE) not in slices:
        ss[state.SCORE_SLICE] = next(iter(slices))
    name = right.selectbox(
        "Slice",
        list(slices),
        format_func=lambda n: f"{n} ({names.plural(len(slices[n]), 'query', 'queries')})",
        key=state.SCORE_SLICE,
    )
    return Chosen(by=by, name=name, rows=slices[name], tags=tags)


def shown_results(results: Mapping[str, Result], chosen: Chosen | None) -> dict[str, Result]:
    """The results of the chosen slice's queries (all of them without a slice)."""
    return dict(results) if chosen is None else {n: r.take(chosen.rows) for n, r in results.items()}


def slice_overview(results: Mapping[str, Result], chosen: Chosen, measures: list[str]) -> None:
    """Every slice's means: one row per slice and run, one column per measure."""
    from metrics.slices import slice_table

    table = slice_table(results, chosen.tags, by=chosen.by)
    wide = table.pivot_table(
        index=["slice", "queries", "run"], columns="measure", values="mean", sort=False, dropna=False
    )[measures].reset_index()
    st.markdown(f"**Every slice** (by {escape_name(chosen.by)})")
    st.dataframe(wide, hide_index=True, width="stretch", column_config=names.column_config(wide))


def heatmap(results: Mapping[str, Result], measures: list[str]) -> None:
    """A run × query heatmap of one measure (the first `MAX_HEATMAP_QUERIES` queries)."""
    from annotate_app.ui.components import charts

    measure = st.selectbox("Heatmap measure", measures, key=state.SCORE_HEATMAP_MEASURE)
    frame = pd.concat(
        [
            pd.DataFrame({"run": name, "query_id": r.query_ids, "value": r.values[measure]})
            for name, r in results.items()
        ],
        ignore_index=True,
    )
    queries = list(dict.fromkeys(frame["query_id"]))
    if len(queries) > MAX_HEATMAP_QUERIES:
        frame = frame[frame["query_id"].isin(queries[:MAX_HEATMAP_QUERIES])]
        st.caption(f"The first {MAX_HEATMAP_QUERIES} of {len(queries)} queries.")
    st.altair_chart(charts.run_query_heatmap(frame, measure), width="stretch")


def page_fingerprint(
    qrels: Any,
    runs: Mapping[str, Any],
    measures: Sequence[Any],
    *,
    command: str,
    parameters: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The fingerprint of a download: the release shown (`state.SCORE_RELEASE`), the runs by content."""
    from metrics.fingerprint import fingerprint

    return fingerprint(
        qrels,
        runs,
        measures,
        release=st.session_state.get(state.SCORE_RELEASE),
        command=command,
        parameters={"per_query": True, "by": None, **dict(parameters or {})},
        rules={"strict": False, "corpus_sha256": None, "chunk_map_sha256": None},
    )


def json_report(
    results: Mapping[str, Result], measures: list[str], fingerprint: dict[str, Any], chosen: Chosen | None
) -> bytes:
    """The scores as ``qrelforge score --format json --per-query`` writes them, with the slices of the
    chosen slicing and the fingerprint (which ``qrelforge verify`` reads)."""
    from metrics.measures import parse_measures
    from metrics.report import render
    from metrics.slices import slice_results

    slices = None
    if chosen is not None:
        by_slice: dict[str, list[Result]] = {}
        for r in results.values():
            for name, part in slice_results(r, chosen.tags, by=chosen.by).items():
                by_slice.setdefault(name, []).append(part)
        slices = {"by": chosen.by, "tags": chosen.tags, "slices": by_slice}
        fingerprint = {**fingerprint, "parameters": {**fingerprint["parameters"], "by": chosen.by}}
    payload = render.score_payload(
        list(results.values()),
        parse_measures(measures),
        per_query=True,
        slices=slices,
        fingerprint=fingerprint,
    )
    return (json.dumps(payload, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode()
