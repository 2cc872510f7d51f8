"""Human labels made in other tools (private; import from `metrics.formats`): `read_labels`.

Every reader returns `ForeignLabel` records (query, document, annotator, grade, reason and the line the label
came from) or raises `FormatError` listing every bad line (or JSON record, numbered by the line it starts on).
Formats (``format=``):

- ``jsonl``: one object a line: ``query_id``, ``doc_id``, ``annotator``, ``grade``, ``reason`` (optional);
- ``label-studio``: Label Studio's JSON export, a list of tasks: ``data`` holds ``query_id`` and ``doc_id``;
  each entry of ``annotations`` (``was_cancelled`` ones are left out) is one label by ``completed_by`` (a user
  id ``N`` becomes annotator ``label-studio-N``; ``{"email": ...}`` the e-mail's local part), its grade from
  the one ``choices`` (``value.choices``, one choice) or ``rating`` (``value.rating``) result, its reason from
  a ``textarea`` result (``value.text``);
- ``argilla``: Argilla 2 records (``dataset.records.to_json(...)``: a JSON list; or one record a line) with
  ``query_id``/``doc_id`` in ``metadata`` (or ``fields``) and ``responses`` ``{question: [{value, user_id,
  status}]}``: the grade comes from the one question other than ``reason``, the reason from ``reason``;
  ``discarded`` and ``draft`` responses are left out; the annotator is the ``user_id``;
- ``prodigy``: Prodigy's JSONL (``db-out``): ``query_id``/``doc_id`` at the top or in ``meta``; ``answer``
  ``accept``/``reject`` (``ignore`` is left out); a choice task's grade is its one ``accept`` option, a
  binary task's is ``grade_map["accept"]`` (default 1) or ``grade_map["reject"]`` (default 0); the annotator
  is ``_annotator_id``, else ``_session_id``; the reason is ``user_input`` (a text_input field) or ``reason``;
- ``quepid``: Quepid's ratings CSV (``query,docid,rating``): ``query`` is the query's *text*
  (`ForeignLabel.query_text`, ``query_id`` empty); rows without a rating are queries without ratings and are
  left out; give ``annotator=`` (Quepid's export does not say who rated). Fields are stripped, which also
  undoes Quepid's guard against spreadsheet formulas (a space before a query starting with ``-=+@``).

A grade is an integer, or any text ``grade_map`` maps to one (``{"Relevant": 1}``); ``grade_map`` is looked
up first, so it can also renumber a scale (``{"4": 3}``). ``annotator`` names who made labels whose record
does not say. One (query, document, annotator) twice in a file is an error. Whether the grades are on a
project's scale, and the annotator names, are for the importer to check.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from metrics import _ids
from metrics.errors import QrelForgeError, quoted
from metrics.formats._lines import _INT, _INT64, Source, _Collector, _resolve, _Source, reader_limits
from metrics.formats._tables import _finite, _jsonl_rows, _no_constant, _NotFinite

__all__ = ["LabelFormat", "ForeignLabel", "read_labels"]


class LabelFormat(StrEnum):
    """The label files `read_labels` reads."""

    JSONL = "jsonl"
    LABEL_STUDIO = "label-studio"
    ARGILLA = "argilla"
    PRODIGY = "prodigy"
    QUEPID = "quepid"


@dataclass(frozen=True)
class ForeignLabel:
    """One human label read from another tool's file. ``query_text`` is set (and ``query_id`` empty) when the
    format names the query by its text (Quepid); ``line`` is where the label's record starts."""

    query_id: str
    doc_id: str
    annotator: str
    grade: int
    reason: str
    line: int
    query_text: str = ""


class _Bad(Exception):
    """A record's problem (its message is the reason)."""


@dataclass(frozen=True)
class _Options:
    annotator: str | None
    grade_map: Mapping[str, int]


def read_labels(
    source: Source,
    *,
    format: str,
    annotator: str | None = None,
    grade_map: Mapping[str, int] | None = None,
    max_inflated_mb: float | None = None,
    max_line_mb: float | None = None,
) -> list[ForeignLabel]:
    """Every label of a file made in another annotation tool, or `FormatError` listing every bad line.

    The formats and how each maps to (query, document, annotator, grade, reason) are in the module doc.
    Edge cases: a record without a label (an unannotated task, a Prodigy ``ignore``, a Quepid query without
    ratings) yields nothing; a record naming no annotator takes ``annotator``, else it is an error.
    Limits: as `metrics.formats.read_run`.

    >>> import io
    >>> f = io.StringIO('{"query_id": "q1", "doc_id": "d1", "annotator": "ann", "grade": "yes"}\\n')
    >>> [(x.query_id, x.doc_id, x.annotator, x.grade, x.line)
    ...  for x in read_labels(f, format="jsonl", grade_map={"yes": 1})]
    [('q1', 'd1', 'ann', 1, 1)]
    """
    fmt = _check_format(format)
    options = _Options(annotator=_check_annotator(annotator), grade_map=_check_grade_map(grade_map))
    src = _resolve(source, reader_limits(max_inflated_mb=max_inflated_mb, max_line_mb=max_line_mb))
    problems = _Collector(src.name)
    if fmt == LabelFormat.QUEPID:
        records = _csv_records(src, problems)
    elif fmt in (LabelFormat.LABEL_STUDIO, LabelFormat.ARGILLA):
        records = _json_records(src, problems)
    else:
        records = _jsonl_rows(src, problems)
    labels: list[ForeignLabel] = []
    seen: dict[tuple[str, str, str], int] = {}
    for number, text, obj in records:
        try:
            found = _READERS[fmt](obj, number, options)
        except _Bad as exc:
            problems.add(number, text, str(exc))
            continue
        for label in found:
            key = (label.query_id or label.query_text, label.doc_id, label.annotator)
            if key in seen:
                problems.add(
                    number,
                    text,
                    f"duplicate label of query {quoted(key[0])}, document {quoted(key[1])} by annotator "
                    f"{quoted(key[2])}, first on line {seen[key]}",
                )
            else:
                seen[key] = number
                labels.append(label)
    problems.check()
    return labels


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
def _json_records(src: _Source, problems: _Collector) -> Iterator[tuple[int, str, Any]]:
    """(line, text, object) of every record: a JSON list's items, else one JSON object a line."""
    head = b""
    for block in src.blocks():
        head += block
        if head.lstrip(b"\xef\xbb\xbf \t\r\n"):
            break
    if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
        yield from _jsonl_rows(src, problems)
        return
    data = b"".join(src.blocks()).removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.add(line, "", f"not valid UTF-8 (byte {exc.start + 1})")
        return
    yield from _array_items(text, problems)


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


# -------------------------------------------------------------------------------------------- readers
def _string(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise _Bad(f"{what} must be a non-empty string; got {quoted(value)}")
    reason = _ids.id_problem(value, what)
    if reason:
        raise _Bad(reason)
    return value


def _object(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise _Bad(f"{what} must be a JSON object; got {type(value).__name__}")
    return value


def _grade(value: Any, options: _Options, what: str = "grade") -> int:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, str | int) and not isinstance(value, bool) and str(value) in options.grade_map:
        return options.grade_map[str(value)]
    if isinstance(value, str) and _INT.fullmatch(value.strip()):
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        known = f" ({', '.join(map(repr, options.grade_map))})" if options.grade_map else ""
        raise _Bad(f"{what} {quoted(value)} is not an integer nor a label of grade_map{known}")
    if not _INT64[0] <= value <= _INT64[1]:
        raise _Bad(f"{what} {quoted(value)} is out of the 64-bit integer range")
    return value


def _reason(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        value = "\n".join(v for v in value if isinstance(v, str))
    if not isinstance(value, str):
        raise _Bad(f"reason must be a string; got {quoted(value)}")
    return value.strip()


def _who(value: Any, options: _Options) -> str:
    if value is None or value == "":
        if options.annotator is None:
            raise _Bad("no annotator: the record names none and annotator= was not given")
        return options.annotator
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _Bad(f"annotator must be a string; got {quoted(value)}")
    return str(value).strip()


def _jsonl(obj: Any, line: int, options: _Options) -> list[ForeignLabel]:
    rec = _object(obj, "a line")
    for key in ("query_id", "doc_id", "grade"):
        if key not in rec:
            raise _Bad(f"missing {key}")
    return [
        ForeignLabel(
            query_id=_string(rec["query_id"], "query_id"),
            doc_id=_string(rec["doc_id"], "doc_id"),
            annotator=_who(rec.get("annotator"), options),
            grade=_grade(rec["grade"], options),
            reason=_reason(rec.get("reason")),
            line=line,
        )
    ]


def _label_studio(obj: Any, line: int, options: _Options) -> list[ForeignLabel]:
    task = _object(obj, "a task")
    data = _object(task.get("data"), "data")
    for key in ("query_id", "doc_id"):
        if key not in data:
            raise _Bad(f"data has no {key}")
    qid, did = _string(data["query_id"], "data.query_id"), _string(data["doc_id"], "data.doc_id")
    annotations = task.get("annotations", task.get("completions", []))
    if not isinstance(annotations, list):
        raise _Bad(f"annotations must be a list; got {type(annotations).__name__}")
    out = []
    for i, ann in enumerate(annotations, 1):
        ann = _object(ann, f"annotation {i}")
        if ann.get("was_cancelled"):
            continue
        grade, reason = _ls_result(ann.get("result"), i, options)
        if grade is None:
            continue
        who = ann.get("completed_by")
        out.append(
            ForeignLabel(
                query_id=qid,
                doc_id=did,
                annotator=_ls_user(who, options),
                grade=grade,
                reason=reason,
                line=line,
            )
        )
    return out


def _ls_user(who: Any, options: _Options) -> str:
    if isinstance(who, dict):
        email = who.get("email")
        if isinstance(email, str) and "@" in email:
            return email.split("@", 1)[0]
        who = who.get("id")
    if isinstance(who, int) and not isinstance(who, bool):
        return f"label-studio-{who}"
    return _who(who, options)


def _ls_result(result: Any, i: int, options: _Options) -> tuple[int | None, str]:
    if not isinstance(result, list):
        raise _Bad(f"annotation {i}: result must be a list; got {type(result).__name__}")
    grades, reasons = [], []
    for region in result:
        region = _object(region, f"annotation {i}: a result")
        value = _object(region.get("value"), f"annotation {i}: value")
        kind = region.get("type")
        if kind == "choices":
            choices = value.get("choices")
            if not isinstance(choices, list) or len(choices) != 1:
                raise _Bad(f"annotation {i}: choices must hold one choice; got {quoted(choices)}")
            grades.append(_grade(choices[0], options, f"annotation {i}: choice"))
        elif kind == "rating":
            grades.append(_grade(value.get("rating"), options, f"annotation {i}: rating"))
        elif kind == "textarea":
            reasons.append(_reason(value.get("text")))
    if len(grades) > 1:
        raise _Bad(f"annotation {i}: {len(grades)} choices/rating results; expected one")
    return (grades[0] if grades else None), "\n".join(r for r in reasons if r)


def _argilla(obj: Any, line: int, options: _Options) -> list[ForeignLabel]:
    rec = _object(obj, "a record")
    qid, did = _argilla_ids(rec)
    responses = _object(rec.get("responses") or {}, "responses")
    questions = [name for name in responses if name != "reason"]
    if not questions:
        return []
    if len(questions) > 1:
        raise _Bad(
            f"responses answer {len(questions)} questions {questions}; expected one (besides 'reason')"
        )
    reasons = {}
    for r in responses.get("reason") or []:
        r = _object(r, "a response")
        reasons[str(r.get("user_id"))] = _reason(r.get("value"))
    answers = responses[questions[0]]
    if not isinstance(answers, list):
        raise _Bad(f"responses.{questions[0]} must be a list; got {type(answers).__name__}")
    out = []
    for r in answers:
        r = _object(r, "a response")
        if r.get("status") in ("discarded", "draft"):
            continue
        who = _who(r.get("user_id"), options)
        grade = _grade(r.get("value"), options, f"response of {who}")
        reason = reasons.get(str(r.get("user_id")), "")
        out.append(
            ForeignLabel(query_id=qid, doc_id=did, annotator=who, grade=grade, reason=reason, line=line)
        )
    return out


def _dict_or_empty(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _argilla_ids(rec: dict) -> tuple[str, str]:
    metadata, fields = _dict_or_empty(rec.get("metadata")), _dict_or_empty(rec.get("fields"))
    ids = []
    for key in ("query_id", "doc_id"):
        value = metadata.get(key, fields.get(key))
        if value is None:
            raise _Bad(f"neither metadata nor fields hold {key}")
        ids.append(_string(value, key))
    return ids[0], ids[1]


def _prodigy(obj: Any, line: int, options: _Options) -> list[ForeignLabel]:
    task = _object(obj, "a task")
    answer = task.get("answer")
    if answer == "ignore":
        return []
    if answer not in ("accept", "reject"):
        raise _Bad(f"answer must be 'accept', 'reject' or 'ignore'; got {quoted(answer)}")
    meta = _dict_or_empty(task.get("meta"))
    ids = []
    for key in ("query_id", "doc_id"):
        value = task.get(key, meta.get(key))
        if value is None:
            raise _Bad(f"neither the task nor its meta hold {key}")
        ids.append(_string(value, key))
    if "options" in task:
        chosen = task.get("accept")
        if answer != "accept" or not isinstance(chosen, list) or len(chosen) != 1:
            raise _Bad(f"a choice task needs answer 'accept' and one accepted option; got {quoted(chosen)}")
        grade = _grade(chosen[0], options, "accepted option")
    else:
        grade = options.grade_map.get(answer, 1 if answer == "accept" else 0)
    who = task.get("_annotator_id") or task.get("_session_id")
    reason = _reason(task.get("user_input", task.get("reason")))
    return [
        ForeignLabel(
            query_id=ids[0],
            doc_id=ids[1],
            annotator=_who(who, options),
            grade=grade,
            reason=reason,
            line=line,
        )
    ]


def _quepid(obj: Any, line: int, options: _Options) -> list[ForeignLabel]:
    query, docid, rating = (obj.get(k, "").strip() for k in ("query", "docid", "rating"))
    if not docid and not rating:
        return []  # a query without ratings
    if not query:
        raise _Bad("empty query")
    if options.annotator is None:
        raise _Bad("Quepid's ratings do not say who rated: give annotator=")
    return [
        ForeignLabel(
            query_id="",
            doc_id=_string(docid, "docid"),
            annotator=options.annotator,
            grade=_grade(rating, options, "rating"),
            reason="",
            line=line,
            query_text=query,
        )
    ]


_READERS = {
    LabelFormat.JSONL: _jsonl,
    LabelFormat.LABEL_STUDIO: _label_studio,
    LabelFormat.ARGILLA: _argilla,
    LabelFormat.PRODIGY: _prodigy,
    LabelFormat.QUEPID: _quepid,
}
