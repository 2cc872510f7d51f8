"""Concurrent identical imports (issue 16 item 5): two imports of one file at once end as one import and one
"already imported" — never a unique-key error — because a project's imports wait for each other (an advisory
lock on PostgreSQL; SQLite's BEGIN IMMEDIATE already serialises writers)."""

from __future__ import annotations

import json
import threading

import pytest

from annotate_app.services import imports, projects
from annotate_app.services.auth import SYSTEM

N_DOCS = 20_000


@pytest.mark.parametrize("kind", ["documents", "queries"])
def test_two_identical_imports_at_once_make_one(db, tmp_path, kind):
    projects.create_project(db, SYSTEM, "p")
    key, call = (
        ("doc_id", imports.import_documents) if kind == "documents" else ("query_id", imports.import_queries)
    )
    path = tmp_path / f"{kind}.jsonl"
    path.write_text("".join(json.dumps({key: f"X{i}", "text": f"text {i}"}) + "\n" for i in range(N_DOCS)))
    start = threading.Barrier(2)
    reports, errors = [], []

    def run() -> None:
        start.wait()
        try:
            reports.append(str(call(db, SYSTEM, "p", path)))
        except Exception as exc:  # noqa: BLE001 - any error is the failure this test looks for
            errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert errors == []
    assert sorted(reports) == [
        f"{kind} {kind}.jsonl: {N_DOCS} added, 0 changed, 0 unchanged",
        f"{kind} {kind}.jsonl: already imported (import 1); {N_DOCS} unchanged",
    ]
