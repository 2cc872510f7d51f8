"""One reader per label format of `metrics.formats.read_labels` (private): each turns one record of a tool's
export into the labels it holds and the answers it leaves out, or raises `_Bad` with the reason.

The vocabulary lives here too: `LabelFormat` (the formats), `LeftOut` (why an answer is not a label) and
`ForeignLabel` (one label read), re-exported by `metrics.formats`. `READERS` registers each format's
`LabelReader`, one line a format: every other list of formats derives from `LabelFormat` and `READERS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from metrics import _ids
from metrics.errors import quoted
from metrics.formats._lines import _INT64

__all__ = ["LabelFormat", "LeftOut", "ForeignLabel"]


class LabelFormat(StrEnum):
    """The label files `read_labels` reads; each has its `LabelReader` in `READERS`."""

    JSONL = "jsonl"
    LABEL_STUDIO = "label-studio"
    ARGILLA = "argilla"
    PRODIGY = "prodigy"
    QUEPID = "quepid"

    @property
    def help(self) -> str:
        """One line on what the format's file is (the CLI's and the import page's help).

        >>> LabelFormat.QUEPID.help
        'Quepid ratings CSV query,docid,rating (query by its text); needs the annotator'
        """
        return READERS[self].help


class LeftOut(StrEnum):
    """Why an answer in a tool's export is not a label (counted, in this order, by `ForeignLabels`)."""

    REJECTED = "rejected"  # Prodigy: a choice task answered "reject"
    IGNORED = "ignored"  # Prodigy: "ignore"
    SKIPPED = "skipped"  # Label Studio: a cancelled (skipped) annotation
    NO_CHOICE = "without a choice"  # Prodigy: accept with no option; Label Studio: no choices/rating result
    DRAFT = "draft"  # Argilla: a draft response
    DISCARDED = "discarded"  # Argilla: a discarded response
    NO_VALUE = "without a value"  # Argilla: a response without a value
    NO_RATING = "without a rating"  # Quepid: a rated document's row without its rating


@dataclass(frozen=True)
class ForeignLabel:
    """One human label read from another tool's file. ``query_text`` is set (and ``query_id`` empty) when the
    format names the query by its text (Quepid); ``line`` is where the label's record starts; ``version`` is
    1, or n when the annotator answered the task again in the file and this is the n-th different answer
    (Prodigy sessions; versions follow one another in the list, oldest first)."""

    query_id: str
    doc_id: str
    annotator: str
    grade: int
    reason: str
    line: int
    query_text: str = ""
    version: int = 1


class _Bad(Exception):
    """A record's problem (its message is the reason)."""


@dataclass(frozen=True)
class _Options:
    annotator: str | None
    grade_map: Mapping[str, int]
    names: Mapping[str, str]  # how the caller spells the options ("annotator" -> "--annotator")


Found = list[ForeignLabel | LeftOut]
_INTEGRAL = re.compile(r"[+-]?\d+(?:\.0*)?", re.ASCII)  # "3", "-1", "3.0", "3." (Quepid writes 3.0)


# ---------------------------------------------------------------------------------------------- values
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
    """An integer grade: an int, an integral float or its text (``3.0``), or a label of the grade map."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, str | int) and not isinstance(value, bool) and str(value) in options.grade_map:
        return options.grade_map[str(value)]
    if isinstance(value, str) and _INTEGRAL.fullmatch(value.strip()):
        value = int(value.strip().split(".")[0])
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        known = f" ({', '.join(map(repr, options.grade_map))})" if options.grade_map else ""
        raise _Bad(
            f"{what} {quoted(value)} is not an integer nor a label of {options.names['grade_map']}{known}"
        )
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
            raise _Bad(f"no annotator: the record names none and {options.names['annotator']} was not given")
        return options.annotator
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _Bad(f"annotator must be a string; got {quoted(value)}")
    return str(value).strip()


def _dict_or_empty(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


# -------------------------------------------------------------------------------------------- readers
def _jsonl(obj: Any, line: int, options: _Options) -> Found:
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


def _label_studio(obj: Any, line: int, options: _Options) -> Found:
    """A task of the JSON export, a task saved alone by a target storage, or an annotation saved alone
    (``{"result", "completed_by", "task": {...}}``, what a target storage writes by default)."""
    task = _object(obj, "a task")
    if isinstance(task.get("task"), dict) and "result" in task:
        task = {**task["task"], "annotations": [{k: v for k, v in task.items() if k != "task"}]}
    data = _object(task.get("data"), "data")
    for key in ("query_id", "doc_id"):
        if key not in data:
            raise _Bad(f"data has no {key}")
    qid, did = _ls_id(data["query_id"], "data.query_id"), _ls_id(data["doc_id"], "data.doc_id")
    annotations = task.get("annotations", task.get("completions", []))
    if not isinstance(annotations, list):
        raise _Bad(f"annotations must be a list; got {type(annotations).__name__}")
    out: Found = []
    for i, ann in enumerate(annotations, 1):
        ann = _object(ann, f"annotation {i}")
        if ann.get("was_cancelled"):
            out.append(LeftOut.SKIPPED)
            continue
        grade, reason = _ls_result(ann.get("result"), i, options)
        if grade is None:
            out.append(LeftOut.NO_CHOICE)
            continue
        who = _ls_user(ann.get("completed_by"), options)
        out.append(
            ForeignLabel(query_id=qid, doc_id=did, annotator=who, grade=grade, reason=reason, line=line)
        )
    return out


def _ls_id(value: Any, what: str) -> str:
    """An ID of the task data; a JSON integer (Label Studio writes IDs of an uploaded CSV as numbers) is its
    decimal text."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _string(value, what)


def _ls_user(who: Any, options: _Options) -> str:
    """``label-studio-N`` for user id N (a number, or an object with ``id`` as a target storage writes it),
    so one user has one name in every export; an object with only an e-mail: its local part."""
    if isinstance(who, dict):
        if isinstance(who.get("id"), int) and not isinstance(who.get("id"), bool):
            who = who["id"]
        elif isinstance(who.get("email"), str) and "@" in who["email"]:
            return who["email"].split("@", 1)[0]
        else:
            who = None
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


_ARGILLA_SKIP = {"draft": LeftOut.DRAFT, "discarded": LeftOut.DISCARDED}


def _argilla(obj: Any, line: int, options: _Options) -> Found:
    """A record as ``records.to_json`` writes it (``responses: {question: [{value, user_id}]}``, no status),
    or flattened as ``records.to_list(flatten=True)`` and ``to_datasets()`` write it (``question.responses``,
    ``.users``, ``.status`` lists, metadata and fields at the top)."""
    rec = _object(obj, "a record")
    flat = "responses" not in rec and any(isinstance(k, str) and k.endswith(".responses") for k in rec)
    qid, did = _argilla_ids(rec, flat)
    answers = _argilla_flat(rec) if flat else _argilla_nested(rec)
    questions = [name for name in answers if name != "reason"]
    if not questions:
        return []
    if len(questions) > 1:
        raise _Bad(
            f"responses answer {len(questions)} questions {questions}; expected one (besides 'reason')"
        )
    reasons = {str(r.get("user_id")): _reason(r.get("value")) for r in answers.get("reason", [])}
    out: Found = []
    for r in answers[questions[0]]:
        status = r.get("status")
        skipped = _ARGILLA_SKIP.get(status) if isinstance(status, str) else None
        skipped = skipped or (LeftOut.NO_VALUE if r.get("value") is None else None)
        if skipped:
            out.append(skipped)
            continue
        who = _who(r.get("user_id"), options)
        grade = _grade(r.get("value"), options, f"response of {who}")
        reason = reasons.get(str(r.get("user_id")), "")
        out.append(
            ForeignLabel(query_id=qid, doc_id=did, annotator=who, grade=grade, reason=reason, line=line)
        )
    return out


def _argilla_nested(rec: dict) -> dict[str, list[dict]]:
    responses = _object(rec.get("responses") or {}, "responses")
    out = {}
    for name, answers in responses.items():
        if not isinstance(answers, list):
            raise _Bad(f"responses.{name} must be a list; got {type(answers).__name__}")
        out[name] = [_object(r, "a response") for r in answers]
    return out


def _argilla_flat(rec: dict) -> dict[str, list[dict]]:
    out = {}
    for key in rec:
        if not (isinstance(key, str) and key.endswith(".responses")):
            continue
        columns = [rec.get(key), rec.get(f"{key}.users"), rec.get(f"{key}.status")]
        if columns[2] is None and isinstance(columns[0], list):
            columns[2] = [None] * len(columns[0])
        lists = [c for c in columns if isinstance(c, list)]
        if len(lists) != 3 or len({len(c) for c in lists}) != 1:
            raise _Bad(f"{key}, {key}.users and {key}.status must be lists of one length")
        out[key.removesuffix(".responses")] = [
            {"value": v, "user_id": u, "status": s} for v, u, s in zip(*lists, strict=True)
        ]
    return out


def _argilla_ids(rec: dict, flat: bool) -> tuple[str, str]:
    metadata, fields = _dict_or_empty(rec.get("metadata")), _dict_or_empty(rec.get("fields"))
    ids = []
    for key in ("query_id", "doc_id"):
        value = rec.get(key) if flat else metadata.get(key, fields.get(key))
        if value is None:
            raise _Bad(f"the record has no {key}" if flat else f"neither metadata nor fields hold {key}")
        ids.append(_string(value, key))
    return ids[0], ids[1]


def _prodigy(obj: Any, line: int, options: _Options) -> Found:
    """A choice task (``options``): its one accepted option, a ``reject`` left out; a binary task: accept
    and reject as ``grade_map`` maps them (1 and 0); ``ignore`` is left out."""
    task = _object(obj, "a task")
    answer = task.get("answer")
    if answer == "ignore":
        return [LeftOut.IGNORED]
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
        if answer == "reject":
            return [LeftOut.REJECTED]
        chosen = task.get("accept")
        if chosen == [] or chosen is None:
            return [LeftOut.NO_CHOICE]
        if not isinstance(chosen, list) or len(chosen) != 1:
            raise _Bad(f"a choice task needs one accepted option; got {quoted(chosen)}")
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


def _quepid(obj: Any, line: int, options: _Options) -> Found:
    query, docid, rating = (obj.get(k, "").strip() for k in ("query", "docid", "rating"))
    if not docid and not rating:
        return []  # a query without ratings
    if not rating:
        return [LeftOut.NO_RATING]
    if not query:
        raise _Bad("empty query")
    if options.annotator is None:
        raise _Bad(f"Quepid's ratings do not say who rated: give {options.names['annotator']}")
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


class Records(StrEnum):
    """How a label file's records are read: one JSON object a line, JSON (a list, one object, or one object
    a line) or CSV with a header."""

    JSONL = "jsonl"
    JSON = "json"
    CSV = "csv"


@dataclass(frozen=True)
class LabelReader:
    """How one label format is read: ``read`` turns a record into its labels and left-out answers;
    ``records`` says how the file is split into records; ``help`` is the one line the CLI and the import
    page show; ``versions``: one annotator answering a task again is a new version (else an error);
    ``wrong_export``: names the export to use instead when the first record shows another export of the
    tool; ``not_json``: the message for a file that is not JSON at all (empty: read it one object a line)."""

    read: Callable[[Any, int, _Options], Found]
    records: Records
    help: str
    versions: bool = False
    wrong_export: Callable[[Any], str | None] | None = None
    not_json: str = ""


EXPORT_TO_USE = (
    "this is Label Studio's {export} export, which does not keep who gave each label: export the project "
    "as JSON (Export, then JSON) and import that file"
)


def _label_studio_min(obj: Any) -> str | None:
    """Label Studio's JSON-MIN export: the task data and one annotation flattened together."""
    flat = isinstance(obj, dict) and "data" not in obj and ("annotation_id" in obj or "annotator" in obj)
    return EXPORT_TO_USE.format(export="JSON-MIN") if flat else None


READERS: dict[LabelFormat, LabelReader] = {  # one line per format
    LabelFormat.JSONL: LabelReader(
        _jsonl, Records.JSONL, "JSONL: query_id, doc_id, annotator, grade, reason (optional) a line"
    ),
    LabelFormat.LABEL_STUDIO: LabelReader(
        _label_studio,
        Records.JSON,
        "Label Studio JSON export (or one task a file): data.query_id, data.doc_id; annotator "
        "label-studio-N; the choices or rating result",
        wrong_export=_label_studio_min,
        not_json=EXPORT_TO_USE.format(export="CSV"),
    ),
    LabelFormat.ARGILLA: LabelReader(
        _argilla,
        Records.JSON,
        "Argilla 2 records (records.to_json, or flattened with the response status): query_id, doc_id; "
        "annotator user_id",
    ),
    LabelFormat.PRODIGY: LabelReader(
        _prodigy,
        Records.JSONL,
        "Prodigy db-out JSONL: query_id, doc_id; annotator _annotator_id; accept/reject or the option",
        versions=True,
    ),
    LabelFormat.QUEPID: LabelReader(
        _quepid, Records.CSV, "Quepid ratings CSV query,docid,rating (query by its text); needs the annotator"
    ),
}
