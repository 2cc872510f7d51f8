"""Every public function of `metrics` states its contract in its docstring: a summary line, then ``Args:``
naming each parameter (when it takes any) and ``Returns:`` (or ``Yields:``) when it returns a value.

The public functions are those named in ``__all__`` of `metrics` and of each of its public modules and
subpackages. `PENDING` lists the functions not yet written so; it may only shrink: a function on it that
meets the contract fails the test until it is taken off.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable
from typing import Any

import pytest

import metrics

PENDING: frozenset[str] = frozenset()
"""The public functions whose docstrings do not state their contract yet."""

WITHOUT_SUMMARY: frozenset[str] = frozenset()
"""The public functions without any docstring yet (a subset of `PENDING`); it may only shrink too."""

_SECTION = re.compile(r"^(\w+):\s*$")
_ARG = re.compile(r"^\s{4}(\*{0,2}\w+(?:, \*{0,2}\w+)*)(?: \([^)]*\))?:")
"""An ``Args`` entry: a parameter's name, or several sharing one description (``k, rel: ...``)."""


def _modules() -> list[str]:
    names = ["metrics"]
    for info in pkgutil.walk_packages(metrics.__path__, "metrics."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def public_functions() -> dict[str, Callable[..., Any]]:
    """``{module.qualname: function}`` for every function named in a public ``__all__`` of `metrics`."""
    found: dict[str, Callable[..., Any]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for export in getattr(module, "__all__", ()):
            obj = getattr(module, export)
            if inspect.isfunction(obj) and obj.__module__.startswith("metrics"):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return dict(sorted(found.items()))


def _sections(doc: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in doc.splitlines():
        header = _SECTION.match(line)
        if header:
            current = sections.setdefault(header[1], [])
        elif current is not None and (line.startswith("    ") or not line.strip()):
            current.append(line)
        else:
            current = None
    return sections


def contract_problems(function: Callable[..., Any]) -> list[str]:
    """What the docstring of ``function`` lacks, in words; empty when it states the contract."""
    doc = inspect.getdoc(function) or ""
    paragraphs = doc.split("\n\n")
    if not doc.strip() or _SECTION.match(doc.splitlines()[0]) or not paragraphs[0].rstrip().endswith("."):
        return ["no summary line ending with a full stop"]
    problems = []
    if len(paragraphs[0].splitlines()) > 2:
        problems.append("summary longer than two lines")
    sections = _sections(doc)
    signature = inspect.signature(function)
    params = [
        p.name for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if params:
        if "Args" not in sections:
            problems.append("no Args section")
        else:
            named = {
                n.lstrip("*")
                for line in sections["Args"]
                if (m := _ARG.match(line))
                for n in m[1].split(", ")
            }
            problems += [f"Args does not name {p!r}" for p in params if p not in named]
    returns_none = signature.return_annotation in (None, "None")
    if not returns_none and not ({"Returns", "Yields"} & set(sections)):
        problems.append("no Returns section")
    return problems


FUNCTIONS = public_functions()


def test_the_public_functions_are_found() -> None:
    for name in (
        "metrics.evaluate.evaluate",
        "metrics.compare.compare",
        "metrics.agreement._competence.mace",
    ):
        assert name in FUNCTIONS


@pytest.mark.parametrize("name", [n for n in FUNCTIONS if n not in PENDING])
def test_the_docstring_states_the_contract(name: str) -> None:
    assert contract_problems(FUNCTIONS[name]) == []


def _has_summary(function: Callable[..., Any]) -> bool:
    lines = (inspect.getdoc(function) or "").splitlines()
    return bool(lines) and bool(lines[0].strip()) and not _SECTION.match(lines[0])


def test_every_public_function_has_a_summary_line() -> None:
    assert [n for n, f in FUNCTIONS.items() if not _has_summary(f) and n not in WITHOUT_SUMMARY] == []
    assert [n for n in sorted(WITHOUT_SUMMARY) if _has_summary(FUNCTIONS[n])] == [], (
        "take off WITHOUT_SUMMARY"
    )
    assert WITHOUT_SUMMARY <= PENDING


def test_pending_only_lists_functions_still_to_write() -> None:
    assert sorted(PENDING - set(FUNCTIONS)) == [], "not a public function of metrics"
    assert [n for n in sorted(PENDING) if not contract_problems(FUNCTIONS[n])] == [], "done: take off PENDING"


# The check itself, on functions written for it.
def _good(qrels: Any, *, k: int = 10) -> float:
    """Precision at ``k``.

    Args:
        qrels: the judgments.
        k (int): the cutoff.

    Returns:
        The precision.
    """
    return 0.0


def _no_args(qrels: Any) -> float:
    """Precision.

    Returns:
        The precision.
    """
    return 0.0


def _one_arg_missing(qrels: Any, k: int) -> float:
    """Precision.

    Args:
        qrels: the judgments; k is mentioned in passing only.

    Returns:
        The precision.
    """
    return 0.0


def _no_returns(qrels: Any) -> float:
    """Precision.

    Args:
        qrels: the judgments.
    """
    return 0.0


def _no_summary(qrels: Any) -> None:
    """
    Args:
        qrels: the judgments.
    """


def _nothing_to_state() -> None:
    """Reset the cache."""


def _long_summary() -> None:
    """One.
    Two.
    Three.
    """


CASES = [  # (function, what the check reports)
    (_good, []),
    (_nothing_to_state, []),
    (_no_args, ["no Args section"]),
    (_one_arg_missing, ["Args does not name 'k'"]),
    (_no_returns, ["no Returns section"]),
    (_no_summary, ["no summary line ending with a full stop"]),
    (_long_summary, ["summary longer than two lines"]),
]


@pytest.mark.parametrize(("function", "problems"), CASES, ids=[f.__name__ for f, _ in CASES])
def test_the_check_reports_what_is_missing(function: Callable[..., Any], problems: list[str]) -> None:
    assert contract_problems(function) == problems
