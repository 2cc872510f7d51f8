"""``qrelforge import docs|queries|run|qrels|chunks``, ``qrelforge import list|undo``, ``qrelforge pool`` and
``qrelforge assign``: fill a project with the files to judge (or undo an import), pool the runs into
query–document pairs, and give annotators their share.

These commands need the ``app`` extra; they call `annotate_app.services.imports`, ``pooling`` and
``projects`` as the local administrator.
"""

from __future__ import annotations

import argparse
import sys

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
from annotate_app.services.import_kinds import IMPORT_KINDS, ImportKind, KindInfo, by_command
from metrics.errors import QrelForgeError

__all__ = ["COMMANDS"]


def _import_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "import",
        help="import documents, queries, runs, prior qrels or a chunk map",
        description="Import a file into a project: one transaction; a bad file imports nothing "
        "and every bad line is reported. Importing the same file again changes nothing.",
    )
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    for kind, info in IMPORT_KINDS.items():
        if kind == ImportKind.LABELS:
            _labels_parser(kinds, info)
            continue
        child = kinds.add_parser(info.command, help=info.help)
        child.add_argument("file")
        add_project_option(child)
        if info.named:
            child.add_argument("--name", help="name to store it under (default: the run tag / the file name)")
        if kind == ImportKind.RUN:
            child.add_argument(
                "--model", help="the model that made the run (calibration flags its judges' family)"
            )
        if info.chunks:
            child.add_argument(
                "--chunks",
                action="store_true",
                help="document IDs are chunk IDs: map them through the imported chunk map",
            )
        child.set_defaults(handler=_cmd_import)
    _ir_datasets_parser(kinds)
    listing = kinds.add_parser("list", help="list the project's imports (id, kind, file, counts, who, when)")
    add_project_option(listing)
    listing.set_defaults(handler=_cmd_import_list)
    undo = kinds.add_parser(
        "undo",
        help="undo an import: remove what it added, in one transaction",
        description="Remove what import IMPORT_ID added (documents and versions, queries, run entries, "
        "prior qrels, chunk mappings, and the pairs only it brought in), in one transaction. Refused while "
        "labelled pairs depend on it, unless --exclude-dependent. Undoing twice changes nothing.",
    )
    undo.add_argument("import_id", metavar="IMPORT_ID", type=int, help="the id `qrelforge import list` shows")
    add_project_option(undo)
    undo.add_argument(
        "--exclude-dependent",
        action="store_true",
        help="exclude the labelled pairs that depend on the import (and keep what they need) instead",
    )
    undo.set_defaults(handler=_cmd_import_undo)


@command
def _cmd_import_list(args: argparse.Namespace) -> int:
    from annotate_app.services import imports
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    rows = [
        (
            i.import_id,
            i.kind,
            i.name,
            i.summary,
            i.by,
            i.at.strftime("%Y-%m-%d %H:%M:%S"),
            i.undone_at.strftime("undone %Y-%m-%d %H:%M:%S") if i.undone_at else "",
        )
        for i in imports.list_imports(db, SYSTEM, project_of(db, args))
    ]
    emit(grid(["id", "kind", "file", "counts", "by", "at (UTC)", "state"], rows))
    return 0


@command
def _cmd_import_undo(args: argparse.Namespace) -> int:
    from annotate_app.services import imports
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    report = imports.undo_import(
        db, SYSTEM, project_of(db, args), args.import_id, exclude_dependent=args.exclude_dependent
    )
    print(report)
    return 0


@command
def _cmd_import(args: argparse.Namespace) -> int:
    from annotate_app.services import imports
    from annotate_app.services.auth import SYSTEM
    from annotate_app.services.errors import InvalidInput

    db = open_db(args)
    info = by_command(args.kind)
    options: dict = {}
    if info.named and args.name:
        options["name"] = args.name
    if info.chunks and args.chunks:
        options["chunks"] = True
    try:
        report = getattr(imports, info.function)(db, SYSTEM, project_of(db, args), args.file, **options)
    except InvalidInput as exc:
        if len(exc.problems) > 1:  # the last line (from cli.main) names the first problem
            sys.stderr.write("".join(f"  {problem}\n" for problem in exc.problems))
        raise
    if getattr(args, "model", None):
        from annotate_app.services import judges

        judges.set_run_model(db, SYSTEM, project_of(db, args), report.name, args.model)
    print(report)
    return 0


_OPTION_NAMES = {"annotator": "--annotator", "grade_map": "--grade-map"}  # how messages name the options


def _labels_parser(kinds: Subcommands, info: KindInfo) -> None:
    from metrics.formats import LabelFormat

    child = kinds.add_parser(
        info.command,
        help=info.help,
        description="Import human labels made elsewhere. Each pair must be in the pool; a new annotator "
        "becomes an account that cannot log in until an admin enables it. Importing the same file again "
        "adds nothing.",
    )
    child.add_argument("file")
    add_project_option(child)
    child.add_argument(
        "--format",
        required=True,
        choices=[f.value for f in LabelFormat],
        dest="label_format",
        help="; ".join(f"{f}: {f.help}" for f in LabelFormat),
    )
    child.add_argument(
        "--annotator", help="who made the labels whose file does not say (required for quepid)"
    )
    child.add_argument(
        "--grade-map",
        action="append",
        default=[],
        metavar="LABEL=GRADE",
        help="map a tool's label to a grade, e.g. --grade-map Relevant=1 (repeatable)",
    )
    child.add_argument(
        "--annotator-map",
        action="append",
        default=[],
        metavar="NAME=USER",
        help="import NAME's labels as USER's, e.g. --annotator-map label-studio-3=alice (repeatable)",
    )
    child.add_argument(
        "--dry-run",
        action="store_true",
        help="print the preview the Data page shows (labels per annotator, accounts to create); "
        "import nothing",
    )
    child.set_defaults(handler=_cmd_import_labels)


def _annotator_map(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, user = item.partition("=")
        if not sep or not name or not user:
            raise QrelForgeError(f"--annotator-map must be NAME=USER; got {item!r}")
        out[name] = user
    return out


def _grade_map(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        label, sep, grade = item.rpartition("=")
        try:
            out[label] = int(grade)
        except ValueError:
            sep = ""
        if not sep or not label:
            raise QrelForgeError(f"--grade-map must be LABEL=GRADE with an integer GRADE; got {item!r}")
    return out


@command
def _cmd_import_labels(args: argparse.Namespace) -> int:
    from annotate_app.services import imports
    from annotate_app.services.auth import SYSTEM
    from annotate_app.services.errors import InvalidInput

    grade_map, annotators = _grade_map(args.grade_map), _annotator_map(args.annotator_map)
    db = open_db(args)
    project = project_of(db, args)
    options = {
        "fmt": args.label_format,
        "annotator": args.annotator,
        "grade_map": grade_map or None,
        "annotators": annotators or None,
        "option_names": _OPTION_NAMES,
    }
    try:
        if args.dry_run:
            _print_preview(imports.preview_labels(db, SYSTEM, project, args.file, **options), project)
            return 0
        report = imports.import_labels(db, SYSTEM, project, args.file, **options)
    except InvalidInput as exc:
        if len(exc.problems) > 1:
            sys.stderr.write("".join(f"  {problem}\n" for problem in exc.problems))
        raise
    print(report)
    return 0


def _print_preview(preview, project: str) -> None:
    """What the Data page shows before its Import button (`LabelImportPreview`), as text."""
    print(preview.headline)
    rows = preview.rows()
    if rows:
        emit(grid(list(rows[0]), [tuple(row.values()) for row in rows]))
    if preview.accounts_note:
        print(preview.accounts_note)
    n = preview.n_labels
    print(f"Dry run: nothing imported (without --dry-run: import {n} label{'s' * (n != 1)} into {project}).")


def _ir_datasets_parser(kinds: Subcommands) -> None:
    child = kinds.add_parser(
        "ir-datasets",
        help="documents, queries and qrels of an ir_datasets dataset, from its local cache",
        description="Read a dataset through the ir_datasets package (the 'ir-datasets' extra) from its "
        "local cache (IR_DATASETS_HOME): documents, queries, and its qrels as prior judgments. Nothing is "
        "downloaded.",
    )
    child.add_argument("dataset_id", metavar="DATASET_ID")
    add_project_option(child)
    child.set_defaults(handler=_cmd_import_ir_datasets)


@command
def _cmd_import_ir_datasets(args: argparse.Namespace) -> int:
    from annotate_app.services.auth import SYSTEM
    from annotate_app.services.imports.irdatasets import import_ir_dataset

    db = open_db(args)
    for report in import_ir_dataset(db, SYSTEM, project_of(db, args), args.dataset_id):
        print(report)
    return 0


# ------------------------------------------------------------------------------------------------ pool
def _pool_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "pool",
        help="depth-k pooling of runs into the pairs to judge",
        description="Add the top DEPTH documents of each run (default: all runs) to the pool; "
        "pairs already pooled are kept, new runs add only their new pairs.",
    )
    add_project_option(p)
    p.add_argument("-k", "--depth", type=int, required=True, help="pool depth (top k of each run)")
    p.add_argument("--run", action="append", dest="runs", metavar="NAME", help="run to pool (repeatable)")
    p.add_argument("--budget", type=int, help="at most this many pairs per query")
    p.add_argument("--skip-prior", action="store_true", help="leave out pairs judged in imported prior qrels")
    p.set_defaults(handler=_cmd_pool)


@command
def _cmd_pool(args: argparse.Namespace) -> int:
    from annotate_app.services import pooling
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    report = pooling.pool(
        db,
        SYSTEM,
        project_of(db, args),
        depth=args.depth,
        runs=args.runs,
        budget=args.budget,
        skip_prior=args.skip_prior,
    )
    print(report)
    return 0


# ---------------------------------------------------------------------------------------------- assign
def _assign_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "assign",
        help="make users annotators of a project (or remove them)",
        description="Annotators get pairs on demand, least-covered first, N distinct annotators "
        "per pair. --quota caps how many pairs each takes.",
    )
    add_project_option(p)
    p.add_argument("users", nargs="*", metavar="USER")
    p.add_argument("--quota", type=int, help="at most this many pairs per annotator")
    p.add_argument("--remove", action="store_true", help="remove the users instead (their labels stay)")
    p.set_defaults(handler=_cmd_assign)


@command
def _cmd_assign(args: argparse.Namespace) -> int:
    from annotate_app.services import projects
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    project = project_of(db, args)
    if args.remove:
        if not args.users:
            raise QrelForgeError("--remove needs at least one USER")
        for user in args.users:
            members = projects.unassign(db, SYSTEM, project, user)
    elif args.users:
        members = projects.assign(db, SYSTEM, project, args.users, quota=args.quota)
    else:
        members = projects.list_members(db, SYSTEM, project)
    emit(grid(["annotator", "role", "quota"], [(m.username, m.role, m.quota or "-") for m in members]))
    return 0


COMMANDS: dict[str, AddParser] = {
    "import": _import_parser,
    "pool": _pool_parser,
    "assign": _assign_parser,
}
