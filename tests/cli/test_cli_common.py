"""`annotate_app.cli._common`'s argparse int type: `int_at_least(minimum)` and `positive_int`, on their own
and through the flags that use them (a bad value is a usage error, exit status 2, naming the flag)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from annotate_app.cli import main
from annotate_app.cli._common import int_at_least, positive_int

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
QRELS, RUN_A, RUN_B = (str(SAMPLE / n) for n in ("qrels.trec", "run_a.trec", "run_b.trec"))


@pytest.mark.parametrize(
    ("parse", "text", "value"),
    [
        (int_at_least(0), "0", 0),
        (int_at_least(0), "7", 7),
        (int_at_least(0), " 12 ", 12),
        (int_at_least(-3), "-3", -3),
        (int_at_least(1), "1", 1),
        (int_at_least(5), "1_000", 1000),
        (positive_int, "1", 1),
        (positive_int, "+20", 20),
    ],
)
def test_int_at_least_takes_an_int_at_or_above_the_minimum(parse, text, value):
    assert parse(text) == value


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (int_at_least(0), "-1", "must be an int >= 0; got '-1'"),
        (int_at_least(0), "-2", "must be an int >= 0; got '-2'"),
        (int_at_least(0), "x", "must be an int >= 0; got 'x'"),
        (int_at_least(0), "1.5", "must be an int >= 0; got '1.5'"),
        (int_at_least(0), "", "must be an int >= 0; got ''"),
        (int_at_least(-3), "-4", "must be an int >= -3; got '-4'"),
        (int_at_least(5), "4", "must be an int >= 5; got '4'"),
        (positive_int, "0", "must be an int >= 1; got '0'"),
        (positive_int, "-1", "must be an int >= 1; got '-1'"),
        (positive_int, "ten", "must be an int >= 1; got 'ten'"),
        (positive_int, "1e3", "must be an int >= 1; got '1e3'"),
    ],
)
def test_int_at_least_refuses_naming_the_minimum_and_the_value(parse, text, message):
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse(text)
    assert str(info.value) == message


COMPARE = ["compare", QRELS, RUN_A, RUN_B]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*COMPARE, "--seed", "-2"], "argument --seed: must be an int >= 0; got '-2'"),
        ([*COMPARE, "--seed", "x"], "argument --seed: must be an int >= 0; got 'x'"),
        ([*COMPARE, "--permutations", "0"], "argument --permutations: must be an int >= 1; got '0'"),
        ([*COMPARE, "--bootstrap", "-5"], "argument --bootstrap: must be an int >= 1; got '-5'"),
        (
            ["judge", "add", "j", "--backend", "lexical", "--samples", "0"],
            "argument --samples: must be an int >= 1; got '0'",
        ),
        (["judge", "run", "j", "--concurrency", "x"], "argument --concurrency: must be an int >= 1; got 'x'"),
        (["judge", "probe", "j", "--sample", "-1"], "argument --sample: must be an int >= 1; got '-1'"),
    ],
)
def test_a_bad_count_or_seed_is_a_usage_error_naming_the_flag(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.endswith(f": error: {message}\n"), err


@pytest.mark.parametrize(("argv", "seed"), [([], 0), (["--seed", "0"], 0), (["--seed", "42"], 42)])
def test_the_seed_is_parsed_as_before(argv, seed, monkeypatch):
    from annotate_app.cli import _reports

    seen: list[int] = []

    def compare_reports(qrels, runs, measures, options, **kwargs):
        seen.append(options.seed)
        raise SystemExit(0)

    monkeypatch.setattr(_reports, "compare_reports", compare_reports)
    with pytest.raises(SystemExit):
        main([*COMPARE, *argv])
    assert seen == [seed]
