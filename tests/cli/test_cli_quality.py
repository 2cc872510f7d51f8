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
