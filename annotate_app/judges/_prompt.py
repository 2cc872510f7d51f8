"""Prompt templates: the default prompt (ours, from the scale's definitions) or a template file.

Placeholders ``{{query}}`` and ``{{document}}`` (required), ``{{scale}}`` and ``{{guidelines}}`` are replaced
once, in one pass; everything else is literal. The prompt hash covers every instruction the judge read. Both
built-in prompts ask for the evidence: the document's sentences that answer the query, quoted word for word
in the reply's ``evidence`` list (located in the document when the label is stored).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from annotate_app.judges._model import JudgeTask, Pair, sha256_text

__all__ = [
    "PromptTemplate",
    "DEFAULT_TEMPLATE",
    "ASPECTS_TEMPLATE",
    "BUILTIN_PROMPTS",
    "DEFAULT_MAX_DOCUMENT_CHARS",
]

DEFAULT_MAX_DOCUMENT_CHARS = 6000
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_NAMES = ("query", "document", "scale", "guidelines")

_INTRO = """\
You are judging search results. Read the search query and the document below, then decide how well the \
document serves someone who typed that query.

Grades, from best to worst:
{{scale}}

Project guidelines (they take precedence over the grade descriptions above):
{{guidelines}}

"""
_PAIR = """
Query:
<query>
{{query}}
</query>

Document:
<document>
{{document}}
</document>

Answer with one JSON object and nothing else, in this form:
"""
_EVIDENCE = """\
Evidence: copy into "evidence" the passages of the document that answer the query, word for word as they \
appear in the document, one short passage (a sentence or two) per item; give [] when no passage does.
"""

DEFAULT_TEMPLATE = (
    _INTRO
    + """\
How to decide: first ask whether the document is about what the query asks; then whether it actually \
contains the answer, completely or only in part. Judge only by the text shown; do not use outside knowledge \
to fill in what the document leaves out. Pick the single grade that fits best.
"""
    + _EVIDENCE
    + _PAIR
    + """{"grade": <one of the grade numbers above>, "reason": "<one or two sentences on why>", "evidence": \
["<a passage copied from the document>", ...]}
"""
)

# The aspects prompt: the structure of UMBRELA (Upadhyay et al. 2024, "UMBRELA: UMbrela is the (Open-Source
# Reproduction of the) Bing RELevance Assessor"): judge the intent match and the trustworthiness first, then
# the grade. Written in our own words; the aspects are stored with the machine label.
ASPECTS_TEMPLATE = (
    _INTRO
    + """\
Work in three steps before you grade.
1. Intent: what does the searcher want to find out or do? How closely does the document match that? Rate \
it 0 (not about it), 1 (same topic, another need), 2 (part of the need) or 3 (exactly the need).
2. Trust: is the document a source one can rely on for this: specific, consistent, not promotional or \
speculative? Rate it 0 (unreliable), 1 (unsure) or 2 (reliable).
3. Grade: weigh the two and pick the single grade above that fits best. Judge only by the text shown; do \
not use outside knowledge to fill in what the document leaves out.
"""
    + _EVIDENCE
    + _PAIR
    + """{"intent": <0-3>, "trust": <0-2>, "reason": "<one or two sentences on why>", "evidence": ["<a \
passage copied from the document>", ...], "grade": <one of the grade numbers above>}
"""
)

BUILTIN_PROMPTS = {"default": DEFAULT_TEMPLATE, "aspects": ASPECTS_TEMPLATE}
"""The built-in prompts by name (``qrelforge judge add --prompt NAME``)."""


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt template (see the module doc) and the number of document characters it shows.

    >>> t = PromptTemplate(text="Q: {{query}}\\nD: {{document}}", max_document_chars=5)
    >>> print(t.render(Pair(query_id="q", query="battery", doc_id="d", document="0123456789"), JudgeTask()))
    Q: battery
    D: 01234
    [The document was cut: only its first 5 of 10 characters are shown.]
    """

    text: str = DEFAULT_TEMPLATE
    max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ValueError(f"template text must be a string; got {type(self.text).__name__}")
        names = _PLACEHOLDER.findall(self.text)
        unknown = sorted(set(names) - set(_NAMES))
        if unknown:
            raise ValueError(
                f"template has an unknown placeholder {{{{{unknown[0]}}}}}; known: "
                + ", ".join(f"{{{{{n}}}}}" for n in _NAMES)
            )
        missing = [n for n in ("query", "document") if n not in names]
        if missing:
            raise ValueError(f"template must contain {{{{{missing[0]}}}}}; got {self.text[:80]!r}")
        limit = self.max_document_chars
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ValueError(f"max_document_chars must be an int >= 1; got {limit!r}")

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS):
        """Read a template file (UTF-8)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"template file {str(path)!r} cannot be read: {exc}") from None
        return cls(text=text, max_document_chars=max_document_chars)

    @property
    def sha256(self) -> str:
        """The template's version: the sha256 of its text."""
        return sha256_text(self.text)

    def prompt_hash(self, task: JudgeTask) -> str:
        """The hash of every instruction outside the pair: template, scale, guidelines, truncation limit."""
        parts = {
            "template": self.sha256,
            "task": task.as_json(),
            "max_document_chars": self.max_document_chars,
        }
        return sha256_text(json.dumps(parts, sort_keys=True))

    def render(self, pair: Pair, task: JudgeTask) -> str:
        """The prompt for ``pair``."""
        values = {
            "query": pair.query,
            "document": self._document(pair.document),
            "scale": task.scale.describe(),
            "guidelines": task.guidelines.strip() or "(none)",
        }
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.text)

    def _document(self, text: str) -> str:
        if len(text) <= self.max_document_chars:
            return text
        return (
            f"{text[: self.max_document_chars]}\n[The document was cut: only its first "
            f"{self.max_document_chars} of {len(text)} characters are shown.]"
        )
