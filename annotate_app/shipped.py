"""Folders that the wheel ships as package data of `annotate_app` (the sample corpus, the Streamlit settings).

`folder` finds one in an installed wheel or a checkout alike. Imports nothing from the app.

>>> (folder(SAMPLE_CORPUS) / "docs.jsonl").is_file()
True
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["SAMPLE_CORPUS", "STREAMLIT", "PACKAGES", "folder"]

SAMPLE_CORPUS = "sample_corpus"
STREAMLIT = ".streamlit"
PACKAGES = {SAMPLE_CORPUS: "annotate_app._sample_corpus", STREAMLIT: "annotate_app._streamlit"}
"""Each shipped folder of the repository -> the package holding it in the wheel."""
_CHECKOUT = Path(__file__).resolve().parents[1]


def folder(name: str) -> Path:
    """The shipped folder ``name`` (a key of `PACKAGES`): the installed package's, else the checkout's.

    Raises:
        ValueError: ``name`` is not a shipped folder.
    """
    if name not in PACKAGES:
        raise ValueError(f"name must be one of {sorted(PACKAGES)}; got {name!r}")
    installed = resources.files("annotate_app").joinpath(PACKAGES[name].rpartition(".")[2])
    if isinstance(installed, Path) and installed.is_dir():
        return installed
    return _CHECKOUT / name
