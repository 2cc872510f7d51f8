"""The store commands of ``qrelforge``: init, user, project, import, pool, assign, status, agreement, release,
export, demo-data — on SQLite and PostgreSQL; bad input prints one line and exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metrics import evaluate, read_qrels

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"


def test_demo_data_is_idempotent_and_prints_the_passwords(cli):
    code, out, _ = cli("demo-data")
    assert code == 0 and "12 new pairs" in out
    assert [line.split()[:3] for line in out.splitlines()[2:]] == [
        ["alice", "annotator", "alice-demo"],
        ["bob", "annotator", "bob-demo"],
        ["rita", "reviewer", "rita-demo"],
        ["admin", "admin", "admin-demo"],
    ]
    code, out, _ = cli("demo-data")
    assert code == 0 and "0 new pairs, 12 already in the pool" in out and "exists (password unchanged)" in out
    code, out, _ = cli("status")
    assert code == 0 and out.startswith("project demo: 12 pairs (0 excluded), 0 complete")
    code, out, _ = cli("demo-data", "--reset")
    assert code == 0 and out.startswith("reset the database; project demo: pooled")


def test_reset_refuses_foreign_projects(cli):
    cli("init", "--project", "mine")
    code, _, err = cli("demo-data", "--reset")
    assert (code, err) == (
        2,
        "qrelforge: error: refusing to reset: the database holds other projects (mine)\n",
    )


def test_users(cli):
    code, out, _ = cli("init", "--admin", "root", "--password-stdin", stdin="root-password\n")
    assert code == 0 and "created admin root\n" in out
    code, out, _ = cli("user", "add", "carol", "--role", "reviewer")
    assert code == 0 and out.startswith("added reviewer carol with password ")
    assert (
        cli("user", "add", "dave", "--password-stdin", stdin="dave-password\n")[1] == "added annotator dave\n"
    )
    assert cli("user", "set-role", "dave", "reviewer")[1] == "dave is now reviewer\n"
    assert (
        cli("user", "reset-password", "dave", "--password-stdin", stdin="other-password\n")[1]
        == "new password for dave set\n"
    )
    code, out, _ = cli("user", "list")
    assert [line.split()[:3] for line in out.splitlines()] == [
        ["user", "role", "active"],
        ["carol", "reviewer", "yes"],
        ["dave", "reviewer", "yes"],
        ["root", "admin", "yes"],
    ]


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (["user", "add", "x"], None, "username must be 2-64 characters"),
        (
            ["user", "add", "carol", "--password-stdin"],
            "short\n",
            "password must be 8 to 1024 characters; got 5",
        ),
        (["user", "add", "carol", "--password-stdin"], "", "--password-stdin: standard input is empty"),
        (["user", "set-role", "nobody", "admin"], None, "user 'nobody' does not exist"),
        (["pool", "-k", "3"], None, "--project is required: no project yet"),
        (["import", "docs", "/nonexistent.jsonl", "-p", "p"], None, "/nonexistent.jsonl: no such file"),
        (
            ["project", "set", "-p", "p", "threshold"],
            None,
            "settings must look like KEY=VALUE; got 'threshold'",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, argv, stdin, message):
    cli("init")
    code, _, err = cli(*argv, stdin=stdin)
    assert code == 2 and err.startswith(f"qrelforge: error: {message}") and err.count("\n") == 1


def test_uninitialised_database(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("QRELFORGE_DATABASE_URL", f"sqlite:///{tmp_path}/empty.db")
    code, _, err = cli("user", "list")
    assert code == 2 and err.endswith("is not initialised; run `qrelforge init`\n")


def test_bad_file_lists_every_problem(cli):
    cli("init", "--project", "p")
    bad = SAMPLE.parent / "pyproject.toml"
    code, _, err = cli("import", "queries", bad)
    lines = err.splitlines()
    assert code == 2 and lines[-1].startswith("qrelforge: error: ") and "more problems" in lines[-1]
    assert all(line.startswith(f"  {bad}:") for line in lines[:-1])


def test_whole_workflow_from_the_command_line(cli, tmp_path):
    assert cli("init", "--project", "kb", "--title", "KB")[0] == 0
    assert "6 added" in cli("import", "docs", SAMPLE / "docs.jsonl")[1]
    assert cli("import", "queries", SAMPLE / "queries.jsonl")[0] == 0
    assert cli("import", "run", SAMPLE / "run_a.trec")[1].startswith("run scheme_a: 9 added")
    assert cli("import", "run", SAMPLE / "run_b.trec", "--name", "b")[1].startswith("run b: 9 added")
    assert cli("import", "qrels", SAMPLE / "qrels.trec", "--name", "reference")[1].startswith(
        "qrels reference: 12"
    )
    assert "12 new pairs" in cli("pool", "-k", "3", "--run", "scheme_a", "--run", "b")[1]
    assert (
        cli("project", "set", "threshold=0.5", "min_reason_length=3")[1]
        == "updated kb: threshold=0.5, min_reason_length=3\n"
    )
    for name in ("ann", "ben"):
        cli("user", "add", name, "--password-stdin", stdin=f"{name}-password\n")
    assert cli("assign", "ann", "ben", "--quota", "20")[1].splitlines()[1:] == [
        "ann        annotator  20",
        "ben        annotator  20",
    ]
    assert cli("project", "set", "evidence=optional")[0] == 0
    _judge_all(cli, evidence={("q1", "D1"): [(0, 4)]})
    code, out, _ = cli("agreement")
    assert code == 0 and out.startswith("cohen = 1.0000 (almost perfect) passes threshold 0.5 [binary]")
    assert "release: ready" in out
    code, out, _ = cli("agreement", "--format", "json")
    assert json.loads(out)["n_pairs"] == 12
    code, out, _ = cli("release", "--note", "v1", "--yes")
    assert code == 0 and out.startswith("release 1 of kb: 12 qrels (12 unanimous, 0 majority, 0 adjudicated")
    assert cli("release", "--list")[1].splitlines()[1].split()[0] == "1"
    target = tmp_path / "kb.qrels"
    assert cli("export", "--format", "trec", "-o", target) == (0, "", "")
    scores = evaluate(read_qrels(target), SAMPLE / "run_b.trec", ["P@3"]).mean
    assert scores["P@3"] == pytest.approx(5 / 9)
    code, out, _ = cli("export", "--format", "jsonl")
    assert (
        code == 0 and len(out.splitlines()) == 12 and json.loads(out.splitlines()[0])["kind"] == "unanimous"
    )
    assert cli("export", "--format", "labels-csv")[1].count("\n") == 25
    code, out, _ = cli("export", "--format", "passages")
    passage = {"query_id": "q1", "doc_id": "D1", "doc_version": 1, "start": 0, "end": 4, "grade": 2}
    assert code == 0 and [
        {k: v for k, v in json.loads(x).items() if k != "text"} for x in out.splitlines()
    ] == [passage]
    assert json.loads(cli("status", "--format", "json")[1])["complete"] == 12


def _judge_all(cli, evidence: dict | None = None) -> None:
    """ann and ben label every pair with the sample grade; ``evidence``: (query_id, doc_id) → their spans."""
    from annotate_app.services import labels, queue
    from annotate_app.services.auth import authenticate
    from annotate_app.store import open_database

    truth = {
        tuple(line.split()[0::2][:2]): int(line.split()[3])
        for line in (SAMPLE / "qrels.trec").read_text().splitlines()
    }
    db = open_database()
    for name in ("ann", "ben"):
        me = authenticate(db, name, f"{name}-password")
        while (view := queue.next_pair(db, me, "kb")) is not None:
            key = (view.query_id, view.doc_id)
            spans = (evidence or {}).get(key)
            labels.save_label(db, me, "kb", view.pair_id, grade=truth[key], reason="yes", evidence=spans)
    db.dispose()


def test_release_blocked_exits_2(cli):
    cli("demo-data")
    code, _, err = cli("release")
    assert code == 2 and err.startswith(
        "qrelforge: error: release blocked: no pairs to release; 12 pairs lack"
    )
