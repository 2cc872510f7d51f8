"""``qrelforge passages``: evidence passages against chunkings (`metrics.passages`).

``chunk-qrels`` writes the TREC qrels of one chunking; ``chunkers`` compares chunkings before retrieval.
PASSAGES is a release's JSONL export; CHUNKS gives offsets or texts (located in ``--docs``). A bad line is
one error line. Needs only the metrics library. Details: docs/modules.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from annotate_app.cli._chunk_runs import add_docs_option, fraction, read_chunk_file
from annotate_app.cli._common import AddParser, Subcommands, emit, grid, positive_int
from metrics.errors import QrelForgeError

__all__ = ["COMMANDS", "CUTOFFS"]

CUTOFFS = (1, 3, 5, 10)
"""The chunks per query at which ``passages chunkers`` reports a perfect retriever's evidence recall."""


def add_passages_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "passages",
        help="evidence passages: chunk qrels for any chunking, chunkers compared",
        description="Evidence passages ([start, end) character offsets into a document) hold for any "
        "chunking: derive the qrels of a chunking, or compare chunkings before retrieval.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    qrels = actions.add_parser(
        "chunk-qrels",
        help="the qrels of a chunking, from passages",
        description="A chunk is relevant at grade g when it holds at least F of a passage of grade g, or "
        "when such a passage covers at least F of the chunk; it takes the highest such grade; any other "
        "chunk of a judged document is 0. Writes TREC qrels (qid 0 chunk_id grade).",
    )
    qrels.add_argument("passages", metavar="PASSAGES", help="passages (JSONL, as a release exports them)")
    qrels.add_argument(
        "chunks",
        metavar="CHUNKS",
        help="chunks (JSONL, CSV or TSV): chunk_id, doc_id, start, end; or chunk_id, doc_id, text (with "
        "--docs)",
    )
    qrels.add_argument(
        "--min-overlap", type=fraction, default=0.5, metavar="F", help="the fraction F (default 0.5)"
    )
    add_docs_option(qrels)
    qrels.add_argument("-o", "--output", metavar="QRELS", help="write to QRELS instead of standard output")
    qrels.set_defaults(handler=_cmd_chunk_qrels)

    chunkers = actions.add_parser(
        "chunkers",
        help="compare chunkings before retrieval",
        description="For each chunking: the evidence recall a perfect retriever reaches with k = "
        f"{', '.join(map(str, CUTOFFS))} chunks per query (mean over the queries with evidence), the chunks "
        "per passage and the characters per chunk.",
    )
    chunkers.add_argument("passages", metavar="PASSAGES", help="passages (JSONL, as a release exports them)")
    chunkers.add_argument(
        "chunkings", nargs="+", metavar="CHUNKS", help="one chunks file per chunking (JSONL, CSV or TSV)"
    )
    chunkers.add_argument(
        "--rel",
        type=positive_int,
        default=1,
        metavar="N",
        help="the lowest grade that is evidence (default 1)",
    )
    add_docs_option(chunkers)
    chunkers.add_argument("--format", choices=("table", "json"), default="table")
    chunkers.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    chunkers.set_defaults(handler=_cmd_chunkers)


COMMANDS: dict[str, AddParser] = {"passages": add_passages_parser}


def _cmd_chunk_qrels(args: argparse.Namespace) -> int:
    import io

    from metrics.formats import read_passages, write_qrels
    from metrics.passages import chunk_qrels

    passages = read_passages(args.passages)
    chunks = read_chunk_file(args.chunks, args.docs)
    qrels = chunk_qrels(passages, chunks, min_overlap=args.min_overlap)
    out = io.StringIO()
    write_qrels(qrels, out)
    emit(out.getvalue(), args.output)
    return 0


def _cmd_chunkers(args: argparse.Namespace) -> int:
    import math

    from metrics.formats import read_passages
    from metrics.passages import compare_chunkers

    passages = read_passages(args.passages)
    names = _names(args.chunkings)
    for i, path in enumerate(args.chunkings):
        if args.chunkings.index(path) != i:
            raise QrelForgeError(f"chunks file {path!r} is given twice")
    chunkings = {
        name: read_chunk_file(path, args.docs) for name, path in zip(names, args.chunkings, strict=True)
    }
    frame = compare_chunkers(passages, chunkings, k=CUTOFFS, rel=args.rel)
    columns = list(frame.columns)
    if args.format == "json":
        rows = [
            {
                "chunking": name,
                "file": path,
                **{c: (None if isinstance(v, float) and math.isnan(v) else v) for c, v in row.items()},
            }
            for (name, row), path in zip(frame.to_dict("index").items(), args.chunkings, strict=True)
        ]
        text = json.dumps({"rel": args.rel, "chunkings": rows}, ensure_ascii=False, indent=2) + "\n"
    else:
        body = [[name, *(_cell(c, row[c]) for c in columns)] for name, row in frame.to_dict("index").items()]
        text = grid(["chunking", *columns], body)
    emit(text, args.output)
    return 0


def _names(paths: list[str]) -> list[str]:
    """Each chunking named by its file name; by its path when two share a file name."""
    names = [Path(p).name for p in paths]
    return [n if names.count(n) == 1 else p for n, p in zip(names, paths, strict=True)]


_DECIMALS = {"chunks": 0, "chunks_per_passage": 2, "chars_per_chunk": 1}  # the recall columns: 4


def _cell(column: str, value: Any) -> str:
    if value != value:
        return "-"  # no query with evidence, no passage
    return f"{float(value):.{_DECIMALS.get(column, 4)}f}"
