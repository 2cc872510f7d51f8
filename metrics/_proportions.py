"""Intervals for a proportion, shared by the statistics and agreement parts."""

from __future__ import annotations

from typing import Any

import numpy as np

from metrics._validate import check_probability


def wilson_interval(successes: Any, n: Any, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a proportion: center (k + z²/2) / (n + z²), half-width
    z sqrt(k (n - k) / n + z²/4) / (n + z²), z the normal quantile of (1 + confidence) / 2. n = 0 gives NaN.

    Args:
        successes: k, the number of successes (a number or an array).
        n: the number of trials, of the same shape.
        confidence: the interval's coverage, in (0, 1).

    Returns:
        Arrays low and high.

    Raises:
        QrelForgeError: ``confidence`` outside (0, 1).

    >>> low, high = wilson_interval(8, 10)
    >>> round(float(low), 4), round(float(high), 4)
    (0.4902, 0.9433)
    """
    from scipy.special import ndtri

    k, n = np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64)
    z = ndtri((1 + check_probability(confidence, "confidence")) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        center = (k + z * z / 2) / (n + z * z)
        half = z * np.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    return np.where(n > 0, center - half, np.nan), np.where(n > 0, center + half, np.nan)
