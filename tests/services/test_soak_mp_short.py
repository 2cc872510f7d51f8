"""The multi-process soak (benchmarks/soak_mp.py) at a small scale, on SQLite and PostgreSQL: 3 OS processes
(spawned, each its own connection pool) of 2 annotators take, label, skip and edit ~200 pairs x 2 while a
reviewer process adjudicates and releases each wave. Checked from the database afterwards: no acknowledged
label version lost, none stored that was not acknowledged, no pair over-assigned, no duplicate (assignment,
version), every cached current label the newest, every release reproducible. No timing bounds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def soak_mp():
    sys.path.insert(0, str(BENCHMARKS))  # spawned workers import soak_mp by name through the same path
    import soak_mp

    return soak_mp


def test_short_multiprocess_soak(soak_mp, db_url, fast_hashing):
    report = soak_mp.run_soak_mp(db_url, processes=3, per_process=2, pairs=200, n=2, waves=2, timeout=400)
    print("\n" + soak_mp.render([report]))
    assert report.errors == []
    assert report.checks == {
        "lost": 0,
        "phantom": 0,
        "over_assigned": 0,
        "duplicates": 0,
        "stale_cache": 0,
        "unreproducible_releases": 0,
    }
    assert report.releases == 2
    assert report.labels >= 2 * 200 * 0.9  # nearly every pair labelled twice (skips leave a few to others)
