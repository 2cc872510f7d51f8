"""Limits: a large run file is streamed by the import service, never read whole: it is read, checked and
written `imports.RUN_PIECE_ROWS` lines at a time, so memory grows with the piece size, not the file size.

Measured in a subprocess: its peak RSS (``VmHWM``, reset just before each import through
``/proc/self/clear_refs``) against its RSS before the import, after a warm-up import. (``resource.getrusage``
would not do: Linux carries the parent's peak into a child across fork and exec, so the child of a big pytest
worker reports the worker's peak.) Two runs of 150 000 and 600 000 entries (5 and 21 MB) are
imported, each into a fresh copy of one database by a fresh process. The peak grows by a roughly fixed
40-50 MB (a piece or two: Arrow columns, hashing temporaries, the batches written; allocator pools keep some
of it) plus about 8 bytes per line (the pair hashes that find duplicates across pieces): measured by hand,
+41 MB for 5 MB, +53 MB for 21 MB, +68 MB for 54 MB, +74 MB for a 110 MB run of 3 million entries. Reading
the file whole (before the chunked reader) cost about 3 times each extra byte, a dict per entry (before
that) 14.5 times; the bound below (1.5 per extra byte) catches a return to either.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from store_fixtures import synthetic_project

ROOT = Path(__file__).resolve().parents[2]
CHILD = r"""
import gc, json, sys
from annotate_app.services import imports
from annotate_app.services.auth import SYSTEM
from annotate_app.store.db import Database

def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))

url, run, warm = sys.argv[1:4]
db = Database(url, pool_size=2)
imports.import_run(db, SYSTEM, "big", warm)  # every module loaded, caches warm
gc.collect()
try:  # reset the peak (VmHWM) to the current RSS
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    pass
before = status("VmRSS")
report = imports.import_run(db, SYSTEM, "big", run)
print(json.dumps([status("VmHWM") - before, report.added]))
"""


def _import_in_child(db_url: str, run: Path, warm: Path) -> list[int]:
    """[peak RSS growth, entries added] of importing ``run`` in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, db_url, str(run), str(warm)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def test_a_large_run_is_streamed_not_loaded_whole(tmp_path, fast_hashing):
    """SQLite only: the memory is the service's (PostgreSQL differs only in COPY instead of executemany, batch
    by batch)."""
    from annotate_app.store.db import Database
    from annotate_app.store.migrate import upgrade

    db_url = f"sqlite:///{tmp_path / 'big.db'}"
    upgrade(db_url)
    db = Database(db_url)
    per_query, docs = 1000, 20_000
    synthetic_project(db, "big", queries=750, docs=1)
    more = "".join(json.dumps({"doc_id": f"doc{i:07d}", "text": "t"}) + "\n" for i in range(docs))
    from annotate_app.services import imports
    from annotate_app.services.auth import SYSTEM

    imports.import_documents(db, SYSTEM, "big", more.encode(), filename="more.jsonl")
    small, large, warm = tmp_path / "small.trec", tmp_path / "large.trec", tmp_path / "warm.trec"
    for path, queries, tag in [(small, range(150), "small"), (large, range(150, 750), "large")]:
        with open(path, "w") as f:
            for q in queries:
                for r in range(per_query):
                    f.write(
                        f"q{q} Q0 doc{(q * 7919 + r * 104_729) % docs:07d} "
                        f"{r + 1} {1000 - r * 0.001:.4f} {tag}\n"
                    )
    warm.write_text("q0 Q0 D0 1 1 warm\n")
    db.dispose()
    figures = []
    for path in (small, large):  # each into a fresh copy of the database, in a fresh process
        copy = tmp_path / f"{path.stem}.db"
        shutil.copyfile(tmp_path / "big.db", copy)
        figures.append(_import_in_child(f"sqlite:///{copy}", path, warm))
    (grew_small, added_small), (grew_large, added_large) = figures
    assert (added_small, added_large) == (150 * per_query, 600 * per_query)
    extra = large.stat().st_size - small.stat().st_size
    marginal = (grew_large - grew_small) / extra
    print(
        f"peak growth: {grew_small / 1e6:.0f} MB for {small.stat().st_size / 1e6:.0f} MB, "
        f"{grew_large / 1e6:.0f} MB for {large.stat().st_size / 1e6:.0f} MB: {marginal:.2f} per extra byte"
    )
    assert marginal < 1.5, f"each extra byte of the file cost {marginal:.2f} bytes of memory"
