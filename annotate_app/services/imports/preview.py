"""Previewing a file before importing it: row count, columns, first rows and every problem; nothing is
written."""

from __future__ import annotations

import json
from typing import Any

from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import InvalidInput
from annotate_app.services.imports._common import (
    Source,
    read_source,
)
from annotate_app.services.inputs import check_count
from annotate_app.services.types import ImportPreview
from annotate_app.store.db import Database
from metrics.errors import FormatError

__all__ = ["preview"]


_READERS = {
    "documents": "read_corpus",
    "queries": "read_queries",
    "run": "read_run",
    "qrels": "read_qrels",
    "chunks": "read_chunk_map",
}


def preview(
    db: Database, actor: Actor, kind: str, source: Source, *, filename: str | None = None, limit: int = 5
) -> ImportPreview:
    """Parse ``source`` as ``kind`` (documents, queries, run, qrels, chunks) without importing (admin):
    row count, columns, the first ``limit`` rows and every problem found by the parser."""
    import metrics.formats as formats

    check_count(limit, "limit", 0)
    if not isinstance(kind, str) or kind not in _READERS:
        raise InvalidInput(f"kind must be one of {', '.join(map(repr, _READERS))}; got {kind!r}")
    with db.read() as s:
        from annotate_app.services.auth import authorize

        authorize(s, actor, Role.ADMIN, "preview imports")
    file = read_source(source, filename)
    try:
        parsed = getattr(formats, _READERS[kind])(file.reader_input())
    except FormatError as exc:
        return ImportPreview(kind, file.name, 0, (), (), tuple(str(p) for p in exc.problems))
    frame = _as_frame(parsed)
    sample = tuple(json.loads(frame.head(limit).to_json(orient="records", force_ascii=False)))
    return ImportPreview(kind, file.name, len(frame), tuple(map(str, frame.columns)), sample, ())


def _as_frame(parsed: Any):
    import pandas as pd

    if isinstance(parsed, tuple):
        return pd.DataFrame({"chunk_id": parsed[0].to_pylist(), "doc_id": parsed[1].to_pylist()})
    if hasattr(parsed, "columns"):
        return parsed
    frame = parsed.to_dataframe()
    return frame
