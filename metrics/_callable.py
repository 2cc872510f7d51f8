"""Modules that can be called like the function they are named after: ``metrics.evaluate`` and
``metrics.compare``.

`make_callable` gives the module a `types.ModuleType` subclass whose ``__call__`` calls the function and
whose ``__signature__`` is the function's; ``__doc__`` is the module's docstring followed by the function's.
The module keeps its attributes, name and place in ``sys.modules``; ``from metrics.evaluate import
evaluate`` still gives the plain function. Why a callable module: docs/modules.md.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Callable
from typing import Any, cast

__all__ = ["CallableModule", "make_callable"]


class CallableModule(types.ModuleType):
    """A module that calls ``__function__`` (the function it is named after) when called."""

    __function__: Callable[..., Any]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__function__(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.__function__)


def make_callable(module_name: str, function: Callable[..., Any]) -> None:
    """Make the (already imported) module ``module_name`` callable as ``function``.

    Call it once, at the end of the module: ``make_callable(__name__, evaluate)``.
    """
    module = sys.modules[module_name]
    short = module_name.rpartition(".")[2]
    if getattr(function, "__name__", None) != short:
        raise ValueError(f"function must be named like its module {short!r}; got {function!r}")
    module.__class__ = CallableModule
    cast(CallableModule, module).__function__ = function
    function_doc = inspect.getdoc(function) or ""
    heading = f"Calling the module calls ``{short}{_plain_signature(function)}``"
    module.__doc__ = f"{inspect.cleandoc(module.__doc__ or '')}\n\n{heading}:\n\n{function_doc}\n"


def _plain_signature(function: Callable[..., Any]) -> inspect.Signature:
    """The signature without annotations (strings under PEP 563): ``(qrels, run, measures, *, ...)``."""
    signature = inspect.signature(function)
    plain = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    return signature.replace(parameters=plain, return_annotation=inspect.Signature.empty)
