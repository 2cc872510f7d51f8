"""Kernels of the user-model measures: ERR (Chapelle et al. 2009) as gdeval computes it, and RBP with its
residual (Moffat & Zobel 2008). Vectorized over all queries like every kernel (`metrics.measures.ranking`)."""

from __future__ import annotations

import numpy as np

from metrics.measures.ranking import Params, Ranked, cumsum_within

__all__ = ["MAX_GRADE", "err", "rbp", "rbp_residual"]

MAX_GRADE = 4  # gdeval's MAX_JUDGMENT: a grade g stops the user with probability (2^g − 1) / 2^4


def err(r: Ranked, m: Params) -> np.ndarray:
    """Expected reciprocal rank as gdeval.pl (version 1.2a, the TREC Web track's) computes it:
    Σ_i R_i / i · Π_{j<i} (1 − R_j) over ranks i <= k, R = (2^g − 1) / 2^4 for grade g (0 for grades <= 0
    and unjudged documents; gdeval refuses grades above 4, which count as 4 here)."""
    stop = (np.exp2(np.clip(r.grade, 0, MAX_GRADE)) - 1.0) / 2.0**MAX_GRADE
    if m.cutoff is not None:
        stop = np.where(r.pos < m.cutoff, stop, 0.0)
    go_on = np.log1p(-stop)
    reached = np.exp(cumsum_within(go_on, r.qidx) - go_on)  # Π (1 − R_j) over the judged rows above
    return np.bincount(r.qidx, weights=stop * reached / (r.pos + 1.0), minlength=r.nq)


def rbp(r: Ranked, m: Params) -> np.ndarray:
    """Rank-biased precision: (1 − p) Σ_i rel_i · p^(i−1) over ranks i <= k, rel_i = grade >= ``rel``
    (ir_measures' ``RBP(p=..., rel=...)``; unjudged documents are not relevant)."""
    use = r.grade >= m.rel
    if m.cutoff is not None:
        use &= r.pos < m.cutoff
    return (1.0 - m.p) * np.bincount(r.qidx, weights=np.where(use, m.p**r.pos, 0.0), minlength=r.nq)


def rbp_residual(r: Ranked, m: Params) -> np.ndarray:
    """RBP's residual: how much RBP could still grow if every unknown document were relevant,
    (1 − p) Σ p^(i−1) over the unjudged ranks i <= d, plus p^d for everything below depth d = min(k,
    returned). That is 1 − (1 − p) Σ p^(i−1) over the judged ranks (grade >= 0) within d."""
    depth = r.returned if m.cutoff is None else np.minimum(r.returned, m.cutoff)
    judged = (r.grade >= 0) & (r.pos < depth[r.qidx])
    weight = np.bincount(r.qidx, weights=np.where(judged, m.p**r.pos, 0.0), minlength=r.nq)
    return 1.0 - (1.0 - m.p) * weight
