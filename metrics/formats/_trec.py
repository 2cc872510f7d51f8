"""TREC qrels and runs (private; re-exported by `metrics.formats`): the line-by-line reader (the reference for
what is accepted), the vectorized reader for large well-formed files (Arrow's CSV reader), runs read in pieces
(`iter_run_chunks`), and the writers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from metrics import _ids
from metrics._choice import Choice
from metrics._lazy import lazy
from metrics.data import Qrels, Run
from metrics.errors import FormatError, Problem
from metrics.formats._beir import _looks_beir, _read_beir
from metrics.formats._lines import (
    _BIG_FILE,
    _MERGE_BLOCK,
    _MIN_RUN_LINE,
    _SEP,
    Source,
    _Collector,
    _grade_problem,
    _newlines,
    _Pairs,
    _parse_score,
    _plain_layout,
    _resolve,
    _score_problem,
    _Source,
    _split_lines,
    _write_lines,
    reader_limits,
)
from metrics.formats._plain import plain_qrels, plain_run

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy("pyarrow")


def _slow_run(src: _Source, problems: _Collector, pairs: _Pairs) -> Run:
    """The run read line by line (the reference reader); bad lines go to ``problems``, which the caller
    raises."""
    qids, docs, scores = [], [], []
    for number, text, fields in _split_lines(src, problems):
        if len(fields) < 6:
            problems.add(number, text, f"expected 6 fields (qid Q0 docid rank score tag), got {len(fields)}")
            continue
        score = _parse_score(fields[4])
        reason = _score_problem(fields[4], score) or _ids_problem(fields[0], fields[2])
        if reason:
            problems.add(number, text, reason)
            continue
        if pairs.check(problems, number, text, fields[0], fields[2]):
            qids.append(fields[0])
            docs.append(fields[2])
            scores.append(score)
    return Run(qids, docs, np.array(scores, dtype=np.float64), source=src.name, _validated=True)


def _slow_qrels(src: _Source) -> tuple[list[str], list[str], list[int]]:
    problems, pairs = _Collector(src.name), _Pairs()
    qids, docs, grades = [], [], []
    for number, text, fields in _split_lines(src, problems):
        if len(fields) != 4:
            problems.add(number, text, f"expected 4 fields (qid iter docid rel), got {len(fields)}")
            continue
        reason = _grade_problem(fields[3]) or _ids_problem(fields[0], fields[2])
        if reason:
            problems.add(number, text, reason)
            continue
        if pairs.check(problems, number, text, fields[0], fields[2]):
            qids.append(fields[0])
            docs.append(fields[2])
            grades.append(int(fields[3]))
    problems.check()
    return qids, docs, grades


def _ids_problem(qid: str, doc: str) -> str | None:
    return _ids.id_problem(qid, "query ID") or _ids.id_problem(doc, "document ID")


def _fast_table(src: _Source, names: list[str], types: dict[str, pa.DataType]) -> pa.Table | None:
    """The file as an Arrow table when it is cleanly single-space separated; None to use the line reader."""
    import pyarrow.csv as pacsv

    if not _plain_layout(src):
        return None
    # One thread: on a loaded 2-core machine Arrow's threaded reader was 2-3x slower, and its blocks in flight
    # held ~170 MB more at 7M lines. Bigger blocks (fewer chunks) only for big files.
    big = src.size() > _BIG_FILE
    read = pacsv.ReadOptions(column_names=names, block_size=(2 if big else 1) << 20, use_threads=False)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=True)
    convert = pacsv.ConvertOptions(
        column_types=types,
        include_columns=list(types),
        null_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    try:
        with src.arrow_stream() as stream:
            return pacsv.read_csv(stream, read_options=read, parse_options=parse, convert_options=convert)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError):
        return None


def _fast_run(src: _Source) -> Run | None:
    names = ["qid", "q0", "docid", "rank", "score", "tag"]
    table = _fast_table(src, names, {"qid": pa.string(), "docid": pa.string(), "score": pa.float64()})
    if table is None:
        return None
    score = _ids.to_numpy(table.column("score"))
    if not np.isfinite(score).all() or _long_ids(table):  # NaN, 1e400 or a long ID: the line reader says
        return None
    run = Run(table.column("qid"), table.column("docid"), score, source=src.name, _validated=True)
    del table  # its score column and query strings are freed here
    run._drop_query_strings()
    return _checked(run)


def _fast_qrels(src: _Source) -> Qrels | None:
    names = ["qid", "iter", "docid", "rel"]
    table = _fast_table(src, names, {"qid": pa.string(), "docid": pa.string(), "rel": pa.int64()})
    if table is None or _long_ids(table):
        return None
    qrels = Qrels(
        table.column("qid"),
        table.column("docid"),
        _ids.to_numpy(table.column("rel")),
        source=src.name,
        _validated=True,
    )
    del table
    qrels._drop_query_strings()
    return _checked(qrels)


def _long_ids(table: pa.Table) -> bool:
    """True when an ID is longer than `_ids.MAX_ID_BYTES` (checked before any hash walks its bytes)."""
    return max(_ids.longest(table.column("qid")), _ids.longest(table.column("docid"))) > _ids.MAX_ID_BYTES


_R = TypeVar("_R", Qrels, Run)


def _checked(rows: _R) -> _R | None:
    """The rows, or None when a duplicate pair needs the line reader to be reported."""
    codes, _ = rows.query_codes()
    if _ids.may_repeat_pairs(codes, rows.doc_hashes()) and len(_ids.duplicate_rows(codes, rows.doc_id)):
        return None
    return rows


def read_run(
    source: Source,
    *,
    name: str | None = None,
    max_inflated_mb: float | None = None,
    max_line_mb: float | None = None,
) -> Run:
    """Read a TREC run (``qid Q0 docid rank score tag``).

    The run's name is ``name``, else the tag of its first line, else the file name. Errors: fewer than six
    fields, a score that is not a number (NaN included) or beyond the float64 range (``1e400``), an ID longer
    than 512 bytes or holding a line break, a document listed twice for one query. A gzip input is read in
    pieces (a file of repeated lines stops at its first piece). Limits (every reader): gzip content inflated
    to at most ``max_inflated_mb`` (default: ``QRELFORGE_MAX_INFLATED_MB``, else 4096), lines of at most
    ``max_line_mb`` (``QRELFORGE_MAX_LINE_MB``, else 16).

    >>> import io
    >>> read_run(io.StringIO("q1 Q0 D1 1 0.9 bm25\\nq1 Q0 D2 2 0.5 bm25\\n")).name
    'bm25'
    """
    src = _resolve(source, reader_limits(max_inflated_mb=max_inflated_mb, max_line_mb=max_line_mb))
    if src.gzipped:
        return _joined(list(_run_chunks(src, _GZIP_PIECE, name)), src)
    run = plain_run(src) or _fast_run(src)
    if run is None:
        problems = _Collector(src.name)
        run = _slow_run(src, problems, _Pairs())
        problems.check()
    run.name = name or _first_tag(src) or Path(src.name).name
    return run


_GZIP_PIECE = 1 << 20


def _joined(pieces: list[Run], src: _Source) -> Run:
    """One run of the pieces `_run_chunks` read (checked already: no pair twice)."""
    if len(pieces) == 1:
        return pieces[0]
    run = Run(
        pa.chunked_array([p.query_id for p in pieces], pa.string()).combine_chunks(),
        pa.chunked_array([p.doc_id for p in pieces], pa.string()).combine_chunks(),
        np.concatenate([p.score for p in pieces]),
        source=src.name,
        _validated=True,
    )
    run.name = pieces[0].name
    return run


def _first_tag(src: _Source) -> str | None:
    for _, raw in src.lines():
        fields = _SEP.split(raw.decode("utf-8", "replace").strip(" \t\r"))
        if len(fields) >= 6:
            return fields[5]
        if fields != [""]:
            return None
    return None


def iter_run_chunks(
    source: Source,
    *,
    rows: int = 1_000_000,
    name: str | None = None,
    max_inflated_mb: float | None = None,
    max_line_mb: float | None = None,
) -> Iterator[Run]:
    """Read a TREC run piece by piece: a `Run` for every ``rows`` lines (blank lines count; the last piece may
    be shorter, an input without lines gives one empty piece), named as `read_run` names the whole run.

    Concatenated, the pieces hold exactly `read_run`'s rows in file order, and a bad file raises the same
    `FormatError` (same rules, same problems with the same line numbers, the same whitespace, CRLF, BOM and
    gzip handling), once the input has been read through or at 1000 problems. No piece is yielded after the
    one holding the first bad line; the pieces yielded before it belong to a bad file, so a caller that writes
    them must do so in a transaction it rolls back on the error.

    Memory: one piece (its bytes and columns), plus 8 bytes per row read — a sorted array of 64-bit hashes of
    the (query, document) pairs, to find a duplicate across pieces. A hash met again is confirmed by
    re-reading the lines before the piece (which also finds the line of the first occurrence), so a hash
    collision never raises an error.

    >>> import io
    >>> text = "q1 Q0 D1 1 0.9 bm25\\nq1 Q0 D2 2 0.5 bm25\\nq2 Q0 D1 1 0.7 bm25\\n"
    >>> [(len(p), p.name) for p in iter_run_chunks(io.StringIO(text), rows=2)]
    [(2, 'bm25'), (1, 'bm25')]
    """
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise ValueError(f"rows must be an int >= 1; got {rows!r}")
    limits = reader_limits(max_inflated_mb=max_inflated_mb, max_line_mb=max_line_mb)
    return _run_chunks(_resolve(source, limits), rows, name)


def _run_chunks(src: _Source, rows: int, name: str | None) -> Iterator[Run]:
    name = name or _first_tag(src) or Path(src.name).name
    problems, seen = _Collector(src.name), _PairHashes(src.size() // _MIN_RUN_LINE + 1)
    for piece in _pieces(src, rows):
        run = _piece_run(src, piece, problems, seen)
        del piece  # not held while the caller works on the run
        if not problems.problems:
            run.name = name
            yield run
    problems.check()


def _pieces(src: _Source, lines: int) -> Iterator[_Source]:
    """The input cut into pieces of ``lines`` whole lines (the last one: the rest, yielded if not empty or if
    it is the only piece), each numbered from its first line."""
    first, parts, count = 1, [], 0
    for block in src.blocks():
        parts.append(block)
        count += _newlines(block, len(block))
        if count < lines:
            continue
        data = b"".join(parts)
        ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)[lines - 1 :: lines] + 1
        for start, end in zip([0, *ends[:-1].tolist()], ends.tolist(), strict=True):
            yield src.piece(data[start:end], first)
            first += lines
        parts, count = [data[ends[-1] :]], count - lines * len(ends)
    rest = b"".join(parts)
    if rest or first == 1:
        yield src.piece(rest, first)


def _piece_run(src: _Source, piece: _Source, problems: _Collector, seen: _PairHashes) -> Run:
    """The rows of one piece (fast reader if it can, else the line reader), checked against the (query,
    document) pairs of the pieces before it (``seen``, which then takes this piece's pairs). When the piece
    has a bad line or repeats an earlier pair, the line reader reads it again, reporting to ``problems``.

    The scratch pass that asks whether a piece is clean stops at its first bad line; only a bad piece after
    the first reads its good rows through (their pairs may repeat earlier pieces'): a piece of a million
    repeated lines costs its first thousand lines, not a million problems."""
    run = _fast_run(piece)
    clean = run is not None
    if run is None:
        try:
            run = _slow_run(piece, _Collector(src.name, limit=1), _Pairs())
            clean = True
        except FormatError:
            clean = False
            if not seen.held:
                run = _slow_run(piece, problems, _Pairs())
                seen.add(_pair_keys(run))
                return run
            run = _slow_run(piece, _Collector(src.name, limit=None), _Pairs())
    keys = _pair_keys(run)
    earlier = _earlier_lines(src, piece.first_line, run, seen.hits(keys))
    if earlier or not clean:
        run = _slow_run(piece, problems, _Pairs(earlier))
        keys = _pair_keys(run)
    seen.add(keys)
    return run


def _pair_keys(run: Run) -> np.ndarray:
    """A 64-bit hash of each row's (query, document) pair (equal pairs, equal hashes)."""
    return _ids.hash_strings(run.doc_id, seed=_ids.hash_strings(run.query_id))


def _earlier_lines(src: _Source, before: int, run: Run, rows: np.ndarray) -> dict[tuple[str, str], int]:
    """(query, document) → line of its first accepted row before line ``before``, for the pairs of ``rows``
    (of ``run``) that really were read there: the exact check behind a hash hit. Re-reads the input up to
    ``before`` with the line reader's rules (a row is accepted with six fields and a numeric score)."""
    if not len(rows):
        return {}
    take = _ids.indices(rows)
    wanted = set(zip(run.query_id.take(take).to_pylist(), run.doc_id.take(take).to_pylist(), strict=True))
    found: dict[tuple[str, str], int] = {}
    for number, _, fields in _split_lines(src, _Collector(src.name, limit=None)):
        if number >= before:
            break
        if len(fields) >= 6 and (fields[0], fields[2]) in wanted and _parse_score(fields[4]) is not None:
            found.setdefault((fields[0], fields[2]), number)
    return found


class _PairHashes:
    """The 64-bit (query, document) hashes of the rows read so far, kept sorted: 8 bytes a row.

    ``capacity`` rows are reserved at once (memory that is never written costs nothing); past it the array
    doubles, copying once (a gzip input, whose size is only estimated). `add` merges in place: the held hashes
    move towards the end block by block, last block first, so no second array of all of them is ever made.
    """

    def __init__(self, capacity: int):
        self._keys, self._n = np.empty(max(capacity, 1), dtype=np.uint64), 0

    @property
    def held(self) -> int:
        return self._n

    def hits(self, keys: np.ndarray) -> np.ndarray:
        """The positions in ``keys`` of the hashes held already."""
        if not self._n or not len(keys):
            return np.zeros(0, dtype=np.int64)
        held = self._keys[: self._n]
        at = np.minimum(np.searchsorted(held, keys), self._n - 1)
        return np.flatnonzero(held[at] == keys)

    def add(self, keys: np.ndarray) -> None:
        """Hold ``keys`` too (equal hashes are all kept)."""
        new, n = np.sort(keys), self._n
        if len(self._keys) < n + len(new):
            grown = np.empty(n + max(n, len(new)), dtype=np.uint64)
            grown[:n] = self._keys[:n]
            self._keys = grown
        before = np.searchsorted(self._keys[:n], new, side="right")  # held hashes <= each new one
        for hi in range(n, 0, -_MERGE_BLOCK):
            self._move_back(max(hi - _MERGE_BLOCK, 0), hi, before)
        self._keys[before + np.arange(len(new))] = new
        self._n = n + len(new)

    def _move_back(self, lo: int, hi: int, before: np.ndarray) -> None:
        """Move held hashes ``lo:hi`` back by how many new hashes sort below each: held hash ``i`` has
        ``#{j: before[j] <= i}`` of them (``before`` is sorted)."""
        a, b = np.searchsorted(before, [lo, hi])
        shift = a + np.cumsum(np.bincount(before[a:b] - lo, minlength=hi - lo))
        block = self._keys[lo:hi].copy()
        self._keys[np.arange(lo, hi) + shift] = block


class QrelsFormat(Choice):
    """The qrels layouts `read_qrels` and `write_qrels` know (``auto``: read only, guessed from the input)."""

    AUTO = "auto"
    TREC = "trec"  # qid iter docid rel
    BEIR = "beir"  # header, then query-id<TAB>corpus-id<TAB>score


def read_qrels(
    source: Source,
    *,
    format: str = QrelsFormat.AUTO,
    max_inflated_mb: float | None = None,
    max_line_mb: float | None = None,
) -> Qrels:
    """Read qrels: TREC (``qid iter docid rel``) or BEIR TSV (``query-id corpus-id score`` with a header).

    ``format="auto"`` picks BEIR for ``.tsv`` files and for content whose first line has three tab-separated
    fields, TREC otherwise. Errors: a wrong number of fields, a grade that is not an integer, a document
    judged twice for one query, an ID longer than 512 bytes or holding a line break. Limits: as `read_run`.
    """
    if format not in tuple(QrelsFormat):
        raise FormatError(Problem("<input>", None, repr(format), "format must be 'auto', 'trec' or 'beir'"))
    src = _resolve(source, reader_limits(max_inflated_mb=max_inflated_mb, max_line_mb=max_line_mb))
    if format == QrelsFormat.BEIR or (format == QrelsFormat.AUTO and _looks_beir(src)):
        return _read_beir(src)
    qrels = _gzip_qrels(src) if src.gzipped else plain_qrels(src) or _fast_qrels(src)
    if qrels is None:
        qids, docs, grades = _slow_qrels(src)
        qrels = Qrels(qids, docs, np.array(grades, dtype=np.int64), source=src.name, _validated=True)
    return qrels


def _gzip_qrels(src: _Source) -> Qrels | None:
    """Gzip qrels read in pieces (never a whole bomb in Arrow): None at the first piece the vectorized reader
    refuses or that repeats an earlier pair, for the line reader (which stops at 1000 problems) to report."""
    parts: list[Qrels] = []
    seen = _PairHashes(src.size() // _MIN_RUN_LINE + 1)
    for piece in _pieces(src, _GZIP_PIECE):
        qrels = _fast_qrels(piece)
        if qrels is None:
            return None
        keys = _ids.hash_strings(qrels.doc_id, seed=_ids.hash_strings(qrels.query_id))
        if len(seen.hits(keys)):
            return None
        seen.add(keys)
        parts.append(qrels)
    if len(parts) == 1:
        return parts[0]
    return Qrels(
        pa.chunked_array([p.query_id for p in parts], pa.string()).combine_chunks(),
        pa.chunked_array([p.doc_id for p in parts], pa.string()).combine_chunks(),
        np.concatenate([p.relevance for p in parts]),
        source=src.name,
        _validated=True,
    )


def write_run(run: Run, dest: Source, *, tag: str | None = None) -> None:
    """Write a TREC run in evaluation order, ranks 1..n per query, scores in shortest round-trip form."""
    frame = run.ranked()
    tag = tag or run.name or "qrelforge"
    if _SEP.search(tag) or not tag:
        raise FormatError(
            Problem("<write_run>", None, tag, "tag must be a non-empty string without spaces or tabs")
        )
    ranks = (_ids.position_within(frame.query_codes()[0]) + 1).tolist()
    rows = zip(frame.query_id.to_pylist(), frame.doc_id.to_pylist(), ranks, frame.score.tolist(), strict=True)
    _write_lines(dest, (f"{q} Q0 {d} {r} {s!r} {tag}\n" for q, d, r, s in rows))


def write_qrels(qrels: Qrels, dest: Source, *, format: str = QrelsFormat.TREC) -> None:
    """Write qrels as TREC (``qid 0 docid rel``) or BEIR TSV (with its header)."""
    if format not in (QrelsFormat.TREC, QrelsFormat.BEIR):
        raise FormatError(Problem("<write_qrels>", None, repr(format), "format must be 'trec' or 'beir'"))
    rows = zip(qrels.query_id.to_pylist(), qrels.doc_id.to_pylist(), qrels.relevance.tolist(), strict=True)
    if format == QrelsFormat.TREC:
        _write_lines(dest, (f"{q} 0 {d} {g}\n" for q, d, g in rows))
    else:
        _write_lines(dest, ["query-id\tcorpus-id\tscore\n", *(f"{q}\t{d}\t{g}\n" for q, d, g in rows)])
