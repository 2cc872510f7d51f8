"""annotate_app.judges imports metrics and the standard library only (tqdm lazily), never the app's layers."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "annotate_app" / "judges"
ALLOWED = set(sys.stdlib_module_names) | {"metrics", "annotate_app", "tqdm"}
FORBIDDEN: tuple[str, ...] = ("streamlit", "sqlalchemy", "alembic", "annotate_app.store")
FORBIDDEN += ("annotate_app.services", "annotate_app.ui", "annotate_app.views", "annotate_app.cli")


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_every_module_imports_only_what_the_package_doc_allows():
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) >= 9
    for path in modules:
        for name in imports_of(path):
            assert name.split(".")[0] in ALLOWED, f"{path.name} imports {name}"
            assert not name.startswith(FORBIDDEN), f"{path.name} imports {name}"
            if name.startswith("annotate_app"):
                assert name.startswith("annotate_app.judges"), f"{path.name} imports {name}"


def test_importing_the_package_loads_no_other_layer_and_no_heavy_library():
    code = "import sys, annotate_app.judges; print(sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(eval(out))
    assert not {m for m in loaded if m.startswith(FORBIDDEN)}
    assert not loaded & {"numpy", "pandas", "pyarrow", "scipy", "bm25s", "requests", "urllib3"}
