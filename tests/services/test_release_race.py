"""One release per content (issue 12, items 2 and 12): identical qrels create nothing ("identical to vN"), two
reviewers creating the same release at once get one (the database's UNIQUE(project_id, content_key) decides,
on SQLite and PostgreSQL), and ``qrelforge release`` confirms a new release (a terminal, or --yes)."""

from __future__ import annotations

import dataclasses
import io
import threading

import pytest

from annotate_app.cli import main
from annotate_app.services import labels, projects, queue, releases, users
from annotate_app.services.auth import SYSTEM, authenticate

JUSTIFICATION = "one annotator per pair in this test: kappa is undefined"
ROUNDS = 20


def _single_annotator(db) -> dict[str, int]:
    """The demo with one annotator per pair, alice labelling every pair grade 0; returns pair ids by doc."""
    projects.update_settings(db, SYSTEM, "demo", annotators_per_pair=1)
    alice = authenticate(db, "alice", "alice-demo")
    pairs = {}
    while (view := queue.next_pair(db, alice, "demo")) is not None:
        labels.save_label(db, alice, "demo", view.pair_id, grade=0, reason="not relevant")
        pairs[f"{view.query_id} {view.doc_id}"] = view.pair_id
    return pairs


def _regrade(db, pairs: dict[str, int], round_: int) -> None:
    """New qrels for every round: the grades of the first pairs spell ``round_ + 1`` in base 4."""
    alice = authenticate(db, "alice", "alice-demo")
    number = round_ + 1
    for pair_id in sorted(pairs.values()):
        number, grade = divmod(number, 4)
        current = labels.pair_history(db, alice, "demo", pair_id)[0].grade
        if current != grade:
            labels.save_label(db, alice, "demo", pair_id, grade=grade, reason=f"round {round_}")


def _race(db, reviewers) -> list:
    barrier = threading.Barrier(len(reviewers))
    results: list = [None] * len(reviewers)

    def create(i: int, actor) -> None:
        barrier.wait()
        try:
            results[i] = releases.create_release(db, actor, "demo", justification=JUSTIFICATION)
        except Exception as exc:  # noqa: BLE001 - any failure is the test's finding
            results[i] = exc

    threads = [threading.Thread(target=create, args=(i, a)) for i, a in enumerate(reviewers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


def test_two_reviewers_creating_the_same_release_at_once_get_one(demo):
    pairs = _single_annotator(demo)
    users.create_user(demo, SYSTEM, "rex", "rex-password-1", role="reviewer")
    reviewers = [authenticate(demo, "rita", "rita-demo"), authenticate(demo, "rex", "rex-password-1")]
    for round_ in range(ROUNDS):
        _regrade(demo, pairs, round_)
        results = _race(demo, reviewers)
        assert not [r for r in results if isinstance(r, Exception)], results
        assert {(r.version, r.content_hash) for r in results} == {(round_ + 1, results[0].content_hash)}
        assert sorted(r.unchanged for r in results) == [False, True]
        assert [r.version for r in releases.list_releases(demo, SYSTEM, "demo")] == list(range(1, round_ + 2))


def test_identical_qrels_create_nothing(demo):
    _single_annotator(demo)
    first = releases.create_release(demo, SYSTEM, "demo", justification=JUSTIFICATION)
    again = releases.create_release(demo, SYSTEM, "demo")  # no justification needed: nothing is created
    assert (first.unchanged, again.unchanged, again.version) == (False, True, 1)
    assert again == dataclasses.replace(first, unchanged=True)
    plan = releases.preview_release(demo, SYSTEM, "demo")
    assert (plan.identical_to, plan.version, plan.n_qrels, plan.blocked) == (1, 2, 12, ())
    assert len(releases.list_releases(demo, SYSTEM, "demo")) == 1


# --------------------------------------------------------------------------------------------- the CLI
class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def cli(demo, db_url, monkeypatch, capsys):
    monkeypatch.setenv("QRELFORGE_DATABASE_URL", db_url)
    monkeypatch.delenv("QRELFORGE_PROJECT", raising=False)
    _single_annotator(demo)

    def run(*argv: str, terminal: str | None = None) -> tuple[int, str, str]:
        monkeypatch.setattr("sys.stdin", io.StringIO("") if terminal is None else _Terminal(terminal))
        code = main(["release", "-p", "demo", *argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


QUESTION = "Create release v1 of project demo with 12 qrels? [y/N] "
NO_TTY = (
    "qrelforge: error: standard input is not a terminal: pass --yes to create release v1 of project demo "
    "(12 qrels) without confirmation\n"
)


@pytest.mark.parametrize(
    ("argv", "terminal", "code", "out", "err", "versions"),
    [
        pytest.param(["--justification", JUSTIFICATION], None, 2, "", NO_TTY, [], id="no-tty-needs-yes"),
        pytest.param(["--justification", JUSTIFICATION], "n\n", 1, QUESTION + "no release created\n", "", [],
                     id="tty-declined"),
        pytest.param(["--justification", JUSTIFICATION], "", 1, QUESTION + "no release created\n", "", [],
                     id="tty-eof"),
        pytest.param(["--justification", JUSTIFICATION], "y\n", 0, QUESTION + "release 1 of demo: 12 qrels",
                     "", [1], id="tty-yes"),
        pytest.param(["--justification", JUSTIFICATION, "--yes"], None, 0, "release 1 of demo: 12 qrels", "",
                     [1], id="flag-yes"),
        pytest.param([], None, 2, "", "qrelforge: error: cohen is undefined", [], id="no-justification"),
    ],
)  # fmt: skip
def test_release_command_confirms_a_new_release(cli, demo, argv, terminal, code, out, err, versions):
    got = cli(*argv, terminal=terminal)
    assert (got[0], got[1][: len(out)], got[2][: len(err)]) == (code, out, err)
    assert [r.version for r in releases.list_releases(demo, SYSTEM, "demo")] == versions


@pytest.mark.parametrize("argv", [[], ["--yes"], ["--justification", JUSTIFICATION]])
def test_release_command_with_unchanged_qrels_says_so(cli, demo, argv):
    releases.create_release(demo, SYSTEM, "demo", justification=JUSTIFICATION)
    assert cli(*argv) == (0, "unchanged: identical to v1\n", "")
    assert [r.version for r in releases.list_releases(demo, SYSTEM, "demo")] == [1]
