"""Human labels made in other tools (private; import from `metrics.formats`): `read_labels`.

Formats ``jsonl``, ``label-studio``, ``argilla``, ``prodigy`` and ``quepid`` (one `LabelReader` each in
`metrics.formats._label_readers.READERS`). Returns `ForeignLabels` (labels plus the answers `LeftOut`), or
raises `FormatError` listing every bad line. A grade is an integer, an integral float, or text ``grade_map``
maps; one (query, document, annotator) twice is an error. Checking the scale is the importer's job.
What each format reads: docs/modules.md.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from metrics.errors import QrelForgeError, quoted
from metrics.formats._label_readers import (
    READERS,
    ForeignLabel,
    LabelFormat,
    LeftOut,
    Records,
    _Bad,
    _Options,
)
from metrics.formats._lines import Source, _Collector, _resolve, _Source, reader_limits
from metrics.formats._tables import _finite, _jsonl_rows, _no_constant, _NotFinite

__all__ = ["LabelFormat", "LeftOut", "ForeignLabel", "ForeignLabels", "read_labels"]

PYTHON_NAMES = {"annotator": "annotator=", "grade_map": "grade_map"}
"""How messages name the options by default (a caller with other spellings passes ``option_names``)."""


class ForeignLabels(list[ForeignLabel]):
    """The labels of a file (a list of `ForeignLabel`) and ``left_out``: how many answers of each `LeftOut`
    kind the file holds that are not labels."""

    def __init__(self, labels=(), left_out: Mapping[LeftOut, int] | None = None):
        super().__init__(labels)
        counts = left_out or {}
        self.left_out: dict[LeftOut, int] = {k: counts[k] for k in LeftOut if counts.get(k)}

    def left_out_text(self) -> str:
        """``"4 left out: 3 rejected, 1 without a choice"``, or ``""`` when nothing was left out."""
        if not self.left_out:
            return ""
        parts = ", ".join(f"{n} {kind}" for kind, n in self.left_out.items())
        return f"{sum(self.left_out.values())} left out: {parts}"

    def summary(self) -> str:
        """``"12 labels; 4 left out: 3 rejected, 1 without a choice"`` (``"12 labels"`` when none was)."""
        head = f"{len(self)} label{'' if len(self) == 1 else 's'}"
        rest = self.left_out_text()
        return f"{head}; {rest}" if rest else head


def read_labels(
    source: Source,
    *,
    format: str,
    annotator: str | None = None,
    grade_map: Mapping[str, int] | None = None,
    max_inflated_mb: float | None = None,
    max_line_mb: float | None = None,
    option_names: Mapping[str, str] | None = None,
) -> ForeignLabels:
    """Every label of a file made in another annotation tool.

    The formats and how each maps to (query, document, annotator, grade, reason) are in the module doc. A
    record without a label (an unannotated task, a Quepid query without ratings) yields nothing; answers that
    are not labels (rejected, ignored, skipped, drafts...) are left out and counted in ``left_out``.

    Args:
        source: a path (plain or gzip) or an open file.
        format: a `LabelFormat` value: ``jsonl``, ``label-studio``, ``argilla``, ``prodigy`` or ``quepid``.
        annotator: the annotator of records that name none; without it such a record is an error.
        grade_map: ``{answer text: grade}`` for answers that are not numbers (``{"yes": 1}``).
        max_inflated_mb: the most megabytes gzip content may inflate to, as in `metrics.formats.read_run`.
        max_line_mb: the longest line, as in `metrics.formats.read_run`.
        option_names: how messages name the options ``annotator`` and ``grade_map`` (default ``annotator=``,
            ``grade_map``; the CLI passes ``--annotator``, ``--grade-map``).

    Returns:
        The `ForeignLabels`: the labels in file order, and the counts of what was left out.

    Raises:
        FormatError: a bad ``format``, ``annotator`` or ``grade_map``; every bad line or record, with its
            file, line and value (a whole export of the wrong kind in one line saying which to use).

    >>> import io
    >>> f = io.StringIO('{"query_id": "q1", "doc_id": "d1", "annotator": "ann", "grade": "yes"}\\n')
    >>> [(x.query_id, x.doc_id, x.annotator, x.grade, x.line)
    ...  for x in read_labels(f, format="jsonl", grade_map={"yes": 1})]
    [('q1', 'd1', 'ann', 1, 1)]
    """
    fmt = _check_format(format)
    options = _Options(
        annotator=_check_annotator(annotator),
        grade_map=_check_grade_map(grade_map),
        names={**PYTHON_NAMES, **(option_names or {})},
    )
    src = _resolve(source, reader_limits(max_inflated_mb=max_inflated_mb, max_line_mb=max_line_mb))
    problems = _Collector(src.name)
    spec = READERS[fmt]
    records = _RECORDS[spec.records](src, problems, spec.not_json)
    found: list[tuple[int, str, Any, ForeignLabel]] = []
    left_out: Counter[LeftOut] = Counter()
    for number, text, obj in records:
        wrong = spec.wrong_export(obj) if spec.wrong_export and not found and not left_out else None
        if wrong:
            problems.add(number, text, wrong)
            break
        try:
            items = spec.read(obj, number, options)
        except _Bad as exc:
            problems.add(number, text, str(exc))
            continue
        for item in items:
            if isinstance(item, LeftOut):
                left_out[item] += 1
            else:
                found.append((number, text, obj, item))
    labels = _versions(found, problems) if spec.versions else _once(found, problems)
    problems.check()
    return ForeignLabels(labels, left_out)


def _key(label: ForeignLabel) -> tuple[str, str, str]:
    return (label.query_id or label.query_text, label.doc_id, label.annotator)


def _once(found: list, problems: _Collector) -> list[ForeignLabel]:
    """The labels; one (query, document, annotator) twice is an error naming both lines."""
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for number, text, _, label in found:
        key = _key(label)
        if key in seen:
            problems.add(
                number,
                text,
                f"duplicate label of query {quoted(key[0])}, document {quoted(key[1])} by annotator "
                f"{quoted(key[2])}, first on line {seen[key]}",
            )
        else:
            seen[key] = number
            out.append(label)
    return out


def _versions(found: list, problems: _Collector) -> list[ForeignLabel]:
    """Prodigy: an annotator's answers to one task, in ``_timestamp`` order (file order where one has
    none); an answer equal to the one before it is the same label, a different one the next version. The
    versions of a key follow one another, keys in the order of their first line."""
    groups: dict[tuple[str, str, str], list[tuple[Any, int, ForeignLabel]]] = {}
    for number, text, obj, label in found:
        stamp = obj.get("_timestamp")
        if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, int | float)):
            problems.add(number, text, f"_timestamp must be a number; got {quoted(stamp)}")
            continue
        groups.setdefault(_key(label), []).append((stamp, number, label))
    out = []
    for answers in groups.values():
        if all(stamp is not None for stamp, _, _ in answers):
            answers.sort(key=lambda a: (a[0], a[1]))
        previous: ForeignLabel | None = None
        for _, _, label in answers:
            if previous is not None and (label.grade, label.reason) == (previous.grade, previous.reason):
                continue
            version = 1 if previous is None else previous.version + 1
            previous = label if version == 1 else _with_version(label, version)
            out.append(previous)
    return out


def _with_version(label: ForeignLabel, version: int) -> ForeignLabel:
    from dataclasses import replace

    return replace(label, version=version)


# ------------------------------------------------------------------------------------------ arguments
def _check_format(value: Any) -> LabelFormat:
    try:
        return LabelFormat(value)
    except ValueError:
        names = ", ".join(repr(f.value) for f in LabelFormat)
        raise QrelForgeError(f"format must be one of {names}; got {quoted(value)}") from None


def _check_annotator(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise QrelForgeError(f"annotator must be a non-empty string or None; got {quoted(value)}")
    return value.strip()


def _check_grade_map(value: Any) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise QrelForgeError(f"grade_map must map labels (str) to grades (int); got {quoted(value)}")
    out = {}
    for key, grade in value.items():
        if not isinstance(key, str) or isinstance(grade, bool) or not isinstance(grade, int):
            raise QrelForgeError(
                f"grade_map must map labels (str) to grades (int); got {key!r:.40}: {grade!r:.40}"
            )
        out[key] = int(grade)
    return out


# -------------------------------------------------------------------------------------------- records
def _json_records(src: _Source, problems: _Collector, not_json: str) -> Iterator[tuple[int, str, Any]]:
    """(line, text, object) of every record: a JSON list's items, one JSON object (a file holding a single
    task), else one JSON object a line. ``not_json``: the message refusing a file that is not JSON at all
    (empty: such a file is read one object a line)."""
    head = b""
    for block in src.blocks():
        head += block
        if head.lstrip(_BLANK):
            break
    start = head.lstrip(_BLANK)[:1]
    if not_json and start and start not in (b"[", b"{"):
        problems.add(1, head.lstrip(_BLANK).split(b"\n", 1)[0][:200].decode("utf-8", "replace"), not_json)
        return
    if start not in (b"[", b"{"):
        yield from _jsonl_rows(src, problems)
        return
    data = b"".join(src.blocks()).removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.add(line, "", f"not valid UTF-8 (byte {exc.start + 1})")
        return
    if start == b"{":
        single = _single_object(text)
        if single is None:
            yield from _jsonl_rows(src, problems)
        else:
            yield single
        return
    yield from _array_items(text, problems)


_BLANK = b"\xef\xbb\xbf \t\r\n"


def _single_object(text: str) -> tuple[int, str, Any] | None:
    """The record of a file that is one JSON object (spread over lines, as a storage writes a task), or
    None when the file holds more than that (one object a line)."""
    decoder = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
    pos = _skip(text, 0)
    try:
        obj, end = decoder.raw_decode(text, pos)
    except (ValueError, RecursionError):  # invalid JSON, a non-finite number: the line reader names it
        return None
    if _skip(text, end) != len(text) or "\n" not in text[pos:end]:
        return None
    return text.count("\n", 0, pos) + 1, text[pos:end], obj


def _array_items(text: str, problems: _Collector) -> Iterator[tuple[int, str, Any]]:
    decoder = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
    pos, line, counted = _skip(text, text.index("[") + 1), 1, 0
    while pos < len(text) and text[pos] != "]":
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            obj, end = decoder.raw_decode(text, pos)
        except _NotFinite as exc:
            problems.add(line, text[pos : pos + 200], str(exc))
            return
        except json.JSONDecodeError as exc:
            problems.add(exc.lineno, text[exc.pos : exc.pos + 80], f"invalid JSON ({exc.msg})")
            return
        except (RecursionError, ValueError):
            problems.add(line, text[pos : pos + 200], "invalid JSON (nested too deeply or a too long number)")
            return
        yield line, text[pos:end], obj
        pos = _skip(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip(text, pos + 1)
        elif pos >= len(text) or text[pos] != "]":
            problems.add(
                text.count("\n", 0, pos) + 1, text[pos : pos + 80], "invalid JSON (expected ',' or ']')"
            )
            return
    if pos >= len(text):
        problems.add(text.count("\n") + 1, "", "invalid JSON (the list is not closed with ']')")


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _csv_records(src: _Source, problems: _Collector) -> Iterator[tuple[int, str, Any]]:
    data = b"".join(src.blocks()).removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.add(data.count(b"\n", 0, exc.start) + 1, "", f"not valid UTF-8 (byte {exc.start + 1})")
        return
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    for row in reader:
        if not any(c.strip() for c in row):
            continue
        shown = ",".join(row)
        if header is None:
            header = [c.strip().lower() for c in row]
            missing = [c for c in ("query", "docid", "rating") if c not in header]
            if missing:
                problems.add(
                    reader.line_num, shown, f"header must name query, docid, rating; missing {missing}"
                )
                return
            continue
        yield reader.line_num, shown, dict(zip(header, row, strict=False))


_RECORDS: dict[Records, Callable[[_Source, _Collector, str], Iterator[tuple[int, str, Any]]]] = {
    Records.JSONL: lambda src, problems, _: _jsonl_rows(src, problems),
    Records.JSON: _json_records,
    Records.CSV: lambda src, problems, _: _csv_records(src, problems),
}
