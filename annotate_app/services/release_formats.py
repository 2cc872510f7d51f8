"""The files a release exports to: `ReleaseFormat`, one member a format, with suffix, media type and label.

Plain Python: the CLI and the pages read it; `annotate_app.services.export` writes each format.

>>> [(f.value, f.suffix) for f in ReleaseFormat]
[('trec', 'qrels'), ('beir', 'beir.tsv'), ('jsonl', 'jsonl')]
>>> ReleaseFormat("beir").label
'BEIR TSV'
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ReleaseFormat"]


class ReleaseFormat(StrEnum):
    """A release's export format: ``(value, button label, file name suffix, media type)`` a member."""

    label: str
    suffix: str
    mime: str

    def __new__(cls, value: str, label: str, suffix: str, mime: str) -> ReleaseFormat:
        member = str.__new__(cls, value)
        member._value_ = value
        member.label, member.suffix, member.mime = label, suffix, mime
        return member

    TREC = ("trec", "TREC qrels", "qrels", "text/plain")
    BEIR = ("beir", "BEIR TSV", "beir.tsv", "text/tab-separated-values")
    JSONL = ("jsonl", "JSONL with reasons", "jsonl", "application/jsonl")
