"""Previewing a file before importing it: row count, columns, first rows and every problem; nothing is
written."""

from __future__ import annotations

import json
from typing import Any

from annotate_app.services.auth import Actor, Role, authorize
from annotate_app.services.errors import InvalidInput
from annotate_app.services.import_kinds import IMPORT_KINDS
from annotate_app.services.imports._common import (
    Source,
    read_source,
)
from annotate_app.services.inputs import check_count
from annotate_app.services.types import ImportPreview
from annotate_app.store.db import Database
from annotate_app.store.enums import ImportKind
from metrics.errors import FormatError

__all__ = ["preview"]


_READERS = {kind: info.reader for kind, info in IMPORT_KINDS.items() if info.reader}
"""The kinds this preview reads, and their `metrics.formats` reader (labels have their own preview)."""


def preview(
    db: Database, actor: Actor, kind: str, source: Source, *, filename: str | None = None, limit: int = 5
) -> ImportPreview:
    """Parse ``source`` as ``kind`` (documents, queries, run, qrels, chunks) without importing (admin):
    row count, columns, the first ``limit`` rows and every problem found by the parser."""
    import metrics.formats as formats

    check_count(limit, "limit", 0)
    if not isinstance(kind, str) or kind not in _READERS:
        raise InvalidInput(f"kind must be one of {', '.join(repr(k.value) for k in _READERS)}; got {kind!r}")
    kind = ImportKind(kind)
    with db.read() as s:
        authorize(s, actor, Role.ADMIN, "preview imports")
    file = read_source(source, filename)
    try:
        parsed = getattr(formats, _READERS[kind])(file.reader_input())
    except FormatError as exc:
        problems = tuple(str(p) for p in exc.problems)
        return ImportPreview(kind=kind, source=file.name, n_rows=0, columns=(), sample=(), problems=problems)
    frame = _as_frame(parsed)
    sample = tuple(json.loads(frame.head(limit).to_json(orient="records", force_ascii=False)))
    return ImportPreview(
        kind=kind,
        source=file.name,
        n_rows=len(frame),
        columns=tuple(map(str, frame.columns)),
        sample=sample,
        problems=(),
    )


def _as_frame(parsed: Any):
    import pandas as pd

    if isinstance(parsed, tuple):
        return pd.DataFrame({"chunk_id": parsed[0].to_pylist(), "doc_id": parsed[1].to_pylist()})
    if hasattr(parsed, "columns"):
        return parsed
    frame = parsed.to_dataframe()
    return frame
