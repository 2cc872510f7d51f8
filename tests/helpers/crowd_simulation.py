"""A simulated annotation team with known confusion matrices and speeds, for the annotator-quality tests.

``simulate_team(seed)`` returns the long labels table of a team in which every rater's behaviour is known:
five careful raters, one careless (uniform guesses), one lenient (one grade too high half of the time) and one
speeder (careful grades, three seconds a label). Columns: ``item``, ``rater``, ``label``, ``truth`` (the true
grade), ``seconds`` (time on the label) and ``at`` (the label's position in the rater's own stream, 0 first).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

GRADES = [0, 1, 2, 3]
CAREFUL = [f"careful{i}" for i in range(5)]
CARELESS, LENIENT, SPEEDER = "careless", "lenient", "speeder"
RATERS = [*CAREFUL, CARELESS, LENIENT, SPEEDER]


def _careful(k: int) -> np.ndarray:
    """0.8 on the true grade, the rest split between the neighbouring grades."""
    matrix = 0.8 * np.eye(k)
    for c in range(k):
        neighbours = [g for g in (c - 1, c + 1) if 0 <= g < k]
        matrix[c, neighbours] = 0.2 / len(neighbours)
    return matrix


def _lenient(k: int) -> np.ndarray:
    """0.45 on the true grade, 0.5 one higher, 0.05 two higher (clamped to the top grade)."""
    matrix = np.zeros((k, k))
    for c in range(k):
        for shift, p in ((0, 0.45), (1, 0.5), (2, 0.05)):
            matrix[c, min(c + shift, k - 1)] += p
    return matrix


def confusions(k: int = len(GRADES)) -> dict[str, np.ndarray]:
    """Each simulated rater's true confusion matrix: rows the true grade, columns the grade given."""
    careful = _careful(k)
    return {
        **{name: careful for name in CAREFUL},
        CARELESS: np.full((k, k), 1.0 / k),
        LENIENT: _lenient(k),
        SPEEDER: careful,
    }


def simulate_team(seed: int = 0, n_items: int = 800, per_item: int = 4) -> pd.DataFrame:
    """The long labels table of the simulated team (see the module docstring)."""
    rng = np.random.default_rng(seed)
    k = len(GRADES)
    truth = rng.choice(k, size=n_items, p=[0.4, 0.3, 0.2, 0.1])
    matrices = confusions(k)
    rows = []
    for item in range(n_items):
        for rater in rng.choice(len(RATERS), size=per_item, replace=False):
            name = RATERS[rater]
            grade = rng.choice(k, p=matrices[name][truth[item]])
            seconds = rng.uniform(2.0, 4.0) if name == SPEEDER else rng.lognormal(np.log(20.0), 0.4)
            rows.append((f"p{item:04d}", name, GRADES[grade], GRADES[truth[item]], seconds))
    table = pd.DataFrame(rows, columns=["item", "rater", "label", "truth", "seconds"])
    table["at"] = table.groupby("rater").cumcount()
    return table
