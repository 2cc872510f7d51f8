"""``qrelforge score --ppi JUDGE -p P RELEASE RUN...``: prediction-powered inference (`metrics.stats.ppi`).

Each run's mean over a project's release and a machine judge: the measure per query with the judge's qrels
(every query it judged) and with the human qrels (``release`` for the latest release, ``release:N``, or a
qrels file), the PPI estimate with its 95% interval beside the human-only interval (needs the ``app``
extra).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from annotate_app.cli._common import command, emit, open_db, project_of
from annotate_app.cli.scoring._shared import DEFAULT_MEASURES, Engine
from metrics.errors import QrelForgeError


@command
def score_ppi(args: argparse.Namespace) -> int:
    from annotate_app.services import judges
    from annotate_app.services.auth import SYSTEM
    from metrics import parse_measures

    if args.engine is not Engine.LOCAL or args.per_query or args.format not in ("table", "json"):
        raise QrelForgeError(
            "--ppi works with --engine local and --format table or json, without --per-query"
        )
    measures = parse_measures(args.measures or DEFAULT_MEASURES)
    db = open_db(args)
    project = project_of(db, args)
    human = _human_qrels(db, project, args.qrels)
    judge = judges.judge_qrels(db, SYSTEM, project, args.ppi)
    if len(judge.relevance) == 0:
        raise QrelForgeError(f"judge {args.ppi!r} has no current labels in project {project!r}")
    rows = [row for run in args.runs for row in _ppi_rows(human, judge, run, measures)]
    if args.format == "json":
        emit(json.dumps({"judge": args.ppi, "results": rows}, indent=2, allow_nan=False) + "\n", args.output)
    else:
        emit(_ppi_table(rows), args.output)
    return 0


def _human_qrels(db: Any, project: str, spec: str) -> Any:
    """The human qrels of ``--ppi``: ``release`` (latest), ``release:N``, or a qrels file."""
    from annotate_app.services import judges
    from annotate_app.services.auth import SYSTEM
    from metrics import read_qrels

    if spec != "release" and not spec.startswith("release:"):
        return read_qrels(spec)
    version = spec.partition(":")[2]
    if version and not version.isdigit():
        raise QrelForgeError(
            f"QRELS must be release, release:N (N a release version) or a file; got {spec!r}"
        )
    return judges.human_release_qrels(db, SYSTEM, project, int(version) if version else None)


def _ppi_rows(human: Any, judge: Any, run_path: str, measures: list[Any]) -> list[dict[str, Any]]:
    """One JSON row per measure of `metrics.stats.ppi.ppi_run` (as the Score page's PPI tab)."""
    import math
    import warnings

    from metrics import read_run
    from metrics.errors import UndefinedMetricWarning
    from metrics.stats.ppi import ppi_run

    run = read_run(run_path)
    name = run.name or Path(run_path).name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        results = ppi_run(human, judge, run, measures, name=name)
    rows = []
    for measure, result in results.items():
        fields = result.to_dict().items()
        clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in fields}
        rows.append(
            {
                "measure": measure,
                **{k: str(v) if k in ("method", "human_interval") else v for k, v in clean.items()},
            }
        )
    return rows


def _ppi_table(rows: list[dict[str, Any]]) -> str:
    from annotate_app.cli._common import grid

    def interval(low: float | None, high: float | None) -> str:
        return "-" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"

    header = ["run", "measure", "human n/N", "human mean", "human 95% CI", "PPI", "PPI 95% CI", "width ratio"]
    body = [
        [
            r["run"],
            r["measure"],
            f"{r['n_human']}/{r['n_total']}",
            f"{r['human_mean']:.4f}",
            interval(r["human_ci_low"], r["human_ci_high"]),
            f"{r['estimate']:.4f}",
            interval(r["ci_low"], r["ci_high"]),
            "-" if not r["human_width"] or r["width"] is None else f"{r['width'] / r['human_width']:.2f}",
        ]
        for r in rows
    ]
    return grid(header, body)
