"""Label saves while another process imports (issue 16 item 9): `saves_during` starts an import service call
in a subprocess and, while it runs, times one annotator's saves (``next_pair`` + ``save_label``), reading a
probe of what the import has published after each; the tests then assert on the saves' latencies, on the
saves that failed ("the database is busy") and on what was ever visible."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SavesDuring", "saves_during", "labels_file", "count"]

ROOT = Path(__file__).resolve().parents[2]
MOST_SAVES = 600
"""At most this many saves, however long the import runs."""
TIMEOUT_S = 600
KEYWORD = "--"
IMPORTER = f"""
import sys, time
from annotate_app.services import imports
from annotate_app.services.auth import SYSTEM
from annotate_app.store.db import Database

db = Database(sys.argv[1])
args = [a for a in sys.argv[3:] if not a.startswith({KEYWORD!r})]
kwargs = dict(a.removeprefix({KEYWORD!r}).split("=", 1) for a in sys.argv[3:] if a.startswith({KEYWORD!r}))
t0 = time.monotonic()
report = getattr(imports, sys.argv[2])(db, SYSTEM, *args, **kwargs)
print(report, f"in {{time.monotonic() - t0:.1f}} s", flush=True)
"""
"""``python -c IMPORTER URL FUNCTION ARG... --NAME=VALUE...``: ``imports.FUNCTION(db, SYSTEM, ARG...,
NAME=VALUE...)``; prints its report and how long it took."""


@dataclass(frozen=True, kw_only=True)
class SavesDuring:
    """What `saves_during` saw: each save's seconds, the probe's value after each, the saves that failed
    because the database stayed busy (with the seconds each waited), the importer's output."""

    seconds: list[float]
    visible: list[int]
    out: str
    busy: list[float]

    @property
    def p50(self) -> float:
        return float(np.percentile(self.seconds, 50))

    @property
    def p99(self) -> float:
        return float(np.percentile(self.seconds, 99))

    def summary(self) -> str:
        return (
            f"{len(self.seconds)} label saves during the import ({self.out.strip()}): "
            f"p50 {self.p50 * 1000:.0f} ms, p99 {self.p99 * 1000:.0f} ms, "
            f"max {max(self.seconds) * 1000:.0f} ms, {len(self.busy)} failed (database busy)"
        )


def saves_during(
    db: Any,
    actor: Any,
    project: str,
    importer: Sequence[str | Path],
    *,
    probe: Callable[[], int],
    code: Path = ROOT,
    most: int = MOST_SAVES,
    pause: float = 0.0,
) -> SavesDuring:
    """Run ``imports.IMPORTER[0](db, SYSTEM, *IMPORTER[1:])`` in another process on ``db``'s database and,
    until it ends (at most ``most`` saves, ``pause`` seconds apart), save labels of ``actor`` in ``project``
    one after another, timing each and calling ``probe`` after it; a save the database kept busy is counted
    in ``busy``, not retried. ``importer``: the function's name and its arguments (``--name=value`` for a
    keyword argument).
    ``code``: the folder whose ``annotate_app`` the importing process runs (another checkout: old code). The
    import must succeed (else its standard error's tail is the failure)."""
    from annotate_app.services import labels, queue
    from annotate_app.services.errors import DatabaseBusy

    url = db.url.render_as_string(hide_password=False)
    proc = subprocess.Popen(
        [sys.executable, "-c", IMPORTER, url, *map(str, importer)],
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds: list[float] = []
    visible: list[int] = []
    busy: list[float] = []
    while proc.poll() is None and len(seconds) < most:
        time.sleep(pause)
        t0 = time.monotonic()
        try:
            view = queue.next_pair(db, actor, project)
            assert view is not None, f"no pair left in {project!r} after {len(seconds)} saves"
            labels.save_label(db, actor, project, view.pair_id, grade=1, reason="related only")
        except DatabaseBusy:
            busy.append(time.monotonic() - t0)
            continue
        seconds.append(time.monotonic() - t0)
        visible.append(probe())
    out, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, err[-2000:]
    return SavesDuring(seconds=seconds, visible=visible, out=out, busy=busy)


def labels_file(
    path: Path,
    pairs: int,
    *,
    docs: int = 1000,
    annotators: int = 10,
    grade: Callable[[int], int] = lambda p: p % 4,
    last: str | None = None,
) -> Path:
    """A JSONL label file: two labels (by ``imp00`` .. ``imp{annotators - 1}``) on each of the first ``pairs``
    pairs of a project of ``docs`` documents a query (``q{p // docs}``, ``D{p % docs}``), grade ``grade(p)``;
    ``last``: one more line at the end."""
    with open(path, "w", encoding="utf-8") as f:
        for p in range(pairs):
            query, doc = divmod(p, docs)
            for k in sorted({p % annotators, (p + 3) % annotators}):
                row = {"query_id": f"q{query}", "doc_id": f"D{doc}", "annotator": f"imp{k:02d}"}
                f.write(json.dumps(row | {"grade": grade(p), "reason": f"pair {p} by {k}"}) + "\n")
        if last is not None:
            f.write(last + "\n")
    return path


def count(db: Any, sql: str) -> int:
    """The single integer ``sql`` selects."""
    from sqlalchemy import text

    with db.read() as s:
        return int(s.execute(text(sql)).scalar())
