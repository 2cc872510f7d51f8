"""What each kind of import is: `IMPORT_KINDS`, one line per `ImportKind`; every list of import kinds derives
from it. Plain Python: the CLI reads it without the app extra.

>>> info = IMPORT_KINDS[ImportKind.RUN]
>>> info.command, info.function, info.reader, info.named, info.chunks
('run', 'import_run', 'read_run', True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

from annotate_app.store.enums import ImportKind
from metrics.formats import LabelFormat

__all__ = ["ImportKind", "KindInfo", "IMPORT_KINDS", "by_command"]


@dataclass(frozen=True)
class KindInfo:
    """One kind of import: ``command`` (``qrelforge import COMMAND``), ``function`` (its function in
    `annotate_app.services.imports`), ``help`` (one line: what the file holds), ``rows`` (what one row of
    the file is, one and several), ``reader`` (the `metrics.formats` reader its preview uses; empty: the
    kind has its own preview), ``named`` (stored under a name) and ``chunks`` (may name chunks)."""

    command: str
    function: str
    help: str
    rows: tuple[str, str]
    reader: str = ""
    named: bool = False
    chunks: bool = False


IMPORT_KINDS: dict[ImportKind, KindInfo] = {  # one line per kind
    ImportKind.DOCUMENTS: KindInfo(
        "docs",
        "import_documents",
        "documents (JSONL, CSV or TSV: doc_id, title, text[, version, ...])",
        ("document", "documents"),
        "read_corpus",
    ),
    ImportKind.QUERIES: KindInfo(
        "queries",
        "import_queries",
        "queries (JSONL, CSV or TSV: query_id, text[, ...])",
        ("query", "queries"),
        "read_queries",
    ),
    ImportKind.RUN: KindInfo(
        "run",
        "import_run",
        "a TREC run (qid Q0 docid rank score tag)",
        ("run line", "run lines"),
        "read_run",
        named=True,
        chunks=True,
    ),
    ImportKind.QRELS: KindInfo(
        "qrels",
        "import_qrels",
        "existing qrels as prior judgments (TREC or BEIR TSV)",
        ("qrels line", "qrels lines"),
        "read_qrels",
        named=True,
    ),
    ImportKind.CHUNKS: KindInfo(
        "chunks",
        "import_chunk_map",
        "a chunk→document map (chunk_id, doc_id; with start, end or text: where each chunk lies)",
        ("chunk mapping", "chunk mappings"),
        "read_chunk_map",
    ),
    ImportKind.LABELS: KindInfo(
        "labels",
        "import_labels",
        f"human labels made in another tool (--format {', '.join(LabelFormat)})",
        ("label", "labels"),
    ),
}


def by_command(command: str) -> KindInfo:
    """The kind ``qrelforge import COMMAND`` imports.

    >>> by_command("docs").function
    'import_documents'
    """
    return next(info for info in IMPORT_KINDS.values() if info.command == command)
