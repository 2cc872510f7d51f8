"""The numpy-only reader of plain TREC files (private; `read_run` and `read_qrels` try it first).

A file qualifies when it is ASCII, not gzip, without BOM, tabs, carriage returns or other line-breaking bytes,
and every line holds exactly the expected fields (six for a run, four for qrels) separated by single spaces,
with a final newline optional, no line a ``#`` comment; and it is at most 48 MB (`read_run` hands it a
larger run, and any run over 1 MB, as pieces of about 1 MB: `metrics.formats._pieces`). Its scores must
be plain decimals (``[+-]digits.digits[e[+-]digits]``) parsed exactly as ``float()`` does, grades integers of
at most 16 characters (an integral float such as ``3.0`` is that integer), IDs at most `_ids.MAX_ID_BYTES`
long, and no (query, document) pair may repeat. Anything else returns None, and the Arrow reader or the line
reader (the reference for what is accepted, and for every error message) reads the file instead: this path
only ever accepts what those accept, with the same values.

It never imports pyarrow: the file is split into columns with numpy, block by block; query IDs become codes
(one Python string per distinct query) and document IDs stay packed bytes (`_ids.Packed`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from metrics import _ids
from metrics.data import Qrels, Run
from metrics.formats._lines import _BOM, _Source

# Bytes of the file split at once (whole lines). 1 MB: a block's temporaries stay in the CPU's cache, and a
# 1M-line run peaks at ~110 MB RSS (4 MB blocks: ~127 MB, and ~4% slower; interleaved, 2026-12-01, load 4-6).
_BLOCK = 1 << 20
# Files (qrels; pieces of a run) up to this size are read here whole; bigger ones go to the piece readers.
_PLAIN_MAX = 48 << 20
_FIRST_LINE = 4096  # bytes of a piece's first line, at most (`_content`)
_WORDS_DOC = 64  # document IDs up to this long are cut from their 8-byte words (`_doc_ids`)
_MIN_QUERY_RUN = 8  # rows per query on average, else the query IDs are left to Arrow
_FAST_DIGITS = 15  # digits of a score `_decimals` parses (10**15 < 2**53: exact as a double)
_POWERS_OF_TEN = 10.0 ** np.arange(_FAST_DIGITS + 1)
_SCORE_BYTES = np.zeros(256, dtype=bool)
_SCORE_BYTES[list(b"0123456789.eE+-\x00")] = True
_GRADE_BYTES = np.zeros(256, dtype=bool)
_GRADE_BYTES[list(b"0123456789+-.\x00")] = True
# _LOW_BYTES[r] keeps the first r bytes of a little-endian 8-byte word (its low r bytes)
_LOW_BYTES = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype=np.uint64)


class _NotPlain(Exception):
    """The file is not plain: another reader takes it."""


def plain_run(src: _Source) -> Run | None:
    """The run, or None when the file is not plain (see the module)."""
    try:
        codes, names, docs, hashes, values = _read(src, fields=6, value_field=4, grade=False)
    except _NotPlain:
        return None
    run: Run = Run._packed(codes, names, docs, src.name, hashes)
    run.score, run.name, run.empty_queries = values, None, ()
    return run if not _ids.may_repeat_pairs(codes, run.doc_hashes()) else None


def plain_qrels(src: _Source) -> Qrels | None:
    """The qrels, or None when the file is not plain."""
    try:
        codes, names, docs, hashes, values = _read(src, fields=4, value_field=3, grade=True)
    except _NotPlain:
        return None
    qrels: Qrels = Qrels._packed(codes, names, docs, src.name, hashes)
    qrels.relevance = values
    return qrels if not _ids.may_repeat_pairs(codes, qrels.doc_hashes()) else None


def _content(src: _Source) -> np.ndarray:
    """The file's bytes (a final newline added), read straight into numpy (``np.fromfile``: about half the
    time of ``f.read()``, which copies through a growing buffer); raises unless ASCII without BOM, and for
    content in memory (a piece) when its first line is longer than `_FIRST_LINE` (no plain line is, short of
    a long run tag: the other readers take those without this reader's temporaries)."""
    if src.gzipped or src.size() > _PLAIN_MAX:
        raise _NotPlain
    if src.path is None:
        data = src.data or b""
        if len(data) > _FIRST_LINE and data.find(b"\n", 0, _FIRST_LINE) < 0:
            raise _NotPlain
        buf = np.frombuffer(data, dtype=np.uint8)
    else:
        buf = np.fromfile(src.path, dtype=np.uint8)
    if len(buf) and buf[-1] != ord("\n"):
        buf = np.append(buf, np.uint8(ord("\n")))
    if not len(buf) or buf[:3].tobytes() == _BOM or int(buf.max()) > 127:
        raise _NotPlain
    return buf


def _read(src: _Source, *, fields: int, value_field: int, grade: bool) -> tuple[Any, ...]:
    buf = _content(src)
    blocks = _blocks(buf)
    if len(blocks) == 1:  # (a piece) the block's separators, found once: they count its lines and spaces
        lo, hi = blocks[0]
        controls: np.ndarray | None = np.flatnonzero(buf[lo:hi] <= 32)
        kinds = buf[lo:hi][controls]
        lines, spaces = [_count(kinds, ord("\n"))], _count(kinds, ord(" "))
    else:
        controls, lines = None, [_count(buf[lo:hi], ord("\n")) for lo, hi in blocks]
    rows = sum(lines)
    if src.data is not None and src.data.endswith(b"\n"):  # (no newline was added by `_content`)
        src.newlines = rows
    codes = np.empty(rows, dtype=np.int32)
    values = np.empty(rows, dtype=np.int64 if grade else np.float64)
    doc_lengths = np.empty(rows, dtype=np.uint16)  # each checked against `_ids.MAX_ID_BYTES` first
    doc_parts: list[np.ndarray] = []  # per block: the IDs' bytes end to end, or their cells (2-D)
    hash_parts: list[np.ndarray | None] = []
    names: dict[str, int] = {}
    at = 0
    for (lo, hi), count in zip(blocks, lines, strict=True):
        block = buf[lo:hi]
        if controls is None:
            sep = _separators(block, fields, count, _count(block, ord(" ")))
        else:
            sep, controls = _separators(block, fields, count, spaces, controls), None
        n = len(sep)
        starts = np.empty(n, dtype=np.int64)
        starts[0] = 0
        starts[1:] = sep[:-1, fields - 1] + 1
        if int((sep[:, -1] - starts).max()) > src.limits.line:
            raise _NotPlain  # the line readers report the long line
        if (block[starts] == ord("#")).any():
            raise _NotPlain  # a comment line: the line readers skip it
        _query_codes(block, starts, sep[:, 0], names, codes[at : at + n])
        doc_start, doc_end = sep[:, 1] + 1, sep[:, 2]
        if int((doc_end - doc_start).max()) > _ids.MAX_ID_BYTES:
            raise _NotPlain
        doc_lengths[at : at + n] = doc_end - doc_start
        doc_bytes, doc_hashes = _doc_ids(block, doc_start, doc_end)
        doc_parts.append(doc_bytes)
        hash_parts.append(doc_hashes)
        values[at : at + n] = _numbers(block, sep[:, value_field - 1] + 1, sep[:, value_field], grade)
        at += n
    if at != rows:
        raise _NotPlain
    if len(names) * _MIN_QUERY_RUN > max(rows, 1) and rows > 1000:
        raise _NotPlain
    del buf, block
    docs = _packed_docs(doc_parts, lines, doc_lengths)
    known = [h for h in hash_parts if h is not None]
    hashes = np.concatenate(known) if len(known) == len(hash_parts) and known else None
    return codes, list(names), docs, hashes, values


def _count(block: np.ndarray, byte: int) -> int:
    """How many times ``byte`` occurs in ``block`` (numpy's SIMD compare: ~4x faster than `bytes.count`)."""
    return int(np.count_nonzero(block == byte))


def _blocks(data: bytes | np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of blocks of about `_BLOCK` bytes, each ending just after a newline; the last one up to
    an eighth longer, so that a piece of about `_BLOCK` bytes (`_pieces.GATHER_BYTES`: whole lines, a little
    over) is one block, not a second one of a few bytes."""
    buf = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else data
    out, lo = [], 0
    while lo < len(buf):
        last = lo + _BLOCK + (_BLOCK >> 3) >= len(buf)
        hi = len(buf) if last else _last_newline(buf, lo, lo + _BLOCK) + 1
        if hi <= lo:  # a line longer than a block: not plain (the line readers apply the line limit)
            raise _NotPlain
        out.append((lo, hi))
        lo = hi
    return out


def _last_newline(buf: np.ndarray, lo: int, hi: int) -> int:
    """The position of the last newline in ``buf[lo:hi]``, or -1 (its last 4 KB are searched first)."""
    for start in dict.fromkeys((max(lo, hi - 4096), lo)):
        found = np.flatnonzero(buf[start:hi] == ord("\n"))
        if len(found):
            return start + int(found[-1])
    return -1


def _separators(
    block: np.ndarray, fields: int, lines: int, spaces: int, controls: np.ndarray | None = None
) -> np.ndarray:
    """Per line, the positions of its ``fields - 1`` spaces and its newline; raises unless every one of the
    block's ``lines`` lines has exactly ``fields`` fields, none of them empty. ``controls``: the positions of
    the block's bytes up to the space, when already found.

    The block holds ``lines`` newlines and ``spaces`` spaces: when every byte up to the space is one of
    them (so no tab, carriage return, NUL, vertical tab, form feed or other control byte), each line's
    ``fields``-th such byte is its newline, the block does not start with one and no two of them are
    adjacent, the lines are as expected."""
    if spaces != (fields - 1) * lines:
        raise _NotPlain
    sep = np.flatnonzero(block <= 32) if controls is None else controls
    if len(sep) != fields * lines or sep[0] == 0:  # another control byte, or an empty first field
        raise _NotPlain
    if not (np.diff(sep) > 1).all():  # an empty field or an empty line
        raise _NotPlain
    sep = sep.reshape((-1, fields))
    if not (block[sep[:, -1]] == 10).all():
        raise _NotPlain
    return sep


def _words(block: np.ndarray, start: np.ndarray, length: np.ndarray, j: int) -> np.ndarray:
    """Bytes ``8j .. 8j + 7`` of each field as one big-endian word, zero past the field's end (``start``
    ascending, as the fields of successive lines are)."""
    if int(start[-1]) + 8 * j + 8 <= len(block):
        return _native_words(block, start, length, j).byteswap()
    padded_end = len(block) - 8
    at = np.minimum(start + 8 * j, padded_end)
    shift = start + 8 * j - at  # > 0 only within the last 8 bytes of the block
    word = np.ndarray(shape=(padded_end + 1,), dtype=">u8", buffer=block, strides=(1,))[at].astype(np.uint64)
    word <<= (8 * shift).astype(np.uint64)
    keep = np.clip(length - 8 * j, 0, 8)
    return word & _ids._TAIL_MASK[keep]


def _native_words(block: np.ndarray, start: np.ndarray, length: np.ndarray, j: int) -> np.ndarray:
    """`_words` as native (little-endian) words: stored as such, their bytes are the fields' bytes, NUL past
    each field's end. Read as they lie where the word is in the block (no byteswap, no shift); only the rows
    whose word passes the block's end (its last few rows) go through `_words`."""
    reach = len(block) - 8 * j - 8  # the last start whose word is in the block
    if int(start[-1]) > reach:
        inside = int(np.searchsorted(start, reach, side="right"))
        if inside == 0:
            return _words(block, start, length, j).byteswap()
        word = np.empty(len(start), dtype=np.uint64)
        word[:inside] = _native_words(block, start[:inside], length[:inside], j)
        word[inside:] = _words(block, start[inside:], length[inside:], j).byteswap()
        return word
    native = np.ndarray(shape=(len(block) - 7,), dtype="<u8", buffer=block, strides=(1,))
    word = native[start + 8 * j if j else start]
    if 8 * j + 8 > int(length.min()):
        word &= _LOW_BYTES[np.clip(length - 8 * j, 0, 8)]
    return word


def _query_codes(
    block: np.ndarray, start: np.ndarray, end: np.ndarray, names: dict[str, int], out: np.ndarray
) -> None:
    """Codes of the query IDs ``block[start:end]`` into ``out`` (new IDs join ``names``, in first-appearance
    order): a row starts a new run of rows when its ID differs from the row before (compared word by word,
    exactly); one Python string is made per run."""
    if len(block) < 8:
        raise _NotPlain
    length = end - start
    longest = int(length.max())
    if longest > _ids.MAX_ID_BYTES:
        raise _NotPlain
    new = np.ones(len(start), dtype=bool)
    same = length[1:] == length[:-1]
    for j in range(longest + 7 >> 3):
        word = _native_words(block, start, length, j)
        same &= word[1:] == word[:-1]
    new[1:] = ~same
    heads = np.flatnonzero(new)
    if len(heads) * _MIN_QUERY_RUN > len(start) and len(start) > 1000:
        raise _NotPlain
    raw = block.data  # ASCII (checked): each ID is decoded from its bytes, no copy of the block
    head_codes = np.empty(len(heads), dtype=np.int32)
    for k, (a, b) in enumerate(zip(start[heads].tolist(), end[heads].tolist(), strict=True)):
        head_codes[k] = names.setdefault(str(raw[a:b], "ascii"), len(names))
    out[:] = np.repeat(head_codes, np.diff(np.append(heads, len(start))))


def _doc_ids(block: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The document IDs ``block[start:end]`` and their `_ids.hash_strings`. IDs of at most `_WORDS_DOC` bytes
    come as their cells (one row of 8-byte words each, NUL past its end: `_ids.Packed.from_cells`), hashed
    from those words; longer ones as their bytes end to end, hashes left to `_ids.hash_strings` (None)."""
    length = end - start
    longest = int(length.max())
    if longest > _WORDS_DOC:
        return _gather(block, start, end), None
    words = longest + 7 >> 3
    cells = np.empty((len(start), words), dtype="<u8")
    for j in range(words):
        cells[:, j] = _native_words(block, start, length, j)
    hashes = _ids.hash_words([cells[:, j].byteswap() for j in range(words)], length)
    return cells.view(np.uint8).reshape(len(start), -1), hashes


def _packed_docs(parts: list[np.ndarray], counts: list[int], lengths: np.ndarray) -> _ids.Packed:
    """The document IDs of the blocks (`_doc_ids`; ``counts`` rows each, ``lengths`` bytes a row): kept as
    cells when every block gave cells (rows widened to the widest block's), else packed end to end."""
    if all(p.ndim == 2 for p in parts):
        width = max((p.shape[1] for p in parts), default=8)
        parts = [np.pad(p, ((0, 0), (0, width - p.shape[1]))) if p.shape[1] < width else p for p in parts]
        return _ids.Packed.from_cells(np.concatenate(parts) if parts else np.zeros((0, 8), np.uint8), lengths)
    ends = np.cumsum(counts)
    flat = [
        p if p.ndim == 1 else _ids.Packed.from_cells(p, lengths[end - len(p) : end]).data
        for p, end in zip(parts, ends.tolist(), strict=True)
    ]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, dtype=np.int64, out=offsets[1:])
    return _ids.Packed(offsets, np.concatenate(flat))


def _gather(block: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The bytes of fields ``block[start:end]``, end to end."""
    length = end - start
    before = np.cumsum(length) - length
    return block[np.repeat(start - before, length) + np.arange(int(length.sum()))]


def _numbers(block: np.ndarray, start: np.ndarray, end: np.ndarray, grade: bool) -> np.ndarray:
    """The numbers in fields ``block[start:end]``: exact float64 scores (numpy parses them as ``float()``),
    or int64 grades. Raises for anything but plain decimals, NaN, infinities and numbers out of range."""
    length = end - start
    words = int(length.max()) + 7 >> 3
    if words > (2 if grade else 5):
        raise _NotPlain
    cells = np.empty((len(start), words), dtype="<u8")  # each field's bytes, NUL-padded, as 8-byte words
    for j in range(words):
        cells[:, j] = _native_words(block, start, length, j)
    raw = cells.view(np.uint8)
    if not grade:
        fast = _decimals(raw.reshape(len(start), 8 * words), length)
        if fast is not None:
            return fast
    allowed = _GRADE_BYTES if grade else _SCORE_BYTES
    if not allowed[raw].all():
        raise _NotPlain
    if grade:
        _integral_part(raw.reshape(len(start), 8 * words))
    text = cells.view(f"S{8 * words}").ravel()
    try:  # at most 16 bytes: a grade never overflows int64
        values = text.astype(np.int64 if grade else np.float64)
    except ValueError:
        raise _NotPlain from None
    if not grade and not np.isfinite(values).all():
        raise _NotPlain  # 1e400: the line reader says why
    return values


def _integral_part(raw: np.ndarray) -> None:
    """Cut each grade ``raw[i]`` (one NUL-padded field per row) at its point, in place, when only zeros
    follow it (``3.0`` is the grade 3, as trec_eval reads it); raises for any other point (``3.5``: the line
    reader names it)."""
    dot = raw == ord(".")
    if not dot.any():
        return
    after = np.cumsum(dot, axis=1, dtype=np.int8)  # points at or before each byte
    if (after[:, -1] > 1).any():
        raise _NotPlain
    fraction = after > 0
    fraction &= ~dot
    if not ((raw == ord("0")) | (raw == 0))[fraction].all():
        raise _NotPlain
    raw[after > 0] = 0


def _decimals(raw: np.ndarray, length: np.ndarray) -> np.ndarray | None:
    """The scores ``raw[i, :length[i]]`` (one NUL-padded field per row) when every one is a short decimal,
    ``[+-]digits[.digits]`` or ``[+-].digits`` with 1 to `_FAST_DIGITS` digits; None when one is not (the
    caller's general parse takes the block).

    Each is ``M / 10**k`` (``M`` its digits as an integer, ``k`` the digits after the point, the sign applied
    last, so ``-0.0`` stays negative): ``M < 10**15 < 2**53`` and ``10**k`` are exact doubles and IEEE
    division rounds their exact quotient correctly, so the result is bit for bit what ``float()`` gives."""
    rows, width = len(length), int(length.max())
    mantissa = np.zeros(rows, dtype=np.int64)
    digits = np.zeros(rows, dtype=np.int8)  # digits seen so far (counts of at most 40: int8 passes are short)
    after = np.zeros(rows, dtype=np.int8)  # digits seen after the point
    point = np.zeros(rows, dtype=bool)
    columns = np.ascontiguousarray(raw[:, :width].T)  # one contiguous row per byte position
    short = length.astype(np.int8)
    first = columns[0]
    negative = first == ord("-")
    bad = np.zeros(rows, dtype=bool)
    for col in range(width):
        byte = columns[col]
        digit = byte - np.uint8(ord("0"))
        is_digit = digit < 10
        is_point = byte == ord(".")
        other = short > col
        other &= ~is_digit
        if col == 0:
            other &= ~(negative | (first == ord("+")))
        bad |= (other & ~is_point) | (is_point & point)  # a foreign byte, or a second point
        point |= is_point
        # the mantissa takes the digit: no masked loops (they walk a mixed mask run by run)
        one = is_digit.view(np.uint8)
        factor = one * np.uint8(9)
        factor += 1
        mantissa *= factor  # times 10 at a digit, else 1
        digit *= one
        mantissa += digit
        digits += is_digit
        after += is_digit & point
    if bad.any() or not ((digits >= 1) & (digits <= _FAST_DIGITS)).all():
        return None
    values = mantissa / _POWERS_OF_TEN[after]
    np.negative(values, out=values, where=negative)
    return values
