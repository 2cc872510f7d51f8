"""Imports on first use (private): lazy modules, lazily exported names, and module paths that moved.

`lazy` imports a module when an attribute is first read; `lazy_exports` gives a package the ``__getattr__``
and ``__dir__`` of names imported on first use; `alias_modules` makes old module paths import as the very
same module at its new home. They keep the plain TREC scoring path free of pyarrow, pandas and scipy.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, cast


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


def lazy_exports(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package that imports each name from its home on first use.

    A name whose home is the submodule of the same name (``metrics.evaluate``) is that module itself, as the
    import system binds it, so every spelling gets the same object. A name read once is kept in the package's
    namespace.

    Args:
        package: the package's ``__name__``; it must be in ``sys.modules`` (call this from its ``__init__``).
        homes: public name -> the module that defines it.

    Returns:
        ``(__getattr__, __dir__)``, to be bound at the package's top level.

    Raises:
        AttributeError: from ``__getattr__``, for a name not in ``homes``.

    >>> getattr_, dir_ = lazy_exports("metrics", {"Qrels": "metrics.data"})
    >>> getattr_("Qrels").__name__
    'Qrels'
    >>> getattr_("nothing")
    Traceback (most recent call last):
    ...
    AttributeError: module 'metrics' has no attribute 'nothing'
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home)
        value = module if home == f"{package}.{name}" else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *homes])

    return __getattr__, __dir__


class _Aliases:
    """Finds an old module path and loads it as the module at its new path, which keeps its own ``__name__``
    and ``__spec__`` (the import system sets ``__spec__`` to the alias's; `exec_module` puts it back).

    A meta path finder and loader by its methods, as the import system asks of them: subclassing
    ``importlib.abc``'s classes would import ``importlib.resources`` (and ``tempfile``, ``shutil``) on every
    start."""

    def __init__(self, moved: Mapping[str, str]):
        self.moved = dict(moved)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if fullname not in self.moved:
            return None
        return ModuleSpec(fullname, cast(Any, self))  # a loader by its methods

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.moved[spec.name])
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = module.__spec__.loader_state if module.__spec__ else None


def alias_modules(moved: Mapping[str, str]) -> None:
    """Let old module paths import as their new ones: ``import metrics.bm25`` is ``metrics.retrieval.bm25``.

    Args:
        moved: old dotted path -> new dotted path. Installing the same table again changes nothing.

    >>> alias_modules({"metrics.old_errors": "metrics.errors"})
    >>> import metrics.errors, metrics.old_errors
    >>> metrics.old_errors is metrics.errors
    True
    """
    for finder in sys.meta_path:
        if isinstance(finder, _Aliases):
            finder.moved.update(moved)
            return
    sys.meta_path.insert(0, _Aliases(moved))  # before any finder that could find a stale copy at the old path
