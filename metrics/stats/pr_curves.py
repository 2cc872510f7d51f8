"""Precision–recall curves: of one ranked list of scored labels (`pr_curve`), and of a run against qrels,
interpolated per query and averaged (`run_pr_curve`)."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from metrics._text import _shown
from metrics.errors import QrelForgeError, UndefinedMetricWarning
from metrics.stats.classification import _check_count, _check_number, _labels_array, _non_numeric

__all__ = ["PRCurve", "RunPRCurve", "pr_curve", "run_pr_curve"]

# ------------------------------------------------------------------------------------ precision–recall curves


@dataclass(frozen=True, eq=False)
class PRCurve:
    """A precision–recall curve: one point per distinct score threshold, highest threshold first.

    Point 0 is the anchor before anything is retrieved: threshold +inf, recall 0, precision 1 (as in
    scikit-learn). ``average_precision`` = Σ_k (R_k − R_{k−1}) P_k over the thresholds (step-wise, no
    interpolation; scikit-learn's ``average_precision_score``); ``auc`` = trapezoidal area under the points
    (``sklearn.metrics.auc(recall, precision)``), which is optimistic (Davis & Goadrich 2006): prefer AP.
    """

    thresholds: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    n_relevant: int
    average_precision: float | None
    auc: float | None

    def to_dataframe(self) -> pd.DataFrame:
        """Columns ``threshold``, ``tp``, ``fp``, ``precision``, ``recall``, one row per point, for charting
        recall (x) against precision (y)."""
        return pd.DataFrame(
            {
                "threshold": self.thresholds,
                "tp": self.tp,
                "fp": self.fp,
                "precision": self.precision,
                "recall": self.recall,
            }
        )


def _scores_array(y_score, n: int, name: str = "y_score") -> np.ndarray:
    scores = _labels_array(y_score, name)
    if len(scores) != n:
        raise QrelForgeError(f"y_true and y_score must have the same length; got {n} and {len(scores)}")
    bad = _non_numeric(scores)
    if bad is not None:
        raise QrelForgeError(f"{name} must hold numbers; got {_shown(bad)!r}")
    scores = scores.astype(float)
    if not np.isfinite(scores).all():
        raise QrelForgeError(f"{name} must be finite; got {_shown(scores[~np.isfinite(scores)][0])!r}")
    return scores


def _relevant(y_true, rel: float) -> np.ndarray:
    truth = _labels_array(y_true, "y_true")
    try:
        return truth.astype(float) >= rel
    except (TypeError, ValueError):
        raise QrelForgeError("y_true must hold numeric grades or booleans") from None


def _n_relevant(n_relevant, found: int) -> int:
    if n_relevant is None:
        return found
    n_relevant = _check_count("n_relevant", n_relevant)
    if n_relevant < found:
        raise QrelForgeError(
            f"n_relevant must be at least the {found} relevant items in y_true; got {n_relevant}"
        )
    return n_relevant


def pr_curve(y_true, y_score, *, rel=1, n_relevant=None) -> PRCurve:
    """Precision–recall curve of one ranked list (e.g. one query), sweeping the score threshold downwards.

    At threshold t the items with score ≥ t are retrieved: precision = TP/(TP + FP), recall = TP / n_relevant.
    Items with tied scores enter together.

    With no relevant item recall is undefined: the recall array is NaN, ``average_precision`` and ``auc`` are
    None, and an UndefinedMetricWarning is emitted.

    Args:
        y_true: grades or booleans; an item is relevant when its grade is ≥ ``rel``.
        y_score: the items' scores, numbers.
        rel: the relevance threshold on the grades.
        n_relevant: all relevant items, including those not scored (IR: relevant documents the run did not
            retrieve); default: the relevant items in ``y_true`` (scikit-learn's convention).

    Returns:
        A `PRCurve`: ``thresholds``, ``precision``, ``recall``, ``average_precision`` and ``auc``.

    Raises:
        QrelForgeError: sequences of different lengths, a score that is not a finite number, or
            ``n_relevant`` below the relevant items of ``y_true``.

    >>> curve = pr_curve([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])
    >>> round(curve.average_precision, 4), curve.recall.tolist()
    (0.8333, [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    relevant = _relevant(y_true, _check_number("rel", rel))
    if len(relevant) == 0:
        raise QrelForgeError("y_true and y_score are empty")
    scores = _scores_array(y_score, len(relevant))
    order = np.argsort(-scores, kind="stable")
    scores, relevant = scores[order], relevant[order]
    last = np.r_[scores[1:] != scores[:-1], True]
    tp = np.r_[0, np.cumsum(relevant)[last]]
    fp = np.r_[0, np.cumsum(~relevant)[last]]
    total = _n_relevant(n_relevant, int(relevant.sum()))
    return _curve(np.r_[np.inf, scores[last]], tp, fp, total)


def _curve(thresholds, tp, fp, total: int) -> PRCurve:
    with np.errstate(divide="ignore", invalid="ignore"):
        precision_ = np.where(tp + fp > 0, tp / (tp + fp), 1.0)
    if total == 0:
        warnings.warn(
            "recall is undefined: there is no relevant item; recall is NaN and average_precision and auc "
            "are None",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return PRCurve(
            thresholds=thresholds,
            precision=precision_,
            recall=np.full(len(tp), np.nan),
            tp=tp,
            fp=fp,
            n_relevant=0,
            average_precision=None,
            auc=None,
        )
    recall_ = tp / total
    ap = float(np.sum(np.diff(recall_) * precision_[1:]))
    return PRCurve(
        thresholds=thresholds,
        precision=precision_,
        recall=recall_,
        tp=tp,
        fp=fp,
        n_relevant=total,
        average_precision=ap,
        auc=float(np.trapezoid(precision_, recall_)),
    )


@dataclass(frozen=True, eq=False)
class RunPRCurve:
    """Precision–recall of a whole run: the mean over queries of interpolated precision at fixed recall
    levels.

    Attributes
    ----------
    recall : ndarray
        The recall levels 0, 1/(L−1), ..., 1 (L = ``recall_levels``, 11 by default: 0.0, 0.1, ..., 1.0).
    precision : ndarray
        Mean over the evaluated queries of the interpolated precision at each level, P_interp(r) = max
        precision at any threshold with recall ≥ r (0 if recall r is never reached). With distinct scores
        this is trec_eval's ``iprec_at_recall``; tied scores enter together here, where trec_eval ranks them
        by document ID and can report a higher precision (``IPrec@r`` in `metrics.evaluate` is trec_eval's
        exactly).
    per_query : DataFrame
        Indexed by query: ``n_relevant`` (judged relevant, retrieved or not), ``n_retrieved``,
        ``average_precision`` and the interpolated precision at each level (columns ``iprec@<level>``).
    mean_average_precision : float
        Mean of the per-query AP (MAP).
    auc : float
        Trapezoidal area under the mean interpolated curve. It is not MAP; MAP is reported alongside.
    points : DataFrame
        Every threshold point of every query: query, ``threshold``, ``tp``, ``fp``, ``precision``, ``recall``.
    skipped_queries : tuple
        Run queries without any relevant judged document (recall undefined): not evaluated.
    """

    recall: np.ndarray
    precision: np.ndarray
    per_query: pd.DataFrame = field(repr=False)
    mean_average_precision: float
    auc: float
    points: pd.DataFrame = field(repr=False)
    skipped_queries: tuple

    def to_dataframe(self) -> pd.DataFrame:
        """Columns ``recall`` and ``precision``, one row per recall level, for charting."""
        return pd.DataFrame({"recall": self.recall, "precision": self.precision})


def _qrels_frame(qrels, query: str, doc: str) -> pd.DataFrame:
    if not isinstance(qrels, Mapping):
        raise QrelForgeError(
            f"qrels must be a mapping {{query_id: {{doc_id: grade}}}}; got {type(qrels).__name__}"
        )
    for qid, docs in qrels.items():
        if not isinstance(docs, Mapping):
            raise QrelForgeError(
                f"qrels[{qid!r}] must be a mapping {{doc_id: grade}}; got {type(docs).__name__}"
            )
    rows = [(str(q), str(d), g) for q, docs in qrels.items() for d, g in docs.items()]
    frame = pd.DataFrame(rows, columns=[query, doc, "grade"])
    bad = _non_numeric(frame["grade"].to_numpy(dtype=object))
    if bad is not None:
        raise QrelForgeError(f"qrels grades must be numbers; got {_shown(bad)!r}")
    frame["grade"] = frame["grade"].astype(float)
    return frame


def _run_frame(run, query: str, doc: str, score: str) -> pd.DataFrame:
    if not isinstance(run, pd.DataFrame):
        raise QrelForgeError(
            f"run must be a DataFrame with columns {[query, doc, score]!r}; got {type(run).__name__}"
        )
    absent = [c for c in (query, doc, score) if c not in run.columns]
    if absent:
        raise QrelForgeError(f"run has no column {absent[0]!r}; its columns are {list(run.columns)!r}")
    frame = pd.DataFrame({query: run[query].astype(str), doc: run[doc].astype(str)})
    frame[score] = _scores_array(run[score], len(run), f"run column {score!r}") if len(run) else np.empty(0)
    repeated = frame.duplicated([query, doc])
    if repeated.any():
        first = frame[repeated].iloc[0]
        raise QrelForgeError(
            f"run has {int(repeated.sum())} repeated ({query}, {doc}) rows, "
            f"e.g. ({first[query]!r}, {first[doc]!r})"
        )
    return frame


def _run_points(frame: pd.DataFrame, query: str, score: str) -> pd.DataFrame:
    """Threshold points per query (the last row of each tie group after sorting by score, descending)."""
    frame = frame.sort_values([query, score], ascending=[True, False], kind="stable")
    by_query = frame.groupby(query, sort=False)
    tp = by_query["relevant"].cumsum()
    fp = (~frame["relevant"]).groupby(frame[query], sort=False).cumsum()
    following = frame[[query, score]].shift(-1)
    last = (following[query] != frame[query]) | (following[score] != frame[score])
    points = pd.DataFrame({query: frame[query], "threshold": frame[score], "tp": tp, "fp": fp})[
        last.to_numpy()
    ]
    points["precision"] = points["tp"] / (points["tp"] + points["fp"])
    points["recall"] = points["tp"] / frame.loc[last.to_numpy(), "n_relevant"].to_numpy()
    return points.reset_index(drop=True)


def _interpolated(points: pd.DataFrame, n_rel: pd.Series, query: str, levels: int) -> pd.DataFrame:
    """Interpolated precision at recall i/(levels−1), per query; recall ≥ level tested exactly on integers."""
    total = points[query].map(n_rel).to_numpy()
    columns = {}
    for i in range(levels):
        reached = points["tp"].to_numpy() * (levels - 1) >= i * total
        best = points["precision"].where(reached).groupby(points[query], sort=True).max()
        columns[f"iprec@{i / (levels - 1):g}"] = best.reindex(n_rel.index).fillna(0.0)
    return pd.DataFrame(columns)


def run_pr_curve(
    run, qrels, *, rel=1, query="query_id", doc="doc_id", score="score", recall_levels=11
) -> RunPRCurve:
    """Precision–recall of a whole run against qrels, per query and averaged.

    Each query's curve sweeps its score threshold as in `pr_curve`, with recall over all its relevant
    judged documents (retrieved or not). Evaluated queries are the run's queries with at least one relevant
    document; the others are listed in ``skipped_queries`` with an UndefinedMetricWarning. Queries judged but
    absent from the run are not evaluated (trec_eval's default).

    Args:
        run: a DataFrame, one row per retrieved document.
        qrels: ``{query_id: {doc_id: grade}}``; unjudged documents are not relevant. IDs are compared as
            strings.
        rel: a document is relevant when its grade is ≥ ``rel``.
        query, doc, score: the names of the run's columns.
        recall_levels: the number of equally spaced recall levels, ≥ 2 (11: 0.0, 0.1, ..., 1.0).

    Returns:
        A `RunPRCurve`: the interpolated precision at each recall level averaged over queries, the mean
        average precision, each query's curve and the skipped queries.

    Raises:
        QrelForgeError: no evaluable query, a missing column, or a bad option.

    >>> run = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> res = run_pr_curve(run, {"q1": {"a": 1, "c": 2, "z": 1}})
    >>> round(res.mean_average_precision, 4), res.precision[:4].round(4).tolist()
    (0.5556, [1.0, 1.0, 1.0, 1.0])
    """
    if (
        isinstance(recall_levels, bool)
        or not isinstance(recall_levels, numbers.Integral)
        or recall_levels < 2
    ):
        raise QrelForgeError(f"recall_levels must be an integer of at least 2; got {recall_levels!r}")
    rel = _check_number("rel", rel)
    frame = _run_frame(run, query, doc, score)
    judged = _qrels_frame(qrels, query, doc)
    n_rel = judged[judged["grade"] >= rel].groupby(query).size()
    frame = frame.merge(judged, how="left", on=[query, doc])
    frame["relevant"] = (frame["grade"] >= rel).to_numpy(bool)
    frame["n_relevant"] = frame[query].map(n_rel).fillna(0).to_numpy(int)
    skipped = tuple(sorted(frame.loc[frame["n_relevant"] == 0, query].unique()))
    if skipped:
        warnings.warn(
            f"recall is undefined for {len(skipped)} run quer{'ies' if len(skipped) > 1 else 'y'} "
            "without a relevant "
            f"judged document (e.g. {skipped[0]!r}); they are skipped",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return _run_curve(frame[frame["n_relevant"] > 0], n_rel, query, score, int(recall_levels), skipped)


def _run_curve(frame, n_rel, query, score, levels, skipped) -> RunPRCurve:
    if frame.empty:
        raise QrelForgeError(
            "run_pr_curve needs at least one run query with a relevant judged document; got none"
        )
    points = _run_points(frame, query, score)
    n_rel = n_rel[n_rel.index.isin(points[query])].sort_index()
    previous = points.groupby(query, sort=False)["recall"].shift(fill_value=0.0)
    ap = ((points["recall"] - previous) * points["precision"]).groupby(points[query], sort=True).sum()
    interpolated = _interpolated(points, n_rel, query, levels)
    per_query = pd.DataFrame(
        {"n_relevant": n_rel, "n_retrieved": frame.groupby(query).size(), "average_precision": ap}
    ).join(interpolated)
    per_query.index.name = query
    recall_ = np.arange(levels) / (levels - 1)
    precision_ = interpolated.mean(axis=0).to_numpy()
    return RunPRCurve(
        recall=recall_,
        precision=precision_,
        per_query=per_query,
        mean_average_precision=float(ap.mean()),
        auc=float(np.trapezoid(precision_, recall_)),
        points=points,
        skipped_queries=skipped,
    )
