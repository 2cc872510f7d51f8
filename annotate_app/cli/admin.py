"""``qrelforge init``, ``qrelforge user ...``, ``qrelforge project ...`` and ``qrelforge demo-data``.

Passwords are never taken as arguments (they would show in the process list): ``--password-stdin`` reads the
first line of standard input; without it a random password is generated and printed once. These commands
need the ``app`` extra; the database is created and upgraded through `annotate_app.services.setup`.
"""

from __future__ import annotations

import argparse
import json

from annotate_app.cli._common import (
    AddParser,
    Subcommands,
    add_db_option,
    add_project_option,
    command,
    emit,
    grid,
    open_db,
    project_of,
    read_password,
)
from metrics.errors import QrelForgeError

__all__ = ["COMMANDS"]


# ------------------------------------------------------------------------------------------------ init
def _init_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "init",
        help="create or upgrade the database; optionally a first admin and project",
        description="Create or upgrade the database schema (safe to run again).",
    )
    add_db_option(p)
    p.add_argument("--admin", metavar="USER", help="also create this admin user (if missing)")
    p.add_argument(
        "--password-stdin", action="store_true", help="read the admin's password from standard input"
    )
    p.add_argument("--project", metavar="NAME", help="also create this project (if missing)")
    p.add_argument("--title", default="", help="title of the new project")
    p.set_defaults(handler=_cmd_init)


@command
def _cmd_init(args: argparse.Namespace) -> int:
    from annotate_app.services import projects, setup, users
    from annotate_app.services.auth import SYSTEM

    db = open_db(args, require_schema=False)
    revision = setup.initialise(db)
    print(f"database {setup.safe_url(db.url)} at schema {revision}")
    if args.admin and args.admin.lower() not in {u.username for u in users.list_users(db, SYSTEM)}:
        password, generated = read_password(args)
        users.create_user(db, SYSTEM, args.admin, password, role="admin")
        print(f"created admin {args.admin.lower()}" + (f" with password {password}" if generated else ""))
    if args.project and args.project not in {p.name for p in projects.list_projects(db, SYSTEM)}:
        projects.create_project(db, SYSTEM, args.project, title=args.title)
        print(f"created project {args.project}")
    return 0


# ------------------------------------------------------------------------------------------------ user
def _user_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "user", help="add, list and change users", description="Manage users (as local admin)."
    )
    users = p.add_subparsers(dest="user_command", metavar="ACTION", required=True)
    add = users.add_parser("add", help="add a user")
    add.add_argument("username")
    add.add_argument("--role", default="annotator", choices=["annotator", "reviewer", "admin"])
    add.add_argument("--display-name", default="")
    add.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    add.set_defaults(handler=_cmd_user_add)
    lst = users.add_parser("list", help="list users")
    lst.set_defaults(handler=_cmd_user_list)
    role = users.add_parser("set-role", help="change a user's role")
    role.add_argument("username")
    role.add_argument("role", choices=["annotator", "reviewer", "admin"])
    role.set_defaults(handler=_cmd_user_role)
    reset = users.add_parser("reset-password", help="set a new password (ends the user's sessions)")
    reset.add_argument("username")
    reset.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    reset.set_defaults(handler=_cmd_user_reset)
    for child in (add, lst, role, reset):
        add_db_option(child)


@command
def _cmd_user_add(args: argparse.Namespace) -> int:
    from annotate_app.services import users
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    password, generated = read_password(args)
    info = users.create_user(
        db, SYSTEM, args.username, password, role=args.role, display_name=args.display_name
    )
    print(f"added {info.role} {info.username}" + (f" with password {password}" if generated else ""))
    return 0


@command
def _cmd_user_list(args: argparse.Namespace) -> int:
    from annotate_app.services import users
    from annotate_app.services.auth import SYSTEM

    rows = [
        (
            u.username,
            u.role,
            "yes" if u.active else "no",
            u.display_name,
            u.last_login_at.strftime("%Y-%m-%d %H:%M") if u.last_login_at else "-",
        )
        for u in users.list_users(open_db(args), SYSTEM)
    ]
    emit(grid(["user", "role", "active", "name", "last login (UTC)"], rows))
    return 0


@command
def _cmd_user_role(args: argparse.Namespace) -> int:
    from annotate_app.services import users
    from annotate_app.services.auth import SYSTEM

    info = users.set_role(open_db(args), SYSTEM, args.username, args.role)
    print(f"{info.username} is now {info.role}")
    return 0


@command
def _cmd_user_reset(args: argparse.Namespace) -> int:
    from annotate_app.services import users
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    password, generated = read_password(args)
    info = users.reset_password(db, SYSTEM, args.username, password)
    print(f"new password for {info.username}" + (f": {password}" if generated else " set"))
    return 0


# --------------------------------------------------------------------------------------------- project
def _project_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "project",
        help="list projects and change their settings",
        description="Projects: list, show, add, set KEY=VALUE, guidelines FILE.",
    )
    actions = p.add_subparsers(dest="project_command", metavar="ACTION", required=True)
    lst = actions.add_parser("list", help="list projects")
    lst.set_defaults(handler=_cmd_project_list)
    show = actions.add_parser("show", help="show a project's settings")
    show.set_defaults(handler=_cmd_project_show)
    add = actions.add_parser("add", help="create a project")
    add.add_argument("name")
    add.add_argument("--title", default="")
    add.set_defaults(handler=_cmd_project_add)
    settings = actions.add_parser("set", help="change settings, e.g. threshold=0.6 annotators_per_pair=3")
    settings.add_argument(
        "assignments",
        nargs="+",
        metavar="KEY=VALUE",
        help='grade_scale takes JSON, e.g. \'[[0,"no"],[1,"yes"]]\'',
    )
    settings.set_defaults(handler=_cmd_project_set)
    guide = actions.add_parser("guidelines", help="store a new guidelines version from a Markdown file")
    guide.add_argument("file")
    guide.set_defaults(handler=_cmd_project_guidelines)
    for child in (lst, add):
        add_db_option(child)
    for child in (show, settings, guide):
        add_project_option(child)


@command
def _cmd_project_list(args: argparse.Namespace) -> int:
    from annotate_app.services import projects
    from annotate_app.services.auth import SYSTEM

    rows = [
        (
            p.name,
            p.title,
            p.settings.annotators_per_pair,
            f"{p.settings.statistic} >= {p.settings.threshold}",
            p.guidelines_version or "-",
        )
        for p in projects.list_projects(open_db(args), SYSTEM)
    ]
    emit(grid(["project", "title", "N", "gate", "guidelines"], rows))
    return 0


@command
def _cmd_project_show(args: argparse.Namespace) -> int:
    import dataclasses

    from annotate_app.services import projects
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    info = projects.get_project(db, SYSTEM, project_of(db, args))
    out = {
        "name": info.name,
        "title": info.title,
        "guidelines_version": info.guidelines_version,
        **dataclasses.asdict(info.settings),
    }
    emit(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0


@command
def _cmd_project_add(args: argparse.Namespace) -> int:
    from annotate_app.services import projects
    from annotate_app.services.auth import SYSTEM

    info = projects.create_project(open_db(args), SYSTEM, args.name, title=args.title)
    print(f"created project {info.name}")
    return 0


def _parse_setting(text: str) -> tuple[str, object]:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise QrelForgeError(f"settings must look like KEY=VALUE; got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


@command
def _cmd_project_set(args: argparse.Namespace) -> int:
    from annotate_app.services import projects
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    changes = dict(_parse_setting(a) for a in args.assignments)
    info = projects.update_settings(db, SYSTEM, project_of(db, args), **changes)
    print(f"updated {info.name}: " + ", ".join(f"{k}={getattr(info.settings, k)!r}" for k in changes))
    return 0


@command
def _cmd_project_guidelines(args: argparse.Namespace) -> int:
    from annotate_app.services import projects
    from annotate_app.services.auth import SYSTEM

    db = open_db(args)
    markdown = _read_text(args.file)
    version = projects.set_guidelines(db, SYSTEM, project_of(db, args), markdown)
    print(f"guidelines version {version} stored")
    return 0


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError as exc:
        raise QrelForgeError(f"{path}: not valid UTF-8 (byte {exc.start + 1}); save it as UTF-8") from None


# ------------------------------------------------------------------------------------------------ demo
def _demo_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "demo-data",
        help="load the sample corpus as project 'demo' with demo users",
        description="Load the sample corpus into the configured database: project 'demo', users "
        "alice and bob (annotators), rita (reviewer), admin, both runs pooled at "
        "depth 3; with --with-labels also project 'demo-review', already judged by alice and bob, "
        "with a release and open disagreements for rita. Safe to run again.",
    )
    add_db_option(p)
    p.add_argument(
        "--reset",
        action="store_true",
        help="wipe the database first (refused if it holds projects other than the demo's)",
    )
    p.add_argument(
        "--with-labels",
        action="store_true",
        help="also load project 'demo-review': labels by alice and bob, rita's verdicts, release v1 and "
        "two open disagreements, and 'demo-chunks': long documents and a chunk-level run (make run uses it)",
    )
    p.add_argument(
        "--sample-dir", metavar="DIR", help="sample corpus folder (default: the one shipped with QrelForge)"
    )
    p.set_defaults(handler=_cmd_demo)


@command
def _cmd_demo(args: argparse.Namespace) -> int:
    from annotate_app.services import demo

    info = demo.load_demo(
        open_db(args, require_schema=False),
        reset=args.reset,
        sample_dir=args.sample_dir,
        labelled=args.with_labels,
    )
    print(("reset the database; " if info.reset else "") + f"project {info.project}: {info.pool}")
    if info.review is not None:
        print(info.review)
    if info.chunks is not None:
        print(f"project {demo.CHUNKS_PROJECT}: {info.chunks}")
    created = set(info.created_users)
    rows = [
        (name, role, password, "created" if name in created else "exists (password unchanged)")
        for name, role, password in info.users
    ]
    emit(grid(["user", "role", "demo password", ""], rows))
    return 0


COMMANDS: dict[str, AddParser] = {
    "init": _init_parser,
    "user": _user_parser,
    "project": _project_parser,
    "demo-data": _demo_parser,
}
