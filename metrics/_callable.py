"""Modules that can be called like the function they are named after: ``metrics.evaluate`` and
``metrics.compare``.

Three spellings must all work::

    from metrics import evaluate; evaluate(qrels, run, measures)   # the package attribute, called
    import metrics.evaluate as ev; ev.evaluate(...); ev.Result      # the module
    from metrics.evaluate import evaluate                           # the function

The first two both read the attribute ``evaluate`` of the package, and after ``import metrics.evaluate`` that
attribute is the submodule (the import system binds it), so they get the same object: the module. The only way
to satisfy all three is a module that can be called. `make_callable` gives the module a subclass of
`types.ModuleType` whose ``__call__`` calls the function, and whose ``__signature__`` is the function's, so
``inspect.signature(metrics.evaluate)`` and IDEs show the real parameters. ``__doc__`` stays the module's
docstring, followed by the function's under a heading, so ``help()`` explains both.

Nothing else changes: the module keeps its attributes, its ``__name__`` and its place in ``sys.modules``, and
``from metrics.evaluate import evaluate`` still gives the plain function.
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
