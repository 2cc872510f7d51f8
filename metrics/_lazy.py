"""Modules imported on first use (private): the scoring path of plain TREC files never touches pyarrow, whose
import maps 70-100 MB of libraries and takes ~0.1-0.3 s; every other path imports it as before.

A module holding ``pa = lazy("pyarrow")`` (with the real import under ``TYPE_CHECKING`` for mypy) imports
pyarrow at the first ``pa.<name>`` it evaluates.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyModule:
    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


def lazy(name: str) -> Any:
    """A stand-in for module ``name`` that imports it when one of its attributes is first read.

    >>> json = lazy("json")
    >>> json.dumps([1])
    '[1]'
    """
    return _LazyModule(name)
