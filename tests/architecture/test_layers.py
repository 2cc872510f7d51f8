"""The architecture as tests: the import contract holds, breaking it turns the check red, and every module of
`metrics` and `annotate_app` imports on its own, with none of the others loaded (a child forked from an
interpreter that holds only the third-party packages).

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and run in ``make lint`` too; these
tests prove that they can fail: each case copies the packages, adds one forbidden import and expects
`lint-imports` to name the broken contract.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))
PACKAGES = ("metrics", "annotate_app")


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _modules() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            if "versions" in rel.parts:  # Alembic revisions are loaded by Alembic, not imported
                continue
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            found.append(".".join(parts))
    return found


def test_the_import_contract_holds() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the packages and the contract, to break on purpose."""
    dest = tmp_path_factory.mktemp("arch")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    return dest


BREAKS = [
    ("metrics/errors.py", "import annotate_app.config", "metrics is a pure library"),
    ("metrics/errors.py", "import sqlalchemy", "metrics is a pure library"),
    ("annotate_app/services/errors.py", "import annotate_app.ui", "the app's layers"),
    ("annotate_app/store/db.py", "import annotate_app.services", "the app's layers"),
    ("annotate_app/ui/state.py", "import annotate_app.store", "reach the database only through the services"),
    (
        "annotate_app/cli/__init__.py",
        "import annotate_app.store.db",
        "reach the database only through the services",
    ),
    ("annotate_app/services/errors.py", "import streamlit", "only pages and ui use Streamlit"),
    ("metrics/errors.py", "import metrics.evaluate", "no import cycles"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("module", "line", "contract"), BREAKS, ids=[f"{m}:{c}" for m, _, c in BREAKS])
def test_a_forbidden_import_breaks_the_contract(
    tree_copy: Path, module: str, line: str, contract: str
) -> None:
    target = tree_copy / module
    original = target.read_text(encoding="utf-8")
    target.write_text(original + f"\n{line}  # added by the architecture test\n", encoding="utf-8")
    try:
        result = _lint_imports(tree_copy)
    finally:
        target.write_text(original, encoding="utf-8")
    assert result.returncode == 1, result.stdout
    broken = [row for row in result.stdout.splitlines() if row.endswith("BROKEN")]
    assert any(contract in row for row in broken), result.stdout


# One interpreter loads the third-party modules that `metrics` and `annotate_app` import (found in their
# source, submodules included: ``from sqlalchemy.orm import ...`` loads ``sqlalchemy.orm`` here, not in every
# child), then forks a child per module, which imports that module with none of ours loaded yet: the same
# check as a fresh interpreter per module (import cycles, a module that needs another imported first), without
# each child loading pandas, SQLAlchemy and Streamlit again.
FORK_EACH = """
import ast, importlib, os, sys
from pathlib import Path

ours = ("annotate_app", "metrics")
root, modules = Path(sys.argv[1]), sys.argv[2:]
third = set()
for package in ours:
    for path in (root / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Import):
                third.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                third.add(node.module)
for name in sorted(n for n in third if n.split(".")[0] not in (*ours, "__future__")):
    try:
        importlib.import_module(name)
    except BaseException:
        pass  # an optional package that is not installed: the modules that need it say so below
assert not [m for m in sys.modules if m.split(".")[0] in ours], "a third-party import loaded our code"


def child(module, w):
    try:
        importlib.import_module(module)
        message = b""
    except BaseException as exc:
        message = f"{type(exc).__name__}: {exc}".encode()
    os.write(w, message)
    os._exit(0)


def collect(module, pid, r):
    chunks = []
    while chunk := os.read(r, 65536):
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    if chunks:
        failed[module] = b"".join(chunks).decode()


failed, running = {}, []
for module in modules:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        child(module, w)
    os.close(w)
    running.append((module, pid, r))
    if len(running) == 2:
        collect(*running.pop(0))
for item in running:
    collect(*item)
print(repr(failed))
"""


@pytest.mark.slow
def test_every_module_imports_on_its_own() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FORK_EACH, str(ROOT), *_modules()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "{}"
