"""Classification measures for relevance labels: accuracy, precision, recall and F-beta from confusion counts
or from labels; macro, micro and weighted averages over classes; multilabel partial-match precision and
recall; and precision–recall curves for one query or a whole run.

Zero division
-------------
Every measure that can divide by zero takes ``zero_division="warn" | 0 | 1``:

* ``"warn"`` (default): the undefined value is ``None`` and an :class:`~metrics.errors.UndefinedMetricWarning`
  says why. An average over classes or samples is ``None`` as soon as one of its terms is undefined.
* ``0`` or ``1``: the undefined value is that number (a float), silently.

Inside DataFrames an undefined value is NaN (pandas' missing value), never None.

Against scikit-learn (1.9)
--------------------------
Wherever scikit-learn is defined the values are equal to 1e-9
(``tests/metrics/test_classification_sklearn.py``, randomized): `class_scores` is
``precision_recall_fscore_support(average=None)``, `average_scores` its ``"macro"``, ``"micro"`` and
``"weighted"``, ``binary_scores(*confusion_counts(..., pos_label=p))`` its ``average="binary"``,
`partial_match` its ``"samples"`` average of precision and recall, and `pr_curve` is
``precision_recall_curve`` (reversed: ours runs from the highest threshold) with ``average_precision`` =
``average_precision_score``. Every difference:

=============================================  ==================================  ===========================
case                                           scikit-learn                        here
=============================================  ==================================  ===========================
``zero_division="warn"``, a 0/0 term           0.0, UndefinedMetricWarning         None (NaN in DataFrames),
                                                                                   UndefinedMetricWarning
``zero_division="warn"``, an average over      the mean of the terms, the 0/0      None: the average is
classes with a 0/0 term                        ones as 0 (``np.nan``: left out)    undefined
``zero_division=0`` or ``1``                   that value                          the same value
``labels`` leaving out a class in the data     the class is ignored                QrelForgeError
``pr_curve`` without a relevant item           recall 1.0 everywhere, AP 0.0,      recall NaN, AP and auc
                                               a warning                           None, a warning
``pr_curve(..., n_relevant=N)``                (no such option)                    recall over N, counting
                                                                                   relevant items not scored
``sample_weight``                              weights the samples                 (no such option)
=============================================  ==================================  ===========================

Against trec_eval: `pr_curve` and `run_pr_curve` let tied scores enter together at one threshold, as
scikit-learn does; trec_eval ranks tied documents by document ID (descending) and takes precision at every
rank, so with ties its AP and interpolated precision can differ from these. For trec_eval's numbers use
`metrics.evaluate` (``AP``, ``IPrec@r``), which orders as trec_eval does. For runs, recall counts every
relevant judged document (retrieved or not), as ``trec_eval`` does; scikit-learn only knows the scored items
(``pr_curve``'s ``n_relevant`` bridges the two).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import NamedTuple

import numpy as np
import pandas as pd

from metrics._choice import Choice
from metrics._text import _shown
from metrics.errors import QrelForgeError, UndefinedMetricWarning

__all__ = [
    "ConfusionCounts",
    "PartialMatch",
    "PRCurve",
    "RunPRCurve",
    "accuracy",
    "average_scores",
    "binary_scores",
    "class_scores",
    "confusion_counts",
    "f1",
    "f_beta",
    "partial_match",
    "pr_curve",
    "precision",
    "recall",
    "run_pr_curve",
]


class Average(Choice):
    """How `average_scores` averages over classes."""

    MACRO = "macro"  # unweighted mean of the per-class values
    MICRO = "micro"  # the measures of the pooled counts
    WEIGHTED = "weighted"  # mean weighted by support


AVERAGES: tuple[Average, ...] = tuple(Average)


# ------------------------------------------------------------------------------------------------- validation


def _non_numeric(values: np.ndarray):
    """The first entry of a 1-D array that is not a real number (bools count as not), or None: vectorized."""
    if values.dtype.kind in "iuf":
        return None
    values = values.astype(object)
    if pd.api.types.infer_dtype(values, skipna=False) in (
        "integer",
        "floating",
        "mixed-integer-float",
        "empty",
    ):
        return None
    return next(
        (v for v in values if isinstance(v, (bool, str, bytes)) or not isinstance(v, numbers.Real)), None
    )


def _check_zero_division(value):
    if isinstance(value, str) and value == "warn":
        return value
    if not isinstance(value, bool) and isinstance(value, numbers.Real) and value in (0, 1):
        return float(value)
    raise QrelForgeError(f"zero_division must be 'warn', 0 or 1; got {value!r}")


def _check_count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise QrelForgeError(f"{name} must be a non-negative integer; got {value!r}")
    return int(value)


def _check_beta(beta) -> float:
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not 0 < float(beta) < math.inf:
        raise QrelForgeError(f"beta must be a positive number; got {beta!r}")
    return float(beta)


def _check_number(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise QrelForgeError(f"{name} must be a number; got {value!r}")
    return float(value)


def _divide(numerator: float, denominator: float, zero_division, measure: str, reason: str):
    """numerator / denominator, or the zero_division outcome when the denominator is 0."""
    if denominator:
        return numerator / denominator
    if zero_division == "warn":
        warnings.warn(
            f"{measure} is undefined ({reason}); returning None", UndefinedMetricWarning, stacklevel=3
        )
        return None
    return zero_division


def _fill(
    values: np.ndarray, zero_division, measure: str, what: Callable[[np.ndarray], str], reason: str
) -> np.ndarray:
    """Replace the NaNs (undefined terms) of a per-class or per-sample array per zero_division."""
    undefined = np.isnan(values)
    if not undefined.any():
        return values
    if zero_division == "warn":
        warnings.warn(
            f"{measure} is undefined for {what(undefined)} ({reason}); it is NaN, and an average that counts "
            "it is None; "
            "pass zero_division=0 or 1 to count it",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return values
    return np.where(undefined, zero_division, values)


def _labels_array(values, name: str) -> np.ndarray:
    """A 1-D array of labels without missing values."""
    if isinstance(values, (str, bytes)) or not isinstance(
        values, (Sequence, np.ndarray, pd.Series, pd.Index)
    ):
        raise QrelForgeError(f"{name} must be a sequence of labels; got {type(values).__name__}")
    array = (
        values.to_numpy() if isinstance(values, (pd.Series, pd.Index)) else np.asarray(values, dtype=object)
    )
    if array.ndim != 1:
        raise QrelForgeError(f"{name} must be 1-D; got {array.ndim}-D")
    missing = pd.isna(array)
    if missing.any():
        raise QrelForgeError(f"{name} has a missing label at position {int(np.argmax(missing))}")
    return array


def _label_pair(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    t, p = _labels_array(y_true, "y_true"), _labels_array(y_pred, "y_pred")
    if len(t) != len(p):
        raise QrelForgeError(f"y_true and y_pred must have the same length; got {len(t)} and {len(p)}")
    if len(t) == 0:
        raise QrelForgeError("y_true and y_pred are empty")
    return t, p


# ---------------------------------------------------------------------------------------------- binary counts


class ConfusionCounts(NamedTuple):
    """Binary confusion counts, in the order of :func:`accuracy`'s arguments: ``accuracy(*counts)``."""

    tp: int
    fp: int
    fn: int
    tn: int


def confusion_counts(y_true, y_pred, *, pos_label=1) -> ConfusionCounts:
    """TP, FP, FN and TN of binary labels, where ``pos_label`` is the positive class (everything else is
    negative).

    >>> confusion_counts([1, 1, 0, 0, 1], [1, 0, 1, 0, 1])
    ConfusionCounts(tp=2, fp=1, fn=1, tn=1)
    """
    t, p = _label_pair(y_true, y_pred)
    t, p = t == pos_label, p == pos_label
    return ConfusionCounts(int((t & p).sum()), int((~t & p).sum()), int((t & ~p).sum()), int((~t & ~p).sum()))


def accuracy(tp, fp, fn, tn, *, zero_division="warn"):
    """(TP + TN) / (TP + FP + FN + TN); undefined when all counts are 0.

    >>> round(accuracy(12, 3, 8, 9977), 4)
    0.9989
    """
    tp, fp, fn, tn = (
        _check_count(n, v) for n, v in zip(("tp", "fp", "fn", "tn"), (tp, fp, fn, tn), strict=True)
    )
    zero_division = _check_zero_division(zero_division)
    return _divide(tp + tn, tp + fp + fn + tn, zero_division, "accuracy", "no samples")


def precision(tp, fp, *, zero_division="warn"):
    """TP / (TP + FP); undefined when nothing is predicted positive.

    >>> precision(12, 3)
    0.8
    """
    tp, fp = _check_count("tp", tp), _check_count("fp", fp)
    zero_division = _check_zero_division(zero_division)
    return _divide(tp, tp + fp, zero_division, "precision", "no predicted positives: tp + fp = 0")


def recall(tp, fn, *, zero_division="warn"):
    """TP / (TP + FN); undefined when there is no positive in the truth.

    >>> recall(12, 8)
    0.6
    """
    tp, fn = _check_count("tp", tp), _check_count("fn", fn)
    zero_division = _check_zero_division(zero_division)
    return _divide(tp, tp + fn, zero_division, "recall", "no true positives exist: tp + fn = 0")


def f_beta(tp, fp, fn, *, beta=1.0, zero_division="warn"):
    """F-beta from counts (van Rijsbergen): (1 + β²) TP / ((1 + β²) TP + β² FN + FP).

    Equal to the weighted harmonic mean of precision and recall when both are defined, and to 0 when TP = 0
    but FP + FN > 0 (even if precision or recall alone is undefined). Undefined only when TP + FP + FN = 0. β
    > 1 favours recall.

    >>> round(f_beta(12, 3, 8), 4), round(f_beta(12, 3, 8, beta=2), 4)
    (0.6857, 0.6316)
    """
    tp, fp, fn = _check_count("tp", tp), _check_count("fp", fp), _check_count("fn", fn)
    b2 = _check_beta(beta) ** 2
    zero_division = _check_zero_division(zero_division)
    return _divide((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division, "F-score", "tp + fp + fn = 0")


def f1(tp, fp, fn, *, zero_division="warn"):
    """F1 = 2 TP / (2 TP + FP + FN), the harmonic mean of precision and recall; see :func:`f_beta`.

    >>> round(f1(12, 3, 8), 4)
    0.6857
    """
    return f_beta(tp, fp, fn, beta=1.0, zero_division=zero_division)


def binary_scores(tp, fp, fn, tn, *, beta=1.0, zero_division="warn") -> dict:
    """All binary measures of one confusion table: ``accuracy``, ``precision``, ``recall``, ``f1`` and
    ``f_beta`` (with the given ``beta``). From labels: ``binary_scores(*confusion_counts(y_true, y_pred))``.

    >>> {k: round(v, 4) for k, v in binary_scores(12, 3, 8, 9977).items()}
    {'accuracy': 0.9989, 'precision': 0.8, 'recall': 0.6, 'f1': 0.6857, 'f_beta': 0.6857}
    """
    return {
        "accuracy": accuracy(tp, fp, fn, tn, zero_division=zero_division),
        "precision": precision(tp, fp, zero_division=zero_division),
        "recall": recall(tp, fn, zero_division=zero_division),
        "f1": f1(tp, fp, fn, zero_division=zero_division),
        "f_beta": f_beta(tp, fp, fn, beta=beta, zero_division=zero_division),
    }


# ------------------------------------------------------------------------------------------------ multi-class


def _classes(t: np.ndarray, p: np.ndarray, labels) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Class codes of y_true and y_pred over `labels` (declared; one outside raises) or the sorted union."""
    if labels is None:
        try:
            codes, classes = pd.factorize(np.concatenate([t, p]), sort=True)
        except TypeError:
            codes, classes = pd.factorize(np.concatenate([t, p]))
        return codes[: len(t)], codes[len(t) :], pd.Index(classes, tupleize_cols=False)
    classes = pd.Index(list(labels), tupleize_cols=False)
    if len(classes) == 0 or classes.has_duplicates or classes.hasnans:
        raise QrelForgeError(
            f"labels must be a non-empty sequence of distinct classes; got {[_shown(v) for v in labels]!r}"
        )
    found_codes: list[np.ndarray] = []
    for name, values in (("y_true", t), ("y_pred", p)):
        found = classes.get_indexer(values)
        if (found < 0).any():
            raise QrelForgeError(
                f"{name} has a label outside labels: {_shown(values[found < 0][0])!r} is not one of "
                f"{list(classes)!r}"
            )
        found_codes.append(found)
    return found_codes[0], found_codes[1], classes


def _per_class_counts(y_true, y_pred, labels):
    """(classes, tp, fp, fn) arrays, one entry per class."""
    t, p = _label_pair(y_true, y_pred)
    ct, cp, classes = _classes(t, p, labels)
    k = len(classes)
    tp = np.bincount(ct[ct == cp], minlength=k)
    return classes, tp, np.bincount(cp, minlength=k) - tp, np.bincount(ct, minlength=k) - tp


def _class_arrays(tp, fp, fn, beta: float, zero_division, classes: pd.Index) -> dict:
    """Per-class precision, recall and F-beta, with undefined entries handled per zero_division."""
    b2 = beta**2

    def name(mask: np.ndarray) -> str:
        return f"labels {list(classes[mask])!r}"

    with np.errstate(divide="ignore", invalid="ignore"):
        raw = {
            "precision": (tp / (tp + fp), "no predicted samples"),
            "recall": (tp / (tp + fn), "no true samples"),
            "f_beta": ((1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp), "no true nor predicted samples"),
        }
    return {key: _fill(values, zero_division, key, name, why) for key, (values, why) in raw.items()}


def class_scores(y_true, y_pred, *, labels=None, beta=1.0, zero_division="warn") -> pd.DataFrame:
    """Precision, recall and F-beta of each class (one-vs-rest), as a DataFrame indexed by label.

    Columns: ``tp``, ``fp``, ``fn``, ``support`` (= tp + fn, true samples of the class), ``precision``,
    ``recall``, ``f_beta``. Classes are ``labels`` in order (a label outside them raises), else the sorted
    union of both label sets. Undefined entries are NaN (``"warn"``) or the ``zero_division`` value.

    >>> scores = class_scores(["a", "b", "b", "c"], ["a", "b", "c", "c"])
    >>> scores[["precision", "recall"]]  # doctest: +NORMALIZE_WHITESPACE
           precision  recall
    label
    a            1.0     1.0
    b            1.0     0.5
    c            0.5     1.0
    """
    zero_division = _check_zero_division(zero_division)
    classes, tp, fp, fn = _per_class_counts(y_true, y_pred, labels)
    scores = _class_arrays(tp, fp, fn, _check_beta(beta), zero_division, classes)
    frame = pd.DataFrame({"tp": tp, "fp": fp, "fn": fn, "support": tp + fn, **scores}, index=classes)
    frame.index.name = "label"
    return frame


def average_scores(
    y_true, y_pred, *, average=Average.MACRO, labels=None, beta=1.0, zero_division="warn"
) -> dict:
    """Precision, recall and F-beta averaged over classes: ``{"precision", "recall", "f_beta"}``.

    * ``"macro"``: unweighted mean of the per-class values (:func:`class_scores`);
    * ``"weighted"``: mean weighted by support (true samples per class; classes with no true sample weigh 0);
    * ``"micro"``: the measures of the pooled TP, FP and FN (for single-label data with every class counted,
      micro precision = micro recall = micro F = accuracy).

    With ``zero_division="warn"``, an average is None when one of its (non-zero-weight) terms is undefined.

    >>> {k: round(v, 4) for k, v in average_scores([0, 1, 1, 2], [0, 1, 2, 2]).items()}
    {'precision': 0.8333, 'recall': 0.8333, 'f_beta': 0.7778}
    """
    if not isinstance(average, str) or average not in AVERAGES:
        raise QrelForgeError(f"average must be 'macro', 'micro' or 'weighted'; got {average!r}")
    zero_division, beta = _check_zero_division(zero_division), _check_beta(beta)
    classes, tp, fp, fn = _per_class_counts(y_true, y_pred, labels)
    if average == Average.MICRO:
        tp, fp, fn = int(tp.sum()), int(fp.sum()), int(fn.sum())
        return {
            "precision": precision(tp, fp, zero_division=zero_division),
            "recall": recall(tp, fn, zero_division=zero_division),
            "f_beta": f_beta(tp, fp, fn, beta=beta, zero_division=zero_division),
        }
    weight = np.ones(len(classes)) if average == Average.MACRO else (tp + fn).astype(float)
    scores = _class_arrays(tp, fp, fn, beta, zero_division, classes)
    return {key: _weighted_mean(values, weight) for key, values in scores.items()}


def _weighted_mean(values: np.ndarray, weight: np.ndarray):
    keep = weight > 0
    if not keep.any() or np.isnan(values[keep]).any():
        return None
    return float(np.average(values[keep], weights=weight[keep]))


# ------------------------------------------------------------------------------------------------ multi-label


@dataclass(frozen=True, eq=False)
class PartialMatch:
    """Example-based multilabel precision and recall (Godbole & Sarawagi 2004).

    ``precision`` = mean over samples of |T ∩ P| / |P|, ``recall`` = mean of |T ∩ P| / |T|; ``per_sample`` has
    ``n_true``, ``n_pred``, ``overlap``, ``precision`` and ``recall`` for each sample (NaN where undefined).
    """

    precision: float | None
    recall: float | None
    per_sample: pd.DataFrame = field(repr=False)


def _label_sets(values, name: str) -> pd.DataFrame:
    """Long (sample, label) pairs of a sequence of label collections, duplicates within a sample removed."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray, pd.Series)):
        raise QrelForgeError(f"{name} must be a sequence of label collections; got {type(values).__name__}")
    values = list(values)
    for i, labels in enumerate(values):
        if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
            raise QrelForgeError(
                f"{name}[{i}] must be a collection of labels (set, list or tuple); got {labels!r}"
            )
    sizes = [len(labels) for labels in values]
    flat = list(chain.from_iterable(values))
    frame = pd.DataFrame(
        {"sample": np.repeat(np.arange(len(values)), sizes), "label": pd.Series(flat, dtype=object)}
    )
    return frame.drop_duplicates()


def partial_match(y_true, y_pred, *, zero_division="warn") -> PartialMatch:
    """Multilabel partial-match precision and recall: overlap ÷ predicted labels, and overlap ÷ true labels,
    per sample, then averaged over samples.

    A sample with no predicted label has undefined precision; one with no true label has undefined recall
    (handled per ``zero_division``; with ``"warn"`` the mean is then None). Repeated labels in a sample count
    once.

    >>> res = partial_match([{"a", "b"}, {"c"}], [{"a"}, {"c", "d"}])
    >>> res.precision, res.recall
    (0.75, 0.75)
    """
    zero_division = _check_zero_division(zero_division)
    true, pred = _label_sets(y_true, "y_true"), _label_sets(y_pred, "y_pred")
    n = len(y_true)
    if n != len(y_pred):
        raise QrelForgeError(f"y_true and y_pred must have the same length; got {n} and {len(y_pred)}")
    if n == 0:
        raise QrelForgeError("y_true and y_pred are empty")
    per = pd.DataFrame(
        {
            "n_true": np.bincount(true["sample"], minlength=n),
            "n_pred": np.bincount(pred["sample"], minlength=n),
            "overlap": np.bincount(true.merge(pred, on=["sample", "label"])["sample"], minlength=n),
        }
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = {
            "precision": (per["n_pred"], "no predicted label"),
            "recall": (per["n_true"], "no true label"),
        }
        for key, (size, why) in ratios.items():
            per[key] = _fill((per["overlap"] / size).to_numpy(float), zero_division, key, _samples, why)
    return PartialMatch(
        precision=_mean_or_none(per["precision"]), recall=_mean_or_none(per["recall"]), per_sample=per
    )


def _samples(mask: np.ndarray) -> str:
    count = int(mask.sum())
    return f"{count} sample{'s' if count > 1 else ''}"


def _mean_or_none(values: pd.Series):
    return None if values.isna().any() else float(values.mean())


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

    Parameters
    ----------
    y_true : sequence of grades or booleans
        An item is relevant when its grade is ≥ ``rel``.
    y_score : sequence of numbers
    rel : number
        Relevance threshold on the grades (default 1).
    n_relevant : int, optional
        Total relevant items, including those that were not scored (IR: relevant documents the run did not
        retrieve); defaults to the relevant items in ``y_true`` (scikit-learn's convention).

    With no relevant item recall is undefined: the recall array is NaN, ``average_precision`` and ``auc`` are
    None, and an UndefinedMetricWarning is emitted.

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

    Parameters
    ----------
    run : DataFrame
        Columns ``query``, ``doc``, ``score`` (names configurable); one row per retrieved document.
    qrels : mapping
        ``{query_id: {doc_id: grade}}``; a document is relevant when its grade is ≥ ``rel``, unjudged
        documents are not relevant. Ids are compared as strings.
    recall_levels : int
        Number of equally spaced recall levels, ≥ 2 (default 11: 0.0, 0.1, ..., 1.0).

    Each query's curve sweeps its score threshold as in :func:`pr_curve`, with recall over all its relevant
    judged documents (retrieved or not). Evaluated queries are the run's queries with at least one relevant
    document; the others are listed in ``skipped_queries`` with an UndefinedMetricWarning. Queries judged but
    absent from the run are not evaluated (trec_eval's default). No evaluable query raises QrelForgeError.

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
