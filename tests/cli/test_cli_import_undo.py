"""``qrelforge import list`` and ``qrelforge import undo`` (issue 12) on SQLite and PostgreSQL: the listing,
an undo, a refusal naming the labelled pairs (exit 2), ``--exclude-dependent``, and undoing twice (exit 0)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"


def _labelled_project(cli, db_url) -> tuple[str, str]:
    """Project p with the sample corpus, run_a pooled at depth 3, and one pair labelled by alice."""
    from annotate_app.services import labels, projects, queue, users
    from annotate_app.services.auth import SYSTEM, authenticate
    from annotate_app.store.db import Database

    cli("init", "--project", "p")
    for kind, name in (("docs", "docs.jsonl"), ("queries", "queries.jsonl"), ("run", "run_a.trec")):
        assert cli("import", kind, SAMPLE / name, "-p", "p")[0] == 0
    assert cli("pool", "-p", "p", "-k", "3")[0] == 0
    db = Database(db_url)
    try:
        users.create_user(db, SYSTEM, "alice", "alice-password")
        projects.assign(db, SYSTEM, "p", ["alice"])
        alice = authenticate(db, "alice", "alice-password")
        view = queue.next_pair(db, alice, "p")
        labels.save_label(db, alice, "p", view.pair_id, grade=2, reason="partly answers it")
    finally:
        db.dispose()
    return view.query_id, view.doc_id


def test_import_list_and_undo(cli, db_url):
    qid, did = _labelled_project(cli, db_url)
    code, out, _ = cli("import", "list", "-p", "p")
    assert code == 0
    rows = [re.split(r"\s{2,}", line) for line in out.splitlines()]
    assert rows[0] == ["id", "kind", "file", "counts", "by", "at (UTC)", "state"]
    assert [r[:5] for r in rows[1:]] == [
        ["3", "run", "scheme_a", "9 added, 0 changed, 0 unchanged", "system"],
        ["2", "queries", "queries.jsonl", "3 added, 0 changed, 0 unchanged", "system"],
        ["1", "documents", "docs.jsonl", "6 added, 0 changed, 0 unchanged", "system"],
    ]
    assert cli("import", "undo", "-p", "p", "3") == (
        2,
        "",
        f"qrelforge: error: import 3 cannot be undone: 1 labelled pair depends on it ({qid} {did}); "
        "use --exclude-dependent to exclude that pair instead\n",
    )
    assert cli("import", "undo", "-p", "p", "3", "--exclude-dependent") == (
        0,
        "import 3 (run scheme_a) undone: 9 run entries removed, 8 unjudged pairs removed, "
        "1 judged pair excluded\n",
        "",
    )
    assert cli("import", "undo", "-p", "p", "3") == (0, "import 3 (run scheme_a) was already undone\n", "")
    code, out, _ = cli("import", "list", "-p", "p")
    assert re.split(r"\s{2,}", out.splitlines()[1])[-1].startswith("undone 20")


@pytest.mark.parametrize(
    ("argv", "code", "err"),
    [
        (("import", "undo", "-p", "p", "7"), 2, "qrelforge: error: import 7 does not exist in project 'p'\n"),
        (
            ("import", "undo", "-p", "p", "1"),
            2,
            "qrelforge: error: import 1 cannot be undone: run 'scheme_a' refers to its documents; undo that "
            "import first\n",
        ),
        (("import", "undo", "-p", "nope", "1"), 2, "qrelforge: error: project 'nope' does not exist\n"),
    ],
)
def test_import_undo_refusals(cli, argv, code, err):
    cli("init", "--project", "p")
    for kind, name in (("docs", "docs.jsonl"), ("queries", "queries.jsonl"), ("run", "run_a.trec")):
        cli("import", kind, SAMPLE / name, "-p", "p")
    assert cli(*argv) == (code, "", err)
