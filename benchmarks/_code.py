"""Which checkout of the app a benchmark process imports: this repository, or the tree named by
``QRELFORGE_BENCH_CODE`` (set by ``soak_mp.py --old`` for its child processes: the old code, exported from
git, measured in the same run as the new)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

__all__ = ["CODE_ENV", "OLD_REVISION", "code_root", "export_revision"]

CODE_ENV = "QRELFORGE_BENCH_CODE"
OLD_REVISION = "df636bc"  # the code when issue 14 was filed: the claim path before the seek
REPO = Path(__file__).resolve().parents[1]


def code_root() -> Path:
    """The folder holding the ``annotate_app`` and ``metrics`` packages this process imports."""
    return Path(os.environ.get(CODE_ENV) or REPO)


def export_revision(revision: str) -> Path:
    """``annotate_app`` and ``metrics`` as they were at git ``revision``, in a fresh temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix=f"qrelforge-code-{revision[:12]}-"))
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "annotate_app", "metrics"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder
