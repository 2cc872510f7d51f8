"""Label saves while another process imports (issue 16 item 9): `saves_during` starts an import service call
in a subprocess and, while it runs, times one annotator's saves (``next_pair`` + ``save_label``), reading a
probe of what the import has published after each; the tests then assert on the saves' latencies and on
what was ever visible."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SavesDuring", "saves_during"]

ROOT = Path(__file__).resolve().parents[2]
MOST_SAVES = 600
"""At most this many saves, however long the import runs."""
TIMEOUT_S = 600
IMPORTER = """
import sys, time
from annotate_app.services import imports
from annotate_app.services.auth import SYSTEM
from annotate_app.store.db import Database

db = Database(sys.argv[1])
t0 = time.monotonic()
report = getattr(imports, sys.argv[2])(db, SYSTEM, *sys.argv[3:])
print(report, f"in {time.monotonic() - t0:.1f} s", flush=True)
"""
"""``python -c IMPORTER URL FUNCTION ARG...``: ``imports.FUNCTION(db, SYSTEM, ARG...)``; prints its report and
how long it took."""


@dataclass(frozen=True, kw_only=True)
class SavesDuring:
    """What `saves_during` saw: each save's seconds, the probe's value after each, the importer's output."""

    seconds: list[float]
    visible: list[int]
    out: str

    @property
    def p99(self) -> float:
        return float(np.percentile(self.seconds, 99))

    def summary(self) -> str:
        p50 = float(np.percentile(self.seconds, 50))
        return (
            f"{len(self.seconds)} label saves during the import ({self.out.strip()}): "
            f"p50 {p50 * 1000:.0f} ms, p99 {self.p99 * 1000:.0f} ms, max {max(self.seconds) * 1000:.0f} ms"
        )


def saves_during(
    db: Any, actor: Any, project: str, importer: Sequence[str | Path], *, probe: Callable[[], int]
) -> SavesDuring:
    """Run ``imports.IMPORTER[0](db, SYSTEM, *IMPORTER[1:])`` in another process on ``db``'s database and,
    until it ends (at most `MOST_SAVES` saves), save labels of ``actor`` in ``project`` one after another,
    timing each and calling ``probe`` after it. The import must succeed (else its standard error's tail is
    the failure)."""
    from annotate_app.services import labels, queue

    url = db.url.render_as_string(hide_password=False)
    proc = subprocess.Popen(
        [sys.executable, "-c", IMPORTER, url, *map(str, importer)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds: list[float] = []
    visible: list[int] = []
    while proc.poll() is None and len(seconds) < MOST_SAVES:
        t0 = time.monotonic()
        view = queue.next_pair(db, actor, project)
        assert view is not None, f"no pair left in {project!r} after {len(seconds)} saves"
        labels.save_label(db, actor, project, view.pair_id, grade=1, reason="related only")
        seconds.append(time.monotonic() - t0)
        visible.append(probe())
    out, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, err[-2000:]
    return SavesDuring(seconds=seconds, visible=visible, out=out)
