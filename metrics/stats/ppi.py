"""Prediction-powered inference (PPI) for a run's mean metric when most queries are judged by a machine.

With judge values J on all N queries and human values H on a uniformly random n of them:
θ̂ = mean_N(J) + mean_n(H − J), 95% interval θ̂ ± z·√(var_N(J)/N + var_n(H − J)/n). PPI++ weights the judge
by λ̂ ∈ [0, 1] minimising that variance (λ = 0 is the human-only mean). Every result also carries the
classical interval of the n human queries alone. The intervals are asymptotic and need a random human
sample. ``variance="overlap"`` adds the covariance the n human queries share with the N (they are among
them): var_N(J)/N + var_n(H − J)/n + 2·cov_n(J, H − J)/N, the double-sampling variance. References and
caveats: docs/modules.md.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Hashable, Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from metrics._lazy import lazy
from metrics.errors import QrelForgeError, UndefinedMetricWarning
from metrics.stats.isotonic import Calibration, crossfit_folds, crossfit_values, fit_grade_map

if TYPE_CHECKING:
    from scipy import stats
else:
    stats = lazy("scipy.stats")  # imported on first use: not by the Score page's import

__all__ = ["Interval", "Method", "PPIResult", "Variance", "ppi_difference", "ppi_mean", "ppi_run"]


class Method(StrEnum):
    """``PPI``: the judge weighted 1 (λ = 1); ``PPI_PLUS_PLUS``: the power-tuned λ̂ of PPI++."""

    PPI = "ppi"
    PPI_PLUS_PLUS = "ppi++"


class Interval(StrEnum):
    """Quantile of the classical human-only interval: ``NORMAL`` (z) or ``T`` (Student t, n − 1 df)."""

    NORMAL = "normal"
    T = "t"


class Variance(StrEnum):
    """The variance of θ̂_λ = λ·mean_N(J) + mean_n(H − λJ), the human queries being n of the N.

    ``INDEPENDENT``: λ²·var_N(J)/N + var_n(H − λJ)/n, the two means treated as independent, as in PPI where
    the human and machine sets are disjoint. ``OVERLAP``: that plus 2λ·cov_n(J, H − λJ)/N, the covariance
    the two means share through the n human queries (double sampling with a difference estimator,
    Cochran 1977 §12.7). Its minimiser is the regression coefficient, so PPI++ takes λ̂ = cov_n(H, J)/var_n(J),
    clipped to [0, 1]; an unclipped λ̂ makes cov_n(J, H − λ̂J) = 0 and the two formulas agree.
    """

    INDEPENDENT = "independent"
    OVERLAP = "overlap"


@dataclass(frozen=True)
class PPIResult:
    """The PPI estimate of one run's mean metric, beside the human-only figures from the same human queries.

    ``estimate``, ``ci_low``, ``ci_high``, ``width`` (= ci_high − ci_low): PPI (or PPI++) at ``level``;
    ``lambda_`` the judge's weight (1 for plain PPI); ``n_human`` queries with human values out of
    ``n_total``; ``human_mean``, ``human_ci_low``, ``human_ci_high``, ``human_width``: the classical interval
    of the mean over the n human queries, with the ``human_interval`` quantile; ``variance`` the `Variance`
    formula behind the PPI interval. Interval bounds are NaN (with an UndefinedMetricWarning) when
    n_human < 2.
    """

    run: Hashable
    method: Method
    level: float
    estimate: float
    ci_low: float
    ci_high: float
    width: float
    lambda_: float
    n_human: int
    n_total: int
    human_interval: Interval
    human_mean: float
    human_ci_low: float
    human_ci_high: float
    human_width: float
    variance: Variance = Variance.INDEPENDENT

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------------------------- validation


def _choice(enum: type[StrEnum], name: str, value: Any) -> Any:
    try:
        return enum(value)
    except ValueError:
        choices = " or ".join(repr(m.value) for m in enum)
        raise QrelForgeError(f"{name} must be {choices}; got {value!r}") from None


def _positive(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise QrelForgeError(f"{name} must be an int >= 1; got {value!r}")
    return int(value)


def _check_level(level: Any) -> float:
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < float(level) < 1:
        raise QrelForgeError(f"level must be a number strictly between 0 and 1; got {level!r}")
    return float(level)


def _as_table(values: Any, name: str) -> pd.DataFrame:
    """A queries × runs table of finite numbers with distinct queries and runs (a Series is one run)."""
    if isinstance(values, pd.Series):
        values = values.to_frame(name=values.name if values.name is not None else "run")
    if not isinstance(values, pd.DataFrame):
        raise QrelForgeError(
            f"{name} must be a DataFrame (queries × runs) or a Series (one run); got {type(values).__name__}"
        )
    if values.shape[0] == 0 or values.shape[1] == 0:
        raise QrelForgeError(f"{name} must have at least one query and one run; got shape {values.shape}")
    for axis, what in ((values.index, "query"), (values.columns, "run")):
        if axis.has_duplicates:
            raise QrelForgeError(f"{name} has {what} {axis[axis.duplicated()][0]!r} twice")
    return _numeric(values, name)


def _numeric(values: pd.DataFrame, name: str) -> pd.DataFrame:
    try:
        numbers_ = values.astype(float)
    except (TypeError, ValueError):
        bad = next(v for v in values.to_numpy(dtype=object).ravel() if not _is_real(v))
        raise QrelForgeError(f"{name} must hold numbers only; got {bad!r}") from None
    finite = np.isfinite(numbers_.to_numpy())
    if not finite.all():
        row, col = (int(i[0]) for i in np.nonzero(~finite))
        shown = float(numbers_.to_numpy()[row, col])
        raise QrelForgeError(
            f"{name} has a missing or infinite value for run {values.columns[col]!r} at query "
            f"{values.index[row]!r}: {shown!r}; leave the queries where the metric is undefined out of both "
            "tables first"
        )
    return numbers_


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _aligned(judge: Any, human: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(judge N × R, human n × R) with the human runs in the judge's order; human queries ⊆ judge queries."""
    j, h = _as_table(judge, "judge"), _as_table(human, "human")
    orphans = h.index.difference(j.index, sort=False)
    if len(orphans):
        raise QrelForgeError(f"human has queries without judge values: {list(orphans[:10])!r}")
    for lacking, other, table in (("human", j, h), ("judge", h, j)):
        absent = other.columns.difference(table.columns, sort=False)
        if len(absent):
            raise QrelForgeError(f"human and judge must have the same runs; {lacking} lacks {list(absent)!r}")
    return j, h[j.columns]


# ------------------------------------------------------------------------------------------- estimation


def _var(values: np.ndarray) -> np.ndarray:
    """Sample variance per column (ddof = 1); NaN for a single row."""
    if values.shape[0] < 2:
        return np.full(values.shape[1], np.nan)
    return values.var(axis=0, ddof=1)


def _tuned_lambda(j_all: np.ndarray, j_h: np.ndarray, h: np.ndarray) -> np.ndarray:
    """λ̂ = (cov_n(H, J)/n) / (var_N(J)/N + var_n(J)/n), clipped to [0, 1]; 0 for a constant judge."""
    n, big_n = h.shape[0], j_all.shape[0]
    if n < 2:
        return np.ones(h.shape[1])
    cov = _cov(h, j_h)
    denominator = _var(j_all) / big_n + _var(j_h) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(denominator > 0, (cov / n) / denominator, 0.0)
    return np.clip(lam, 0.0, 1.0)


def _regression_lambda(j_h: np.ndarray, h: np.ndarray) -> np.ndarray:
    """λ̂ = cov_n(H, J)/var_n(J), clipped to [0, 1]; 0 for a judge constant on the human queries."""
    if h.shape[0] < 2:
        return np.ones(h.shape[1])
    variance = _var(j_h)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(variance > 0, _cov(j_h, h) / variance, 0.0)
    return np.clip(lam, 0.0, 1.0)


def _cov(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sample covariance per column (ddof = 1) of two tables with the same rows; NaN for a single row."""
    if a.shape[0] < 2:
        return np.full(a.shape[1], np.nan)
    return ((a - a.mean(axis=0)) * (b - b.mean(axis=0))).sum(axis=0) / (a.shape[0] - 1)


def _ppi(
    j_all: np.ndarray, j_h: np.ndarray, h: np.ndarray, lam: np.ndarray, variance: Variance
) -> tuple[np.ndarray, np.ndarray]:
    """(θ̂_λ, standard error) per run: λ·mean_N(J) + mean_n(H − λJ), and the square root of
    λ²·var_N(J)/N + var_n(H − λJ)/n, plus 2λ·cov_n(J, H − λJ)/N for `Variance.OVERLAP` (floored at 0)."""
    rectifier = h - lam * j_h
    big_n = j_all.shape[0]
    estimate = lam * j_all.mean(axis=0) + rectifier.mean(axis=0)
    var = lam**2 * _var(j_all) / big_n + _var(rectifier) / h.shape[0]
    if variance is Variance.OVERLAP:
        var = np.maximum(var + 2 * lam * _cov(j_h, rectifier) / big_n, 0.0)
    return estimate, np.sqrt(var)


def _human_only(h: np.ndarray, level: float, interval: Interval) -> tuple[np.ndarray, np.ndarray]:
    """(mean_n(H), half-width q·sd_n(H)/√n) per run."""
    n = h.shape[0]
    tail = 0.5 + level / 2.0
    q = float(stats.t.ppf(tail, n - 1)) if interval is Interval.T and n > 1 else float(stats.norm.ppf(tail))
    return h.mean(axis=0), q * np.sqrt(_var(h) / n)


def _results(
    runs: pd.Index,
    j: pd.DataFrame,
    h: pd.DataFrame,
    level: float,
    options: tuple[Method, Interval, Variance],
) -> list[PPIResult]:
    method, interval, variance = options
    j_all, j_h, h_values = j.to_numpy(), j.loc[h.index].to_numpy(), h.to_numpy()
    if len(h) < 2:
        warnings.warn(
            f"the confidence intervals are undefined: they need at least 2 human queries, got {len(h)}; "
            "returning NaN bounds",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    if method is not Method.PPI_PLUS_PLUS:
        lam = np.ones(len(runs))
    elif variance is Variance.OVERLAP:
        lam = _regression_lambda(j_h, h_values)
    else:
        lam = _tuned_lambda(j_all, j_h, h_values)
    estimate, se = _ppi(j_all, j_h, h_values, lam, variance)
    half = float(stats.norm.ppf(0.5 + level / 2.0)) * se
    human_mean, human_half = _human_only(h_values, level, interval)
    return [
        PPIResult(
            run=run,
            method=method,
            level=level,
            estimate=float(estimate[i]),
            ci_low=float(estimate[i] - half[i]),
            ci_high=float(estimate[i] + half[i]),
            width=float(2 * half[i]),
            lambda_=float(lam[i]),
            n_human=len(h),
            n_total=len(j),
            human_interval=interval,
            human_mean=float(human_mean[i]),
            human_ci_low=float(human_mean[i] - human_half[i]),
            human_ci_high=float(human_mean[i] + human_half[i]),
            human_width=float(2 * human_half[i]),
            variance=variance,
        )
        for i, run in enumerate(runs)
    ]


def ppi_mean(
    judge: Any,
    human: Any,
    *,
    level: float = 0.95,
    method: Method | str = Method.PPI,
    human_interval: Interval | str = Interval.NORMAL,
    variance: Variance | str = Variance.INDEPENDENT,
) -> dict[Hashable, PPIResult]:
    """PPI estimate and confidence interval of each run's mean metric, vectorised over runs.

    θ̂ = mean_N(J) + mean_n(H − J) (``"ppi"``), or with a power-tuned λ (``"ppi++"``, see the module doc).
    The interval is θ̂ ± z·se with se² = var_N(J)/N + var_n(H − J)/n (``"independent"``), or, since the n
    human queries are among the N, se² = var_N(J)/N + var_n(H − J)/n + 2·cov_n(J, H − J)/N
    (``"overlap"``, floored at 0): Var(θ̂) = Var(J)/N + Var(H − J)/n + 2·Cov(mean_N J, mean_n (H − J)),
    and the last covariance is Cov(J, H − J)/N because only the n shared queries contribute (with λ: J
    becomes λJ; `Variance`).
    With a single human query the estimates are returned and the bounds are NaN (UndefinedMetricWarning).

    Args:
        judge: queries × runs (a DataFrame, or a Series for one run): the per-query metric computed with
            judge qrels, on all N queries.
        human: queries × runs: the per-query metric computed with human qrels, on the n human-judged queries,
            a uniformly random subset of judge's queries (rows matched by query, runs by name).
        level: the confidence level of both intervals, in (0, 1).
        method: ``"ppi"`` or ``"ppi++"``.
        human_interval: ``"normal"`` or ``"t"``, the quantile of the human-only interval.
        variance: ``"independent"`` or ``"overlap"`` (`Variance`), the variance of the PPI interval.

    Returns:
        ``{run: PPIResult}``: the estimate, its interval, and the human-only mean and interval beside it.

    Raises:
        QrelForgeError: a value that is not a finite number (leave out, in both tables, the queries where
            the metric is undefined), human queries that judge lacks, different runs, or a bad option.

    >>> judge = pd.DataFrame({"A": [0.5, 0.7, 0.2, 0.9, 0.4, 0.6]}, index=[f"q{i}" for i in range(1, 7)])
    >>> human = pd.DataFrame({"A": [0.3, 0.6, 0.0]}, index=["q1", "q2", "q3"])
    >>> res = ppi_mean(judge, human)["A"]
    >>> round(res.estimate, 4), round(res.width, 4), round(res.human_width, 4)
    (0.3833, 0.4101, 0.679)
    """
    checked_level, checked_method = _check_level(level), _choice(Method, "method", method)
    options = (
        checked_method,
        _choice(Interval, "human_interval", human_interval),
        _choice(Variance, "variance", variance),
    )
    j, h = _aligned(judge, human)
    return {r.run: r for r in _results(j.columns, j, h, checked_level, options)}


def ppi_difference(
    judge: Any,
    human: Any,
    *,
    run_a: Hashable,
    run_b: Hashable,
    level: float = 0.95,
    method: Method | str = Method.PPI,
    human_interval: Interval | str = Interval.NORMAL,
    variance: Variance | str = Variance.INDEPENDENT,
) -> PPIResult:
    """PPI for the paired difference of two runs' means, run_a − run_b, on the same queries.

    The per-query difference of the two columns is estimated as one run (named ``"run_a - run_b"``), so the
    correlation between the runs is used rather than ignored; an interval excluding 0 says the runs differ at
    ``level``.

    Args:
        judge, human, level, method, human_interval, variance: as in `ppi_mean`.
        run_a, run_b: the two runs' column names.

    Returns:
        The `PPIResult` of the difference.

    Raises:
        QrelForgeError: as `ppi_mean`; a run missing from either table.

    >>> judge = pd.DataFrame({"A": [0.5, 0.7, 0.2, 0.9], "B": [0.4, 0.5, 0.2, 0.6]})
    >>> human = pd.DataFrame({"A": [0.3, 0.6], "B": [0.3, 0.4]})
    >>> res = ppi_difference(judge, human, run_a="A", run_b="B")
    >>> res.run, round(res.estimate, 4), res.n_human, res.n_total
    ('A - B', 0.1, 2, 4)
    """
    j, h = _aligned(judge, human)
    for name, run in (("run_a", run_a), ("run_b", run_b)):
        if run not in j.columns:
            raise QrelForgeError(f"{name} must be one of the runs {list(j.columns)!r}; got {run!r}")
    if run_a == run_b:
        raise QrelForgeError(f"run_a and run_b must be different runs; got {run_a!r} twice")
    label = f"{run_a} - {run_b}"
    diff_j = (j[run_a] - j[run_b]).rename(label)
    diff_h = (h[run_a] - h[run_b]).rename(label)
    return ppi_mean(
        diff_j, diff_h, level=level, method=method, human_interval=human_interval, variance=variance
    )[label]


def ppi_run(
    human_qrels: Any,
    judge_qrels: Any,
    run: Any,
    measures: Any,
    *,
    name: Hashable = "run",
    level: float = 0.95,
    method: Method | str = Method.PPI,
    human_interval: Interval | str = Interval.NORMAL,
    calibrate: Calibration | str | None = None,
    judge_confidence: Any = None,
    folds: int = 5,
    draws: int = 10,
    seed: int = 0,
) -> dict[str, PPIResult]:
    """`ppi_mean` of one run on each measure, from qrels.

    The run is scored per query with `metrics.evaluate` against ``judge_qrels`` (J: every query where the
    measure is defined) and against ``human_qrels`` (H: the queries where it is defined that J has too); then
    θ̂ = mean_N(J) + mean_n(H − J) as in `ppi_mean`. A single shared query gives NaN bounds.

    With ``calibrate="isotonic"`` J is the run's metric under calibrated judge grades: human grades drawn
    ``draws`` times from P̂(h | judge grade, confidence) (`metrics.stats.isotonic.GradeMap`) and the
    metric averaged over the draws, an estimate of E[metric | judge labels]. It is cross-fitted: the human
    queries are split into ``folds`` folds; map k is fitted on the pairs both labelled outside fold k; a
    human query of fold k takes J from map k only, any other query the mean over the K maps. No query's
    rectifier H − J uses a map fitted on its own labels, so θ̂ stays unbiased (a map fitted on the same
    queries would shrink H − J by overfitting them). Its interval uses ``variance="overlap"``: a map fitted
    per label cannot see what a query's other labels say about it, so the calibrated J is pulled towards
    the mean and H − J rises with J; the covariance 2·cov_n(J, H − J)/N is then positive and leaving it out
    makes the interval too narrow (`Variance`).

    Args:
        human_qrels: the human qrels, any form `metrics.evaluate` accepts.
        judge_qrels: the machine judge's qrels, likewise.
        run: the run, likewise.
        measures: measure names or `Measure` objects.
        name: the run's name in the results.
        level, method, human_interval: as in `ppi_mean`.
        calibrate: None (the judge's grades as they are) or ``"isotonic"`` (`Calibration`).
        judge_confidence: the judge's confidence per label, ``{qid: {doc_id: c}}`` or a DataFrame
            (``query_id``, ``doc_id``, ``confidence``); None or NaN where unknown (`judge_score`).
        folds: the number of cross-fitting folds (at most one per human query).
        draws: how many times human grades are drawn per judge label, an int >= 1.
        seed: the seed of the split into folds and of the draws.

    Returns:
        ``{measure name: PPIResult}``.

    Raises:
        QrelForgeError: a measure with no query defined under both qrels (naming it and the run); with
            ``calibrate``, fewer than 2 human queries or a fold whose map has no pair to learn from; and the
            errors of `metrics.evaluate` and `ppi_mean`.

    >>> human = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 0, "d4": 1}}
    >>> judge = {"q1": {"d1": 1}, "q2": {"d2": 1, "d5": 1}, "q3": {"d3": 1, "d4": 1}, "q4": {"d6": 1}}
    >>> run = {"q1": ["d1"], "q2": ["d2"], "q3": ["d3", "d4"], "q4": ["d7", "d6"]}
    >>> res = ppi_run(human, judge, run, ["P@1"], name="A")["P@1"]
    >>> res.n_human, res.n_total, round(res.estimate, 4), round(res.human_mean, 4)
    (3, 4, 0.4167, 0.6667)
    """
    from metrics.evaluate import evaluate  # evaluate is heavy: only when scoring from qrels

    on_human = evaluate(human_qrels, run, measures).per_query
    if calibrate is None:
        on_judge = evaluate(judge_qrels, run, measures).per_query
        judge_of = {str(m): on_judge[m] for m in on_judge.columns}
    else:
        _choice(Calibration, "calibrate", calibrate)
        settings = (folds, _positive(draws, "draws"), seed)
        judge_of = _crossfit_judge(human_qrels, judge_qrels, judge_confidence, run, measures, settings)
    out: dict[str, PPIResult] = {}
    for measure, judge_values in judge_of.items():
        j = judge_values.dropna().astype(float)
        h = on_human[measure].dropna().astype(float)
        h = h[h.index.isin(j.index)]
        if len(h) == 0:
            raise QrelForgeError(f"{measure} of run {name!r}: no query has both human and judge values")
        out[measure] = ppi_mean(
            pd.DataFrame({name: j}),
            pd.DataFrame({name: h}),
            level=level,
            method=method,
            human_interval=human_interval,
            variance=Variance.INDEPENDENT if calibrate is None else Variance.OVERLAP,
        )[name]
    return out


def _crossfit_judge(
    human_qrels: Any,
    judge_qrels: Any,
    confidence: Any,
    run: Any,
    measures: Any,
    settings: tuple[int, int, int],
) -> dict[str, pd.Series]:
    """measure → the cross-fitted per-query values of the run under the calibrated judge (see `ppi_run`)."""
    from metrics.evaluate import as_qrels, evaluate

    folds, draws, seed = settings
    keys = ["query_id", "doc_id"]
    human = as_qrels(human_qrels).to_dataframe()
    judge = as_qrels(judge_qrels).to_dataframe()
    judge["confidence"] = _confidence_of(judge, confidence)
    both = human.merge(judge, on=keys, suffixes=("_human", ""))
    fold_of = crossfit_folds(sorted(set(human["query_id"])), folds, seed=seed)
    scale = (int(judge["relevance"].min()), int(judge["relevance"].max()))
    uniforms = np.random.default_rng(seed).random((draws, len(judge)))  # the same draws for every fold
    per_fold, n_folds = [], max(fold_of.values()) + 1
    for k in range(n_folds):
        train = both[both["query_id"].map(fold_of) != k]
        if train.empty:
            raise QrelForgeError(
                f"calibration: fold {k + 1} of {n_folds} leaves no pair labelled by both the judge and "
                "the humans to fit its map on; use fewer folds or more human queries"
            )
        grade_map = fit_grade_map(
            train["relevance"], train["relevance_human"], confidence=train["confidence"], scale=scale
        )
        tables = [
            evaluate(
                judge[keys].assign(
                    relevance=grade_map.impute(judge["relevance"], judge["confidence"], uniforms=u)
                ),
                run,
                measures,
            ).per_query
            for u in uniforms
        ]
        per_fold.append(pd.concat(tables).groupby(level=0, sort=False).mean())
    return {str(m): crossfit_values([table[m] for table in per_fold], fold_of) for m in per_fold[0].columns}


def _confidence_of(judge: pd.DataFrame, confidence: Any) -> np.ndarray:
    """The confidence of each judge label, aligned with ``judge``'s rows (NaN where unknown)."""
    if confidence is None:
        return np.full(len(judge), np.nan)
    if isinstance(confidence, pd.DataFrame):
        table = confidence
    elif isinstance(confidence, Mapping):
        table = pd.DataFrame(
            [(q, d, c) for q, docs in confidence.items() for d, c in docs.items()],
            columns=["query_id", "doc_id", "confidence"],
        )
    else:
        raise QrelForgeError(
            "judge_confidence must be a mapping {qid: {doc_id: c}} or a DataFrame; got "
            f"{type(confidence).__name__}"
        )
    missing = {"query_id", "doc_id", "confidence"} - set(table.columns)
    if missing:
        raise QrelForgeError(f"judge_confidence lacks the column {sorted(missing)[0]!r}")
    table = table[["query_id", "doc_id", "confidence"]].astype({"query_id": str, "doc_id": str})
    table = table.drop_duplicates(["query_id", "doc_id"], keep="last")
    joined = judge[["query_id", "doc_id"]].astype(str).merge(table, on=["query_id", "doc_id"], how="left")
    return pd.to_numeric(joined["confidence"], errors="coerce").to_numpy(dtype=float)
