"""The concurrency soak (benchmarks/soak.py) at a small scale, on SQLite and PostgreSQL: 10 annotator
threads write about 1 000 label versions while a reviewer adjudicates and releases every wave. Nothing is
lost, nothing appears that was not acknowledged, no pair is over-assigned, no (assignment, version) is
duplicated, and every release's hash is reproducible from its stored qrels and from a fresh export."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SOAK = Path(__file__).resolve().parents[2] / "benchmarks" / "soak.py"


@pytest.fixture(scope="module")
def soak():
    spec = importlib.util.spec_from_file_location("qrelforge_soak", SOAK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


def test_short_soak(soak, db_url, fast_hashing):
    from annotate_app.store.db import Database

    db = Database(db_url, pool_size=16)
    try:
        report = soak.run_soak(db, annotators=10, labels_target=1000, n=2, waves=2, timeout=240)
    finally:
        db.dispose()
    print("\n" + soak.render([report]))
    assert report.errors == []
    assert (report.lost, report.phantom, report.over_assigned, report.duplicates, report.stale_cache) == (
        0,
        0,
        0,
        0,
        0,
    )
    assert report.releases == 2 and report.unreproducible_releases == 0
    assert report.labels >= 1000 and report.edits > 0 and report.skips > 0
    assert report.latency["adjudicate"]["n"] > 0
