"""The Agreement page's Judges section: each machine judge against the human labels
(`services.judges.calibrate`), one judge at a time.

Machine labels never enter the human figures above it. Judge names reach Markdown only through
`escape_name`. The figures shown: docs/app.md.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from annotate_app.services.auth import Actor
from annotate_app.services.judges import PROBE_KINDS, JudgeCalibrationInfo, ProbeReport
from annotate_app.ui import errors, review_cache, state
from annotate_app.ui.components import charts, names
from annotate_app.ui.components.judges_compare import comparison_section
from annotate_app.ui.escape import escape_name

__all__ = [
    "judges_section",
    "kappa_label",
    "tau_text",
    "calibration_text",
    "span_text",
    "confusion_table",
    "failures_text",
    "probe_text",
    "probe_pairs",
    "circularity_text",
    "circularity_table",
]

MIN_TAU_RUNS = 3

PROBE_CHANGES = {
    "stuffing": "with the query's terms inserted",
    "injection": "with a sentence asserting relevance inserted",
    "length": "padded with text from other non-relevant documents",
}
"""What each probe kind (`services.judges.PROBE_KINDS`) did to the documents, as the page says it."""


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "undefined" if value is None or math.isnan(value) else format(value, spec)


def kappa_label(info: JudgeCalibrationInfo, cutoff: int | None) -> str:
    """The κ's name with the project's agreement mode, as the human figures above state it."""
    if info.mode == "binary":
        return f"Cohen's κ (binary, relevant ≥ {'the cut-off' if cutoff is None else cutoff})"
    return "Cohen's κ (graded)"


def tau_text(value: float | None, n_runs: int) -> str:
    """τ with 3 decimals; "needs ≥ 3 runs" with fewer stored runs; "undefined" otherwise when None."""
    if value is None and n_runs < MIN_TAU_RUNS:
        return f"needs ≥ {MIN_TAU_RUNS} runs"
    return _fmt(value)


def calibration_text(info: JudgeCalibrationInfo) -> tuple[bool, str]:
    """(passed, the sentence saying why) of a judge's calibration: the figures the fill-in gate reads, on the
    randomly sampled human pairs (`JudgeCalibrationInfo.n_random_pairs`)."""
    rule = (
        f"κ ≥ {info.threshold:.3f} on at least {names.plural(info.min_pairs, 'randomly sampled human pair')}"
    )
    figures = (
        f"κ {_fmt(info.random_kappa)} on {names.plural(info.n_random_pairs, 'randomly sampled human pair')}"
    )
    if info.passed:
        return True, f"Calibration passed: {figures} ({rule}); the judge may fill pairs no human judged."
    return False, f"Calibration not passed: {figures}; it needs {rule}. Its labels fill no pair."


def span_text(info: JudgeCalibrationInfo) -> str:
    """The caption of the evidence span F1: what it compares and the items left out ("" when neither the
    judge nor the humans marked a passage on a shared pair)."""
    if not info.n_span_pairs:
        return ""
    return (
        f"Evidence span F1: the character overlap of the judge's located evidence passages and the humans' "
        f"on {names.plural(info.n_span_pairs, '(pair, human) item')}, 2·|A ∩ B| / (|A| + |B|) pooled; "
        f"{names.plural(info.n_span_without_evidence, 'item')} where neither marked a passage left out."
    )


def confusion_table(info: JudgeCalibrationInfo) -> pd.DataFrame:
    """The confusion matrix as a DataFrame: human grades (rows) × judge grades (columns), counts."""
    grades = list(info.confusion)
    return pd.DataFrame(
        [[info.confusion[h].get(j, 0) for j in grades] for h in grades],
        index=pd.Index([int(g) for g in grades]),
        columns=pd.Index([int(g) for g in grades]),
    )


def _figures(info: JudgeCalibrationInfo, cutoff: int | None) -> None:
    with st.container(horizontal=True, gap="medium"):
        st.metric("Shared pairs", info.n_pairs, width="content")
        st.metric("Randomly sampled", info.n_random_pairs, width="content")
        st.metric(kappa_label(info, cutoff), _fmt(info.kappa), width="content")
        st.metric("Weighted κ (linear)", _fmt(info.weighted_kappa), width="content")
        st.metric("Krippendorff's α (ordinal)", _fmt(info.alpha_ordinal), width="content")
        st.metric("Leniency", _fmt(info.leniency, "+.3f"), width="content")
        st.metric("Kendall's τ (runs)", tau_text(info.tau, info.n_runs), width="content")
        st.metric("Kendall's τ (top 5 runs)", tau_text(info.tau_top5, info.n_runs), width="content")
        if info.n_span_pairs:
            st.metric("Evidence span F1", _fmt(info.span_f1), width="content")
    passed, text = calibration_text(info)
    (st.success if passed else st.warning)(text)
    st.caption(
        "Leniency: mean judge grade − human grade (> 0: the judge grades higher). Kendall's τ: the "
        f"{names.plural(info.n_runs, 'stored run')} ranked by nDCG@10 with human and with judge qrels."
    )
    if info.n_span_pairs:
        st.caption(span_text(info))


def circularity_text(info: JudgeCalibrationInfo) -> str:
    """The sentence on the stored runs made by a model of the judge's family (`circular_runs`), or on none."""
    if not info.circular_runs:
        return (
            "No stored run was made by a model of the judge's family (a run records its model at import: "
            "`qrelforge import run --model`)."
        )
    runs = ", ".join(escape_name(r) for r in info.circular_runs)
    return (
        f"Circular runs: {names.plural(len(info.circular_runs), 'stored run')} made by a model of the "
        f"judge's family ({runs}); a judge may favour them. Kendall's τ with and without them:"
    )


def circularity_table(info: JudgeCalibrationInfo) -> pd.DataFrame:
    """Kendall's τ of the run rankings over all stored runs and without the circular ones, overall and among
    the top 5 runs (NaN where undefined)."""

    def value(tau: float | None) -> float:
        return math.nan if tau is None else float(tau)

    return pd.DataFrame(
        {
            "runs": ["all stored runs", "without the circular runs"],
            "tau": [value(info.tau), value(info.tau_without_circular)],
            "tau_top5": [value(info.tau_top5), value(info.tau_top5_without_circular)],
        }
    )


def _circularity(info: JudgeCalibrationInfo) -> None:
    if not info.circular_runs:
        st.caption(circularity_text(info))
        return
    st.warning(circularity_text(info))
    table = circularity_table(info)
    st.dataframe(table, hide_index=True, width="stretch", column_config=names.column_config(table))


def _confusion(info: JudgeCalibrationInfo) -> None:
    st.markdown("**Confusion: human grade × judge grade**")
    chart = charts.confusion_heatmap(confusion_table(info), row="Human", column="Judge")
    st.altair_chart(chart, width="stretch")
    st.caption(
        "Rows: the human labels' grades; columns: the judge's grade of the same pair; one count per human "
        "label on a shared pair. Colour: the cell's share of its row."
    )


def _leniency(info: JudgeCalibrationInfo) -> None:
    table = pd.DataFrame(
        {
            "human_grade": [int(g) for g in info.leniency_by_grade],
            "leniency": [math.nan if v is None else float(v) for v in info.leniency_by_grade.values()],
        }
    )
    st.markdown("**Leniency per human grade**")
    st.dataframe(table, hide_index=True, width="stretch", column_config=names.column_config(table))


def _per_query(info: JudgeCalibrationInfo) -> None:
    table = pd.DataFrame(
        [
            {
                "query_id": q.query_id,
                "n_items": q.n_pairs,
                "n_ratings": q.n_labels,
                "exact_agreement": math.nan if q.exact_agreement is None else q.exact_agreement,
                "mean_difference": math.nan if q.mean_difference is None else q.mean_difference,
            }
            for q in info.per_query
        ],
        columns=["query_id", "n_items", "n_ratings", "exact_agreement", "mean_difference"],
    )
    st.markdown("**Per query**")
    st.dataframe(table, hide_index=True, width="stretch", column_config=names.column_config(table))


def _interval(bounds: tuple[float, float] | None, spec: str) -> str:
    if bounds is None or any(math.isnan(b) for b in bounds):
        return "undefined"
    return f"{format(bounds[0], spec)} to {format(bounds[1], spec)}"


def probe_text(report: ProbeReport) -> str:
    """The sentence on a probe: how often and how much the grade rose, with the 95% intervals."""
    share = "undefined" if report.share_raised is None else f"{report.share_raised:.0%}"
    change = PROBE_CHANGES[report.kind]
    return (
        f"{report.kind.capitalize()} probe: {change}, the grade rose on {report.n_raised} of "
        f"{names.plural(report.n_pairs, 'pair')} humans judged non-relevant ({share}, 95% CI "
        f"{_interval(report.share_raised_ci, '.0%')}); fell on {report.n_lowered}, unchanged on "
        f"{report.n_unchanged}"
        + (f"; {report.failed} left out (a judgment failed)" if report.failed else "")
        + f"; mean rise {_fmt(report.mean_rise, '+.2f')} (95% CI {_interval(report.mean_rise_ci, '+.2f')})."
    )


def probe_pairs(report: ProbeReport) -> pd.DataFrame:
    """The pairs behind a probe's figures: query, document, the grade before and after, the rise."""
    return pd.DataFrame(
        [[p.query_id, p.doc_id, p.before, p.after, p.after - p.before] for p in report.pairs],
        columns=["query_id", "doc_id", "grade_before", "grade_after", "rise"],
    )


def _probe(name: str, reports: dict[str, ProbeReport], replayed: bool) -> None:
    if not reports and replayed:
        st.caption(
            f"No probe of {escape_name(name)}: its labels were made elsewhere and imported, so it "
            "cannot judge a changed document here."
        )
        return
    for kind in PROBE_KINDS:
        report = reports.get(kind)
        if report is None:
            continue
        (st.warning if report.n_raised else st.info)(probe_text(report))
        with st.expander(f"Pairs behind the {kind} probe"):
            table = probe_pairs(report)
            st.dataframe(table, hide_index=True, width="stretch", column_config=names.column_config(table))
            st.caption(f"Prompt hash: `{report.prompt_hash or '-'}`")
    missing = [k for k in PROBE_KINDS if k not in reports]
    if missing and not replayed:
        st.caption(
            f"No {', '.join(missing)} probe of {escape_name(name)} yet (admins: `qrelforge judge probe -p "
            f"PROJECT {escape_name(name)} --kind {missing[0]}`)."
        )


def failures_text(name: str, counts: dict[str, int]) -> str:
    """The sentence on a judge's failed pairs: the count of each failure kind (kinds in their enum order)."""
    if not counts:
        return f"No failed pair: every pair {escape_name(name)} was asked about has a grade."
    total = sum(counts.values())
    kinds = ", ".join(f"{kind} {n}" for kind, n in counts.items())
    return (
        f"Failed pairs: {total} ({kinds}). A rerun asks again for those a server failed on "
        f"(`qrelforge judge failures -p PROJECT {escape_name(name)}` lists them)."
    )


def _chosen(calibrations: list[JudgeCalibrationInfo]) -> JudgeCalibrationInfo:
    if len(calibrations) == 1:
        return calibrations[0]
    by_name = {c.name: c for c in calibrations}
    name = st.selectbox("Judge", list(by_name), key=state.AGREE_JUDGE)
    return by_name.get(name or "", calibrations[0])


def judges_section(actor: Actor, project: str, cutoff: int | None) -> None:
    """The Judges section (see the module doc); nothing in a project without a machine judge."""
    with errors.shown() as outcome:
        calibrations = review_cache.judge_calibrations(actor, project)
        probes = review_cache.probe_reports(actor, project) if calibrations else {}
        failures = review_cache.judge_failure_counts(actor, project) if calibrations else {}
        replayed = {j.name for j in review_cache.list_judges(actor, project) if j.backend == "replay"}
    if outcome.failed or not calibrations:
        return
    st.subheader("Judges")
    st.caption(
        "Each machine judge against the human labels on the pairs both labelled. Machine labels never "
        "enter the human figures above."
    )
    comparison_section(actor, project, [c.name for c in calibrations if c.n_pairs])
    info = _chosen(calibrations)
    st.markdown(f"**Judge {escape_name(info.name)}**")
    _figures(info, cutoff)
    _circularity(info)
    _confusion(info)
    left, right = st.columns([1, 2])
    with left:
        _leniency(info)
    with right:
        _per_query(info)
    _probe(info.name, probes.get(info.name, {}), info.name in replayed)
    counts = failures.get(info.name, {})
    (st.warning if counts else st.caption)(failures_text(info.name, counts))
