"""Domain errors shown as messages, never as tracebacks.

``with shown():`` turns a `QrelForgeError` into an escaped ``st.error`` listing a bad file's problems;
``with captured(key):`` and `flash` do it for widget callbacks. ``with guarded():`` wraps every page and
stops the run on any uncaught domain error; `script_error` serves Streamlit's ``on_script_error``.

>>> describe(ValueError("boom"))
('boom', [])
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import streamlit as st

from annotate_app.services.errors import DiskFull
from annotate_app.ui.escape import escape_markdown
from metrics.errors import QrelForgeError

__all__ = ["shown", "captured", "flash", "describe", "set_flash", "Failed", "guarded", "script_error"]

MAX_PROBLEMS = 50


@dataclass
class Failed:
    """What `shown` and `captured` yield: ``failed`` is True once the block raised a domain error, ``error``
    is that error."""

    failed: bool = False
    error: Exception | None = None


def describe(exc: Exception) -> tuple[str, list[str]]:
    """The message and the problem lines (at most `MAX_PROBLEMS`) of a domain error."""
    problems = [str(p) for p in getattr(exc, "problems", None) or []]
    message = str(exc) or type(exc).__name__
    if len(problems) > MAX_PROBLEMS:
        problems = problems[:MAX_PROBLEMS] + [f"... and {len(problems) - MAX_PROBLEMS} more"]
    return message, problems if len(problems) > 1 else []


def _show(message: str, problems: list[str]) -> None:
    st.error(escape_markdown(message))
    if problems:
        st.code("\n".join(problems), language=None)


@contextmanager
def shown(*, already: str | None = None) -> Iterator[Failed]:
    """Show a domain error raised in the block with ``st.error`` (the block stops, the page goes on), unless
    its message is ``already`` on the page (e.g. a callback's flash of the same database fault)."""
    outcome = Failed()
    try:
        yield outcome
    except QrelForgeError as exc:
        outcome.failed, outcome.error = True, exc
        message, problems = describe(exc)
        if message != already:
            _show(message, problems)


def set_flash(key: str, kind: str, message: str, problems: list[str] | None = None) -> None:
    st.session_state[key] = (kind, message, problems or [])


@contextmanager
def captured(key: str) -> Iterator[Failed]:
    """In a callback: keep a domain error's message under ``key`` for `flash` (the block stops)."""
    outcome = Failed()
    try:
        yield outcome
    except QrelForgeError as exc:
        outcome.failed, outcome.error = True, exc
        set_flash(key, "error", *describe(exc))


def flash(key: str) -> str | None:
    """Show, once, the message a callback left under ``key``; returns it."""
    item = st.session_state.pop(key, None)
    if not item:
        return None
    kind, message, problems = item
    if kind == "error":
        _show(message, problems)
    elif kind == "warning":
        st.warning(escape_markdown(message))
    else:
        st.success(escape_markdown(message))
    return str(message)


def _domain(exc: BaseException) -> Exception | None:
    """``exc`` as an error to show as a message (a full disk met outside the database too), else None."""
    if isinstance(exc, QrelForgeError):
        return exc
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return DiskFull()
    return None


@contextmanager
def guarded() -> Iterator[None]:
    """Run a whole page (or the login gate): a domain error that escaped it is shown and the run stops."""
    try:
        yield
    except (QrelForgeError, OSError) as exc:
        shown_error = _domain(exc)
        if shown_error is None:
            raise
        _show(*describe(shown_error))
        st.stop()


def script_error(exc: Exception) -> bool:
    """Streamlit's ``on_script_error`` hook: show a domain error as its message, and no traceback (True);
    anything else is left to Streamlit (False)."""
    shown_error = _domain(exc)
    if shown_error is None:
        return False
    _show(*describe(shown_error))
    return True
