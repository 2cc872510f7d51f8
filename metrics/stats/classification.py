"""Classification measures for relevance labels: accuracy, precision, recall and F-beta from counts or
labels; macro, micro and weighted averages; multilabel partial match; precision–recall curves.

``zero_division="warn"`` (default) makes an undefined value ``None`` (NaN in DataFrames) with an
`UndefinedMetricWarning`, and an average with an undefined term ``None``; ``0`` or ``1`` uses that value.
Values equal scikit-learn's wherever it is defined; tied scores enter `pr_curve` together (use
`metrics.evaluate` for trec_eval's AP). Every difference from both: docs/modules.md.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import NamedTuple

import numpy as np
import pandas as pd

from metrics._choice import Choice
from metrics._lazy import lazy_exports
from metrics._text import _shown
from metrics.errors import QrelForgeError, UndefinedMetricWarning

__all__ = [
    "ConfusionCounts",
    "PartialMatch",
    "accuracy",
    "average_scores",
    "binary_scores",
    "class_scores",
    "confusion_counts",
    "f1",
    "f_beta",
    "partial_match",
    "precision",
    "recall",
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
    """TP, FP, FN and TN of binary labels.

    Args:
        y_true: the true labels, a sequence.
        y_pred: the predicted labels, of the same length.
        pos_label: the positive class; every other label is negative.

    Returns:
        The `ConfusionCounts` ``(tp, fp, fn, tn)``.

    Raises:
        QrelForgeError: sequences of different lengths or not 1-D, or a missing label.

    >>> confusion_counts([1, 1, 0, 0, 1], [1, 0, 1, 0, 1])
    ConfusionCounts(tp=2, fp=1, fn=1, tn=1)
    """
    t, p = _label_pair(y_true, y_pred)
    t, p = t == pos_label, p == pos_label
    return ConfusionCounts(int((t & p).sum()), int((~t & p).sum()), int((t & ~p).sum()), int((~t & ~p).sum()))


def accuracy(tp, fp, fn, tn, *, zero_division="warn"):
    """Accuracy: (TP + TN) / (TP + FP + FN + TN); undefined when all counts are 0.

    Args:
        tp, fp, fn, tn: the confusion counts, non-negative integers.
        zero_division: ``"warn"`` (None and an `UndefinedMetricWarning` when undefined), 0 or 1.

    Returns:
        A float in [0, 1], or, when undefined, None (``"warn"``) or ``zero_division``.

    Raises:
        QrelForgeError: a count that is not a non-negative integer, or a bad ``zero_division``.

    >>> round(accuracy(12, 3, 8, 9977), 4)
    0.9989
    """
    tp, fp, fn, tn = (
        _check_count(n, v) for n, v in zip(("tp", "fp", "fn", "tn"), (tp, fp, fn, tn), strict=True)
    )
    zero_division = _check_zero_division(zero_division)
    return _divide(tp + tn, tp + fp + fn + tn, zero_division, "accuracy", "no samples")


def precision(tp, fp, *, zero_division="warn"):
    """Precision: TP / (TP + FP); undefined when nothing is predicted positive.

    Args:
        tp, fp: the confusion counts, non-negative integers.
        zero_division: ``"warn"`` (None and an `UndefinedMetricWarning` when undefined), 0 or 1.

    Returns:
        As `accuracy`.

    Raises:
        QrelForgeError: as `accuracy`.

    >>> precision(12, 3)
    0.8
    """
    tp, fp = _check_count("tp", tp), _check_count("fp", fp)
    zero_division = _check_zero_division(zero_division)
    return _divide(tp, tp + fp, zero_division, "precision", "no predicted positives: tp + fp = 0")


def recall(tp, fn, *, zero_division="warn"):
    """Recall: TP / (TP + FN); undefined when there is no positive in the truth.

    Args:
        tp, fn: the confusion counts, non-negative integers.
        zero_division: ``"warn"`` (None and an `UndefinedMetricWarning` when undefined), 0 or 1.

    Returns:
        As `accuracy`.

    Raises:
        QrelForgeError: as `accuracy`.

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

    Args:
        tp, fp, fn: the confusion counts, non-negative integers.
        beta: β, a positive number.
        zero_division: ``"warn"`` (None and an `UndefinedMetricWarning` when undefined), 0 or 1.

    Returns:
        A float in [0, 1], or, when undefined, None (``"warn"``) or ``zero_division``.

    Raises:
        QrelForgeError: a count that is not a non-negative integer, a bad ``beta`` or ``zero_division``.

    >>> round(f_beta(12, 3, 8), 4), round(f_beta(12, 3, 8, beta=2), 4)
    (0.6857, 0.6316)
    """
    tp, fp, fn = _check_count("tp", tp), _check_count("fp", fp), _check_count("fn", fn)
    b2 = _check_beta(beta) ** 2
    zero_division = _check_zero_division(zero_division)
    return _divide((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division, "F-score", "tp + fp + fn = 0")


def f1(tp, fp, fn, *, zero_division="warn"):
    """F1 = 2 TP / (2 TP + FP + FN), the harmonic mean of precision and recall; see `f_beta`.

    Args:
        tp, fp, fn: the confusion counts, non-negative integers.
        zero_division: ``"warn"`` (None and an `UndefinedMetricWarning` when undefined), 0 or 1.

    Returns:
        As `accuracy`.

    Raises:
        QrelForgeError: as `accuracy`.

    >>> round(f1(12, 3, 8), 4)
    0.6857
    """
    return f_beta(tp, fp, fn, beta=1.0, zero_division=zero_division)


def binary_scores(tp, fp, fn, tn, *, beta=1.0, zero_division="warn") -> dict:
    """All binary measures of one confusion table.

    From labels: ``binary_scores(*confusion_counts(y_true, y_pred))``.

    Args:
        tp, fp, fn, tn: the confusion counts, non-negative integers.
        beta: β of ``f_beta``, a positive number.
        zero_division: ``"warn"`` (None and an `UndefinedMetricWarning` when undefined), 0 or 1.

    Returns:
        ``{"accuracy", "precision", "recall", "f1", "f_beta"}``, each as the function of that name returns.

    Raises:
        QrelForgeError: as `f_beta`.

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
    ``recall``, ``f_beta``. Undefined entries are NaN (``"warn"``) or the ``zero_division`` value.

    Args:
        y_true: the true labels, a sequence.
        y_pred: the predicted labels, of the same length.
        labels: the classes in order; default: the sorted union of both label sets.
        beta: β of ``f_beta``, a positive number.
        zero_division: ``"warn"`` (None and an `UndefinedMetricWarning` when undefined), 0 or 1.

    Returns:
        The DataFrame, a row per class.

    Raises:
        QrelForgeError: sequences of different lengths, a label outside ``labels``, or a bad option.

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

    Args:
        y_true, y_pred, labels, beta, zero_division: as in `class_scores`.
        average: ``"macro"``, ``"weighted"`` or ``"micro"``.

    Returns:
        ``{"precision": ..., "recall": ..., "f_beta": ...}``.

    Raises:
        QrelForgeError: as `class_scores`; an unknown ``average``.

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
    """Multilabel partial-match precision and recall, averaged over samples.

    Per sample: precision = overlap ÷ predicted labels, recall = overlap ÷ true labels. A sample with no
    predicted label has undefined precision; one with no true label has undefined recall (handled per
    ``zero_division``; with ``"warn"`` the mean is then None). Repeated labels in a sample count once.

    Args:
        y_true: each sample's true labels, a sequence of collections.
        y_pred: each sample's predicted labels, of the same length.
        zero_division: ``"warn"`` (None and an `UndefinedMetricWarning` when undefined), 0 or 1.

    Returns:
        A `PartialMatch` with ``precision``, ``recall`` and the per-sample values.

    Raises:
        QrelForgeError: sequences of different lengths, a sample that is not a collection of labels, or a
            bad ``zero_division``.

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


# Names of `metrics.stats.pr_curves`, still importable from here.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "PRCurve": "metrics.stats.pr_curves",
        "RunPRCurve": "metrics.stats.pr_curves",
        "pr_curve": "metrics.stats.pr_curves",
        "run_pr_curve": "metrics.stats.pr_curves",
    },
)
