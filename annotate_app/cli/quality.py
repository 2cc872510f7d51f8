"""``qrelforge gold`` and ``qrelforge annotators``: a project's gold pairs, marked by a reviewer (by hand,
from adjudications, from prior qrels), the share of each annotator's stream drawn from them, and the
annotators' quality.

``annotators`` prints one row per annotator: accuracy against gold, time, leniency, drift and competence
(`annotate_app.services.annotators`), and each member's standing under the gold rules (qualifying,
qualified, paused, with its figures: `annotate_app.services.qualification`); ``annotators resume USER``
resumes a paused annotator. These commands need the ``app`` extra; they call the services as the
local administrator.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from annotate_app.cli._common import (
    AddParser,
    Subcommands,
    add_project_option,
    command,
    emit,
    grid,
    open_db,
    project_of,
)

__all__ = ["COMMANDS"]


def _gold_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "gold",
        help="gold pairs: add, list, remove, from-adjudications, from-prior, rate",
        description="Gold pairs carry a reviewer's expected grade and explanation; the queue mixes them into "
        "every annotator's stream at the project's gold rate, and their labels are scored, never counted.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="mark a pair gold (or change its expected grade)")
    add_project_option(add)
    add.add_argument("query_id", metavar="QUERY")
    add.add_argument("doc_id", metavar="DOC")
    add.add_argument("--grade", type=int, required=True)
    add.add_argument("--explanation", required=True)
    add.set_defaults(handler=_cmd_add)
    listing = actions.add_parser("list", help="the project's gold pairs")
    add_project_option(listing)
    listing.add_argument("--format", choices=["table", "json"], default="table")
    listing.set_defaults(handler=_cmd_list)
    remove = actions.add_parser("remove", help="unmark a gold pair (its labels stay)")
    add_project_option(remove)
    remove.add_argument("query_id", metavar="QUERY")
    remove.add_argument("doc_id", metavar="DOC")
    remove.set_defaults(handler=_cmd_remove)
    adjudicated = actions.add_parser("from-adjudications", help="mark every adjudicated pair gold")
    add_project_option(adjudicated)
    adjudicated.set_defaults(handler=_cmd_from_adjudications)
    prior = actions.add_parser("from-prior", help="mark the pairs that imported prior qrels judged gold")
    add_project_option(prior)
    prior.add_argument("source", metavar="PRIOR")
    prior.add_argument("--explanation", required=True)
    prior.set_defaults(handler=_cmd_from_prior)
    rate = actions.add_parser("rate", help="the share of each annotator's claims drawn from gold pairs")
    add_project_option(rate)
    rate.add_argument("rate", type=float, metavar="SHARE")
    rate.set_defaults(handler=_cmd_rate)


def _context(args: argparse.Namespace) -> tuple[Any, str, Any]:
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    return db, project_of(db, args), SYSTEM


@command
def _cmd_add(args: argparse.Namespace) -> int:
    from annotate_app.services import gold

    db, project, system = _context(args)
    info = gold.add_gold(
        db, system, project, args.query_id, args.doc_id, grade=args.grade, explanation=args.explanation
    )
    emit(f"gold: ({info.query_id}, {info.doc_id}) grade {info.grade}\n")
    return 0


@command
def _cmd_list(args: argparse.Namespace) -> int:
    import dataclasses

    from annotate_app.services import gold

    db, project, system = _context(args)
    rows = gold.list_gold(db, system, project)
    if args.format == "json":
        emit(json.dumps([dataclasses.asdict(r) for r in rows], ensure_ascii=False, indent=2) + "\n")
        return 0
    header = ("query", "doc", "grade", "source", "explanation")
    emit(grid(header, [(r.query_id, r.doc_id, r.grade, r.source, r.explanation) for r in rows]))
    return 0


@command
def _cmd_remove(args: argparse.Namespace) -> int:
    from annotate_app.services import gold

    db, project, system = _context(args)
    gold.remove_gold(db, system, project, args.query_id, args.doc_id)
    emit(f"no longer gold: ({args.query_id}, {args.doc_id})\n")
    return 0


@command
def _cmd_from_adjudications(args: argparse.Namespace) -> int:
    from annotate_app.services import gold

    db, project, system = _context(args)
    emit(f"gold: {gold.gold_from_adjudications(db, system, project)} adjudicated pairs\n")
    return 0


@command
def _cmd_from_prior(args: argparse.Namespace) -> int:
    from annotate_app.services import gold

    db, project, system = _context(args)
    count = gold.gold_from_prior(db, system, project, args.source, explanation=args.explanation)
    emit(f"gold: {count} pairs from prior qrels {args.source}\n")
    return 0


@command
def _cmd_rate(args: argparse.Namespace) -> int:
    from annotate_app.services import gold

    db, project, system = _context(args)
    emit(f"gold rate: {gold.set_gold_rate(db, system, project, args.rate)}\n")
    return 0


def _annotators_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "annotators",
        help="per annotator: gold accuracy, kappa vs gold, time, speeders, leniency, drift, competence, "
        "unsure, skip and edit rates",
    )
    add_project_option(p)
    actions = p.add_subparsers(dest="annotators_action", metavar="ACTION", required=False)
    resume = actions.add_parser("resume", help="resume an annotator the gold rules paused (reviewer)")
    add_project_option(resume)
    resume.add_argument("username", metavar="USER")
    resume.set_defaults(handler=_cmd_resume)
    p.add_argument("--floor", type=float, default=5.0, metavar="SECONDS", help="speeders: faster than this")
    p.add_argument("--window", type=int, default=50, metavar="N", help="labels per drift window")
    p.add_argument("--sort", default="annotator", metavar="COLUMN", help="sort by this column (ascending)")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.set_defaults(handler=_cmd_annotators)


def _number(value: Any) -> Any:
    """A JSON value: NaN becomes null, numpy scalars plain numbers."""
    if isinstance(value, str):
        return value
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and math.isnan(value) else value


@command
def _cmd_annotators(args: argparse.Namespace) -> int:
    from annotate_app.services import annotators, qualification
    from annotate_app.services.errors import InvalidInput

    if args.sort not in annotators.COLUMNS:
        raise InvalidInput(f"--sort must be one of {', '.join(annotators.COLUMNS)}; got {args.sort!r}")
    db, project, system = _context(args)
    table = annotators.annotator_table(db, system, project, floor_seconds=args.floor, window=args.window)
    rows = table.rows.sort_values(args.sort, kind="stable", na_position="last")
    records = [{k: _number(v) for k, v in r.items()} for r in rows.to_dict("records")]
    standing = {s.annotator: s.row() for s in qualification.annotator_statuses(db, system, project)}
    if args.format == "json":
        emit(json.dumps(_with_status(records, standing), ensure_ascii=False, indent=2) + "\n")
        return 0
    shown = [[_cell(r[c]) for c in annotators.COLUMNS] for r in records]
    emit(grid(annotators.COLUMNS, shown))
    status_rows = [[_cell(r[c]) for c in qualification.STATUS_COLUMNS] for r in standing.values()]
    emit("\nstanding under the gold rules (members)\n" + grid(qualification.STATUS_COLUMNS, status_rows))
    return 0


def _with_status(records: list[dict[str, Any]], standing: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with its ``status`` (`qualification.STATUS_COLUMNS` but the name; null: not a member), then
    a row for each member who has no label yet."""
    from annotate_app.services import annotators

    def status(name: str) -> dict[str, Any] | None:
        row = standing.get(name)
        return None if row is None else {k: _number(v) for k, v in row.items() if k != "annotator"}

    named = {r["annotator"] for r in records}
    newcomers = [
        {c: 0 if c in ("n_labels", "n_gold") else None for c in annotators.COLUMNS} | {"annotator": name}
        for name in standing
        if name not in named
    ]
    return [r | {"status": status(r["annotator"])} for r in records + newcomers]


@command
def _cmd_resume(args: argparse.Namespace) -> int:
    from annotate_app.services import qualification

    db, project, system = _context(args)
    row = qualification.resume(db, system, project, args.username).row()
    emit(f"resumed {row['annotator']}: {row['status']}; gold window restarted\n")
    return 0


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


COMMANDS: dict[str, AddParser] = {"gold": _gold_parser, "annotators": _annotators_parser}
