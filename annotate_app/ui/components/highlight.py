"""Query-term highlighting that is safe for any corpus text, Chinese included.

Text is escaped Markdown (`annotate_app.ui.escape`), never HTML; matches are wrapped in
``:orange-background[...]``. Latin terms match whole words, case-insensitively; CJK text matches on the
query's character bigrams. Touching matches merge into one highlight.

>>> query_terms("更换电池要做什么")
['更换', '换电', '电池']
>>> print(to_markdown("先更换电池<b>", "更换电池"))
先:orange-background[更换电池]\\<b\\>
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from annotate_app.ui.escape import escape_markdown

__all__ = ["query_terms", "spans", "to_markdown"]

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_LATIN_CHAR = (
    rf"[^\W_{_CJK}]"  # a letter or digit of a script written with spaces (Latin, Greek, Cyrillic ...)
)
_TOKEN = re.compile(rf"[{_CJK}]+|{_LATIN_CHAR}{{2,}}")
_STOP_CJK = re.compile("什么|怎么|怎样|要做|如何|哪些|是否|可以|需要|的|吗|呢")
_STOP = {"the", "and", "what", "how", "for", "with"}


def query_terms(query: str) -> list[str]:
    """Distinct terms of ``query``, in order of first appearance."""
    terms: dict[str, None] = {}
    for token in _TOKEN.findall(_STOP_CJK.sub(" ", query or "")):
        if _is_cjk(token):
            grams = [token] if len(token) == 1 else [token[i : i + 2] for i in range(len(token) - 1)]
        else:
            grams = [token.lower()]
        terms.update({g: None for g in grams if g not in _STOP})
    return list(terms)


def _is_cjk(term: str) -> bool:
    return _CJK_CHAR.match(term) is not None


def _pattern(terms: list[str]) -> re.Pattern:
    """One case-insensitive alternation, longest terms first: CJK terms bare, Latin terms as whole words (no
    Latin letter or digit on either side; CJK characters, spaces and punctuation are boundaries)."""
    parts = [
        re.escape(t) if _is_cjk(t) else rf"(?<!{_LATIN_CHAR}){re.escape(t)}(?!{_LATIN_CHAR})"
        for t in sorted(terms, key=len, reverse=True)
    ]
    return re.compile("|".join(parts), re.IGNORECASE)


def spans(text: str, terms: list[str]) -> list[tuple[int, int]]:
    """Merged (start, end) character spans of every occurrence of any term (Latin terms: whole words,
    case-insensitive; CJK terms: anywhere). Overlapping or touching occurrences merge into one span."""
    if not terms or not text:
        return []
    found = sorted((m.start(), m.end()) for m in _overlapping(_pattern(terms), text))
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _overlapping(pattern: re.Pattern, text: str) -> Iterator[re.Match]:
    """Matches starting at every position (bigrams overlap: 更换 and 换电 in 更换电池)."""
    position = 0
    while (match := pattern.search(text, position)) is not None:
        yield match
        position = match.start() + 1


def to_markdown(text: str, query: str) -> str:
    """``text`` as inert Markdown with the query's terms highlighted."""
    out, at = [], 0
    for start, end in spans(text, query_terms(query)):
        out.append(escape_markdown(text[at:start]))
        out.append(f":orange-background[{escape_markdown(text[start:end])}]")
        at = end
    out.append(escape_markdown(text[at:]))
    return "".join(out)
