"""TREC qrels and runs (private; re-exported by `metrics.formats`): the line-by-line reader (the reference for
what is accepted), the vectorized reader for large well-formed files (Arrow's CSV reader), runs read in pieces
(`iter_run_chunks`), and the writers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from metrics import _ids
from metrics._choice import Choice
from metrics._lazy import lazy
from metrics.data import Qrels, Run
from metrics.errors import FormatError, Problem, quoted
from metrics.formats import _pieces
from metrics.formats._beir import _looks_beir, _read_beir
from metrics.formats._lines import (
    _BIG_FILE,
    _MIN_RUN_LINE,
    _SEP,
    Source,
    _Collector,
    _comment,
    _grade,
    _grade_problem,
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
from metrics.formats._pieces import PairHashes, PieceKeys, RunColumns, pieces
from metrics.formats._plain import plain_qrels, plain_run

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy("pyarrow")

_SEP_BYTES = re.compile(rb"[ \t]+")  # `_lines._SEP` for bytes: a line is split before it is decoded


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


def _slow_qrels(src: _Source, problems: _Collector) -> Qrels:
    """The qrels read line by line (the reference reader); raises every bad line (``problems``)."""
    pairs = _Pairs()
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
            grades.append(_grade(fields[3]))
    problems.check()
    return Qrels(qids, docs, np.array(grades, dtype=np.int64), source=src.name, _validated=True)


def _ids_problem(qid: str, doc: str) -> str | None:
    return _ids.id_problem(qid, "query ID") or _ids.id_problem(doc, "document ID")


def _fast_table(src: _Source, names: list[str], types: dict[str, pa.DataType]) -> pa.Table | None:
    """The file as an Arrow table when it is cleanly single-space separated; None to use the line reader."""
    import pyarrow.csv as pacsv

    if not _plain_layout(src):
        return None
    # One thread: Arrow's threaded reader is slower on a loaded machine and holds more blocks in flight.
    # Bigger blocks (fewer chunks) only for big files.
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
    table = _fast_table(src, names, {"qid": pa.string(), "docid": pa.string(), "rel": pa.string()})
    if table is None or _long_ids(table):
        return None
    grades = _grades(table.column("rel"))
    if grades is None:
        return None
    qrels = Qrels(table.column("qid"), table.column("docid"), grades, source=src.name, _validated=True)
    del table
    qrels._drop_query_strings()
    return _checked(qrels)


def _grades(column: pa.ChunkedArray) -> np.ndarray | None:
    """The grades of a column of text as int64: integers, or integral floats (``3.0`` is 3, as in
    `_lines._grade`); None when one is anything else (the line reader names it)."""
    import pyarrow.compute as pc

    try:
        return _ids.to_numpy(column.cast(pa.int64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    if not pc.all(pc.match_substring_regex(column, r"^[+-]?[0-9]+(\.0*)?$")).as_py():
        return None
    try:
        integral = pc.replace_substring_regex(pc.replace_substring_regex(column, r"\.0*$", ""), r"^\+", "")
        return _ids.to_numpy(integral.cast(pa.int64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


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

    Lines whose first character other than a blank is ``#`` are comments. The rank column is not read: the
    order is by score, then by document ID, as trec_eval ranks. Any input but a plain file of at most 1 MB
    is read in pieces of about 1 MB (memory: the run and one piece).

    Args:
        source: a path (plain or gzip) or an open text or binary file.
        name: the run's name; default: the tag of its first line, else the file name.
        max_inflated_mb: the most megabytes gzip content may inflate to (default:
            ``QRELFORGE_MAX_INFLATED_MB``, else 4096).
        max_line_mb: the longest line, in megabytes (default: ``QRELFORGE_MAX_LINE_MB``, else 16).

    Returns:
        The `Run`.

    Raises:
        FormatError: every bad line (up to 1000), each with its file, line and value: fewer than six fields,
            a score that is not a number (NaN included) or beyond the float64 range (``1e400``), an ID longer
            than 512 bytes or holding a line break, a document listed twice for one query; or a limit passed.

    >>> import io
    >>> read_run(io.StringIO("q1 Q0 D1 1 0.9 bm25\\nq1 Q0 D2 2 0.5 bm25\\n")).name
    'bm25'
    """
    src = _resolve(source, reader_limits(max_inflated_mb=max_inflated_mb, max_line_mb=max_line_mb))
    run = plain_run(src) if src.size() <= _pieces.GATHER_BYTES else None
    if run is None:
        return next(_run_chunks(src, None, name))
    run.name = name or _tag(_first_fields(src)) or Path(src.name).name
    return run


def _joined(kind: type[_R], parts: list[_R], src: _Source) -> _R:
    """One `Run` or `Qrels` (``kind``) of ``parts`` (rows of one input, checked already: no pair twice), its
    query IDs kept as codes (each part's codes mapped onto the distinct IDs of all, in order of first
    appearance)."""
    if len(parts) == 1:
        return parts[0]
    names: dict[str, int] = {}
    codes = [np.zeros(0, np.int32)]
    for part in parts:
        part_codes, distinct = part._query_code_list()
        table = np.array([names.setdefault(q, len(names)) for q in distinct], dtype=np.int32)
        codes.append(table[part_codes] if len(table) else part_codes)
    docs = pa.chunked_array([c for p in parts for c in _ids._chunks(p.doc_id)], pa.string()).combine_chunks()
    rows = kind._packed(np.concatenate(codes), list(names), cast(Any, docs), src.name)
    if isinstance(rows, Run):
        rows.score = np.concatenate([np.zeros(0), *(cast(Run, p).score for p in parts)])
        rows.name, rows.empty_queries = None, ()
    else:
        rows.relevance = np.concatenate([np.zeros(0, np.int64), *(cast(Qrels, p).relevance for p in parts)])
    return rows


def _rows(run: Run, start: int, stop: int) -> Run:
    """Rows ``start:stop`` of ``run``."""
    if (start, stop) == (0, len(run)):
        return run
    return Run(
        run.query_id.slice(start, stop - start),
        run.doc_id.slice(start, stop - start),
        run.score[start:stop],
        source=run.source,
        _validated=True,
    )


def _first_fields(src: _Source) -> list[str] | None:
    """The fields of the first line that is neither blank nor a comment, or None when there is none."""
    for _, raw in src.lines():
        if not _comment(raw):
            # split before decoding: a line of megabytes of blanks is never decoded whole
            parts = _SEP_BYTES.split(raw.removesuffix(b"\r").strip(b" \t"))
            if parts != [b""]:
                return [part.decode("utf-8", "replace") for part in parts]
    return None


def _tag(fields: list[str] | None) -> str | None:
    """The run tag on a line of ``fields``, if it has one."""
    return fields[5] if fields is not None and len(fields) >= 6 else None


def iter_run_chunks(
    source: Source,
    *,
    rows: int = 1_000_000,
    name: str | None = None,
    max_inflated_mb: float | None = None,
    max_line_mb: float | None = None,
) -> Iterator[Run]:
    """Read a TREC run piece by piece: a `Run` for every ``rows`` rows.

    The last piece may be shorter; an input without rows gives one empty run. Concatenated, the pieces hold
    exactly `read_run`'s rows in file order, and a bad file raises the same `FormatError` (same rules, same
    problems with the same line numbers, the same whitespace, CRLF, BOM and gzip handling), once the input
    has been read through or at 1000 problems. No piece is yielded after the one holding the first bad line;
    the pieces yielded before it belong to a bad file, so a caller that writes them must do so in a
    transaction it rolls back on the error.

    Memory: the input is read in pieces of about 4 MB of whole lines (`_pieces.pieces`; one longer line, up to
    the line limit, is a piece of its own; blank lines are counted, never kept), so what is held is one piece
    (its bytes and columns) and the rows of one run not yet yielded, plus 8 bytes per row read — 64-bit hashes
    of the (query, document) pairs, to find a duplicate across pieces. A hash met again is confirmed by
    re-reading the lines before the piece (which also finds the line of the first occurrence), so a hash
    collision never raises an error.

    Args:
        source: as `read_run` takes it.
        rows: the rows of each piece, >= 1.
        name: as `read_run` takes it; every piece has the name.
        max_inflated_mb, max_line_mb: the limits, as in `read_run`.

    Yields:
        The pieces, as `Run` objects, in file order.

    Raises:
        ValueError: ``rows`` is not an int >= 1.
        FormatError: as `read_run`, after the pieces before the first bad line.

    >>> import io
    >>> text = "q1 Q0 D1 1 0.9 bm25\\nq1 Q0 D2 2 0.5 bm25\\nq2 Q0 D1 1 0.7 bm25\\n"
    >>> [(len(p), p.name) for p in iter_run_chunks(io.StringIO(text), rows=2)]
    [(2, 'bm25'), (1, 'bm25')]
    """
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise ValueError(f"rows must be an int >= 1; got {rows!r}")
    limits = reader_limits(max_inflated_mb=max_inflated_mb, max_line_mb=max_line_mb)
    return _run_chunks(_resolve(source, limits), rows, name)


def _run_chunks(src: _Source, rows: int | None, name: str | None) -> Iterator[Run]:
    """The run read in pieces (`_pieces.pieces`), as runs of ``rows`` rows (the last one: the rest; one
    empty run for an input without rows), or, with ``rows=None``, as one run. Named ``name``, else by the
    tag of the first line that is neither blank nor a comment, else by the file name."""
    capacity = src.size() // _MIN_RUN_LINE + 1
    gathered = RunColumns(src.size(), capacity, lambda run: _pair_keys(run)) if rows is None else None
    problems = _Collector(src.name)
    seen: PairHashes | RunColumns = gathered if gathered is not None else PairHashes(capacity)
    held: list[Run] = []
    count, given, named = 0, False, name is not None
    for piece in pieces(src, (lambda: gathered.piece_bytes) if gathered is not None else None):
        if not named:
            fields = _first_fields(piece)
            if fields is not None:
                name, named = _tag(fields), True
        run = _piece_run(src, piece, problems, seen)
        size = len(piece.data or b"")
        del piece  # not held while the caller works on the run
        if problems.problems and gathered is not None:
            gathered.stop()
        if problems.problems or (gathered is not None and gathered.take(run, size)):
            continue
        at = 0
        while rows is not None and len(run) - at >= rows - count:
            held.append(_rows(run, at, at + rows - count))
            at += rows - count
            yield _named(_joined(Run, held, src), name, src)
            held, count, given = [], 0, True
        if at < len(run):
            held.append(_rows(run, at, len(run)))
            count += len(run) - at
    problems.check()
    if gathered is not None and (len(gathered) or not held):
        held.insert(0, gathered.run(src.name))
    if held or not given:
        yield _named(_joined(Run, held, src), name, src)


def _named(run: Run, name: str | None, src: _Source) -> Run:
    run.name = name or Path(src.name).name
    return run


def _piece_run(src: _Source, piece: _Source, problems: _Collector, seen: PairHashes | RunColumns) -> Run:
    """The rows of one piece (fast reader if it can, else the line reader), checked against the (query,
    document) pairs of the pieces before it (``seen``, which then takes this piece's pairs). When the piece
    has a bad line or repeats an earlier pair, the line reader reads it again, reporting to ``problems``.

    The scratch pass that asks whether a piece is clean stops at its first bad line; only a bad piece after
    the first reads its good rows through (their pairs may repeat earlier pieces'): a piece of a million
    repeated lines costs its first thousand lines, not a million problems."""
    run = plain_run(piece) or _fast_run(piece)
    clean = run is not None
    if run is None:
        try:
            run = _slow_run(piece, _Collector(src.name, limit=1), _Pairs())
            clean = True
        except FormatError:
            clean = False
            if not seen.held:
                run = _slow_run(piece, problems, _Pairs())
                seen.add(_pair_keys(run), _query_names(run))
                return run
            run = _slow_run(piece, _Collector(src.name, limit=None), _Pairs())
    keys = _piece_keys(run)
    earlier = _earlier_lines(
        src, piece.first_line, run, seen.hits(keys, _query_names(run), run._query_code_list()[0])
    )
    if earlier or not clean:
        run = _slow_run(piece, problems, _Pairs(earlier))
        keys = _piece_keys(run)
    seen.add(keys, _query_names(run))
    return run


def _query_names(rows: Run | Qrels) -> list[str]:
    """The distinct query IDs of ``rows``, in the order of their codes."""
    return rows._query_code_list()[1]


def _pair_keys(rows: Run | Qrels, take: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit hash of each row's (query, document) pair (equal pairs, equal hashes, in any piece): the
    document's hash mixed with its query ID's; of the rows at ``take`` only, when given."""
    codes, distinct = rows._query_code_list()
    docs = rows.doc_hashes()
    if take is not None:
        codes, docs = codes[take], docs[take]
    return _ids.pair_hashes(docs, _ids.hash_strings(_ids.Packed.of(distinct))[codes])


def _piece_keys(run: Run) -> PieceKeys:
    """`_pair_keys` of ``run``'s rows, computed when asked."""
    return PieceKeys(len(run), lambda take: _pair_keys(run, take))


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

    An integral float grade (``3.0``) is that integer. Comment lines and pieces: as `read_run`.

    Args:
        source: a path (plain or gzip) or an open text or binary file.
        format: ``"trec"``, ``"beir"`` or ``"auto"``: BEIR for ``.tsv`` files and for content whose first
            line has three tab-separated fields, TREC otherwise.
        max_inflated_mb, max_line_mb: the limits, as in `read_run`.

    Returns:
        The `Qrels`.

    Raises:
        FormatError: an unknown ``format``; every bad line, with its file, line and value: a wrong number of
            fields, a grade that is not an integer, a document judged twice for one query, an ID longer than
            512 bytes or holding a line break.

    >>> import io
    >>> qrels = read_qrels(io.StringIO("q1 0 D1 2\\nq1 0 D2 0.0\\n"))
    >>> qrels.doc_id.to_pylist(), qrels.relevance.tolist()
    (['D1', 'D2'], [2, 0])
    """
    if format not in tuple(QrelsFormat):
        raise FormatError(Problem("<input>", None, repr(format), "format must be 'auto', 'trec' or 'beir'"))
    src = _resolve(source, reader_limits(max_inflated_mb=max_inflated_mb, max_line_mb=max_line_mb))
    if format == QrelsFormat.BEIR or (format == QrelsFormat.AUTO and _looks_beir(src)):
        return _read_beir(src)
    qrels = plain_qrels(src) or _piece_qrels(src)
    if qrels is None:
        qrels = _slow_qrels(src, _Collector(src.name))
    return qrels


def _piece_qrels(src: _Source) -> Qrels | None:
    """Qrels read in pieces (`_pieces.pieces`: never a whole file in Arrow or in memory): each piece by the
    vectorized reader, else by the line reader's scratch pass. None at the first piece with a bad line or a
    pair met in an earlier piece (or a hash collision with one), for the line reader to read the whole input
    and report (it stops at 1000 problems)."""
    parts: list[Qrels] = []
    seen = PairHashes(src.size() // _MIN_RUN_LINE + 1)
    for piece in pieces(src):
        qrels = _fast_qrels(piece)
        if qrels is None:
            try:
                qrels = _slow_qrels(piece, _Collector(src.name, limit=1))
            except FormatError:
                return None
        keys = _pair_keys(qrels)
        names, codes = _query_names(qrels), qrels._query_code_list()[0]
        if len(seen.hits(keys, names, codes)):
            return None
        seen.add(keys, names)
        parts.append(qrels)
    return _joined(Qrels, parts, src)


def write_run(run: Run, dest: Source, *, tag: str | None = None) -> None:
    """Write a TREC run in evaluation order, ranks 1..n per query, scores in shortest round-trip form.

    Args:
        run: the run.
        dest: a path or an open text file.
        tag: the last column; default: the run's name, else ``qrelforge``.

    Raises:
        FormatError: a tag that is empty or holds a blank; a query ID starting with ``#`` (its line would
            read as a comment).

    >>> import io
    >>> from metrics.data import Run
    >>> out = io.StringIO()
    >>> write_run(Run.from_dict({"q1": {"D1": 0.5, "D2": 0.9}}), out, tag="bm25")
    >>> print(out.getvalue(), end="")
    q1 Q0 D2 1 0.9 bm25
    q1 Q0 D1 2 0.5 bm25
    """
    frame = run.ranked()
    tag = tag or run.name or "qrelforge"
    if _SEP.search(tag) or not tag:
        raise FormatError(
            Problem("<write_run>", None, tag, "tag must be a non-empty string without spaces or tabs")
        )
    _check_no_comment("<write_run>", run)
    ranks = (_ids.position_within(frame.query_codes()[0]) + 1).tolist()
    rows = zip(frame.query_id.to_pylist(), frame.doc_id.to_pylist(), ranks, frame.score.tolist(), strict=True)
    _write_lines(dest, (f"{q} Q0 {d} {r} {s!r} {tag}\n" for q, d, r, s in rows))


def write_qrels(qrels: Qrels, dest: Source, *, format: str = QrelsFormat.TREC) -> None:
    """Write qrels as TREC (``qid 0 docid rel``) or BEIR TSV (with its header).

    Args:
        qrels: the qrels.
        dest: a path or an open text file.
        format: ``"trec"`` or ``"beir"``.

    Raises:
        FormatError: another ``format``; in TREC, a query ID starting with ``#`` (its line would read as a
            comment).

    >>> import io
    >>> from metrics.data import Qrels
    >>> out = io.StringIO()
    >>> write_qrels(Qrels.from_dict({"q1": {"D1": 2}}), out, format="beir")
    >>> out.getvalue().splitlines()
    ['query-id\\tcorpus-id\\tscore', 'q1\\tD1\\t2']
    """
    if format not in (QrelsFormat.TREC, QrelsFormat.BEIR):
        raise FormatError(Problem("<write_qrels>", None, repr(format), "format must be 'trec' or 'beir'"))
    rows = zip(qrels.query_id.to_pylist(), qrels.doc_id.to_pylist(), qrels.relevance.tolist(), strict=True)
    if format == QrelsFormat.TREC:
        _check_no_comment("<write_qrels>", qrels)
        _write_lines(dest, (f"{q} 0 {d} {g}\n" for q, d, g in rows))
    else:
        _write_lines(dest, ["query-id\tcorpus-id\tscore\n", *(f"{q}\t{d}\t{g}\n" for q, d, g in rows)])


def _check_no_comment(where: str, rows: Run | Qrels) -> None:
    """Refuse rows whose TREC line would start with ``#``: every TREC reader (trec_eval 10, ours) would skip
    it as a comment, losing the row without a word."""
    hashed = [q for q in _query_names(rows) if q.startswith("#")]
    if hashed:
        raise FormatError(
            Problem(
                where,
                None,
                hashed[0],
                f"query ID {quoted(hashed[0])} starts with '#': its TREC lines would read as comments",
            )
        )
