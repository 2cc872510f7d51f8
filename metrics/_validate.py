"""Option checks shared by the statistics and agreement parts: errors name the parameter and the value."""

from __future__ import annotations

from typing import Any

import numpy as np

from metrics.errors import QrelForgeError


def check_int(value: Any, name: str, minimum: int) -> int:
    """Check an option that must be an int (not a bool) >= ``minimum``.

    Args:
        value: the option's value.
        name: the option's name, for the message.
        minimum: the smallest value allowed.

    Returns:
        ``value`` as an int.

    Raises:
        QrelForgeError: ``value`` is not such an int, naming ``name``.

    >>> check_int(5, "k", 1)
    5
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise QrelForgeError(f"{name} must be an int >= {minimum}; got {value!r}")
    return int(value)


def check_probability(value: Any, name: str) -> float:
    """Check an option that must be a real number strictly between 0 and 1.

    Args:
        value: the option's value.
        name: the option's name, for the message.

    Returns:
        ``value`` as a float.

    Raises:
        QrelForgeError: ``value`` is not such a number, naming ``name``.

    >>> check_probability(0.05, "alpha")
    0.05
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating) or not 0 < value < 1:
        raise QrelForgeError(f"{name} must be a number strictly between 0 and 1; got {value!r}")
    return float(value)
