"""The app's structure: every page and ui module imports on its own (no Streamlit code runs at import), the
page registry keeps the bookmarked URLs, and `ui.cache.cached_read` keeps each service's reads apart and
clears them after writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from app_helpers import ROOT, app_db, demo_template  # noqa: F401

from annotate_app.services.auth import SYSTEM
from annotate_app.ui import cache, nav

PACKAGES = ("annotate_app/views", "annotate_app/ui")
MODULES = sorted(
    ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for package in PACKAGES
    for path in (ROOT / package).rglob("*.py")
)
URLS = [
    "annotate",
    "my_labels",
    "agreement",
    "adjudicate",
    "release",
    "score",
    "annotators",
    "admin_users",
    "admin_project",
    "admin_data",
    "audit",
]


# One interpreter (Streamlit and pandas load once); before each import, every module of the app is forgotten,
# so each module is imported on its own, with only what it imports itself.
IMPORT_EACH = """
import importlib, sys, traceback
failed = {}
for module in sys.argv[1:]:
    for name in [m for m in sys.modules if m.split(".")[0] in ("annotate_app", "metrics")]:
        del sys.modules[name]
    try:
        importlib.import_module(module)
    except BaseException as exc:
        failed[module] = f"{type(exc).__name__}: {exc}"
print(failed)
"""


def test_every_page_and_ui_module_imports_on_its_own():
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH, *MODULES], capture_output=True, text=True, check=True
    )
    assert "annotate_app.views.review.release" in MODULES
    assert done.stdout.strip() == "{}"


def test_the_registry_keeps_every_url_and_names_each_page_file_by_its_url():
    """The URLs are users' bookmarks; a file named as its URL also resolves a deep link before the first run
    (Streamlit and `AppTest.switch_page` know a page by its file name until `st.navigation` has run)."""
    assert [spec.url_path for spec in nav.PAGES] == URLS
    for spec in (*nav.PAGES, nav.LOGIN):
        assert (ROOT / "annotate_app" / spec.path).is_file()
        assert Path(spec.path).stem == spec.url_path


calls: list[str] = []


def first_service(db, actor, item: str) -> str:
    calls.append("first")
    return f"first {item}"


def second_service(db, actor, item: str) -> str:
    calls.append("second")
    return f"second {item}"


@pytest.fixture
def reads(app_db):  # noqa: F811
    calls.clear()
    yield cache.cached_read(first_service), cache.cached_read(second_service, immutable=True)


def test_cached_reads_of_two_services_do_not_share_a_cache(reads):
    first, second = reads
    assert (first(SYSTEM, "x"), second(SYSTEM, "x")) == ("first x", "second x")
    assert (first(SYSTEM, "x"), second(SYSTEM, "x")) == ("first x", "second x")
    assert calls == ["first", "second"]


def test_clear_reads_forgets_all_but_the_immutable_reads(reads):
    first, second = reads
    first(SYSTEM, "y"), second(SYSTEM, "y")
    cache.clear_reads()
    first(SYSTEM, "y"), second(SYSTEM, "y")
    assert calls == ["first", "second", "first"]
