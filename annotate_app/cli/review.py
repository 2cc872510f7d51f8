"""``qrelforge status``, ``qrelforge agreement``, ``qrelforge release`` and ``qrelforge export``: follow a
project's progress and agreement, freeze the accepted qrels into a release, and export it.

These commands need the ``app`` extra; they call `annotate_app.services.status`, ``gate``, ``releases`` and
``export`` as the local administrator.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
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
from annotate_app.services.aggregations import Aggregation
from annotate_app.services.release_formats import ReleaseFormat
from metrics.errors import QrelForgeError

__all__ = ["COMMANDS"]


def _fmt(value: float | None) -> str:
    return "undef" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"


# ---------------------------------------------------------------------------------------------- status
def _status_parser(sub: Subcommands) -> None:
    p = sub.add_parser("status", help="pairs, labels, disagreements and annotator progress of a project")
    add_project_option(p)
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.set_defaults(handler=_cmd_status)


@command
def _cmd_status(args: argparse.Namespace) -> int:
    import dataclasses

    from annotate_app.services import status
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    st = status.project_status(db, SYSTEM, project_of(db, args))
    if args.format == "json":
        emit(json.dumps(dataclasses.asdict(st), ensure_ascii=False, indent=2) + "\n")
        return 0
    p = st.progress
    lines = [
        f"project {st.project}: {st.pairs} pairs ({st.excluded} excluded), {st.complete} complete, "
        f"{st.in_progress} in progress, {st.untouched} untouched",
        f"labels {p.done}/{p.total} ({p.fraction:.0%}), {st.stale} stale; disagreements {st.disagreements} "
        f"({st.adjudicated} adjudicated); releases {st.releases}",
        "",
    ]
    rows = [
        (a.username, a.done, a.active, a.skipped, a.stale, a.available, a.quota or "-") for a in st.annotators
    ]
    emit(
        "\n".join(lines)
        + "\n"
        + grid(["annotator", "done", "open", "skipped", "stale", "available", "quota"], rows)
    )
    return 0


# ------------------------------------------------------------------------------------------- agreement
def _agreement_parser(sub: Subcommands) -> None:
    p = sub.add_parser("agreement", help="agreement figures, the kappa matrix, per-query agreement, blockers")
    add_project_option(p)
    p.add_argument(
        "--disagreements", type=int, default=10, metavar="N", help="show the N worst disagreements"
    )
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.set_defaults(handler=_cmd_agreement)


@command
def _cmd_agreement(args: argparse.Namespace) -> int:
    from annotate_app.services import gate
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    project = project_of(db, args)
    summary = gate.agreement(db, SYSTEM, project)
    block = gate.blockers(db, SYSTEM, project)
    worst = (
        gate.disagreements(db, SYSTEM, project, limit=args.disagreements) if args.disagreements > 0 else []
    )
    if args.format == "json":
        out = {
            **summary.to_dict(),
            "blockers": list(block.messages()),
            "pairwise": json.loads(summary.pairwise.to_json()) if not summary.pairwise.empty else {},
            "disagreements": [
                {
                    "query_id": d.query_id,
                    "doc_id": d.doc_id,
                    "grades": {x.annotator: x.grade for x in d.labels},
                }
                for d in worst
            ],
        }
        emit(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
        return 0
    emit(_agreement_text(summary, block, worst))
    return 0


def _agreement_text(summary, block, worst) -> str:
    verdict = "passes" if summary.passes else "FAILS"
    out = [
        f"{summary.statistic} = {_fmt(summary.value)} ({summary.band}) {verdict} threshold "
        f"{summary.threshold} [{summary.mode}{'/' + summary.weights if summary.weights else ''}] over "
        f"{summary.n_pairs} complete pairs, {summary.n_annotators} annotators",
        f"percent agreement {_fmt(summary.percent_agreement)}, Fleiss {_fmt(summary.fleiss_kappa)}, "
        f"Krippendorff alpha {_fmt(summary.krippendorff_alpha)}, mean pairwise kappa "
        f"{_fmt(summary.mean_pairwise_kappa)}",
        f"disagreements {summary.disagreements} ({summary.unadjudicated} not adjudicated)",
    ]
    out += [f"note: {w}" for w in summary.warnings]
    out += _pairwise_lines(summary) + _per_query_lines(summary) + _worst_lines(worst)
    out += ["", "release: " + ("ready" if block.ok else "; ".join(block.messages()))]
    return "\n".join(out) + "\n"


def _pairwise_lines(summary: Any) -> list[str]:
    if summary.pairwise.empty:
        return []
    names = list(summary.pairwise.columns)
    rows = [[a] + [_fmt(summary.pairwise.loc[a, b]) if a != b else "-" for b in names] for a in names]
    return ["", "pairwise kappa:", grid(["", *names], rows).rstrip("\n")]


def _per_query_lines(summary: Any) -> list[str]:
    if summary.per_query.empty:
        return []
    rows = [
        (r.query_id, r.n_items, _fmt(r.agreement), _fmt(r.alpha), r.n_disagreeing)
        for r in summary.per_query.itertuples()
    ]
    return [
        "",
        "per query:",
        grid(["query", "pairs", "agreement", "alpha", "disagreeing"], rows).rstrip("\n"),
    ]


def _worst_lines(worst: Sequence[Any]) -> list[str]:
    if not worst:
        return []
    rows = [
        (d.query_id, d.doc_id, " ".join(f"{x.annotator}={x.grade}" for x in d.labels), _fmt(d.disagreement))
        for d in worst
    ]
    return ["", "worst disagreements:", grid(["query", "doc", "grades", "score"], rows).rstrip("\n")]


# --------------------------------------------------------------------------------------------- release
def _release_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "release",
        help="freeze the accepted qrels into an immutable release (or list them)",
        description="Create a release when the gate allows it. Below the agreement threshold a "
        "written --justification is required and stored with the release. Qrels identical to an existing "
        "release create nothing. A new release is confirmed on the terminal, or with --yes. --aggregate "
        "chooses how labels become grades: " + "; ".join(f"{a.value}: {a.help}" for a in Aggregation) + ".",
    )
    add_project_option(p)
    p.add_argument("--justification", help="why releasing below the agreement threshold is acceptable")
    p.add_argument("--note", default="", help="a note stored with the release")
    p.add_argument("--list", action="store_true", help="list the releases instead")
    p.add_argument(
        "--aggregate",
        choices=[a.value for a in Aggregation],
        default=Aggregation.MAJORITY.value,
        help=f"how labels become grades (default {Aggregation.MAJORITY.value}), recorded in the release",
    )
    p.add_argument(
        "-y", "--yes", action="store_true", help="create the release without asking (needed off a terminal)"
    )
    p.set_defaults(handler=_cmd_release)


@command
def _cmd_release(args: argparse.Namespace) -> int:
    from annotate_app.services import releases
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    project = project_of(db, args)
    if args.list:
        emit(_release_list(releases.list_releases(db, SYSTEM, project)))
        return 0
    plan = releases.preview_release(db, SYSTEM, project, aggregate=args.aggregate)
    if _creatable(plan, args.justification, releases.MIN_JUSTIFICATION):
        if plan.identical_to is not None:
            print(f"unchanged: identical to v{plan.identical_to}")
            return 0
        if not args.yes and not _confirmed(plan):
            print("no release created")
            return 1
    r = releases.create_release(
        db, SYSTEM, project, justification=args.justification, note=args.note, aggregate=args.aggregate
    )
    if r.unchanged:
        print(f"unchanged: identical to v{r.version}")
        return 0
    counts = ", ".join(f"{v} {k}" for k, v in r.counts.items())
    print(
        f"release {r.version} of {r.project}: {r.n_qrels} qrels ({counts}), "
        f"{r.statistic} {_fmt(r.agreement_value)}, content sha256 {r.content_hash}"
    )
    print(_sources_line(r.sources))
    if r.aggregation["name"] != Aggregation.MAJORITY:
        print(_aggregation_line(r.aggregation))
    return 0


def _aggregation_line(record: dict[str, Any]) -> str:
    """A model aggregation as the release records it, e.g. ``aggregation: dawid-skene (max_iter=100, ...),
    3 grades differ from the vote``."""
    parameters = ", ".join(f"{k}={v}" for k, v in sorted(record.get("parameters", {}).items()))
    changed = record.get("changed")
    verb = "grade differs" if changed == 1 else "grades differ"
    tail = "" if changed is None else f", {changed} {verb} from the vote"
    return f"aggregation: {record['name']} ({parameters}){tail}"


def _sources_line(sources: dict[str, int]) -> str:
    """Where a release's qrels came from, e.g. ``sources: 8 from humans, 2 from judge machine`` (the release
    records them: ``human`` and ``judge:NAME``); humans come first, then the judges by name."""
    human = int(sources.get("human", 0))
    judged = sorted((k.removeprefix("judge:"), int(v)) for k, v in sources.items() if k != "human")
    return "sources: " + ", ".join([f"{human} from humans", *(f"{v} from judge {k}" for k, v in judged)])


def _release_list(infos: Sequence[Any]) -> str:
    rows = [
        (
            r.version,
            r.created_at.strftime("%Y-%m-%d %H:%M"),
            r.created_by,
            r.n_qrels,
            f"{r.statistic}={_fmt(r.agreement_value)}",
            r.content_hash[:16],
            "yes" if r.justification else "",
            r.aggregation["name"],
        )
        for r in infos
    ]
    head = [
        "version",
        "created (UTC)",
        "by",
        "qrels",
        "agreement",
        "content hash",
        "justified",
        "aggregation",
    ]
    return grid(head, rows)


def _creatable(plan: Any, justification: str | None, minimum: int) -> bool:
    """Whether `create_release` would succeed: else it is called at once and says why it refuses (nothing to
    confirm)."""
    short = plan.below_threshold and len((justification or "").strip()) < minimum
    return not plan.blocked and (plan.identical_to is not None or not short)


def _confirmed(plan: Any) -> bool:
    """Ask on the terminal; off a terminal (a script, a pipe) refuse: creating a release needs ``--yes``."""
    question = f"Create release v{plan.version} of project {plan.project} with {plan.n_qrels} qrels? [y/N] "
    if not sys.stdin.isatty():
        raise QrelForgeError(
            f"standard input is not a terminal: pass --yes to create release v{plan.version} of project "
            f"{plan.project} ({plan.n_qrels} qrels) without confirmation"
        )
    try:
        answer = input(question)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


# ---------------------------------------------------------------------------------------------- export
_OTHER_EXPORTS = ("labels-csv", "label-studio")  # not a release: every label as CSV, the pairs as tasks


def _export_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "export",
        help=f"export a release ({', '.join(f.label for f in ReleaseFormat)}), all labels (CSV) or the pairs "
        "as Label Studio tasks",
    )
    add_project_option(p)
    p.add_argument("--version", type=int, help="release version (default: the latest)")
    p.add_argument(
        "--format",
        choices=[*(f.value for f in ReleaseFormat), *_OTHER_EXPORTS],
        default=ReleaseFormat.TREC.value,
    )
    p.add_argument(
        "--config",
        action="store_true",
        help="with --format label-studio: the Label Studio labeling config (XML) instead of the tasks",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(handler=_cmd_export)


@command
def _cmd_export(args: argparse.Namespace) -> int:
    from annotate_app.services import export
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    project = project_of(db, args)
    if args.config and args.format != "label-studio":
        raise QrelForgeError("--config goes with --format label-studio")
    if args.format == "labels-csv":
        data = export.export_labels_csv(db, SYSTEM, project)
    elif args.format == "label-studio":
        from annotate_app.services import label_studio

        if args.config:
            data = label_studio.label_studio_config(db, SYSTEM, project).encode("utf-8")
        else:
            data = label_studio.export_label_studio_tasks(db, SYSTEM, project)
    else:
        data = export.export_release(db, SYSTEM, project, args.version, format=args.format)
    emit("", args.output, binary=data)
    return 0


COMMANDS: dict[str, AddParser] = {
    "status": _status_parser,
    "agreement": _agreement_parser,
    "release": _release_parser,
    "export": _export_parser,
}
