"""Annotator competence learned from the labels alone: Dawid–Skene (`dawid_skene`, `DawidSkene`) and MACE
(`mace`, `Mace`, `Training`), both by expectation–maximization on the long labels table (private;
re-exported by `metrics.agreement`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metrics._choice import Choice
from metrics._lazy import lazy
from metrics.agreement._annotators import _gold_items
from metrics.agreement._core import _check_choice
from metrics.agreement._long import _Long, _long_table
from metrics.errors import QrelForgeError

if TYPE_CHECKING:
    from scipy import sparse, special
else:
    sparse = lazy("scipy.sparse")  # imported on first use: not by pages that only read a run
    special = lazy("scipy.special")

# Dawid–Skene's floor on a probability before its logarithm (crowd-kit uses the same 1e-10).
_FLOOR = 1e-10
_TINY = np.finfo(float).tiny


class Training(Choice):
    """How MACE re-estimates its parameters from the expected counts."""

    EM = "em"  # maximum likelihood with additive smoothing
    VB = "vb"  # variational Bayes with Beta / Dirichlet priors


TRAININGS = tuple(Training)


# ------------------------------------------------------------------------------------------------ validation


def _check_number(value, name: str, *, positive: bool = False) -> float:
    """A finite real ≥ 0 (> 0 with `positive`), else an error naming `name` and the value."""
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if ok and math.isfinite(value) and (value > 0 if positive else value >= 0):
        return float(value)
    raise QrelForgeError(f"{name} must be a finite number {'>' if positive else '>='} 0; got {value!r}")


def _check_count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise QrelForgeError(f"{name} must be an int >= 1; got {value!r}")
    return int(value)


def _rated(table, item, rater, label, labels) -> _Long:
    """The encoded long table; one without a single rating raises."""
    long = _long_table(table, item, rater, label, labels, None)
    if len(long.code) == 0:
        raise QrelForgeError(f"table has no rating: it is empty or every {label!r} is missing")
    return long


def _check_init(init, n_raters: int, n_categories: int) -> tuple[np.ndarray, np.ndarray]:
    """(competence (R,), strategy (R, K)) of a MACE start, each a probability (distribution)."""
    if not isinstance(init, tuple) or len(init) != 2:
        raise QrelForgeError(f"init must be a pair (competence, strategy); got {type(init).__name__}")
    competence = np.asarray(init[0], dtype=float)
    strategy = np.asarray(init[1], dtype=float)
    if competence.shape != (n_raters,) or not ((competence >= 0) & (competence <= 1)).all():
        raise QrelForgeError(
            f"init competence must be {n_raters} probabilities (one per rater, in sorted rater order); "
            f"got shape {competence.shape}"
        )
    if strategy.shape != (n_raters, n_categories) or not np.allclose(strategy.sum(axis=1), 1.0):
        raise QrelForgeError(
            f"init strategy must be a {n_raters} × {n_categories} table whose rows sum to 1; "
            f"got shape {strategy.shape}"
        )
    return competence, strategy


# ----------------------------------------------------------------------------------------------- shared parts


@dataclass(frozen=True, eq=False)
class _Design:
    """The ratings as an items × (rater, grade) 0/1 matrix: each EM step is then two sparse products whose
    cost grows with the number of ratings, on tables of R · K rows instead of one row per rating."""

    pairs: sparse.csr_matrix  # items × (raters · K): 1 where the rater gave the item that grade
    pairs_t: sparse.csr_matrix  # its transpose
    n_rated: np.ndarray  # (raters · K): how many items each rater gave each grade

    @classmethod
    def of(cls, long: _Long) -> _Design:
        k = len(long.categories)
        columns = long.rater * k + long.code
        pairs = sparse.csr_matrix(
            (np.ones(len(columns)), (long.item, columns)), shape=(len(long.items), len(long.raters) * k)
        )
        n_rated = np.bincount(columns, minlength=len(long.raters) * k).astype(float)
        return cls(pairs=pairs, pairs_t=pairs.T.tocsr(), n_rated=n_rated)


def _softmax_rows(log_joint: np.ndarray) -> tuple[np.ndarray, float]:
    """Row-normalized exp(log_joint), and the log marginal likelihood Σ_i log Σ_c exp(log_joint[i, c])."""
    top = log_joint.max(axis=1, keepdims=True)
    scaled = np.exp(log_joint - top)
    total = scaled.sum(axis=1, keepdims=True)
    return scaled / total, float((np.log(total) + top).sum())


@dataclass(frozen=True, eq=False)
class _Posterior:
    """What both models share: the posterior grade distribution of each item and how the fit ended."""

    posterior: pd.DataFrame
    log_likelihood: float
    n_iter: int
    converged: bool

    @property
    def labels(self) -> pd.Series:
        """The most probable grade of each item (ties to the first in scale order)."""
        values = self.posterior.to_numpy()
        return pd.Series(self.posterior.columns.take(values.argmax(axis=1)), index=self.posterior.index)

    @property
    def confidence(self) -> pd.Series:
        """The posterior probability of each item's most probable grade; sort ascending for the least certain
        items first."""
        return self.posterior.max(axis=1)


def _posterior_frame(long: _Long, q: np.ndarray, item: str) -> pd.DataFrame:
    return pd.DataFrame(q, index=long.items.rename(item), columns=long.categories)


# ------------------------------------------------------------------------------------------------ Dawid–Skene


@dataclass(frozen=True, eq=False)
class DawidSkene(_Posterior):
    """A fitted Dawid–Skene model.

    ``confusion[r, c, g]`` is P(rater r gives grade g | true grade c): an R × K × K array (raters and grades
    in the order of ``raters`` and ``posterior.columns``), each ``confusion[r, c]`` summing to 1.
    ``priors`` is the class prior π_c. ``posterior`` is items × grades, each row summing to 1.
    ``log_likelihood`` is the observed-data log-likelihood Σ_i log Σ_c π_c Π_r e_r[c, g_ir] of the parameters
    before the last iteration; ``n_iter`` counts EM iterations, ``converged`` says whether the posteriors
    settled within ``tol`` before ``max_iter``.
    """

    confusion: np.ndarray
    priors: pd.Series
    raters: pd.Index

    @property
    def accuracy(self) -> pd.Series:
        """Each rater's expected accuracy Σ_c π_c e_r[c, c]: the probability that their grade is the true one
        (a competence to rank raters by)."""
        diagonal = np.diagonal(self.confusion, axis1=1, axis2=2)
        return pd.Series(diagonal @ self.priors.to_numpy(), index=self.raters, name="accuracy")

    def confusion_frame(self, rater) -> pd.DataFrame:
        """One rater's confusion matrix as a DataFrame: rows the true grade, columns the grade given."""
        if rater not in self.raters:
            raise QrelForgeError(f"rater must be one of the fitted raters; got {rater!r}")
        grades = self.posterior.columns
        return pd.DataFrame(
            self.confusion[self.raters.get_loc(rater)],
            index=grades.rename("true"),
            columns=grades.rename("given"),
        )


def _ds_m_step(design: _Design, q: np.ndarray, r: int, k: int, smoothing: float) -> np.ndarray:
    """Confusion matrices (R, K_true, K_given) from the expected counts Σ_i q[i, c] [r gave i grade g]."""
    counts = (design.pairs_t @ q).reshape(r, k, k).transpose(0, 2, 1) + smoothing
    counts = np.maximum(counts, _FLOOR)
    return counts / counts.sum(axis=2, keepdims=True)


@dataclass(frozen=True, eq=False)
class _Anchor:
    """The gold items and their grades, to set their posteriors to."""

    items: np.ndarray
    onehot: np.ndarray

    @classmethod
    def of(cls, long: _Long, gold) -> _Anchor:
        codes = _gold_items(long, gold) if gold is not None else np.full(len(long.items), -1)
        items = np.flatnonzero(codes >= 0)
        return cls(items=items, onehot=np.eye(len(long.categories))[codes[items]])

    def apply(self, q: np.ndarray) -> np.ndarray:
        q[self.items] = self.onehot
        return q


def dawid_skene(
    table,
    *,
    item="item",
    rater="rater",
    label="label",
    labels=None,
    max_iter: int = 100,
    tol: float = 1e-6,
    smoothing: float = 0.0,
    gold=None,
) -> DawidSkene:
    """Dawid & Skene (1979): each rater's confusion matrix and each item's posterior grade distribution.

    Model: item i has a true grade c with prior π_c; rater r gives grade g with probability e_r[c, g],
    independently given c. EM from the majority-vote shares q⁰[i, c] = n_ic / n_i:

    - M-step: π_c = mean_i q[i, c]; e_r[c, g] ∝ max(Σ_{i rated g by r} q[i, c] + smoothing, 1e-10);
    - E-step: q[i, c] ∝ π_c Π_{r rated i} e_r[c, g_ir] (π_c floored at 1e-10), in log space.

    With ``gold``, the posterior of a gold item is its gold grade (q[i, gold_i] = 1) at the start and after
    every E-step, so the gold pairs anchor the confusion matrices (crowd-kit's ``true_labels``).
    It stops when no posterior probability moves by ``tol`` or more in an iteration, or after ``max_iter``
    iterations (``tol=0`` always runs ``max_iter``).

    Args:
        table: the long labels table, one row per rating (columns ``item``, ``rater``, ``label``; names
            configurable). A missing label is not a rating; the same (item, rater) twice raises.
        item, rater, label: the names of the table's item, rater and label columns.
        labels: the grade scale, e.g. ``[0, 1, 2, 3]`` (default: the grades observed, sorted).
        max_iter: the most EM iterations, ≥ 1.
        tol: the convergence threshold on the posteriors, ≥ 0.
        smoothing: a pseudo-count added to every cell of the confusion counts (0: maximum likelihood).
        gold: item → expected grade (a dict or Series), optional; items not in the table are ignored.

    Returns:
        A `DawidSkene` with ``confusion``, ``priors``, ``posterior``, ``accuracy`` and convergence figures.

    Raises:
        QrelForgeError: bad table or option, naming the parameter and value.

    >>> t = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "rater": list("abcabcabc"),
    ...                   "label": [1, 1, 0, 0, 0, 0, 1, 1, 1]})
    >>> fit = dawid_skene(t)
    >>> fit.labels.tolist(), fit.accuracy.round(2).tolist()
    ([1, 0, 1], [1.0, 1.0, 0.67])
    """
    max_iter = _check_count(max_iter, "max_iter")
    tol = _check_number(tol, "tol")
    smoothing = _check_number(smoothing, "smoothing")
    long = _rated(table, item, rater, label, labels)
    design = _Design.of(long)
    r, k = len(long.raters), len(long.categories)
    counts = long.counts()
    anchor = _Anchor.of(long, gold)
    q = anchor.apply(counts / counts.sum(axis=1, keepdims=True))
    priors = q.mean(axis=0)
    confusion = _ds_m_step(design, q, r, k, smoothing)
    converged, log_likelihood, n_iter = False, -math.inf, 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (n_iter is reported)
        log_given = np.log(confusion).transpose(0, 2, 1).reshape(r * k, k)  # (rater, given) × true
        log_joint = np.log(np.maximum(priors, _FLOOR)) + design.pairs @ log_given
        q_new, log_likelihood = _softmax_rows(log_joint)
        q_new = anchor.apply(q_new)
        change = float(np.abs(q_new - q).max())
        q = q_new
        priors = q.mean(axis=0)
        confusion = _ds_m_step(design, q, r, k, smoothing)
        if change < tol:
            converged = True
            break
    return DawidSkene(
        posterior=_posterior_frame(long, q, item),
        log_likelihood=log_likelihood,
        n_iter=n_iter,
        converged=converged,
        confusion=confusion,
        priors=pd.Series(priors, index=long.categories, name="prior"),
        raters=long.raters,
    )


# ------------------------------------------------------------------------------------------------ MACE


@dataclass(frozen=True, eq=False)
class Mace(_Posterior):
    """A fitted MACE model.

    ``competence`` is θ_r, the probability that rater r knows the answer (is not spamming) on an item.
    ``strategy`` is raters × grades: ξ_r, the distribution rater r draws from when spamming (a rater who
    spams with one grade is lenient or strict). ``posterior`` is items × grades, each row summing to 1.
    ``log_likelihood`` is Σ_i log P(ratings of i) under the returned parameters; ``n_iter`` and
    ``converged`` describe the best restart; ``restarts`` is how many runs were made.
    """

    competence: pd.Series
    strategy: pd.DataFrame
    restarts: int


@dataclass(frozen=True, eq=False)
class _MaceRun:
    weights: np.ndarray  # (R, 2): spam, know
    strategy: np.ndarray  # (R, K) ξ
    q: np.ndarray
    log_likelihood: float
    n_iter: int
    converged: bool


def _mace_e_step(design: _Design, weights: np.ndarray, strategy: np.ndarray):
    """Posteriors q, log-likelihood, and per (rater, grade given) the expected spamming and knowing counts.

    P(g | c) = w_spam,r ξ_r[g] + w_know,r [g = c], the true grade uniform over the K grades. Under EM the
    weights are (1 − θ_r, θ_r); under VB they are the sub-normalized exp E[log θ] of mean-field VB. A label g
    by r on item i is known with probability q[i, g] w_know,r / (w_spam,r ξ_r[g] + w_know,r).
    """
    r, k = strategy.shape
    spam = (weights[:, :1] * strategy).ravel()  # (rater, given)
    knows = np.repeat(weights[:, 1], k)
    agree = np.tile(np.eye(k), (r, 1)).astype(bool)  # (rater, given) × true: given == true
    given = np.repeat(np.log(np.maximum(spam, _TINY))[:, None], k, axis=1)
    given[agree] = np.log(np.maximum(spam + knows, _TINY))
    q, log_likelihood = _softmax_rows(design.pairs @ given - math.log(k))
    q_given = (design.pairs_t @ q)[agree]  # Σ over the items r gave g of q[i, g]
    p_know = q_given * knows / np.maximum(spam + knows, _TINY)
    return q, log_likelihood, design.n_rated - p_know, p_know


def _normalize(counts: np.ndarray, prior: np.ndarray | float, training: str) -> np.ndarray:
    """Rows of counts + prior normalized (EM; a row summing to 0 becomes uniform), or
    exp ψ(counts + prior) / exp ψ(Σ counts + prior) (VB)."""
    if training == Training.EM:
        smoothed = counts + prior
        total = smoothed.sum(axis=1, keepdims=True)
        uniform = np.full_like(smoothed, 1.0 / smoothed.shape[1])
        return np.divide(smoothed, total, out=uniform, where=total > 0)
    alpha = counts + prior
    return np.exp(special.digamma(alpha) - special.digamma(alpha.sum(axis=1, keepdims=True)))


def _mace_run(design, weights, strategy, *, max_iter, tol, training, smoothing, priors) -> _MaceRun:
    r, k = strategy.shape
    q, log_likelihood, p_spam, p_know = _mace_e_step(design, weights, strategy)
    converged, n_iter = False, 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (n_iter is reported)
        spam_know = np.stack([p_spam.reshape(r, k).sum(axis=1), p_know.reshape(r, k).sum(axis=1)], axis=1)
        strategy_counts = p_spam.reshape(r, k)
        if training == Training.EM:
            weights = _normalize(spam_know, smoothing, training)
            strategy = _normalize(strategy_counts, smoothing, training)
        else:
            weights = _normalize(spam_know, priors[:2], training)
            strategy = _normalize(strategy_counts, priors[2], training)
        q_new, log_likelihood, p_spam, p_know = _mace_e_step(design, weights, strategy)
        change = float(np.abs(q_new - q).max())
        q = q_new
        if change < tol:
            converged = True
            break
    return _MaceRun(weights, strategy, q, log_likelihood, n_iter, converged)


def mace(
    table,
    *,
    item="item",
    rater="rater",
    label="label",
    labels=None,
    training=Training.VB,
    max_iter: int = 50,
    tol: float = 1e-6,
    restarts: int | None = None,
    seed: int = 0,
    init=None,
    smoothing: float | None = None,
    alpha: float = 0.5,
    beta: float = 0.5,
    strategy_prior: float = 10.0,
) -> Mace:
    """MACE, Multi-Annotator Competence Estimation (Hovy, Berg-Kirkpatrick, Vaswani & Hovy 2013).

    Model: item i has a true grade c, uniform over the K grades. On each item rater r knows the answer with
    probability θ_r (the competence) and then gives c; otherwise r spams and draws a grade from ξ_r (the
    strategy), so P(g | c) = (1 − θ_r) ξ_r[g] + θ_r [g = c]. EM alternates:

    - E-step: q[i, c] ∝ Π_{r rated i} P(g_ir | c); per rating, P(know) = q[i, g] θ_r / P(g | g) and
      P(spam) = 1 − P(know);
    - M-step (``training='em'``): θ_r and ξ_r are the expected counts plus ``smoothing``, normalized;
      (``training='vb'``): variational Bayes, exp ψ(counts + prior) / exp ψ(Σ (counts + prior)), with a
      Beta prior on the (spam, know) split with pseudo-counts ``alpha`` for spamming and ``beta`` for
      knowing (as Hovy et al.'s MACE and crowd-kit) and a symmetric Dirichlet(``strategy_prior``) prior on
      ξ_r. The E-step then uses the weights exp E[log θ_r], exp E[log (1 − θ_r)] and exp E[log ξ_r], which
      sum to less than 1; ``competence`` and ``strategy`` report them normalized.

    Each run starts from θ_r, ξ_r drawn uniformly in [1, 1.5] and normalized (seeded by ``seed``) or from
    ``init``, and stops when no posterior probability moves by ``tol`` or more, or after ``max_iter``
    iterations (``tol=0`` always runs ``max_iter``). The run with the highest log-likelihood is kept.

    Args:
        table: the long labels table (columns ``item``, ``rater``, ``label``; names configurable).
        item, rater, label: the names of the table's item, rater and label columns.
        labels: the grade scale, e.g. ``[0, 1, 2, 3]`` (default: the grades observed, sorted).
        training: ``'vb'`` (the default of Hovy et al.'s MACE and of crowd-kit) or ``'em'``.
        max_iter: the most iterations per run, ≥ 1.
        tol: the convergence threshold on the posteriors, ≥ 0.
        restarts: the number of random starts (default 10; 1 with ``init``).
        seed: the seed of the random starts.
        init: a start ``(competence, strategy)``: R probabilities and an R × K table of rows summing to 1,
            raters in sorted order and grades in scale order.
        smoothing: the EM pseudo-count, ≥ 0 (default 0.01 / K, as Hovy et al.'s MACE).
        alpha, beta, strategy_prior: the VB pseudo-counts (spamming, knowing, each strategy grade), > 0.

    Returns:
        A `Mace` with ``competence``, ``strategy``, ``posterior`` and convergence figures.

    Raises:
        QrelForgeError: bad table or option, naming the parameter and value.

    >>> t = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4], "rater": list("abcabcabcabc"),
    ...                   "label": [1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0]})
    >>> fit = mace(t)
    >>> fit.labels.tolist(), fit.competence.idxmin()
    ([1, 0, 1, 0], 'c')
    """
    training = _check_choice("training", training, TRAININGS)
    max_iter = _check_count(max_iter, "max_iter")
    tol = _check_number(tol, "tol")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise QrelForgeError(f"seed must be an int; got {seed!r}")
    priors = np.array(
        [
            _check_number(alpha, "alpha", positive=True),
            _check_number(beta, "beta", positive=True),
            _check_number(strategy_prior, "strategy_prior", positive=True),
        ]
    )
    long = _rated(table, item, rater, label, labels)
    r, k = len(long.raters), len(long.categories)
    smoothing = 0.01 / k if smoothing is None else _check_number(smoothing, "smoothing")
    if init is not None:
        if restarts not in (None, 1):
            raise QrelForgeError(f"restarts must be 1 (or None) when init is given; got {restarts!r}")
        competence, xi = _check_init(init, r, k)
        starts = [(np.stack([1.0 - competence, competence], axis=1), xi)]
    else:
        rng = np.random.default_rng(seed)
        starts = []
        for _ in range(_check_count(10 if restarts is None else restarts, "restarts")):
            pair = rng.uniform(1.0, 1.5, size=(r, 2))
            xi = rng.uniform(1.0, 1.5, size=(r, k))
            starts.append((pair / pair.sum(axis=1, keepdims=True), xi / xi.sum(axis=1, keepdims=True)))
    design = _Design.of(long)
    runs = [
        _mace_run(
            design,
            weights,
            xi,
            max_iter=max_iter,
            tol=tol,
            training=training,
            smoothing=smoothing,
            priors=priors,
        )
        for weights, xi in starts
    ]
    best = max(runs, key=lambda run: run.log_likelihood)
    return Mace(
        posterior=_posterior_frame(long, best.q, item),
        log_likelihood=best.log_likelihood,
        n_iter=best.n_iter,
        converged=best.converged,
        competence=pd.Series(
            best.weights[:, 1] / best.weights.sum(axis=1), index=long.raters, name="competence"
        ),
        strategy=pd.DataFrame(
            best.strategy / best.strategy.sum(axis=1, keepdims=True),
            index=long.raters,
            columns=long.categories,
        ),
        restarts=len(runs),
    )
