"""Imports of documents, queries, runs, prior qrels, the chunk map and other tools' labels into a project.

`metrics.formats` parses; this package checks rows against the project and writes them. Each import is one
transaction: a bad file imports nothing and raises `InvalidInput` listing every bad line; importing the same
file again changes nothing; `preview` and `preview_labels` write nothing. Files stream in bounded memory.
Versions, conflicts, locking and memory in detail: docs/modules.md.
"""

from __future__ import annotations

from annotate_app.services.imports._common import MAX_ID, Source
from annotate_app.services.imports.chunks import import_chunk_map
from annotate_app.services.imports.documents import import_documents
from annotate_app.services.imports.labels import (
    LABEL_FORMAT_HELP,
    LABEL_FORMATS,
    annotator_map_from_text,
    grade_map_from_text,
    import_labels,
    preview_labels,
)
from annotate_app.services.imports.preview import preview
from annotate_app.services.imports.qrels import import_qrels
from annotate_app.services.imports.queries import import_queries
from annotate_app.services.imports.runs import RUN_PIECE_ROWS, import_run, list_runs
from annotate_app.services.imports.undo import list_imports, undo_import

__all__ = [
    "import_documents",
    "import_queries",
    "import_run",
    "import_qrels",
    "import_chunk_map",
    "import_labels",
    "preview_labels",
    "grade_map_from_text",
    "annotator_map_from_text",
    "LABEL_FORMATS",
    "LABEL_FORMAT_HELP",
    "preview",
    "list_runs",
    "list_imports",
    "undo_import",
    "Source",
    "MAX_ID",
    "RUN_PIECE_ROWS",
]
