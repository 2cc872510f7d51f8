"""The project's guidelines as annotators (and the admin's preview) see them: the admin's Markdown, made safe.

No images (each becomes a link nothing fetches) and no raw HTML (every ``<`` that could open a tag is
escaped); autolinks stay links. The rewrite is textual and applies in code spans too.

>>> print(safe_guidelines('See ![the form](https://t.example/p.gif) <img src="https://t.example/p.gif">'))
See [the form](https://t.example/p.gif) \\<img src="https://t.example/p.gif">
"""

from __future__ import annotations

import re

import streamlit as st

__all__ = ["safe_guidelines", "show"]

_BACKSLASHES = (
    r"(?<!\\)((?:\\\\)*)"  # an even run of backslashes (none included): the next char is not escaped
)
_IMAGE = re.compile(_BACKSLASHES + r"!\[(\])?")
_AUTOLINK = r"[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+>"
_HTML_START = re.compile(_BACKSLASHES + r"<(?=[A-Za-z/!?])(?!" + _AUTOLINK + ")")


def _link_instead(match: re.Match[str]) -> str:
    return match.group(1) + ("[image]" if match.group(2) else "[")


def safe_guidelines(markdown: str) -> str:
    """``markdown`` with every image turned into a link and every raw HTML start escaped (see the module
    doc). Repeated until nothing changes, so that no rewrite can assemble a new image or tag."""
    text = markdown
    while True:
        safer = _IMAGE.sub(_link_instead, _HTML_START.sub(r"\1\\<", text))
        if safer == text:
            return text
        text = safer


def show(markdown: str) -> None:
    """Render the guidelines ``markdown`` safely (`safe_guidelines`)."""
    st.markdown(safe_guidelines(markdown))
