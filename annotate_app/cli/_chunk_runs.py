"""Chunk runs scored against evidence passages: ``score --passages PASSAGES --chunks CHUNKS RUN...`` and its
``verify`` (private to the CLI).

The qrels derive from the passages (`metrics.passages.chunk_qrels`); the evidence measures are computed at
the character level; the fingerprint holds the files' sha256 so ``verify`` can recompute.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metrics.errors import FormatError, Problem, QrelForgeError

__all__ = [
    "ChunkScoring",
    "add_docs_option",
    "fraction",
    "read_documents",
    "add_chunk_run_options",
    "chunk_scoring",
    "read_chunk_file",
    "refuse_evidence_measures",
    "report_scoring",
]

_NO_DOCUMENTS = "chunk given by its text, but no corpus to locate it in (pass corpus=)"


def fraction(text: str) -> float:
    """argparse ``type=`` for ``--min-overlap``: a number in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1]; got {text!r}")
    return value


def add_docs_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--docs",
        metavar="DOCS",
        help="documents (corpus JSONL/CSV/TSV with doc_id and text): chunks given by their text are located "
        "in them, chunk offsets are checked against them",
    )


def read_documents(path: str | None) -> Any:
    """The ``--docs`` corpus as ``{doc_id: text}``, or None without it."""
    if path is None:
        return None
    from metrics.formats import read_corpus

    corpus = read_corpus(path)
    return dict(zip(corpus["doc_id"], corpus["text"], strict=True))


def add_chunk_run_options(p: argparse.ArgumentParser, *, verify: bool = False) -> None:
    """``--passages``, ``--chunks``, ``--docs`` (and ``--min-overlap`` for ``score``)."""
    made = "the passages the report was made with; " if verify else ""
    p.add_argument(
        "--passages",
        metavar="PASSAGES",
        help=f"{made}score chunk runs against evidence passages (JSONL): every positional argument is then "
        "a RUN of chunk IDs (needs --chunks)",
    )
    p.add_argument(
        "--chunks",
        metavar="CHUNKS",
        help="the chunking of the runs (JSONL, CSV or TSV): chunk_id, doc_id, start, end; or chunk_id, "
        "doc_id, text (with --docs)",
    )
    add_docs_option(p)
    if not verify:
        p.add_argument(
            "--min-overlap",
            type=fraction,
            default=None,
            metavar="F",
            help="with --passages: the fraction a chunk must hold of a passage, or a passage of the chunk, "
            "for the chunk to take its grade (default 0.5)",
        )


def read_chunk_file(path: str, docs: str | None) -> Any:
    """A CHUNKS file, chunks given by text located in the ``--docs`` documents (one error line otherwise)."""
    from metrics.formats import read_chunks

    try:
        return read_chunks(path, corpus=read_documents(docs))
    except FormatError as exc:
        if exc.problems[0].reason != _NO_DOCUMENTS:
            raise
        first = exc.problems[0]
        raise FormatError(
            [
                Problem(first.source, first.line, first.text, "chunk given by its text: pass --docs DOCS"),
                *exc.problems[1:],
            ]
        ) from None


@dataclass(frozen=True)
class ChunkScoring:
    """Passages and a chunking read once, and the chunk qrels derived from them."""

    passages: Any
    chunks: Any
    qrels: Any
    min_overlap: float
    chunks_file: str
    docs_file: str | None

    def score(self, run: Any, measures: Sequence[Any], *, strict: bool) -> Any:
        from metrics.passages import score_chunk_run

        return score_chunk_run(
            self.passages,
            self.chunks,
            run,
            measures,
            min_overlap=self.min_overlap,
            strict=strict,
            qrels=self.qrels,
        )

    def rules(self, digests: Callable[[str], str] | None = None) -> dict[str, Any]:
        """The fingerprint's ``semantics.passages``: the chunking's (and documents') sha256 and F."""
        from metrics.fingerprint import file_sha256

        sha = digests or file_sha256
        return {
            "passages": {
                "chunks_sha256": sha(self.chunks_file),
                "docs_sha256": sha(self.docs_file) if self.docs_file else None,
                "min_overlap": self.min_overlap,
            }
        }


def _read(passages_file: str, chunks_file: str, docs_file: str | None, min_overlap: float) -> ChunkScoring:
    from metrics.formats import read_passages
    from metrics.passages import chunk_qrels

    passages = read_passages(passages_file)
    chunks = read_chunk_file(chunks_file, docs_file)
    qrels = chunk_qrels(passages, chunks, min_overlap=min_overlap)
    return ChunkScoring(passages, chunks, qrels, min_overlap, chunks_file, docs_file)


def refuse_evidence_measures(measures: Sequence[Any]) -> None:
    """Refuse a measure that needs passages when none are given."""
    for m in measures:
        if m.definition.requires:
            raise QrelForgeError(f"{m} needs evidence passages: --passages PASSAGES --chunks CHUNKS")


def chunk_scoring(args: argparse.Namespace, measures: Sequence[Any]) -> ChunkScoring | None:
    """``score``'s passages and chunking, or None without ``--passages``. With them, the positional
    arguments are all runs: ``args.runs`` gets them and ``args.qrels`` becomes the passages file (what the
    fingerprint hashes as the qrels).

    Raises:
        QrelForgeError: ``--chunks`` without ``--passages`` (or the reverse), an option that does not go
            with chunk runs (``--chunk-map``, ``--corpus``, ``--engine ray``), ``--min-overlap`` or
            ``--docs`` without ``--passages``, or an evidence measure without passages.
    """
    if args.passages is None:
        for flag, value in (
            ("--chunks", args.chunks),
            ("--docs", args.docs),
            ("--min-overlap", args.min_overlap),
        ):
            if value is not None:
                raise QrelForgeError(f"{flag} {value!r} is only used with --passages PASSAGES")
        refuse_evidence_measures(measures)
        if not args.runs:
            raise QrelForgeError("the following arguments are required: RUN")
        return None
    if args.chunks is None:
        raise QrelForgeError(f"--passages {args.passages!r} needs --chunks CHUNKS: the chunking of the runs")
    for flag, value in (("--chunk-map", args.chunk_map), ("--corpus", args.corpus), ("--ppi", args.ppi)):
        if value is not None:
            raise QrelForgeError(
                f"{flag} {value!r} does not go with --passages (chunks are scored as chunks)"
            )
    if str(args.engine) != "local":
        raise QrelForgeError("--passages works with --engine local")
    args.runs = [args.qrels, *args.runs]
    args.qrels = args.passages
    min_overlap = 0.5 if args.min_overlap is None else args.min_overlap
    return _read(args.passages, args.chunks, args.docs, min_overlap)


def report_scoring(
    rules: Mapping[str, Any], passages: str | None, chunks: str | None, docs: str | None
) -> ChunkScoring | None:
    """For ``verify``: the passages and chunking a score report was made with (``semantics.passages``),
    their files checked against it; None for a report made without passages.

    Raises:
        QrelForgeError: files missing or differing from the report's, or given for a report made without.
    """
    from metrics.fingerprint import file_sha256

    stored = rules.get("passages")
    if not isinstance(stored, Mapping):
        for flag, value in (("--passages", passages), ("--chunks", chunks), ("--docs", docs)):
            if value is not None:
                raise QrelForgeError(f"{flag} {value}: the report was made without --passages")
        return None
    if passages is None or chunks is None:
        raise QrelForgeError(
            "the report was made with --passages and --chunks; pass the same files with --passages PASSAGES "
            "--chunks CHUNKS to recompute it"
        )
    for flag, path, key in (("--chunks", chunks, "chunks_sha256"), ("--docs", docs, "docs_sha256")):
        if path is None:
            if stored.get(key):
                raise QrelForgeError(f"the report was made with {flag}; pass the same file with {flag} FILE")
            continue
        if not stored.get(key):
            raise QrelForgeError(f"{flag} {path}: the report was made without {flag}")
        if not os.path.exists(path):
            raise QrelForgeError(f"{flag} {path}: no such file")
        here = file_sha256(path)
        if here != stored[key]:
            raise QrelForgeError(
                f"{flag} {path} differs from the file the report was made from (sha256 {here[:16]}… here, "
                f"{str(stored[key])[:16]}… in the report)"
            )
    return _read(passages, chunks, docs, float(stored.get("min_overlap", 0.5)))
