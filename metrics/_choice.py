"""`Choice`: the base of the package's string enums (statuses, statistics, modes: `metrics.measures.Gain`,
`metrics.stats.StatTest`, `metrics.agreement.Level`, ...).

A member is a `str` equal to its value, so callers that pass or compare plain strings keep working
(``Level.NOMINAL == "nominal"``, ``f"{Gain.EXP}"`` is ``exp``), and it also *shows* as its value: ``repr`` is
the value's repr. Error messages (``got 'nominal'``), signatures (``level='nominal'``), doctests and the
reprs of the results that hold a member read exactly as they did when these were plain strings.

>>> class Color(Choice):
...     RED = "red"
>>> Color.RED == "red", Color("red") is Color.RED, repr(Color.RED), [Color.RED]
(True, True, "'red'", ['red'])
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Choice"]


class Choice(StrEnum):
    """A string enum that equals, formats and shows as its value."""

    def __repr__(self) -> str:
        return repr(self.value)
