"""Query tags (private; used by `metrics.formats.read_queries` and `metrics.slices`).

A query's ``tags`` field is a list of strings. A tag is a plain label (``"head"``) or ``"key:value"``
(``"intent:navigational"``, ``"lang:zh"``); keys and values are made of letters (any script), digits, ``_``,
``.`` and ``-``, at most `MAX_TAG` characters in all. In CSV/TSV the cell holds the tags separated by ``|``
(``head|lang:zh``); an empty cell is no tag. A query holds at most `MAX_TAGS` tags, each once.

>>> tag_problem(["head", "lang:zh"]) is None, parse_tags("head|lang:zh")
(True, ('head', 'lang:zh'))
>>> tag_problem(["intent:"])
"tags[0] must be a label or key:value (letters, digits, '_', '.', '-'); got 'intent:'"
"""

from __future__ import annotations

import re
from typing import Any

from metrics.errors import quoted

MAX_TAG = 100
MAX_TAGS = 100
SEPARATOR = "|"
_PART = r"[\w.\-]+"
_TAG = re.compile(rf"{_PART}(:{_PART})?")


def parse_tags(value: Any) -> Any:
    """A CSV/TSV cell (``"a|b"``) as a tuple of tags; a JSON list as a tuple; anything else unchanged (for
    `tag_problem` to reject)."""
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(SEPARATOR) if t.strip())
    return tuple(value) if isinstance(value, list) else value


def tag_problem(tags: Any) -> str | None:
    """Why ``tags`` (a list or tuple of strings) is not a valid tags field, or None."""
    if not isinstance(tags, list | tuple):
        return f"tags must be a list of strings; got {type(tags).__name__} {quoted(tags)}"
    if len(tags) > MAX_TAGS:
        return f"tags must hold at most {MAX_TAGS} tags; got {len(tags)}"
    seen: set[str] = set()
    for i, tag in enumerate(tags):
        if not isinstance(tag, str):
            return f"tags[{i}] must be a string; got {type(tag).__name__} {quoted(tag)}"
        if len(tag) > MAX_TAG:
            return f"tags[{i}] must be at most {MAX_TAG} characters; got {quoted(tag)}"
        if not _TAG.fullmatch(tag):
            return (
                f"tags[{i}] must be a label or key:value (letters, digits, '_', '.', '-'); got {quoted(tag)}"
            )
        if tag in seen:
            return f"tags[{i}] {quoted(tag)} appears twice"
        seen.add(tag)
    return None
