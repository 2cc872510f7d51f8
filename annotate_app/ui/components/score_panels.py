"""The Score page's panels: run choice, the metric table, per-query charts, unjudged documents, the compare
view, assessor sensitivity, and BM25 / fusion runs.

Every number is `metrics.evaluate` or `metrics.compare` on the release's qrels, as ``qrelforge score``
gives. Heavy imports load only in the panel that uses them. Run names reach Markdown only through
`escape_name`; CSV downloads are formula-safe; uploads are limited to ``run_upload_max_mb``.
"""

from __future__ import annotations

import functools
import io
import json
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import streamlit as st

from annotate_app.services import scoring
from annotate_app.services.auth import Actor
from annotate_app.ui import cache, errors, review_cache, settings, state
from annotate_app.ui.components import names, widgets
from annotate_app.ui.escape import escape_markdown, escape_name
from metrics.data import Qrels, Run
from metrics.errors import FormatError, QrelForgeError
from metrics.evaluate import Result, evaluate
from metrics.formats import read_run
from metrics.report.render import csv_safe

__all__ = [
    "measures_for",
    "results_of",
    "choose_runs",
    "score_table",
    "per_query",
    "unjudged",
    "compare_view",
    "sensitivity_view",
    "make_runs",
]

_NAME = re.compile(r"[^\w.\-]+")


def measures_for(k: int) -> list[str]:
    """The page's measures at cut-off ``k``: P@k, R@k, nDCG@k, AP, RR, Judged@k."""
    return [f"P@{k}", f"R@{k}", f"nDCG@{k}", "AP", "RR", f"Judged@{k}"]


def _extra() -> dict[str, Run]:
    return st.session_state.setdefault(state.SCORE_EXTRA_RUNS, {})


def _free_name(name: str, taken: Sequence[str], suffix: str) -> str:
    name = _NAME.sub("_", name).strip("_") or "run"
    return name if name not in taken else f"{name}_{suffix}"


# -------------------------------------------------------------------------------------------------- runs
def _uploads(taken: list[str]) -> dict[str, Run]:
    limit = settings.app_settings().run_upload_max_mb
    files = st.file_uploader(
        "Upload runs (TREC: qid Q0 docid rank score tag)",
        accept_multiple_files=True,
        key=state.SCORE_UPLOADS,
        max_upload_size=limit,
        help=f"Up to {limit} MB each; import bigger runs on the Data page or with `qrelforge import run`.",
    )
    out: dict[str, Run] = {}
    hint = "Import it on the Data page or with `qrelforge import run FILE`, then pick it in Runs."
    for file in [f for f in files or [] if widgets.within_limit(f, limit, hint)]:
        stream = io.BytesIO(file.getvalue())
        stream.name = file.name
        try:
            run = read_run(stream)
        except FormatError as exc:
            st.error(escape_markdown(f"{file.name} was not read: {len(exc.problems)} problem(s)"))
            st.code("\n".join(str(p) for p in exc.problems[:50]), language=None)
            continue
        name = _free_name(run.name or file.name, taken + list(out), "upload")
        run.name = name
        out[name] = run
    return out


def choose_runs(actor: Actor, project: str) -> dict[str, Run]:
    """The runs to score: stored runs picked in a multiselect, runs built in this session, and uploads."""
    stored = [name for name, _ in review_cache.list_runs(actor, project)]
    extra = _extra()
    options = stored + [n for n in extra if n not in stored]
    ss = st.session_state
    if state.SCORE_RUNS not in ss:
        ss[state.SCORE_RUNS] = list(options)
    ss[state.SCORE_RUNS] = [n for n in ss[state.SCORE_RUNS] if n in options]
    picked = st.multiselect(
        "Runs",
        options,
        key=state.SCORE_RUNS,
        help="Stored runs of the project and runs built on this page (BM25, fusion).",
    )
    runs = {
        name: extra[name] if name in extra else review_cache.stored_run(actor, project, name)
        for name in picked
    }
    runs.update(_uploads(list(runs)))
    return runs


# -------------------------------------------------------------------------------------------- the table
def results_of(qrels: Qrels, runs: dict[str, Run], measures: list[str]) -> dict[str, Result]:
    """`metrics.evaluate` of every run on the release's qrels."""
    return {name: evaluate(qrels, run, measures) for name, run in runs.items()}


def score_table(
    qrels: Qrels,
    runs: dict[str, Run],
    measures: list[str],
    actor: Actor | None = None,
    project: str | None = None,
) -> dict[str, Result]:
    """One row per run, one column per measure (means, 3 decimals) of the chosen slice (`score_slices`;
    all queries by default), every slice's means, and the downloads (CSV, JSON), each with the fingerprint;
    returns the results of all queries."""
    from annotate_app.ui.components import score_slices

    results = results_of(qrels, runs, measures)
    first = next(iter(results.values()))
    chosen = score_slices.choose_slice(actor, project, first.query_ids) if actor and project else None
    shown = score_slices.shown_results(results, chosen)
    table = pd.DataFrame({name: r.mean for name, r in shown.items()}).T[measures].astype(float)
    table.index.name = "run"
    st.table(_named(table).style.format("{:.3f}", na_rep="undefined"))
    notes = [
        f"{escape_name(name)}: {names.plural(r.counts.evaluated, 'query', 'queries')}, {r.counts.missing} "
        f"missing from the run (scored 0), {r.counts.extra} extra in the run (ignored), "
        f"{r.counts.no_relevant} without relevant documents"
        for name, r in shown.items()
    ]
    if chosen is not None:
        notes.insert(0, f"Slice {escape_name(chosen.name)} (by {escape_name(chosen.by)}).")
    st.caption("  \n".join(notes))
    if chosen is not None:
        score_slices.slice_overview(results, chosen, measures)
    fingerprint = score_slices.page_fingerprint(qrels, runs, measures, command="score")
    framed = table.set_axis([csv_safe(name) for name in table.index]).rename_axis("run")
    framed["fingerprint"] = json.dumps(fingerprint, ensure_ascii=False, separators=(",", ":"))
    st.download_button(
        "Download the table (CSV)",
        framed.to_csv().encode(),
        file_name="scores.csv",
        mime="text/csv",
        on_click="ignore",
        help="The means shown, each row with the fingerprint (JSON) of the release and runs.",
    )
    st.download_button(
        "Download the scores (JSON)",
        score_slices.json_report(results, measures, fingerprint, chosen),
        file_name="scores.json",
        mime="application/json",
        on_click="ignore",
        help="As `qrelforge score --format json --per-query`, with every slice; "
        "`qrelforge verify scores.json RELEASE.trec RUN...` recomputes it.",
    )
    return results


def _named(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its index (run names) as inert Markdown, for ``st.table``."""
    return frame.set_axis([escape_name(name) for name in frame.index]).rename_axis(frame.index.name)


def _long(results: dict[str, Result], measure: str) -> pd.DataFrame:
    return pd.concat(
        [
            pd.DataFrame({"run": name, "query_id": r.query_ids, "value": r.values[measure]})
            for name, r in results.items()
        ],
        ignore_index=True,
    )


def per_query(
    results: dict[str, Result], measures: list[str], actor: Actor | None = None, project: str | None = None
) -> None:
    """A run × query heatmap of one measure, per-query bars of every run, and the per-query difference
    between two runs; all of the chosen slice's queries (`score_slices`)."""
    from annotate_app.ui.components import charts, score_slices

    if actor and project and results:
        first = next(iter(results.values()))
        results = score_slices.shown_results(
            results, score_slices.choose_slice(actor, project, first.query_ids)
        )
        score_slices.heatmap(results, measures)
    measure = st.selectbox("Measure", measures, key=state.SCORE_MEASURE)
    st.altair_chart(charts.per_query_bars(_long(results, measure), measure), width="stretch")
    shown = list(results)
    if len(shown) < 2:
        st.caption("Pick two runs to see their per-query difference.")
        return
    left, right = st.columns(2)
    a = left.selectbox("Run A", shown, index=0, key=state.SCORE_PAIR_A)
    b = right.selectbox("Run B", shown, index=1, key=state.SCORE_PAIR_B)
    values_a = pd.Series(results[a].values[measure], index=results[a].query_ids)
    values_b = pd.Series(results[b].values[measure], index=results[b].query_ids).reindex(values_a.index)
    diff = (values_b - values_a).to_numpy()
    outcome = np.where(
        np.isnan(diff), "undefined", np.where(diff > 1e-12, "win", np.where(diff < -1e-12, "loss", "tie"))
    )
    frame = pd.DataFrame({"query_id": values_a.index, "diff": diff, "outcome": outcome})
    st.altair_chart(charts.difference_bars(frame, f"{measure}: {b} − {a}"), width="stretch")
    better = names.plural(int((outcome == "win").sum()), "query", "queries")
    st.caption(
        f"{better} better for {escape_name(b)}, {(outcome == 'loss').sum()} worse, "
        f"{(outcome == 'tie').sum()} tied."
    )


# ------------------------------------------------------------------------------------------- unjudged
def _send(actor: Actor, project: str, run: str, pairs: list[tuple[str, str]], k: int) -> None:
    with errors.captured(state.SCORE_FLASH) as outcome:
        report = scoring.queue_pairs(
            cache.database(), actor, project, pairs, note=f"unjudged in {run}'s top {k}"
        )
    if not outcome.failed:
        errors.set_flash(state.SCORE_FLASH, "success", f"{run}: {report.message}.")


def unjudged(actor: Actor, project: str, qrels: Qrels, runs: dict[str, Run], k: int) -> None:
    """Judged@k per run and its unjudged top-k documents, with a button that queues them for judging."""
    from metrics.coverage import judging_coverage

    coverage = judging_coverage(qrels, runs, k=k)
    st.table(_named(coverage.judged.set_index("run")).style.format({f"Judged@{k}": "{:.3f}"}))
    st.caption(
        f"A depth-{k} pool of these runs would add {names.plural(coverage.pool_total, 'pair')} to judge."
    )
    table = coverage.unjudged
    for name in runs:
        rows = table[table["run"] == name]
        with st.expander(
            f"{escape_name(name)}: {names.plural(len(rows), 'unjudged document')} in the top {k}"
        ):
            if rows.empty:
                st.caption("Every document in the top k is judged.")
                continue
            widgets.paged_dataframe(
                rows[["query_id", "rank", "doc_id"]], state.per_item(state.SCORE_UNJUDGED_PAGE, name)
            )
            pairs = list(zip(rows["query_id"], rows["doc_id"], strict=True))
            st.button(
                f"Send {names.plural(len(pairs), 'pair')} to the judging queue",
                on_click=_send,
                key=state.per_item("queue_unjudged", name),
                args=(actor, project, name, pairs, k),
            )


# -------------------------------------------------------------------------------------------- compare
def compare_view(qrels: Qrels, runs: dict[str, Run], measures: list[str], project: str) -> None:
    """Significance tests against a baseline (metrics.compare), the win/tie/loss chart, report downloads."""
    if len(runs) < 2:
        st.info("Pick at least two runs to compare them.")
        return
    from annotate_app.ui.components import charts
    from metrics.compare import compare

    left, right = st.columns(2)
    baseline = left.selectbox("Baseline", list(runs), key=state.SCORE_BASELINE)
    permutations = right.number_input(
        "Permutations", 100, 100_000, 10_000, step=1000, key=state.SCORE_PERMUTATIONS
    )
    with errors.shown() as outcome:
        report = compare(
            qrels,
            runs,
            measures,
            baseline=baseline,
            n_permutations=int(permutations),
            n_bootstrap=min(int(permutations), 10_000),
        )
    if outcome.failed:
        return
    summary = report.to_dataframe("summary")
    columns = [
        "run",
        "measure",
        "mean",
        "diff",
        "wins",
        "ties",
        "losses",
        "p_t_adjusted",
        "p_permutation_adjusted",
        "ci_low",
        "ci_high",
        "significant",
        "direction",
    ]
    shown = summary[~summary["baseline"].astype(bool)][columns]
    st.dataframe(shown, hide_index=True, width="stretch", column_config=names.column_config(shown))
    st.caption(escape_markdown(report.legend()))  # it names the baseline run
    st.altair_chart(charts.win_loss_bars(report.to_dataframe("wtl")), width="stretch")
    from annotate_app.ui.components.score_slices import page_fingerprint

    report.fingerprint = page_fingerprint(
        qrels, runs, measures, command="compare", parameters={**report.to_dict(per_query=False)["settings"]}
    )
    first, second = st.columns(2)
    first.download_button(
        "Report (Markdown)",
        report.to_markdown().encode(),
        mime="text/markdown",
        file_name=f"{project}-compare.md",
        on_click="ignore",
    )
    second.download_button(
        "Report (HTML)",
        report.to_html().encode(),
        file_name=f"{project}-compare.html",
        mime="text/html",
        on_click="ignore",
    )


# ---------------------------------------------------------------------------------------- sensitivity
def sensitivity_view(
    actor: Actor, project: str, qrels: Qrels, runs: dict[str, Run], measures: list[str]
) -> None:
    """Assessor sensitivity: each run scored under each annotator's labels, the majority and the release."""
    st.caption(
        "Would the conclusion change if someone else had judged? Each run is scored under every "
        "annotator's own labels (filled in from the release where they did not judge), the majority "
        "labels and the release; then the spread of each score and Kendall's tau between the "
        "rankings."
    )
    if not st.toggle("Compute assessor sensitivity", key=state.SCORE_SENSITIVITY):
        return
    from metrics.stats.sensitivity import assessor_sensitivity

    with errors.shown():
        labels = scoring.label_table(cache.database(), actor, project)
        if labels.empty:
            st.info("No labels yet.")
            return
        result = assessor_sensitivity(labels, runs, measures, release=qrels)
        st.markdown("**Spread of each run's score over the qrels variants**")
        spread = result.to_dataframe("spread")
        st.dataframe(spread, hide_index=True, width="stretch", column_config=names.column_config(spread))
        st.markdown("**Kendall's τ between each variant's system ranking and the release's**")
        tau = result.to_dataframe("tau")
        st.dataframe(tau, hide_index=True, width="stretch", column_config=names.column_config(tau))


# ------------------------------------------------------------------------------------------- new runs
def _keep(run: Run, picked: bool = True) -> None:
    _extra()[run.name] = run
    if picked:
        st.session_state[state.SCORE_RUNS] = list(
            dict.fromkeys([*st.session_state.get(state.SCORE_RUNS, []), run.name])
        )


def _bm25(actor: Actor, project: str, taken: list[str]) -> None:
    k = int(st.session_state.get(state.SCORE_BM25_K) or 100)
    with errors.captured(state.SCORE_FLASH) as outcome:
        run = scoring.bm25_baseline(
            cache.database(), actor, project, k=k, name=_free_name("bm25", taken, "session")
        )
    if not outcome.failed:
        _keep(run)
        errors.set_flash(
            state.SCORE_FLASH, "success", f"Built {run.name}: {len(run)} entries (top {k} per query)."
        )


def _fuse(runs: dict[str, Run], taken: list[str]) -> None:
    from metrics.retrieval.fusion import fuse

    ss = st.session_state
    chosen = [runs[n] for n in ss.get(state.SCORE_FUSE_RUNS) or [] if n in runs]
    method = ss.get(state.SCORE_FUSE_METHOD) or "rrf"
    name = _free_name(ss.get(state.SCORE_FUSE_NAME) or method, taken, "session")
    if len(chosen) < 2:
        errors.set_flash(state.SCORE_FLASH, "error", "Pick at least two runs to fuse.")
        return
    try:
        run = fuse(chosen, method=method, name=name)
    except QrelForgeError as exc:
        errors.set_flash(state.SCORE_FLASH, "error", str(exc))
        return
    _keep(run)
    errors.set_flash(state.SCORE_FLASH, "success", f"Built {name}: {method} of {len(chosen)} runs.")


def _trec(run: Run) -> bytes:
    from metrics.formats import write_run

    out = io.StringIO()
    write_run(run, out)
    return out.getvalue().encode()


def make_runs(actor: Actor, project: str, runs: dict[str, Run]) -> None:
    """Build a BM25 baseline or a fusion of runs (kept in this session, then scored and compared)."""
    taken = [n for n, _ in review_cache.list_runs(actor, project)] + list(_extra())
    st.markdown("**BM25 baseline** over the project's documents and queries (CJK bigrams + Latin words)")
    left, right = st.columns([1, 2])
    left.number_input("Documents per query", 1, 1000, 100, key=state.SCORE_BM25_K)
    right.button("Build BM25 run", on_click=_bm25, args=(actor, project, taken))
    st.markdown("**Fusion** of runs (reciprocal rank fusion, CombSUM or CombMNZ over min-max scores)")
    cols = st.columns([3, 1, 1, 1])
    cols[0].multiselect("Runs to fuse", list(runs), key=state.SCORE_FUSE_RUNS)
    cols[1].selectbox("Method", ["rrf", "combsum", "combmnz"], key=state.SCORE_FUSE_METHOD)
    cols[2].text_input("Name", value="fused", key=state.SCORE_FUSE_NAME)
    cols[3].button("Fuse", on_click=_fuse, args=(runs, taken))
    for name, run in _extra().items():
        st.download_button(
            f"Download {escape_name(name)} (TREC)",
            functools.partial(_trec, run),
            file_name=f"{name}.trec",
            mime="text/plain",
            key=state.per_item("download_run", name),
            on_click="ignore",
        )
