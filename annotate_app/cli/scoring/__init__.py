"""``qrelforge score``, ``compare``, ``check``, ``verify`` and ``ab``: one module per command.

These commands need only the metrics library (no ``app`` extra, except ``score --ppi``). It is imported
inside the handlers, so building the parser stays fast; bad input raises `QrelForgeError` (one line, exit
status 2, via `annotate_app.cli.main`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from annotate_app.cli._common import AddParser
from annotate_app.cli.scoring._shared import DEFAULT_MEASURES, Engine
from annotate_app.cli.scoring.ab import add_ab_parser
from annotate_app.cli.scoring.check import add_check_parser
from annotate_app.cli.scoring.compare import add_compare_parser
from annotate_app.cli.scoring.score import add_score_parser
from annotate_app.cli.scoring.verify import add_verify_parser

if TYPE_CHECKING:
    from annotate_app.cli._reports import named_run_files

__all__ = ["COMMANDS", "DEFAULT_MEASURES", "Engine", "named_run_files"]


def __getattr__(name: str) -> Any:
    if name == "named_run_files":  # re-exported, imported on first use (plain scoring never needs it)
        from annotate_app.cli._reports import named_run_files

        return named_run_files
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


COMMANDS: dict[str, AddParser] = {
    "score": add_score_parser,
    "compare": add_compare_parser,
    "check": add_check_parser,
    "ab": add_ab_parser,
    "verify": add_verify_parser,
}
