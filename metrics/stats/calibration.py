"""Calibrating machine judges (LLM relevance labellers) against a blind human sample.

`calibrate_judges` (kappa, weighted kappa, ordinal alpha, confusion, leniency, per-query agreement),
`ranking_agreement` (Kendall's tau of run rankings) and the keyword-stuffing probe (`stuff_query_terms`,
`probe_summary`). Inputs are long tables (item, query, rater, grade); a grade off ``labels``, a duplicate
(item, rater) or an item with two queries raises `QrelForgeError`. Undefined figures are NaN with
`UndefinedMetricWarning`. Machine labels never enter the human agreement figures.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import pandas as pd

from metrics._lazy import lazy_exports
from metrics.agreement import cohen_kappa, krippendorff_alpha
from metrics.errors import QrelForgeError, UndefinedMetricWarning

__all__ = [
    "AgreementMode",
    "JudgeCalibration",
    "RankingAgreement",
    "calibrate_judges",
    "ranking_agreement",
    "ranking_agreement_from_qrels",
]


class AgreementMode(StrEnum):
    """How kappa compares grades: ``BINARY`` at the relevance cut-off (relevant = grade >= cutoff), or
    ``GRADED``, nominal on the grades themselves (any two different grades disagree)."""

    BINARY = "binary"
    GRADED = "graded"


# --------------------------------------------------------------------------------------------- validation


def _warn(message: str) -> None:
    warnings.warn(message, UndefinedMetricWarning, stacklevel=3)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isnan(value)


def _check_mode(mode: Any) -> AgreementMode:
    try:
        return AgreementMode(mode)
    except ValueError:
        choices = " or ".join(repr(m.value) for m in AgreementMode)
        raise QrelForgeError(f"mode must be {choices}; got {mode!r}") from None


def _check_labels(labels: Any) -> np.ndarray:
    """The declared grade scale: at least two distinct numbers in increasing order."""
    if isinstance(labels, (str, bytes)) or not isinstance(labels, (Sequence, np.ndarray, pd.Index)):
        raise QrelForgeError(f"labels must be a sequence of grades such as [0, 1, 2, 3]; got {labels!r}")
    values = list(labels)
    if len(values) < 2 or not all(_is_number(v) for v in values):
        raise QrelForgeError(f"labels must be at least two numbers such as [0, 1, 2, 3]; got {values!r}")
    scale = np.asarray(values, dtype=float)
    if (np.diff(scale) <= 0).any():
        raise QrelForgeError(f"labels must be distinct and in increasing order; got {values!r}")
    return scale


def _check_cutoff(cutoff: Any, scale: np.ndarray) -> float:
    if not _is_number(cutoff) or not scale[0] < cutoff <= scale[-1]:
        raise QrelForgeError(
            f"cutoff must be a number above the lowest grade and at most the highest "
            f"({scale[0]:g} < cutoff <= {scale[-1]:g}); got {cutoff!r}"
        )
    return float(cutoff)


def _as_frame(table: Any, name: str, columns: list[str]) -> pd.DataFrame:
    """A long table as a DataFrame with ``columns``: from a DataFrame, mappings, or rows in column order."""
    if isinstance(table, pd.DataFrame):
        frame = table
    elif isinstance(table, Sequence) and not isinstance(table, (str, bytes)):
        rows = list(table)
        if rows and all(isinstance(r, Mapping) for r in rows):
            frame = pd.DataFrame(rows)
        else:
            bad = next((r for r in rows if isinstance(r, (str, bytes)) or len(r) != len(columns)), None)
            if bad is not None:
                raise QrelForgeError(f"{name} rows must be ({', '.join(columns)}); got {bad!r}")
            frame = pd.DataFrame(rows, columns=columns)
    else:
        raise QrelForgeError(
            f"{name} must be a DataFrame or a sequence of rows ({', '.join(columns)}); "
            f"got {type(table).__name__}"
        )
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise QrelForgeError(f"{name} has no column {missing[0]!r}; its columns are {list(frame.columns)!r}")
    return frame[columns].reset_index(drop=True)


def _check_values(frame: pd.DataFrame, name: str, grade: str, scale: np.ndarray) -> None:
    empty = frame.isna().any(axis=1).to_numpy()
    if empty.any():
        row = int(np.argmax(empty))
        raise QrelForgeError(f"{name} row {row} has a missing value: {frame.iloc[row].to_dict()!r}")
    grades = frame[grade].to_numpy(dtype=object)
    bad = [g for g in grades if not _is_number(g) or not np.isin(float(g), scale)]
    if bad:
        raise QrelForgeError(
            f"{name} has a grade outside labels: {bad[0]!r} is not one of {[_plain(v) for v in scale]!r}"
        )


def _plain(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _check_keys(frame: pd.DataFrame, name: str, item: str, query: str, rater: str) -> None:
    twice = frame.duplicated([item, rater]).to_numpy()
    if twice.any():
        row = frame.iloc[int(np.argmax(twice))]
        raise QrelForgeError(f"{name} labels item {row[item]!r} twice by {rater} {row[rater]!r}")
    _check_one_query(frame, name, item, query)


def _check_one_query(frame: pd.DataFrame, name: str, item: str, query: str) -> None:
    queries = frame.groupby(item, sort=False)[query].nunique()
    if (queries > 1).any():
        bad = queries.index[queries.to_numpy() > 1][0]
        found = sorted(frame.loc[frame[item] == bad, query].unique(), key=str)
        raise QrelForgeError(f"{name} puts item {bad!r} in more than one query: {found!r}")


# -------------------------------------------------------------------------------------------- calibration


@dataclass(frozen=True, eq=False)
class JudgeCalibration:
    """How one judge agrees with the human annotators on the pairs they share.

    Attributes
    ----------
    judge : the judge's name, as in the judges table.
    mode : AgreementMode of ``kappa``; ``cutoff`` is the relevance cut-off of BINARY mode.
    n_pairs : pairs (items) the judge shares with at least one human annotator.
    n_labels : human labels on those pairs (each compared once with the judge's label).
    kappa : mean over the human annotators of Cohen's kappa between the judge and that annotator, each on the
        pairs the two share, in ``mode``. Annotators whose kappa is undefined are left out of the mean.
    weighted_kappa : the same mean of linearly weighted kappas over the declared scale.
    alpha_ordinal : Krippendorff's ordinal alpha over the shared pairs (the units), raters = every human
        annotator plus the judge (all human labels on those pairs count, so human–human coincidences are in
        it too; human labels on other pairs are not).
    confusion : DataFrame, human grade (rows) × judge grade (columns) over the declared scale; one count per
        human label on a shared pair.
    leniency : mean(judge grade − human grade) over those human labels (> 0: the judge grades higher).
    leniency_by_grade : Series indexed by human grade: the same mean among the human labels of that grade
        (NaN for a grade no human gave on a shared pair).
    per_query : DataFrame, one row per query with a shared pair: ``query``, ``n_pairs``, ``n_labels``,
        ``exact_agreement`` (share of the human labels the judge's grade equals) and ``mean_difference``
        (judge − human).
    per_annotator : DataFrame, one row per annotator sharing a pair: ``annotator``, ``n_pairs``, ``kappa``,
        ``weighted_kappa``.
    """

    judge: Hashable
    mode: AgreementMode
    cutoff: float
    n_pairs: int
    n_labels: int
    kappa: float
    weighted_kappa: float
    alpha_ordinal: float
    leniency: float
    confusion: pd.DataFrame = field(repr=False)
    leniency_by_grade: pd.Series = field(repr=False)
    per_query: pd.DataFrame = field(repr=False)
    per_annotator: pd.DataFrame = field(repr=False)


@dataclass(frozen=True)
class _Columns:
    item: str
    query: str
    annotator: str
    judge: str
    grade: str


def calibrate_judges(
    human: Any,
    judges: Any,
    *,
    labels: Sequence[float],
    mode: AgreementMode | str = AgreementMode.BINARY,
    cutoff: float = 1,
    item: str = "item",
    query: str = "query",
    annotator: str = "annotator",
    judge: str = "judge",
    grade: str = "grade",
) -> dict[Hashable, JudgeCalibration]:
    """Calibrate every judge of ``judges`` against the human labels of ``human``, on the pairs both labelled.

    Formulas, for one judge J and the couples (h, j) of a human label h and J's label j on the same pair:

    * kappa = (1/A) Σ_a κ(J, a), over the A annotators a sharing a pair with J whose kappa is defined; κ is
      :func:`metrics.agreement.cohen_kappa` on the pairs a and J share, on [grade >= cutoff] in BINARY mode
      and nominal on the grades in GRADED mode; weighted_kappa uses linear weights |i − k|/(K − 1) over the
      K grades of ``labels`` (both modes);
    * alpha_ordinal = Krippendorff's ordinal alpha, units = the shared pairs, raters = the annotators and J;
    * confusion[h, j] = number of couples; leniency = mean(j − h); per grade g: mean(j − h | h = g).

    Edge cases: a judge sharing no pair gets ``n_pairs`` 0, a zero confusion matrix and NaN statistics; an
    undefined statistic is NaN with one UndefinedMetricWarning. Human labels on pairs the judge did not label
    are ignored.

    Args:
        human: the human labels: a DataFrame or records (item, query, annotator, grade).
        judges: the judges' labels: a DataFrame or records (item, query, judge, grade).
        labels: the grade scale in order.
        mode: ``"binary"`` (at ``cutoff``) or ``"graded"``.
        cutoff: the lowest grade that counts as relevant in binary mode.
        item, query, annotator, judge, grade: the names of the columns.

    Returns:
        ``{judge: JudgeCalibration}``, in the order judges first appear.

    Raises:
        QrelForgeError: a missing column, a grade outside ``labels``, or a bad option.

    >>> human = [("d1", "q1", "a", 0), ("d2", "q1", "a", 2), ("d3", "q2", "a", 1), ("d4", "q2", "a", 3)]
    >>> judges = [("d1", "q1", "J", 1), ("d2", "q1", "J", 2), ("d3", "q2", "J", 1), ("d4", "q2", "J", 3)]
    >>> cal = calibrate_judges(human, judges, labels=[0, 1, 2, 3], mode="graded")["J"]
    >>> cal.n_pairs, round(cal.kappa, 4), cal.leniency
    (4, 0.6667, 0.25)
    >>> cal.per_query
      query  n_pairs  n_labels  exact_agreement  mean_difference
    0    q1        2         2              0.5              0.5
    1    q2        2         2              1.0              0.0
    """
    scale, mode = _check_labels(labels), _check_mode(mode)
    cutoff = _check_cutoff(cutoff, scale)
    cols = _Columns(item=item, query=query, annotator=annotator, judge=judge, grade=grade)
    people = _labels_table(human, "human", cols, annotator, scale)
    machines = _labels_table(judges, "judges", cols, judge, scale)
    _check_one_query(
        pd.concat([people[[item, query]], machines[[item, query]]]), "human and judges", item, query
    )
    results: dict[Hashable, JudgeCalibration] = {}
    for name, rows in machines.groupby(judge, sort=False):
        couples = people.merge(rows[[item, grade]].rename(columns={grade: "_judge"}), on=item)
        results[name] = _calibrate(name, couples, people, scale, mode, cutoff, cols)
    return results


def _labels_table(table: Any, name: str, cols: _Columns, rater: str, scale: np.ndarray) -> pd.DataFrame:
    frame = _as_frame(table, name, [cols.item, cols.query, rater, cols.grade])
    _check_values(frame, name, cols.grade, scale)
    _check_keys(frame, name, cols.item, cols.query, rater)
    return frame.astype({cols.grade: float})


def _calibrate(
    name: Hashable,
    couples: pd.DataFrame,
    people: pd.DataFrame,
    scale: np.ndarray,
    mode: AgreementMode,
    cutoff: float,
    cols: _Columns,
) -> JudgeCalibration:
    h, j = couples[cols.grade].to_numpy(), couples["_judge"].to_numpy()
    per_annotator = _per_annotator(name, couples, scale, mode, cutoff, cols)
    return JudgeCalibration(
        judge=name,
        mode=mode,
        cutoff=cutoff,
        n_pairs=int(couples[cols.item].nunique()),
        n_labels=len(couples),
        kappa=_mean_kappa(per_annotator["kappa"], f"kappa of judge {name!r}"),
        weighted_kappa=_mean_kappa(per_annotator["weighted_kappa"], f"weighted_kappa of judge {name!r}"),
        alpha_ordinal=_alpha_ordinal(name, couples, people, scale, cols),
        leniency=_mean(j - h, f"leniency of judge {name!r}", "it shares no pair with a human"),
        confusion=_confusion(h, j, scale),
        leniency_by_grade=_leniency_by_grade(name, h, j, scale),
        per_query=_per_query(couples, cols),
        per_annotator=per_annotator,
    )


def _mean(values: np.ndarray, what: str, why: str) -> float:
    if len(values) == 0:
        _warn(f"{what} is undefined: {why}; returning NaN")
        return math.nan
    return float(np.mean(values))


def _codes(grades: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.searchsorted(scale, grades)


def _kappas(
    h: np.ndarray, j: np.ndarray, scale: np.ndarray, mode: AgreementMode, cutoff: float
) -> tuple[float, float]:
    """(kappa in ``mode``, linearly weighted kappa) between a judge and one annotator; NaN when undefined."""
    positions = list(range(len(scale)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        if mode is AgreementMode.BINARY:
            plain = cohen_kappa((h >= cutoff).astype(int), (j >= cutoff).astype(int), labels=[0, 1])
        else:
            plain = cohen_kappa(_codes(h, scale), _codes(j, scale), labels=positions)
        weighted = cohen_kappa(_codes(h, scale), _codes(j, scale), weights="linear", labels=positions)
    return plain.kappa, weighted.kappa


def _per_annotator(
    name: Hashable,
    couples: pd.DataFrame,
    scale: np.ndarray,
    mode: AgreementMode,
    cutoff: float,
    cols: _Columns,
) -> pd.DataFrame:
    rows = []
    for who, part in couples.groupby(cols.annotator, sort=True):
        kappa, weighted = _kappas(part[cols.grade].to_numpy(), part["_judge"].to_numpy(), scale, mode, cutoff)
        rows.append({cols.annotator: who, "n_pairs": len(part), "kappa": kappa, "weighted_kappa": weighted})
    frame = pd.DataFrame(rows, columns=[cols.annotator, "n_pairs", "kappa", "weighted_kappa"])
    undefined = int((frame["kappa"].isna() | frame["weighted_kappa"].isna()).sum())
    if undefined:
        _warn(
            f"Cohen's kappa between judge {name!r} and {undefined} annotator{'s' if undefined > 1 else ''} "
            "is undefined: every shared rating is in one category; left out of the mean"
        )
    return frame


def _mean_kappa(values: pd.Series, what: str) -> float:
    defined = values.dropna()
    if len(defined) == 0:
        _warn(f"{what} is undefined: no annotator with a defined kappa shares a pair with it; returning NaN")
        return math.nan
    return float(defined.mean())


def _alpha_ordinal(
    name: Hashable, couples: pd.DataFrame, people: pd.DataFrame, scale: np.ndarray, cols: _Columns
) -> float:
    shared = couples[cols.item].unique()
    if len(shared) == 0:
        _warn(f"alpha_ordinal of judge {name!r} is undefined: it shares no pair with a human; returning NaN")
        return math.nan
    on_shared = people[people[cols.item].isin(shared)]
    table = on_shared.pivot(index=cols.item, columns=cols.annotator, values=cols.grade)
    table["_judge"] = couples.drop_duplicates(cols.item).set_index(cols.item)["_judge"]
    codes = np.where(table.isna(), np.nan, _codes(table.to_numpy(dtype=float), scale))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        alpha = krippendorff_alpha(codes, level="ordinal", labels=list(range(len(scale))))
    if math.isnan(alpha):
        _warn(
            f"alpha_ordinal of judge {name!r} is undefined: one grade only on the shared pairs; returning NaN"
        )
    return float(alpha)


def _confusion(h: np.ndarray, j: np.ndarray, scale: np.ndarray) -> pd.DataFrame:
    k = len(scale)
    counts = np.bincount(_codes(h, scale) * k + _codes(j, scale), minlength=k * k).reshape(k, k)
    grades = pd.Index([_plain(g) for g in scale])
    return pd.DataFrame(counts, index=grades.rename("human"), columns=grades.rename("judge"))


def _leniency_by_grade(name: Hashable, h: np.ndarray, j: np.ndarray, scale: np.ndarray) -> pd.Series:
    codes, k = _codes(h, scale), len(scale)
    n = np.bincount(codes, minlength=k)
    total = np.bincount(codes, weights=j - h, minlength=k)
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    unused = [_plain(g) for g in scale[n == 0]]
    if unused and len(h):
        _warn(
            f"leniency_by_grade of judge {name!r} is undefined for human grade(s) {unused!r}: no human "
            "label of that grade on a shared pair; returning NaN there"
        )
    return pd.Series(means, index=pd.Index([_plain(g) for g in scale], name="human"), name="leniency")


def _per_query(couples: pd.DataFrame, cols: _Columns) -> pd.DataFrame:
    frame = couples.assign(
        _same=couples["_judge"] == couples[cols.grade], _diff=couples["_judge"] - couples[cols.grade]
    )
    summary = frame.groupby(cols.query, sort=True).agg(
        n_pairs=(cols.item, "nunique"),
        n_labels=(cols.item, "size"),
        exact_agreement=("_same", "mean"),
        mean_difference=("_diff", "mean"),
    )
    return summary.reset_index()


# ------------------------------------------------------------------------------------------- run rankings


@dataclass(frozen=True)
class RankingAgreement:
    """Kendall's tau-b between the run rankings by human and by judge qrels.

    ``tau`` is over all ``n_runs`` runs; ``tau_top`` over ``top_runs``, the best ``top`` runs by the human
    metric (best first; ties broken by run name). Either is NaN when undefined (fewer than 3 runs, or one
    ranking entirely tied).
    """

    tau: float
    tau_top: float
    n_runs: int
    top_runs: tuple[Hashable, ...]


def _check_scores(scores: Any, name: str) -> dict[Hashable, float]:
    if not isinstance(scores, Mapping):
        raise QrelForgeError(f"{name} must be a mapping run -> mean metric; got {type(scores).__name__}")
    bad = next(((run, v) for run, v in scores.items() if not _is_number(v)), None)
    if bad is not None:
        raise QrelForgeError(f"{name} must map every run to a number; got {bad[1]!r} for run {bad[0]!r}")
    return {run: float(v) for run, v in scores.items()}


def _check_same_runs(human: dict, judge: dict) -> None:
    only_human = [r for r in human if r not in judge]
    only_judge = [r for r in judge if r not in human]
    if only_human or only_judge:
        which, runs = ("judge_scores", only_human) if only_human else ("human_scores", only_judge)
        raise QrelForgeError(
            f"human_scores and judge_scores must score the same runs; {which} lacks {runs!r}"
        )


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """τ_b = Σ_{i<k} sign(x_i − x_k) sign(y_i − y_k) / √((n0 − n1)(n0 − n2)), n0 = n(n − 1)/2 pairs, n1 and n2
    the pairs tied in x and in y; NaN when a ranking is entirely tied (or n < 2)."""
    i, k = np.triu_indices(len(x), k=1)
    sx, sy = np.sign(x[i] - x[k]), np.sign(y[i] - y[k])
    denominator = math.sqrt(float(np.count_nonzero(sx)) * float(np.count_nonzero(sy)))
    return float((sx * sy).sum() / denominator) if denominator > 0 else math.nan


def _tau(x: np.ndarray, y: np.ndarray, what: str) -> float:
    if len(x) < 3:
        _warn(f"{what} is undefined: it needs at least 3 runs, got {len(x)}; returning NaN")
        return math.nan
    tau = _kendall_tau_b(x, y)
    if math.isnan(tau):
        _warn(f"{what} is undefined: every run has the same score in one ranking; returning NaN")
    return tau


def ranking_agreement(
    human_scores: Mapping[Hashable, float], judge_scores: Mapping[Hashable, float], *, top: int = 5
) -> RankingAgreement:
    """Kendall's tau-b between the runs ranked by their mean metric with human qrels and with judge qrels.

    ``human_scores`` and ``judge_scores`` map each run to its mean metric (higher is better), and must score
    the same runs. ``tau`` compares the two rankings of all runs; ``tau_top`` the two rankings of the ``top``
    runs best by human qrels (all runs when there are fewer). Ties count as in τ_b (scipy's default). With
    fewer than 3 runs (overall or in the top set) tau is NaN with an UndefinedMetricWarning.

    Args:
        human_scores: each run's mean metric with human qrels (higher is better).
        judge_scores: each run's mean metric with judge qrels, for the same runs.
        top: the size of the top set, an int >= 3 (tau needs 3 runs).

    Returns:
        A `RankingAgreement`: ``tau``, ``tau_top`` and ``top_runs``.

    Raises:
        QrelForgeError: the two mappings score different runs, a score that is not a finite number, or a
            bad ``top``.

    >>> human = {"bm25": 0.30, "dense": 0.42, "rerank": 0.51, "random": 0.02}
    >>> judge = {"bm25": 0.35, "dense": 0.55, "rerank": 0.50, "random": 0.05}
    >>> res = ranking_agreement(human, judge, top=3)
    >>> round(res.tau, 4), round(res.tau_top, 4), res.top_runs
    (0.6667, 0.3333, ('rerank', 'dense', 'bm25'))
    """
    if isinstance(top, bool) or not isinstance(top, numbers.Integral) or top < 3:
        raise QrelForgeError(f"top must be an integer >= 3 (tau needs 3 runs); got {top!r}")
    human, judge = _check_scores(human_scores, "human_scores"), _check_scores(judge_scores, "judge_scores")
    _check_same_runs(human, judge)
    runs = sorted(human, key=lambda r: (-human[r], str(r)))
    x, y = np.array([human[r] for r in runs]), np.array([judge[r] for r in runs])
    best = min(int(top), len(runs))
    return RankingAgreement(
        tau=_tau(x, y, "Kendall's tau"),
        tau_top=_tau(x[:best], y[:best], f"Kendall's tau among the top {int(top)} runs"),
        n_runs=len(runs),
        top_runs=tuple(runs[:best]),
    )


def ranking_agreement_from_qrels(
    human_qrels: Any, judge_qrels: Any, runs: Mapping[Hashable, Any], *, measure: str, top: int = 5
) -> RankingAgreement:
    """`ranking_agreement` of the runs' means on ``measure``, scored with human and with judge qrels.

    Args:
        human_qrels: the human qrels, any form `metrics.evaluate` accepts.
        judge_qrels: the judge's qrels, likewise.
        runs: ``{name: run}``, each run likewise.
        measure: one measure name, e.g. ``"nDCG@10"``.
        top: as in `ranking_agreement`.

    Returns:
        The `RankingAgreement`.

    Raises:
        QrelForgeError: a run whose mean is undefined (no query where the measure is defined); and the
            errors of `metrics.evaluate` and `ranking_agreement`.

    >>> human = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 0}}
    >>> judge = {"q1": {"d1": 2, "d2": 2, "d3": 1}, "q2": {"d4": 1, "d5": 1}}
    >>> runs = {"a": {"q1": ["d1", "d2"], "q2": ["d4"]}, "b": {"q1": ["d2", "d3"], "q2": ["d5"]},
    ...         "c": {"q1": ["d3", "d1"], "q2": ["d5", "d4"]}}
    >>> res = ranking_agreement_from_qrels(human, judge, runs, measure="nDCG@2")
    >>> round(res.tau, 4), res.top_runs
    (0.3333, ('a', 'c', 'b'))
    """
    if not isinstance(runs, Mapping):
        raise QrelForgeError(f"runs must be a mapping name -> run; got {type(runs).__name__}")
    means = (
        _means(human_qrels, runs, measure, "human_qrels"),
        _means(judge_qrels, runs, measure, "judge_qrels"),
    )
    return ranking_agreement(means[0], means[1], top=top)


def _means(qrels: Any, runs: Mapping[Hashable, Any], measure: str, name: str) -> dict[Hashable, float]:
    from metrics.evaluate import evaluate

    means = {}
    for run_name, run in runs.items():
        mean = evaluate(qrels, run, [measure]).mean
        value = next(iter(mean.values()))
        if value is None:
            raise QrelForgeError(f"{measure} of run {run_name!r} with {name} is undefined on every query")
        means[run_name] = value
    return means


# Names of `metrics.stats.probe`, still importable from here.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ProbeSummary": "metrics.stats.probe",
        "probe_summary": "metrics.stats.probe",
        "stuff_query_terms": "metrics.stats.probe",
    },
)
