"""Readers and writers: TREC qrels and runs, BEIR TSV qrels, JSONL/CSV/TSV corpora and queries, other tools'
labels, evidence passages and chunks.

Every reader takes a path (plain or gzip) or a file object, reads UTF-8 (BOM and CRLF fine), and returns
the whole file or raises `FormatError` listing every bad line as ``file:line: reason: 'text'``: nothing is
half-read. TREC fields split on any whitespace; ``#`` lines are comments, as in trec_eval 10. Import from
here, not from the private modules. The layouts and the fast paths: docs/modules.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics._lazy import lazy_exports
from metrics.formats._beir import read_beir_qrels
from metrics.formats._lines import MAX_PROBLEMS, Source, line_of_row
from metrics.formats._trec import (
    QrelsFormat,
    iter_run_chunks,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)

if TYPE_CHECKING:
    from metrics.formats._labels import ForeignLabel, ForeignLabels, LabelFormat, LeftOut, read_labels
    from metrics.formats._passages import read_chunks, read_passages, write_passages
    from metrics.formats._tables import (
        TableFormat,
        iter_corpus,
        read_chunk_map,
        read_corpus,
        read_queries,
        write_jsonl,
    )

_LAZY = {  # imported on first use: the scoring path of TREC files needs neither
    **dict.fromkeys(
        ["ForeignLabel", "ForeignLabels", "LabelFormat", "LeftOut", "read_labels"], "metrics.formats._labels"
    ),
    **dict.fromkeys(["read_chunks", "read_passages", "write_passages"], "metrics.formats._passages"),
    **dict.fromkeys(
        ["TableFormat", "iter_corpus", "read_chunk_map", "read_corpus", "read_queries", "write_jsonl"],
        "metrics.formats._tables",
    ),
}

__all__ = [
    "read_qrels",
    "read_run",
    "read_beir_qrels",
    "write_qrels",
    "write_run",
    "read_corpus",
    "iter_corpus",
    "read_queries",
    "write_jsonl",
    "read_chunk_map",
    "read_labels",
    "read_passages",
    "read_chunks",
    "write_passages",
    "ForeignLabel",
    "ForeignLabels",
    "LabelFormat",
    "LeftOut",
    "line_of_row",
    "iter_run_chunks",
    "QrelsFormat",
    "TableFormat",
    "Source",
    "MAX_PROBLEMS",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
