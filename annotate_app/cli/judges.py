"""``qrelforge judge``: machine judges of a project (`annotate_app.services.judges`).

Subcommands ``add``, ``run``, ``failures``, ``import``, ``calibrate``, ``compare`` and ``probe``; each acts as
`annotate_app.services.auth.SYSTEM`. ``judge run`` exits 1 when the server stops the run early. Machine
labels never enter ``qrelforge agreement``. Flags and output: docs/modules.md, docs/judges.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from annotate_app.cli._common import (
    AddParser,
    Subcommands,
    add_project_option,
    command,
    emit,
    grid,
    open_db,
    positive_int,
    project_of,
)
from annotate_app.judges import BUILDERS, BUILTIN_PROMPTS, Combine, FailureKind
from metrics.errors import QrelForgeError
from metrics.stats.probe import ProbeKind

PROBE_KINDS = tuple(k.value for k in ProbeKind)

__all__ = ["COMMANDS"]


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number; got {text!r}") from None


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"must be a JSON object; got {text[:80]!r} ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object; got {text[:80]!r}")
    return value


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _seconds(text: str) -> float:
    value = _number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0; got {text!r}")
    return value


def add_judge_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "judge",
        help="machine judges: add, run, import, calibrate, probe",
        description="Machine judges pre-label pairs; their labels are kept apart from the human ones and "
        "never enter the agreement gate.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    add = actions.add_parser("add", help="add a judge to the project")
    add_project_option(add)
    add.add_argument("name", metavar="NAME")
    add.add_argument("--backend", choices=[b.value for b in BUILDERS], required=True)
    add.add_argument(
        "--base-url", default="", metavar="URL", help="OpenAI-compatible API, e.g. http://host/v1"
    )
    add.add_argument("--model", default="", metavar="M")
    add.add_argument(
        "--samples", type=positive_int, default=1, metavar="N", help="replies per pair (majority)"
    )
    add.add_argument("--temperature", type=_number, default=0.0, metavar="T")
    add.add_argument(
        "--prompt",
        metavar="NAME|FILE",
        help=f"a built-in prompt ({', '.join(BUILTIN_PROMPTS)}: intent and trust before the grade) or a "
        "template file ({{query}}, {{document}}, ...)",
    )
    add.add_argument("--max-tokens", type=positive_int, default=256, metavar="N", help="reply token limit")
    add.add_argument("--timeout", type=_seconds, default=60.0, metavar="S", help="seconds per request")
    add.add_argument("--seed", type=int, default=None, metavar="N", help="sampling seed sent to the server")
    add.add_argument(
        "--extra-body",
        type=_json_object,
        default=None,
        metavar="JSON",
        help='merged into every request, e.g. \'{"chat_template_kwargs": {"enable_thinking": false}}\'',
    )
    add.add_argument("--members", type=_names, default=None, metavar="A,B,C", help="an ensemble's judges")
    add.add_argument(
        "--combine", choices=[c.value for c in Combine], default=None, help="an ensemble's rule (majority)"
    )
    add.set_defaults(handler=_cmd_add)

    run = actions.add_parser("run", help="judge the project's pairs")
    add_project_option(run)
    run.add_argument("name", metavar="NAME")
    run.add_argument("--pairs", default="unlabelled", metavar="all|unlabelled|sample:N")
    run.add_argument("--concurrency", type=positive_int, default=4, metavar="N")
    run.add_argument("--dry-run", action="store_true", help="print what the first pair would send")
    run.set_defaults(handler=_cmd_run)

    fails = actions.add_parser("failures", help="the pairs a judge failed on, with the server's message")
    add_project_option(fails)
    fails.add_argument("name", metavar="NAME")
    fails.add_argument("--kind", choices=[k.value for k in FailureKind], metavar="K", help="only this kind")
    fails.set_defaults(handler=_cmd_failures)

    imp = actions.add_parser("import", help="import machine labels made elsewhere (JSONL)")
    add_project_option(imp)
    imp.add_argument("name", metavar="NAME")
    imp.add_argument("file", metavar="FILE")
    imp.set_defaults(handler=_cmd_import)

    cal = actions.add_parser("calibrate", help="each judge against the human labels")
    add_project_option(cal)
    cal.add_argument("--format", choices=("table", "json"), default="table")
    cal.set_defaults(handler=_cmd_calibrate)

    cmp = actions.add_parser("compare", help="judges compared on the same random human sample")
    add_project_option(cmp)
    cmp.add_argument("names", nargs="+", metavar="NAME")
    cmp.add_argument("--format", choices=("table", "json"), default="table")
    cmp.set_defaults(handler=_cmd_compare)

    probe = actions.add_parser("probe", help="probe a judge: stuffing, injection or length")
    add_project_option(probe)
    probe.add_argument("name", metavar="NAME")
    probe.add_argument("--kind", choices=PROBE_KINDS, default=PROBE_KINDS[0])
    probe.add_argument("--sample", type=positive_int, default=20, metavar="N")
    probe.add_argument("--seed", type=int, default=0, metavar="N", help="draws the pairs and the changes")
    probe.add_argument("--pairs", action="store_true", help="list each probed pair's grades")
    probe.set_defaults(handler=_cmd_probe)


COMMANDS: dict[str, AddParser] = {"judge": add_judge_parser}


def _context(args: argparse.Namespace) -> tuple[Any, str, Any]:
    from annotate_app.services import judges

    db = open_db(args)
    return db, project_of(db, args), judges


@command
def _cmd_add(args: argparse.Namespace) -> int:
    from annotate_app.services.auth import SYSTEM

    prompt = None
    if args.prompt in BUILTIN_PROMPTS:
        prompt = BUILTIN_PROMPTS[args.prompt]
    elif args.prompt:
        try:
            prompt = Path(args.prompt).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            names = ", ".join(BUILTIN_PROMPTS)
            raise QrelForgeError(
                f"--prompt {args.prompt!r} is no built-in prompt ({names}) and cannot be read: {exc}"
            ) from None
    db, project, judges = _context(args)
    info = judges.add_judge(
        db,
        SYSTEM,
        project,
        args.name,
        backend=args.backend,
        base_url=args.base_url,
        model=args.model,
        samples=args.samples,
        temperature=args.temperature,
        prompt=prompt,
        members=args.members,
        combine=args.combine,
        **_request_options(args),
    )
    version = "" if info.prompt_version is None else f", prompt v{info.prompt_version}"
    print(f"judge {info.name} ({info.backend}{', ' + info.model if info.model else ''}{version})")
    if info.params:
        shown = {k: v for k, v in info.params.items() if v not in (None, {})}
        print("  request: " + ", ".join(f"{k}={json.dumps(v)}" for k, v in shown.items()))
    return 0


def _request_options(args: argparse.Namespace) -> dict[str, Any]:
    """The request parameters given on the command line (the backend's defaults for a lexical judge)."""
    if args.backend != "openai":
        given = [
            f
            for f, d in (("max_tokens", 256), ("timeout", 60.0), ("seed", None), ("extra_body", None))
            if getattr(args, f) != d
        ]
        if given:
            raise QrelForgeError(f"--{given[0].replace('_', '-')} is for --backend openai judges only")
        return {}
    return {
        "max_tokens": args.max_tokens,
        "timeout_s": args.timeout,
        "seed": args.seed,
        "extra_body": args.extra_body,
    }


@command
def _cmd_run(args: argparse.Namespace) -> int:
    from annotate_app.services.auth import SYSTEM

    db, project, judges = _context(args)
    report = judges.run_judge(
        db, SYSTEM, project, args.name, pairs=args.pairs, concurrency=args.concurrency, dry_run=args.dry_run
    )
    if report.dry_run:
        sys.stdout.write(report.prompt + ("\n" if report.prompt and not report.prompt.endswith("\n") else ""))
    print(report.message)
    return 1 if report.stopped else 0


@command
def _cmd_failures(args: argparse.Namespace) -> int:
    from annotate_app.services.auth import SYSTEM

    db, project, judges = _context(args)
    rows = judges.judge_failures(db, SYSTEM, project, args.name, kind=args.kind)
    if not rows:
        emit(f"judge {args.name}: no failed pair{' of kind ' + args.kind if args.kind else ''}\n")
        return 0
    table = [[r.query_id, r.doc_id, r.kind.value, r.message[:120], r.excerpt[:60]] for r in rows]
    emit(grid(["query", "doc", "kind", "message", "raw reply"], table))
    return 0


@command
def _cmd_import(args: argparse.Namespace) -> int:
    from annotate_app.services.auth import SYSTEM

    path = Path(args.file)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise QrelForgeError(f"{args.file}: cannot be read: {exc.strerror or exc}") from None
    db, project, judges = _context(args)
    report = judges.import_labels(db, SYSTEM, project, args.name, data, filename=path.name)
    print(f"judge {report.judge}: {report.pairs} labels read, {report.sent} new, {report.cached} known")
    return 0


@command
def _cmd_calibrate(args: argparse.Namespace) -> int:
    from annotate_app.services.auth import SYSTEM

    db, project, judges = _context(args)
    figures = judges.calibrate(db, SYSTEM, project)
    if args.format == "json":
        emit(json.dumps({"judges": [f.to_dict() for f in figures]}, indent=2, allow_nan=False) + "\n")
        return 0
    header = ["judge", "pairs", "kappa", "weighted", "alpha", "leniency", "tau", "tau@5"]
    header += ["random", "kappa@random", "fills", "span_f1"]
    rows = [
        [
            f.name,
            f.n_pairs,
            *(_shown(v) for v in (f.kappa, f.weighted_kappa, f.alpha_ordinal, f.leniency, f.tau, f.tau_top5)),
            f.n_random_pairs,
            _shown(f.random_kappa),
            "yes" if f.passed else "no",
            _shown(f.span_f1),
        ]
        for f in figures
    ]
    if not rows:
        emit("no judges yet (qrelforge judge add)\n")
        return 0
    notes = [
        f"judge {f.name}: evidence span F1 {_shown(f.span_f1)} on {f.n_span_pairs} (pair, human) items; "
        f"{f.n_span_without_evidence} where neither marked a passage left out\n"
        for f in figures
        if f.n_span_pairs
    ]
    notes += [f"{f.gate_message}\n" for f in figures if not f.passed]
    notes += [
        f"judge {f.name}: runs of its model family: {', '.join(f.circular_runs)}; tau without them "
        f"{_shown(f.tau_without_circular)} (top 5: {_shown(f.tau_top5_without_circular)})\n"
        for f in figures
        if f.circular_runs
    ]
    emit(grid(header, rows) + "".join(notes))
    return 0


@command
def _cmd_compare(args: argparse.Namespace) -> int:
    from annotate_app.services.auth import SYSTEM

    db, project, judges = _context(args)
    report = judges.compare_judges(db, SYSTEM, project, args.names)
    result = report.comparison
    if args.format == "json":
        emit(json.dumps(_comparison_json(report), indent=2) + "\n")
        return 0
    figures = {f.judge: f for f in result.judges} if result else {}
    header = ["judge", "kappa", "95% CI", "weighted", "95% CI", "leniency", "95% CI", "tau", "failed"]
    rows = []
    for c in report.costs:
        f = figures.get(c.judge)
        marks = "" if result is None or result.best != c.judge else " *"
        cells = (
            ["-"] * 6
            if f is None
            else [
                _shown(f.kappa) + marks,
                _interval(f.kappa_ci, ".3f"),
                _shown(f.weighted_kappa),
                _interval(f.weighted_kappa_ci, ".3f"),
                _shown(f.leniency),
                _interval(f.leniency_ci, "+.3f"),
            ]
        )
        failed = "-" if c.failure_rate is None else f"{c.failure_rate:.1%}"
        rows.append([c.judge, *cells, _shown(c.tau), failed, c.tokens, f"{c.seconds:.1f}"])
    n = 0 if result is None else result.n_pairs
    lines = [f"{n} pairs every judge graded, of {report.n_sample} randomly sampled human pairs\n"]
    lines += [
        f"  {d.first} - {d.second}: kappa {d.difference:+.3f} (95% CI {_interval(d.ci, '+.3f')}), "
        f"p = {d.p_value:.3f}{'' if d.significant else ', not significant'}\n"
        for d in (result.differences if result else ())
    ]
    emit(grid([*header, "tokens", "seconds"], rows) + "".join(lines) + report.message + "\n")
    return 0


def _comparison_json(report: Any) -> dict[str, Any]:
    from dataclasses import asdict

    def clean(value: Any) -> Any:
        if isinstance(value, float) and value != value:
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value

    return clean(asdict(report))


def _shown(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


@command
def _cmd_probe(args: argparse.Namespace) -> int:
    from annotate_app.services.auth import SYSTEM

    db, project, judges = _context(args)
    r = judges.probe(db, SYSTEM, project, args.name, sample=args.sample, seed=args.seed, kind=args.kind)
    if r.n_pairs == 0:
        print(
            f"judge {r.judge}, {r.kind} probe: no pair to probe (none every human judged non-relevant, or "
            f"nothing to change them with); {r.failed} failed"
        )
        return 0
    print(
        f"judge {r.judge}, {r.kind} probe: {r.n_pairs} pairs probed, grade raised on {r.n_raised} "
        f"({r.share_raised:.0%}, 95% CI {_interval(r.share_raised_ci, '.0%')}), lowered on {r.n_lowered}, "
        f"unchanged on {r.n_unchanged}; mean rise {r.mean_rise:+.3f} (95% CI "
        f"{_interval(r.mean_rise_ci, '+.3f')})" + (f"; {r.failed} failed" if r.failed else "")
    )
    print(f"  prompt hash {r.prompt_hash or '-'}")
    if args.pairs:
        rows = [[p.query_id, p.doc_id, p.before, p.after, f"{p.after - p.before:+d}"] for p in r.pairs]
        emit(grid(["query", "doc", "before", "after", "rise"], rows))
    return 0


def _interval(bounds: tuple[float, float] | None, spec: str) -> str:
    if bounds is None or any(b != b for b in bounds):  # NaN: a single pair
        return "undefined"
    return f"{format(bounds[0], spec)} to {format(bounds[1], spec)}"
