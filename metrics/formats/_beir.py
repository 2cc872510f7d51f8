"""BEIR TSV qrels (private; `metrics.formats.read_qrels` and `read_beir_qrels` use it): a header line, then
``query-id<TAB>corpus-id<TAB>score`` rows."""

from __future__ import annotations

import numpy as np

from metrics import _ids
from metrics.data import Qrels
from metrics.errors import quoted
from metrics.formats._lines import (
    _GRADE,
    Source,
    _Collector,
    _comment,
    _decode,
    _grade,
    _grade_problem,
    _Pairs,
    _resolve,
    _Source,
    reader_limits,
)


def _looks_beir(src: _Source) -> bool:
    if src.name.lower().removesuffix(".gz").endswith(".tsv"):
        return True
    for _, raw in src.lines():
        if raw.strip() and not _comment(raw):
            return raw.rstrip(b"\r").count(b"\t") == 2 and b" " not in raw.strip()
    return False


def _read_beir(src: _Source) -> Qrels:
    problems, pairs = _Collector(src.name), _Pairs()
    qids, docs, grades, header = [], [], [], None
    for number, raw in src.lines():
        text = _decode(raw[:-1] if raw.endswith(b"\r") else raw, number, problems)
        if text is None or not text.strip(" \t"):
            continue
        fields = [f.strip(" ") for f in text.split("\t")]
        if header is None:
            header = fields
            if len(fields) == 3 and _GRADE.fullmatch(fields[2]):
                problems.add(number, text, "missing header line 'query-id<TAB>corpus-id<TAB>score'")
            continue
        reason = _beir_problem(fields)
        if reason:
            problems.add(number, text, reason)
        elif pairs.check(problems, number, text, fields[0], fields[1]):
            qids.append(fields[0])
            docs.append(fields[1])
            grades.append(_grade(fields[2]))
    problems.check()
    return Qrels(qids, docs, np.array(grades, dtype=np.int64), source=src.name, _validated=True)


def _beir_problem(fields: list[str]) -> str | None:
    if len(fields) != 3:
        return f"expected 3 tab-separated fields (query-id corpus-id score), got {len(fields)}"
    for value, what in ((fields[0], "query-id"), (fields[1], "corpus-id")):
        if not value:
            return f"empty {what}"
        if _ids.BAD_ID_CHARS.search(value):
            return f"{what} contains a space, tab or line break: {quoted(value)}"
        reason = _ids.id_problem(value, what)
        if reason:
            return reason
    return _grade_problem(fields[2])


def read_beir_qrels(
    source: Source, *, max_inflated_mb: float | None = None, max_line_mb: float | None = None
) -> Qrels:
    """Read BEIR-style TSV qrels: a header line, then ``query-id<TAB>corpus-id<TAB>score`` rows.

    Args:
        source: a path (plain or gzip) or an open file.
        max_inflated_mb: the most megabytes gzip content may inflate to, as in `metrics.formats.read_run`.
        max_line_mb: the longest line (a CSV record counts as one), as in `metrics.formats.read_run`.

    Returns:
        The `Qrels`.

    Raises:
        FormatError: every bad line, as `metrics.formats.read_qrels` reports it.

    >>> import io
    >>> len(read_beir_qrels(io.StringIO("query-id\\tcorpus-id\\tscore\\nq1\\tD1\\t1\\n")))
    1
    """
    return _read_beir(
        _resolve(source, reader_limits(max_inflated_mb=max_inflated_mb, max_line_mb=max_line_mb))
    )
