"""Option checks shared by the statistics and agreement parts: errors name the parameter and the value."""

from __future__ import annotations

from typing import Any

import numpy as np

from metrics.errors import QrelForgeError


def check_int(value: Any, name: str, minimum: int) -> int:
    """``value`` if it is an int (not a bool) >= ``minimum``; else a `QrelForgeError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise QrelForgeError(f"{name} must be an int >= {minimum}; got {value!r}")
    return int(value)


def check_probability(value: Any, name: str) -> float:
    """``value`` if it is a real number strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating) or not 0 < value < 1:
        raise QrelForgeError(f"{name} must be a number strictly between 0 and 1; got {value!r}")
    return float(value)
