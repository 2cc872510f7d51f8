"""Imports: documents and queries (JSONL, CSV or TSV), runs (TREC), prior qrels (TREC or BEIR TSV), the
chunk→document map, and human labels made in other tools (`import_labels`, see
`annotate_app.services.imports.labels`). `metrics.formats` parses; this package checks the rows against the
project and writes them.

Rules:

- Each import is one transaction. A bad file imports nothing and raises `InvalidInput` whose ``problems``
  list every bad line as ``file:line: reason: 'text'`` (parse errors, unknown query or document IDs, ...).
- Re-importing the same file changes nothing. A document whose title or text changed gets a new version (the
  old one is kept); the labels made on the old version are flagged stale (`ImportReport.stale_labels`) and the
  annotators get the pair back to re-judge. A query's text may change only while it has no labels.
- A run or prior-qrels name (default: the run's tag / the file name) is imported once; the same content again
  is a no-op, different content under the same name is a Conflict.
- `preview` parses a file and returns its first rows and all its problems without writing anything;
  `preview_labels` runs every check of `import_labels` and returns its labels per annotator (and the accounts
  it would create) without writing anything.
- The imports of one project wait for each other (a per-project lock): two concurrent imports of one file end
  as one import and one "already imported" (`ImportReport.already_imported`), never a unique-key error.
- `list_imports` lists a project's imports; `undo_import` removes what one added, in one transaction, unless
  judged pairs depend on it (``exclude_dependent=True`` excludes them instead); see `imports.undo`.

``source`` is a path, bytes (an upload) or a file object. ``filename`` names an upload (bytes) for the format
and messages. Documents carry ``doc_id`` (or ``_id``/``docid``/``id``), ``title``, ``text``, an optional
``version`` label and any extra fields (kept as metadata, e.g. ``title_en``). Every text must be storable
(`services.inputs.check_text`: no NUL, no lone surrogate) and metadata must be strict JSON (no NaN or
infinity).

Memory: a path is never read whole. `metrics.formats` streams it (plain or gzip), its sha256 is computed
block by block, and a run is read in pieces of about 4 MB of whole lines, checked and written `RUN_PIECE_ROWS`
rows at a time (`metrics.formats.iter_run_chunks`) inside one transaction (on SQLite: `SQLITE_PIECE_ROWS` rows
per transaction under a staged run that one final transaction makes visible, so that other processes' writes
get in between; on failure the staged rows are deleted): peak memory is about one piece (a few MB; one line
up to the line limit) and one chunk of rows, plus 8 bytes per row read (the hashes that find a duplicate pair
across pieces), whatever the file size or the length of its lines; blank lines cost no memory. A bad
line in any piece rolls the whole import back. Documents are streamed too (`metrics.formats.iter_corpus`,
`documents.DOC_BATCH` at a time, one transaction), so their peak memory does not grow with the file. Bytes and
file objects (uploads) are held in memory once; the app caps their size.
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
