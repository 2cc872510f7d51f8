"""``qrelforge score --ppi JUDGE -p P RELEASE RUN...``: prediction-powered inference (`metrics.stats.ppi`).

Each run's mean over a project's release and a machine judge: the measure per query with the judge's qrels
(every query it judged) and with the human qrels (``release`` for the latest release, ``release:N``, or a
qrels file), the PPI estimate with its 95% interval beside the human-only interval (needs the ``app``
extra). ``--calibrate isotonic`` adds the interval with the judge's grades calibrated on the human sample
(`metrics.stats.ppi.ppi_run`, cross-fitted) and how much narrower it is.
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
    calibration = None
    if args.calibrate is not None:
        confidence: dict[str, dict[str, float | None]] = {}
        for (query, doc), value in judges.judge_confidences(db, SYSTEM, project, args.ppi).items():
            confidence.setdefault(query, {})[doc] = value
        calibration = (args.calibrate, confidence)
    rows = [row for run in args.runs for row in _ppi_rows(human, judge, run, measures, calibration)]
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


def _ppi_rows(
    human: Any, judge: Any, run_path: str, measures: list[Any], calibration: tuple[str, Any] | None
) -> list[dict[str, Any]]:
    """One JSON row per measure of `metrics.stats.ppi.ppi_run` (as the Score page's PPI tab); with
    ``calibration`` (its name, the judge's confidences) each row also holds ``calibrated``, the result with
    calibrated grades, and ``narrower``, 1 − its width / the width without calibration."""
    import warnings

    from metrics import read_run
    from metrics.errors import UndefinedMetricWarning
    from metrics.stats.ppi import ppi_run

    run = read_run(run_path)
    name = run.name or Path(run_path).name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        results = ppi_run(human, judge, run, measures, name=name)
        calibrated = (
            {}
            if calibration is None
            else ppi_run(
                human,
                judge,
                run,
                measures,
                name=name,
                calibrate=calibration[0],
                judge_confidence=calibration[1],
            )
        )
    rows = []
    for measure, result in results.items():
        row = {"measure": measure, **_fields(result)}
        if calibration is not None:
            other = _fields(calibrated[measure])
            row["calibrated"] = {"calibration": calibration[0], **other}
            shrink = None if not row["width"] or other["width"] is None else 1 - other["width"] / row["width"]
            row["narrower"] = shrink
        rows.append(row)
    return rows


def _fields(result: Any) -> dict[str, Any]:
    """A `PPIResult` as JSON-ready values: NaN as None, enums as their names."""
    import math

    clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in result.to_dict().items()}
    return {k: str(v) if k in ("method", "human_interval", "variance") else v for k, v in clean.items()}


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
    if rows and "calibrated" in rows[0]:
        header += ["calibrated PPI", "calibrated 95% CI", "narrower"]
        for line, r in zip(body, rows, strict=True):
            c = r["calibrated"]
            line += [
                f"{c['estimate']:.4f}",
                interval(c["ci_low"], c["ci_high"]),
                "-" if r["narrower"] is None else f"{r['narrower']:+.1%}",
            ]
    return grid(header, body)
