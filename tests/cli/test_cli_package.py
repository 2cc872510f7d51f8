"""The ``qrelforge`` package itself: its commands and their order, what it imports (never the store; the
metrics-only commands without the ``app`` extra), which errors become one line with exit status 2, and the
file handling that moved to `metrics.history` and `metrics.stats.ablog`."""

from __future__ import annotations

import ast
import csv
import doctest
import subprocess
import sys
from pathlib import Path

import pytest

import annotate_app.cli as cli
import metrics.history
import metrics.stats.ablog
from annotate_app.cli import main
from metrics.errors import FormatError, QrelForgeError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_corpus"
QRELS, RUN_A, RUN_B = (str(SAMPLE / f) for f in ("qrels.trec", "run_a.trec", "run_b.trec"))
COMMANDS = [
    "score",
    "baseline",
    "fuse",
    "compare",
    "check",
    "verify",
    "ab",
    "passages",
    "init",
    "user",
    "project",
    "demo-data",
    "serve",
    "import",
    "pool",
    "assign",
    "status",
    "agreement",
    "release",
    "export",
    "gold",
    "annotators",
    "judge",
    "backup",
    "restore",
]

# Run qrelforge as on an install without the `app` extra: importing any of its packages fails.
NO_APP_EXTRA = """
import sys

class NoAppExtra:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"sqlalchemy", "alembic", "psycopg", "streamlit", "argon2", "altair"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoAppExtra())
for name in [m for m in sys.modules if m.partition(".")[0] in ("sqlalchemy", "streamlit")]:
    del sys.modules[name]
from annotate_app.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def without_app_extra(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", NO_APP_EXTRA, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------------------ commands
def test_help_lists_the_commands_in_their_order():
    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    assert [a.dest for a in sub._choices_actions] == COMMANDS
    assert list(sub.choices) == COMMANDS


def test_every_group_module_registers_its_commands():
    registered = [name for group in cli.GROUPS for name in group.COMMANDS]
    assert sorted(registered) == sorted(COMMANDS) and len(registered) == len(set(registered))


def test_each_command_is_homed_in_the_module_that_registers_it():
    homes = {name: group.__name__.rpartition(".")[2] for group in cli.GROUPS for name in group.COMMANDS}
    assert homes == cli.HOMES


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_alone_parses_as_with_every_command(command):
    """`build_parser(command)` adds that command only: its help (and so its options) is the same."""
    alone, full = cli.build_parser(command), cli.build_parser()
    assert _sub(alone).choices[command].format_help() == _sub(full).choices[command].format_help()
    assert list(_sub(alone).choices) == [command]


def _sub(parser):
    return next(a for a in parser._actions if a.dest == "command")


# What `qrelforge score` on plain TREC files must not import: the other commands' modules, and the libraries
# of other paths (each costs tens of milliseconds to import, some ~100 MB of memory).
NOT_FOR_SCORE = (
    "annotate_app.cli.admin",
    "annotate_app.cli.backup",
    "annotate_app.cli.data",
    "annotate_app.cli.judges",
    "annotate_app.cli.retrieval",
    "annotate_app.cli.review",
    "annotate_app.cli._reports",
    "annotate_app.cli._verify",
    "annotate_app.services",
    "annotate_app.store",
    "pyarrow",
    "pandas",
    "scipy",
    "sqlalchemy",
    "streamlit",
    "metrics.formats._tables",
    "metrics.formats._labels",
    "metrics.slices",
    "numpy.ma",
    "hashlib",
    "html",
)


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_score_on_trec_files_imports_only_what_it_needs(fmt):
    code = (
        "import sys; from annotate_app.cli import main; "
        f"main(['score', {QRELS!r}, {RUN_A!r}, '-m', 'P@3', '-m', 'nDCG@10', '--format', {fmt!r}]); "
        f"heavy = {NOT_FOR_SCORE!r}; "
        "print(sorted(m for m in sys.modules if any(m == x or m.startswith(x + '.') for x in heavy)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_no_cli_module_imports_the_store_sqlalchemy_or_streamlit():
    imported = {}
    cli = ROOT / "annotate_app" / "cli"
    for path in sorted(cli.rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        imported[path.relative_to(cli).as_posix()] = sorted(
            n for n in names if n.startswith(("annotate_app.store", "sqlalchemy", "alembic", "streamlit"))
        )
    assert "scoring/score.py" in imported and all(not names for names in imported.values()), imported


# ------------------------------------------------------------------------------------ without the app extra
def test_a_database_command_without_the_app_extra_names_the_extra(tmp_path):
    proc = without_app_extra("init", "--db", f"sqlite:///{tmp_path}/qf.db")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert (
        proc.stderr
        == "qrelforge: error: `qrelforge init` needs the app extra: pip install 'qrelforge[app]'\n"
    )
    assert not (tmp_path / "qf.db").exists()


def test_the_metrics_commands_work_without_the_app_extra(tmp_path, capsys):
    history, fused, bm25 = tmp_path / "history.csv", tmp_path / "fused.trec", tmp_path / "bm25.trec"
    log = tmp_path / "log.csv"
    log.write_text(
        "user_id,group,query,feedback,timestamp\n"
        + "".join(f"u{i},{'AB'[i % 2]},q{i % 3},{i % 3 % 2},{i}\n" for i in range(40))
    )
    calls = [
        ["score", QRELS, RUN_A, RUN_B, "-m", "P@3", "-m", "AP"],
        ["compare", QRELS, RUN_A, RUN_B, "-m", "P@3", "--permutations", "100", "--bootstrap", "100"],
        ["check", QRELS, RUN_A, "--min", "P@3=0.3", "--history", str(history)],
        ["check", "--history", str(history), "--trend"],
        ["ab", str(log)],
        ["fuse", RUN_A, RUN_B, "-o", str(fused)],
        [
            "baseline",
            "bm25",
            "--corpus",
            str(SAMPLE / "docs.jsonl"),
            "--queries",
            str(SAMPLE / "queries.jsonl"),
        ]
        + ["-o", str(bm25)],
        ["init", "--help"],
        ["passages", "chunkers", str(SAMPLE / "passages.jsonl"), str(SAMPLE / "chunks_paragraphs.jsonl")],
        [
            "score",
            "--passages",
            str(SAMPLE / "passages.jsonl"),
            "--chunks",
            str(SAMPLE / "chunks_paragraphs.jsonl"),
            str(SAMPLE / "run_chunks.trec"),
            "-m",
            "EvidenceIoU@3",
        ],
    ]
    for argv in calls:
        proc = without_app_extra(*argv)
        assert proc.returncode == 0, (argv, proc.stderr)
        assert "Traceback" not in proc.stderr
        if argv[0] in ("score", "compare"):
            assert proc.stdout == run_cli(capsys, *argv)[1]
    assert fused.stat().st_size > 0 and bm25.stat().st_size > 0


# ------------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", QRELS, RUN_A, RUN_A], f"run file {RUN_A!r} is given twice"),
        (
            ["compare", QRELS, RUN_A, RUN_B, "--max-queries", "-1"],
            "--max-queries must be an int >= 0; got -1",
        ),
        (
            ["fuse", RUN_A, "--tag", "a b", "-o", "-"],
            "--tag must be a non-empty word without spaces; got 'a b'",
        ),
        (["check", QRELS, RUN_A], "check needs at least one threshold"),
        (["check", QRELS, RUN_A, "--min", "P@3=x"], "threshold value must be a finite number; got 'x'"),
        (["score", QRELS, RUN_A, "-m", "P@x"], "cutoff must be an int >= 1; got 'x' in 'P@x'"),
        (
            ["init", "--db", "foo://bar"],
            "database URL must be sqlite:// or postgresql+psycopg://; got 'foo://bar'",
        ),
        (["init", "--db", "not a url"], "database error: Could not parse SQLAlchemy URL"),
        (
            ["user", "list", "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none"],
            "the database is unreachable, try again later",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert (code, out) == (2, "") and err.startswith(f"qrelforge: error: {message}") and err.count("\n") == 1


def test_a_history_with_a_bad_cell_is_one_line_naming_the_file_and_check(tmp_path, capsys):
    bad = tmp_path / "history.csv"
    bad.write_text(
        "timestamp,run,qrels,status,failed,P@3\n2026-01-01,a,q,pass,,0.5\n2026-01-02,a,q,pass,,high\n"
    )
    code, _, err = run_cli(capsys, "check", "--history", bad, "--trend")
    assert (code, err) == (2, f"qrelforge: error: {bad}: check 2: P@3 is not a number: 'high'\n")


def test_guidelines_that_are_not_utf8_are_one_line(tmp_path, capsys, monkeypatch, fast_hashing):
    monkeypatch.setenv("QRELFORGE_DATABASE_URL", f"sqlite:///{tmp_path}/qf.db")
    assert run_cli(capsys, "init", "--project", "p")[0] == 0
    guide = tmp_path / "guide.md"
    guide.write_bytes(b"# Guide\n\xff\n")
    code, _, err = run_cli(capsys, "project", "guidelines", "-p", "p", guide)
    assert (code, err) == (2, f"qrelforge: error: {guide}: not valid UTF-8 (byte 9); save it as UTF-8\n")


def test_a_plain_value_error_is_a_bug_not_bad_input(monkeypatch):
    """Only the project's own errors (and OSError) are bad input; any other ValueError shows its traceback."""

    def broken(args):
        raise ValueError("a bug")

    monkeypatch.setitem(cli.scoring.COMMANDS, "score", _with_handler(cli.scoring.COMMANDS["score"], broken))
    with pytest.raises(ValueError, match="a bug"):
        main(["score", QRELS, RUN_A])


def _with_handler(add, handler):
    def register(sub):
        add(sub)
        sub.choices["score"].set_defaults(handler=handler)

    return register


# ------------------------------------------------------------------------------- metrics.history and ablog
@pytest.mark.parametrize("module", [metrics.history, metrics.stats.ablog])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


def test_history_round_trip_and_wider_header(tmp_path, capsys):
    path = tmp_path / "history.csv"
    assert run_cli(capsys, "check", QRELS, RUN_A, "--min", "P@3=0.3", "--history", path)[0] == 0
    assert (
        run_cli(capsys, "check", QRELS, RUN_B, "--min", "P@3=0.9", "--max", "AP=2", "--history", path)[0] == 1
    )
    header, rows = metrics.history.read_history(str(path))
    assert header == [*metrics.history.HISTORY_FIELDS, "P@3", "AP"]
    assert [(r["run"], r["status"], r["failed"], r["AP"]) for r in rows] == [
        ("scheme_a", "pass", "", ""),
        ("scheme_b", "fail", "P@3", "1.0"),
    ]


@pytest.fixture
def default_csv_field_limit():
    """The csv module's own field limit (131 072 characters) for the test: the limit is process-wide, and
    importers run earlier in the same process raise it (the 200 000-character field is then one field of a
    short record, a different error)."""
    before = csv.field_size_limit(131_072)
    yield
    csv.field_size_limit(before)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"run,status\n", "history.csv:1: not a qrelforge check history"),
        (b"timestamp,run,qrels,status,failed\n\xff\n", "history.csv: not valid UTF-8"),
        (b'timestamp,run,qrels,status,failed\n"' + b"x" * 200_000 + b"\n", "history.csv:2: not a CSV file"),
    ],
)
def test_read_history_errors_name_the_file(tmp_path, content, message, default_csv_field_limit):
    path = tmp_path / "history.csv"
    path.write_bytes(content)
    with pytest.raises(FormatError) as caught:
        metrics.history.read_history(str(path))
    assert str(caught.value).startswith(f"{tmp_path}/{message}")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("log.jsonl", b'{"user_id": "u1"}\n[1]\n', "log.jsonl:2: expected a JSON object, got list: '[1]'"),
        ("log.jsonl", b"{\n", "log.jsonl:1: invalid JSON"),
        (
            "log.csv",
            b"user_id,group\nu1,A\n",
            "log.csv:1: header lacks columns ['query', 'feedback', 'timestamp']",
        ),
        ("log.csv", b"\n\n", "log.csv: no interactions in the log"),
        ("log.tsv", b"ok\n\xff\n", "log.tsv:2: not valid UTF-8 (byte 4 of the file)"),
    ],
)
def test_read_log_errors_name_the_file_and_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(QrelForgeError) as caught:
        metrics.stats.ablog.read_log(str(path))
    assert str(caught.value).startswith(f"{tmp_path}/{message}")


def test_read_log_by_suffix_or_content(tmp_path):
    tsv, unnamed = tmp_path / "log.tsv", tmp_path / "log.txt"
    tsv.write_text("user_id\tgroup\tquery\tfeedback\ttimestamp\n\nu1\tA\tq, 1\t1\t5\n")
    unnamed.write_text('\n{"user_id": "u1", "group": "A", "query": "q1", "feedback": 0, "timestamp": 5}\n')
    assert metrics.stats.ablog.read_log(str(tsv)) == (
        [{"user_id": "u1", "group": "A", "query": "q, 1", "feedback": "1", "timestamp": "5"}],
        [3],
    )
    assert metrics.stats.ablog.read_log(str(unnamed)) == (
        [{"user_id": "u1", "group": "A", "query": "q1", "feedback": 0, "timestamp": 5}],
        [2],
    )
