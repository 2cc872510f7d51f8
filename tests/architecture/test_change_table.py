"""docs/architecture.md's "Where a change goes" table stays true: every path it names exists, and every commit
it cites as its check is in the history.

A cell names a path in backticks: from the repository's root (``metrics/measures/registry.py``), from inside
``annotate_app`` (``services/judges/``), or a bare file name (``models.py``), found anywhere in the tree. A
placeholder (``_<name>.py``) stands for any name, and at least one file must match it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "docs" / "architecture.md"
SECTION = "## Where a change goes"
BASES = ("", "annotate_app/")
"""Where a path that is not bare may start: the root, or inside the app package."""
SEARCHED = ("annotate_app", "metrics", "tests", "docs", "benchmarks")
"""Where a bare file name is looked for (besides the root)."""

_TICKED = re.compile(r"`([^`]+)`")
_PATH = re.compile(r"^[\w.<>/-]+$")
_FILE = re.compile(r"^[\w<>-]+\.(py|md|toml|jsonl?|csv)$")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


def table_rows(text: str) -> list[str]:
    """The body rows of the first table after the section heading.

    Args:
        text: the Markdown of the architecture map.

    Returns:
        Each row's line, header and rule left out.

    Raises:
        ValueError: the section or its table is missing.
    """
    if SECTION not in text:
        raise ValueError(f"no {SECTION!r} section")
    rows = []
    for line in text.split(SECTION, 1)[1].splitlines():
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append(line)
    if len(rows) < 3:
        raise ValueError(f"no table under {SECTION!r}")
    return rows[2:]


def named_paths(row: str) -> list[str]:
    """The paths a row names in backticks: with a slash, or a bare file name with a known suffix."""
    found = []
    for token in _TICKED.findall(row):
        if _PATH.match(token) and ("/" in token or _FILE.match(token)):
            found.append(token)
    return found


def cited_commits(row: str) -> list[str]:
    """The commit hashes the row's last cell cites."""
    last = row.rstrip().rstrip("|").rsplit("|", 1)[-1]
    return [t for t in _TICKED.findall(last) if _COMMIT.match(t)]


def _matches(pattern: str) -> bool:
    glob = re.sub(r"<[^>]+>", "*", pattern.rstrip("/"))
    if "/" not in pattern:
        roots = [ROOT, *(ROOT / s for s in SEARCHED)]
        return any(ROOT.glob(glob)) or any(next(r.rglob(glob), None) for r in roots if r.is_dir())
    for base in BASES:
        hits = [p for p in ROOT.glob(base + glob) if p.is_dir() or not pattern.endswith("/")]
        if hits:
            return True
    return False


def missing_paths(rows: list[str]) -> list[str]:
    """The paths named in `rows` that match nothing in the tree, in the order named."""
    return [p for row in rows for p in named_paths(row) if not _matches(p)]


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60)


def unknown_commits(rows: list[str]) -> list[str]:
    """The cited commits that are not in the repository's history."""
    cited = [c for row in rows for c in cited_commits(row)]
    return [c for c in cited if _git("cat-file", "-e", f"{c}^{{commit}}").returncode]


ROWS = table_rows(MAP.read_text(encoding="utf-8"))


def _shallow_or_no_git() -> bool:
    done = _git("rev-parse", "--is-shallow-repository")
    return done.returncode != 0 or done.stdout.strip() != "false"


def test_the_table_has_a_row_for_each_kind_of_change() -> None:
    kinds = [row.split("|")[1].strip() for row in ROWS]
    wanted = ("measure", "file format", "label format", "judge backend", "page", "CLI command", "migration")
    assert [w for w in wanted if not any(w in k for k in kinds)] == []


def test_every_row_names_paths_and_cites_a_commit() -> None:
    assert [r.split("|")[1] for r in ROWS if not named_paths(r) or not cited_commits(r)] == []


def test_every_path_the_table_names_exists() -> None:
    assert missing_paths(ROWS) == []


@pytest.mark.skipif(_shallow_or_no_git(), reason="needs the full git history")
def test_every_cited_commit_is_in_the_history() -> None:
    assert unknown_commits(ROWS) == []


BROKEN = [  # (a row, the paths reported missing, the commits reported unknown)
    ("| x | `metrics/no.py`, `metrics/data.py` | t | `0000000` |", ["metrics/no.py"], ["0000000"]),
    ("| x | `services/judges/` (in the app) | t | layout: `a766942` |", [], []),
    ("| x | `views/<role>/`, `judges/_<no>_x.py` | t | |", ["judges/_<no>_x.py"], []),
    ("| x | `metrics/data.py/`, `no_such.py` | t | |", ["metrics/data.py/", "no_such.py"], []),
    ('| x | `(db, actor, ...)`, `requires="passages"` | t | |', [], []),
]


@pytest.mark.parametrize(("row", "paths", "commits"), BROKEN)
def test_the_check_reports_what_rotted(row: str, paths: list[str], commits: list[str]) -> None:
    assert missing_paths([row]) == paths
    if not _shallow_or_no_git():
        assert unknown_commits([row]) == commits


def test_a_map_without_the_section_is_refused() -> None:
    with pytest.raises(ValueError, match="no '## Where a change goes' section"):
        table_rows("# The shape\n\nno table here\n")
