"""``qrelforge gold``: exact output, and one line with exit status 2 on bad input."""

from __future__ import annotations

import json

import pytest

GOLD_RUNS = [  # (argv after "gold", exit code, stdout, stderr's start)
    (
        ["add", "q1", "D2", "--grade", "3", "--explanation", "answers it fully"],
        0,
        "gold: (q1, D2) grade 3\n",
        "",
    ),
    (["from-adjudications"], 0, "gold: 3 adjudicated pairs\n", ""),
    (["rate", "0.05"], 0, "gold rate: 0.05\n", ""),
    (["rate", "1.5"], 2, "", "qrelforge: error: gold rate must be a number in [0, 1)"),
    (
        ["add", "q1", "D2", "--grade", "9", "--explanation", "answers it fully"],
        2,
        "",
        "qrelforge: error: grade",
    ),
    (["remove", "q1", "D9"], 2, "", "qrelforge: error: pair ('q1', 'D9') is not a gold pair"),
]


@pytest.mark.parametrize(("argv", "code", "out", "err"), GOLD_RUNS, ids=[" ".join(r[0]) for r in GOLD_RUNS])
def test_gold_commands(cli, argv, code, out, err):
    assert cli("demo-data", "--with-labels")[0] == 0
    got_code, got_out, got_err = cli("gold", *argv, "-p", "demo-review")
    assert (got_code, got_out) == (code, out)
    assert got_err.startswith(err) and got_err.count("\n") <= 1


def test_gold_list_and_remove(cli):
    assert cli("demo-data", "--with-labels")[0] == 0
    cli("gold", "add", "-p", "demo-review", "q1", "D2", "--grade", "3", "--explanation", "answers it fully")
    code, out, _ = cli("gold", "list", "-p", "demo-review", "--format", "json")
    assert code == 0
    assert [(r["query_id"], r["doc_id"], r["grade"], r["source"]) for r in json.loads(out)] == [
        ("q1", "D2", 3, "hand")
    ]
    assert cli("gold", "remove", "-p", "demo-review", "q1", "D2")[:2] == (0, "no longer gold: (q1, D2)\n")
    assert json.loads(cli("gold", "list", "-p", "demo-review", "--format", "json")[1]) == []


def _pause_alice(db_url: str) -> None:
    """alice edits her label on a gold pair to a wrong grade while the pause rule reads one gold label."""
    from annotate_app.services import labels
    from annotate_app.services.auth import authenticate
    from annotate_app.store.db import Database

    db = Database(db_url)
    try:
        alice = authenticate(db, "alice", "alice-demo")
        (mine,) = [
            lab
            for lab in labels.my_labels(db, alice, "demo-review", limit=100)
            if lab.doc_id == "D2" and lab.query_id == "q1"
        ]
        wrong = 0 if mine.grade != 0 else 1
        labels.save_label(db, alice, "demo-review", mine.pair_id, grade=wrong, reason="changed my mind")
    finally:
        db.dispose()


def test_annotators_standing_and_resume(cli, db_url):
    """The standing section (table and JSON) shows a paused annotator with the figures; ``annotators resume``
    resumes them once, and the existing options still parse."""
    assert cli("demo-data", "--with-labels")[0] == 0
    cli("gold", "add", "-p", "demo-review", "q1", "D2", "--grade", "3", "--explanation", "answers it fully")
    assert cli("project", "set", "-p", "demo-review", "pause_pairs=1", "pause_accuracy=0.9")[0] == 0
    _pause_alice(db_url)
    code, out, err = cli("annotators", "-p", "demo-review", "--window", "5")
    assert (code, err) == (0, "")
    section = out.split("\nstanding under the gold rules (members)\n")[1].splitlines()
    assert section[0].split() == ["annotator", "status", "window", "gold_pairs", "correct", "accuracy", "bar"]
    assert section[1].split() == ["alice", "paused", "1", "1", "0", "0.000", "0.900"]
    assert section[2].split() == ["bob", "qualified", "1", "1", "1", "1.000", "0.900"]
    code, out, _ = cli("annotators", "-p", "demo-review", "--format", "json")
    records = {r["annotator"]: r for r in json.loads(out)}
    assert records["alice"]["status"] == {
        "status": "paused",
        "window": 1,
        "gold_pairs": 1,
        "correct": 0,
        "accuracy": 0.0,
        "bar": 0.9,
    }
    assert cli("annotators", "resume", "-p", "demo-review", "alice")[:2] == (
        0,
        "resumed alice: qualified; gold window restarted\n",
    )
    code, out, err = cli("annotators", "resume", "-p", "demo-review", "alice")
    assert (code, out) == (2, "")
    assert err == "qrelforge: error: alice is not paused in project 'demo-review'\n"
    code, _, err = cli("annotators", "resume", "-p", "demo-review", "nobody")
    assert code == 2 and err.startswith("qrelforge: error: 'nobody' is not a member") and err.count("\n") == 1
