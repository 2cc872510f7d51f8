"""Readers and writers: TREC qrels and runs, BEIR TSV qrels, JSONL/CSV/TSV corpora and queries.

Every reader accepts a path (plain or gzip-compressed, detected by its magic bytes) or a file object (text or
binary), reads UTF-8 (a leading BOM is dropped; CRLF line ends are fine), and either returns the whole file or
raises `FormatError` listing every bad line as ``file:line: reason: 'text'``. Nothing is half-read.

TREC layouts (fields separated by any run of spaces or tabs; a line whose first character other than a space
or tab is ``#`` is a comment, skipped as trec_eval 10 skips it):

- qrels: ``qid iter docid rel`` (exactly four fields; ``rel`` an integer, negative allowed, or an integral
  float such as ``3.0``, read as that integer as trec_eval reads it);
- runs: ``qid Q0 docid rank score tag`` (fields after the sixth are ignored, as trec_eval ignores them; the
  rank column is not read, order comes from the score).

Well-formed files take a vectorized path: a plain TREC file (ASCII, single spaces, plain decimal scores) is
split with numpy alone, without importing pyarrow (`metrics.formats._plain`): qrels of up to 48 MB whole, a
run of more than 1 MB in pieces of about 1 MB of whole lines gathered into one run. Any other input (gzip,
tabs, ...) is read in pieces (about 1 MB for `read_run`, 4 MB otherwise), each through the numpy reader if
it can, else Arrow's CSV reader (`metrics.formats._pieces`: a piece is cut by bytes, a line is checked
against the line limit before it is joined, and blank lines are counted, never kept). Anything unusual,
and every error, goes through the line-by-line reader, which is the reference for what is accepted.

The package may import numpy, pyarrow (through `metrics._lazy`, on first use), the standard library,
`metrics.errors`, `metrics._choice`, `metrics._lazy`, `metrics._ids` and `metrics.data` (pandas only inside
the readers that return DataFrames); never the rest of `metrics`, never the app. Its private modules,
re-exported here (import from `metrics.formats`):

- `metrics.formats._lines`: the shared line and error machinery (sources, gzip, bad-line collection, decoding,
  writing lines, `line_of_row`);
- `metrics.formats._plain`: the numpy-only reader of plain TREC files (tried first; None for anything else);
- `metrics.formats._pieces`: an input cut into pieces of whole lines by bytes, the (query, document) pair
  hashes that find a pair repeated across pieces, and the columns that gather pieces into one run;
- `metrics.formats._trec`: TREC qrels and runs (`read_qrels`, `read_run`, `iter_run_chunks`, `write_qrels`,
  `write_run`);
- `metrics.formats._beir`: BEIR TSV qrels (`read_beir_qrels`, and ``read_qrels(format="beir")``);
- `metrics.formats._tables`: JSONL/CSV/TSV tables (`read_corpus`, `read_queries`, `read_chunk_map`,
  `write_jsonl`);
- `metrics.formats._labels`: human labels made in other tools (`read_labels`: JSONL, Label Studio, Argilla,
  Prodigy, Quepid), with one reader per tool in `metrics.formats._label_readers`;
- `metrics.formats._passages`: evidence passages and chunkings (`read_passages`, `write_passages`,
  `read_chunks`).
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
