"""The canonical TREC text of qrels: ``qid 0 docid grade`` lines sorted by query, then document ID, then
grade, IDs compared by code point. Built with numpy a block of lines at a time: no Arrow, no pandas, no
Python object per row.

`qrels_text_blocks` yields the text as UTF-8 byte blocks; `metrics.fingerprint.qrels_sha256` hashes them.
Comparing the IDs' UTF-8 bytes orders them as comparing the strings does (UTF-8 keeps code point order). The
document IDs are sorted by their 8-byte big-endian words, zero past each ID's end, one word at a time and only
among the rows still tied; rows equal in every word differ by length (an ID ending in NUL bytes sorts after
its shorter prefix), then by grade.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from metrics import _ids

if TYPE_CHECKING:
    from metrics.data import Qrels

__all__ = ["qrels_text_blocks", "sorted_rows"]

_LINES = 1 << 14  # lines assembled at once (a few MB of index temporaries)
_SEPARATOR = np.frombuffer(b" 0 ", dtype=np.uint8)


def _column(values: _ids.Strings | _ids.Packed) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (int64, one more than the rows) and UTF-8 bytes of a string column: a `_ids.Packed` as it
    is, an Arrow column from its buffers (only Arrow columns reach Arrow: no import for packed IDs)."""
    if isinstance(values, _ids.Packed):
        return values.offsets, values.data
    array = _ids.as_string_array(values)
    n, buffers = len(array), array.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int32)[array.offset : array.offset + n + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    return offsets.astype(np.int64), data


def _table(texts: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and bytes of a few strings (the distinct query IDs, the distinct grades)."""
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    return offsets, np.frombuffer(b"".join(texts), dtype=np.uint8)


def _word(padded: np.ndarray, starts: np.ndarray, lengths: np.ndarray, j: int) -> np.ndarray:
    """Word ``j`` (bytes ``8j..8j+7``, big-endian, zero past the end) of the strings at ``starts``."""
    words = np.ndarray(shape=(len(padded) - 7,), dtype=">u8", buffer=padded, strides=(1,))
    word = words[np.minimum(starts + 8 * j, len(padded) - 8)].astype(np.uint64)
    word &= _ids._TAIL_MASK[np.clip(lengths - 8 * j, 0, 8)]
    return word


def sorted_rows(
    query_rank: np.ndarray, offsets: np.ndarray, data: np.ndarray, grades: np.ndarray
) -> np.ndarray:
    """The rows in the order of (query rank, document ID bytes, grade).

    Args:
        query_rank: per row, the rank of its query ID among the distinct ones (int).
        offsets: document ID ``i`` is ``data[offsets[i]:offsets[i + 1]]``.
        data: the document IDs' bytes (uint8).
        grades: per row, its grade (int64).

    Returns:
        The row indices (int64) in that order.
    """
    n = len(query_rank)
    lo = int(offsets[0]) if n else 0
    padded = np.concatenate([data[lo : int(offsets[-1]) if n else lo], np.zeros(8, dtype=np.uint8)])
    starts, lengths = offsets[:-1] - lo, np.diff(offsets)
    word = _word(padded, starts, lengths, 0)
    order = np.lexsort((word, query_rank))
    ranks, sorted_word = query_rank[order], word[order]
    tied = np.zeros(n, dtype=bool)  # tied[i]: sorted row i equals row i - 1 so far
    tied[1:] = (ranks[1:] == ranks[:-1]) & (sorted_word[1:] == sorted_word[:-1])
    j = 1
    while tied.any():
        heads = np.flatnonzero(~tied)
        group = np.cumsum(~tied) - 1
        longest = np.maximum.reduceat(lengths[order], heads)
        open_ = np.flatnonzero((longest[group] > 8 * j) & (tied | np.r_[tied[1:], False]))
        if not len(open_):
            break
        rows = order[open_]
        word = _word(padded, starts[rows], lengths[rows], j)
        within = np.lexsort((word, group[open_]))
        order[open_], word = rows[within], word[within]
        still = tied[open_]
        still[1:] &= word[1:] == word[:-1]
        tied[open_] = still
        j += 1
    if tied.any():  # equal words: the shorter ID first (the rest are NULs), then the lower grade
        group = np.empty(n, dtype=np.int64)
        group[order] = np.cumsum(~tied)
        order = np.lexsort((grades, lengths, group))
    return order


def qrels_text_blocks(qrels: Qrels) -> Iterator[np.ndarray]:
    """The canonical TREC text of ``qrels`` as consecutive UTF-8 blocks (uint8 arrays) of whole lines.

    Args:
        qrels: the judgments (any `metrics.data.Qrels`; packed document IDs stay packed).

    Returns:
        An iterator over the blocks; their concatenation is the text.
    """
    codes, names = qrels._query_code_list()
    by_name = sorted(range(len(names)), key=names.__getitem__)
    query_rank = np.empty(len(names), dtype=np.int64)
    query_rank[by_name] = np.arange(len(names))
    q_offsets, q_data = _table([name.encode() for name in names])
    doc_offsets, doc_data = _column(qrels._docs())
    grades = np.asarray(qrels.relevance, dtype=np.int64)
    distinct, grade_codes = np.unique(grades, return_inverse=True)
    g_offsets, g_data = _table([str(g).encode() for g in distinct.tolist()])
    order = sorted_rows(query_rank[codes], doc_offsets, doc_data, grades)
    for lo in range(0, len(order), _LINES):
        rows = order[lo : lo + _LINES]
        yield _lines(
            (q_offsets, q_data, codes[rows]),
            (doc_offsets, doc_data, rows),
            (g_offsets, g_data, grade_codes[rows]),
        )


def _lines(
    query: tuple[np.ndarray, np.ndarray, np.ndarray],
    doc: tuple[np.ndarray, np.ndarray, np.ndarray],
    grade: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """The lines ``query 0 doc grade\\n``, each part given as (offsets, bytes, index per line)."""
    (q_src, q_len), (d_src, d_len), (g_src, g_len) = (
        (offsets[i], offsets[i + 1] - offsets[i]) for offsets, _, i in (query, doc, grade)
    )
    ends = np.cumsum(q_len + d_len + g_len + 5)
    out = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.uint8)
    q_at = ends - (q_len + d_len + g_len + 5)
    d_at = q_at + q_len + 3
    g_at = d_at + d_len + 1
    _copy(out, q_at, query[1], q_src, q_len)
    for k, byte in enumerate(_SEPARATOR.tolist()):
        out[q_at + q_len + k] = byte
    _copy(out, d_at, doc[1], d_src, d_len)
    out[g_at - 1] = ord(" ")
    _copy(out, g_at, grade[1], g_src, g_len)
    out[ends - 1] = ord("\n")
    return out


def _copy(out: np.ndarray, dst: np.ndarray, data: np.ndarray, src: np.ndarray, lengths: np.ndarray) -> None:
    """``out[dst[i]:dst[i] + lengths[i]] = data[src[i]:src[i] + lengths[i]]`` for every i, at once."""
    total = int(lengths.sum())
    if not total:
        return
    step = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[np.repeat(dst, lengths) + step] = data[np.repeat(src, lengths) + step]
