"""The judge backends that run: `BUILDERS`, one line per backend, from its `Backend` to its builder.

Every list of runnable backends derives from `BUILDERS`. A `Backend` without a builder only imports labels.

>>> sorted(b.value for b in BUILDERS)
['ensemble', 'lexical', 'openai']
>>> judge = BUILDERS[Backend.LEXICAL](JudgeSetup(name="lex", corpus=lambda: {"d1": "battery"}))
>>> judge.name, judge.backend
('lex', <Backend.LEXICAL: 'lexical'>)
"""

from __future__ import annotations

from collections.abc import Callable

from annotate_app.judges._ensemble import EnsembleJudge
from annotate_app.judges._lexical import LexicalJudge
from annotate_app.judges._model import Backend, Judge, JudgeSetup
from annotate_app.judges._openai import OpenAIJudge

__all__ = ["BUILDERS", "Builder"]

Builder = Callable[[JudgeSetup], Judge]
"""Makes a judge from its stored setup."""


def _ensemble(setup: JudgeSetup) -> Judge:
    """An ensemble of the members' judges, each made by its own backend's builder."""
    missing = [b.value for b, _ in setup.members if b not in BUILDERS or b is Backend.ENSEMBLE]
    if missing:
        raise ValueError(f"an ensemble's members must be runnable judges, not {missing[0]!r}")
    members = [BUILDERS[backend](member) for backend, member in setup.members]
    return EnsembleJudge(setup.name, members, setup.combine)


BUILDERS: dict[Backend, Builder] = {  # the backends a judge can be added and run with
    Backend.OPENAI: OpenAIJudge.from_setup,
    Backend.LEXICAL: LexicalJudge.from_setup,
    Backend.ENSEMBLE: _ensemble,
}
