"""The Annotators table at team scale on PostgreSQL: 50 annotators, 25,000 pairs, 100,000 labels (4 per pair),
500 gold pairs (every 50th, with the latent grade), the gold rules on (qualification on 10 gold pairs at 80%,
pause below 70% on the last 20) and 5 more members who have not labelled yet.

    .venv/bin/python benchmarks/annotators_speed.py [--repeat 3]

The project is built through the services (documents, queries, a run, pooling, users); the labels are
then bulk-loaded with COPY (`store_scale._bulk`): each annotator keeps the pair's latent grade with a
probability of their own between 0.5 and 0.9, else draws a random grade, and takes a lognormal time around
20 s. It prints the best of ``--repeat`` wall times of `services.annotators.annotator_table` (the read and
every figure), of `services.qualification.annotator_statuses` (the standing section's three reads) and of a
run of the Annotators page (Streamlit's AppTest: the standing section, the table and the first annotator's
charts), and the time of the settings change that turns the pause rule on (every member re-evaluated). The
scratch database ``qrelforge_annot_<pid>`` is dropped at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _pg import scratch_database  # noqa: E402
from store_scale import _bulk  # noqa: E402

from annotate_app.services import annotators, imports, pooling, projects, qualification, users  # noqa: E402
from annotate_app.services.auth import SYSTEM  # noqa: E402
from annotate_app.store.db import Database  # noqa: E402
from annotate_app.store.migrate import upgrade  # noqa: E402

ANNOTATORS, QUERIES, DOCS, PER_PAIR = 50, 50, 500, 4
QUALIFY, PAUSE, NEW_MEMBERS = (10, 0.8), (20, 0.7), 5  # (window, bar) of the gold rules; members yet to label


def _build(db: Database) -> None:
    upgrade(db)
    projects.create_project(db, SYSTEM, "bench", annotators_per_pair=PER_PAIR)
    docs = "".join(json.dumps({"doc_id": f"D{i}", "text": f"text {i}"}) + "\n" for i in range(DOCS))
    queries = "".join(json.dumps({"query_id": f"q{j}", "text": f"query {j}"}) + "\n" for j in range(QUERIES))
    run = "".join(f"q{j} Q0 D{i} {i + 1} {DOCS - i} sys\n" for j in range(QUERIES) for i in range(DOCS))
    imports.import_documents(db, SYSTEM, "bench", docs.encode(), filename="docs.jsonl")
    imports.import_queries(db, SYSTEM, "bench", queries.encode(), filename="queries.jsonl")
    imports.import_run(db, SYSTEM, "bench", run.encode(), filename="run.trec")
    pooling.pool(db, SYSTEM, "bench", depth=DOCS)
    names = [f"ann{k:02d}" for k in range(ANNOTATORS)]
    for name in names:
        users.create_user(db, SYSTEM, name, f"{name}-password")
    projects.assign(db, SYSTEM, "bench", names)


def _labels(db: Database) -> None:
    rng = np.random.default_rng(0)
    with db.read() as s:
        pair_ids = [r[0] for r in s.connection().exec_driver_sql("SELECT id FROM pairs ORDER BY id")]
        people = dict(s.connection().exec_driver_sql("SELECT username, id FROM users").all())
        project_id = s.connection().exec_driver_sql("SELECT id FROM projects").scalar_one()
    user_ids = [people[f"ann{k:02d}"] for k in range(ANNOTATORS)]
    care = rng.uniform(0.5, 0.9, ANNOTATORS)
    truth = rng.choice(4, size=len(pair_ids), p=[0.4, 0.3, 0.2, 0.1])
    start = datetime(2026, 1, 1, tzinfo=UTC)
    assignments, labels, claimed = [], [], []
    for p, pair_id in enumerate(pair_ids):
        for slot, who in enumerate(rng.choice(ANNOTATORS, size=PER_PAIR, replace=False), start=1):
            i = len(assignments) + 1
            grade = int(truth[p]) if rng.random() < care[who] else int(rng.integers(4))
            at = start + timedelta(seconds=i)
            assignments.append(
                (i, project_id, pair_id, user_ids[who], slot, "done", 1, i, grade, False, at, at)
            )
            labels.append(
                (
                    i,
                    i,
                    pair_id,
                    user_ids[who],
                    1,
                    grade,
                    "judged",
                    False,
                    float(rng.lognormal(3, 0.4)),
                    1,
                    1,
                    at,
                )
            )
        claimed.append((PER_PAIR, pair_id))
    _bulk(db, assignments, labels, claimed)
    gold = [(pair_id, project_id, int(truth[p])) for p, pair_id in enumerate(pair_ids) if pair_id % 50 == 0]
    with db.write() as s:
        s.connection().exec_driver_sql(
            "INSERT INTO gold_pairs (pair_id, project_id, grade, explanation, source, created_at) "
            "VALUES (%s, %s, %s, 'bench', 'hand', now())",
            gold,
        )


def _rules(db: Database) -> float:
    """Turn the gold rules on (qualification, then pause) and add members who have not labelled yet, so the
    standing section shows qualified, qualifying and paused members; returns the seconds of the pause rule's
    settings change (it re-evaluates every member's standing)."""
    projects.update_settings(db, SYSTEM, "bench", qualify_pairs=QUALIFY[0], qualify_accuracy=QUALIFY[1])
    names = [f"new{k:02d}" for k in range(NEW_MEMBERS)]
    for name in names:
        users.create_user(db, SYSTEM, name, f"{name}-password")
    projects.assign(db, SYSTEM, "bench", names)
    start = time.perf_counter()
    projects.update_settings(db, SYSTEM, "bench", pause_pairs=PAUSE[0], pause_accuracy=PAUSE[1])
    return time.perf_counter() - start


def _page_seconds(url: str, repeat: int) -> float:
    """Best wall time of a run of the Annotators page (AppTest, logged in as a reviewer)."""
    import os

    from streamlit.testing.v1 import AppTest

    from annotate_app.services.auth import authenticate
    from annotate_app.ui import state

    os.environ["QRELFORGE_DATABASE_URL"] = url
    db = Database(url)
    users.create_user(db, SYSTEM, "rev", "rev-password-long", role="reviewer")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "annotate_app" / "streamlit_app.py"))
    at.default_timeout = 60
    at.session_state[state.ACTOR] = authenticate(db, "rev", "rev-password-long")
    at.query_params["project"] = "bench"
    at.run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        at.switch_page("views/review/annotators.py").run()
        times.append(time.perf_counter() - start)
        assert not at.exception, at.exception
        assert len(at.dataframe[0].value) == ANNOTATORS
        assert len(at.table[0].value) == ANNOTATORS + NEW_MEMBERS  # the standing section
    db.engine.dispose()
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    url = scratch_database("qrelforge_annot", create=True)
    try:
        db = Database(url)
        t0 = time.perf_counter()
        _build(db)
        _labels(db)
        print(f"setup: {time.perf_counter() - t0:.1f} s")
        print(f"settings change turning the pause rule on (every member re-evaluated): {_rules(db):.3f} s")
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            table = annotators.annotator_table(db, SYSTEM, "bench")
            times.append(time.perf_counter() - start)
        print(
            f"annotator_table: {len(table.rows)} annotators, {int(table.rows['n_labels'].sum())} labels, "
            f"best {min(times):.3f} s of {args.repeat}"
        )
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            standing = qualification.annotator_statuses(db, SYSTEM, "bench")
            times.append(time.perf_counter() - start)
        counts = Counter(str(s.status) for s in standing)
        print(f"annotator_statuses: {dict(sorted(counts.items()))}, best {min(times):.3f} s of {args.repeat}")
        db.engine.dispose()
        print(f"Annotators page (AppTest run): best {_page_seconds(url, args.repeat):.3f} s of {args.repeat}")
    finally:
        scratch_database("qrelforge_annot", create=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
