"""Markdown escaping of user text: every message, caption and table cell that quotes user data goes through
here, so that text reads exactly as typed and can never become HTML, a link, a directive or LaTeX.

Pure functions (no Streamlit), shared by the infrastructure (`annotate_app.ui.errors`), the components and the
pages.

>>> print(escape_markdown("<b>[x](javascript:y)"))
\\<b\\>\\[x\\]\\(javascript\\:y\\)
"""

from __future__ import annotations

import re
import string

__all__ = ["escape_markdown", "escape_name"]

_PUNCT = re.compile("([" + re.escape(string.punctuation) + "])")
_NAME_PUNCT = re.compile(r"(?<=[^\W_])[_-](?=[^\W_])|([" + re.escape(string.punctuation) + "])")


def escape_markdown(text: str) -> str:
    """Backslash-escape every ASCII punctuation character; keep line breaks as Markdown hard breaks."""
    return _PUNCT.sub(r"\\\1", text).replace("\r\n", "\n").replace("\n", "  \n")


def escape_name(name: object) -> str:
    """``str(name)`` as inert Markdown, like `escape_markdown`, but ``_`` and ``-`` between letters or digits
    are kept (intraword, they are plain text in Markdown).

    >>> print(escape_name("scheme_a"), escape_name("[x](javascript:y)"), escape_name("_a_"))
    scheme_a \\[x\\]\\(javascript\\:y\\) \\_a\\_
    """
    return _NAME_PUNCT.sub(lambda m: m.group(0) if m.group(1) is None else "\\" + m.group(1), str(name))
