"""``qrelforge release --aggregate``: exact output of a Dawid–Skene release on the simulated project of
tests/helpers/careless_project.py, the list's aggregation column, and exit status 2 on a bad choice."""

from __future__ import annotations

import pytest
from careless_project import build

from annotate_app.services.aggregations import Aggregation

WHY = ("--justification", "a simulated project with a careless annotator")


def test_release_aggregate_dawid_skene(cli):
    from annotate_app.store import open_database

    cli("status")  # migrates the database
    db = open_database()
    build(db)
    db.dispose()
    code, out, _ = cli("release", "-p", "agg", "--aggregate", "dawid-skene", "--yes", *WHY)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("release 1 of agg: 40 qrels (")
    assert lines[1:] == [
        "sources: 40 from humans",
        "aggregation: dawid-skene (max_iter=100, smoothing=0.0, tol=1e-06), 4 grades differ from the vote",
    ]
    assert cli("release", "-p", "agg", "--aggregate", "dawid-skene", "--yes", *WHY)[1] == (
        "unchanged: identical to v1\n"
    )
    code, out, _ = cli("release", "-p", "agg", "--yes", *WHY)  # majority: other grades, a new release
    assert code == 0 and out.startswith("release 2 of agg") and "aggregation:" not in out
    listed = cli("release", "-p", "agg", "--list")[1].splitlines()
    assert listed[0].split()[-1] == "aggregation"
    assert [line.split()[-1] for line in listed[-2:]] == ["dawid-skene", "majority"]


def test_release_aggregate_bad_choice(capsys):
    from annotate_app.cli import main

    with pytest.raises(SystemExit) as exited:  # argparse's choices, as the other commands' choices
        main(["release", "-p", "agg", "--aggregate", "vote"])
    out, err = capsys.readouterr()
    choices = ", ".join(repr(a.value) for a in Aggregation)
    assert (exited.value.code, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"qrelforge release: error: argument --aggregate: invalid choice: 'vote' (choose from {choices})"
    )
