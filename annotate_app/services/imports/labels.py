"""Importing human labels made in other tools (JSONL, Label Studio, Argilla, Prodigy, Quepid).

`import_labels` stores each label as `services.labels.save_label` would. It refuses a label on a pair not in
the pool, a grade off the scale, a reason over `inputs.MAX_REASON`; an unknown annotator becomes a disabled
account. A bad file imports nothing (`InvalidInput`); an equal label adds nothing. `preview_labels` runs the
same checks and writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project, settings_of
from annotate_app.services.auth import Actor, Role, check_username
from annotate_app.services.errors import InvalidInput
from annotate_app.services.imports._common import (
    Source,
    SourceFile,
    collector_paused,
    fail,
    parse,
    read_source,
)
from annotate_app.services.imports._label_writes import preview, store_labels
from annotate_app.services.inputs import check_length
from annotate_app.services.types import ImportReport, LabelImportPreview
from annotate_app.store import corpus, label_import
from annotate_app.store.db import Database, unstorable
from annotate_app.store.models import Project
from metrics.errors import FormatError, Problem, QrelForgeError
from metrics.formats import ForeignLabels, LabelFormat

__all__ = [
    "import_labels",
    "preview_labels",
    "grade_map_from_text",
    "annotator_map_from_text",
    "LABEL_FORMATS",
    "LABEL_FORMAT_HELP",
]

LABEL_FORMATS = tuple(f.value for f in LabelFormat)
LABEL_FORMAT_HELP = {f.value: f.help for f in LabelFormat}
"""One line per format (`metrics.formats.LabelFormat.help`); the README's "Labels from other tools" has the
whole table."""


class _Checked(NamedTuple):
    """A label that passed every check: its pair and annotator resolved (a tuple: one is made a label)."""

    line: int
    pair_id: int
    username: str
    grade: int
    reason: str
    version: int = 1


def import_labels(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    source: Source,
    *,
    fmt: str,
    annotator: str | None = None,
    grade_map: Mapping[str, int] | None = None,
    annotators: Mapping[str, str] | None = None,
    filename: str | None = None,
    option_names: Mapping[str, str] | None = None,
) -> ImportReport:
    """Import human labels made in another tool (admin): ``fmt`` is one of `LABEL_FORMATS` (see
    `metrics.formats.read_labels`); ``annotator`` names who made the labels whose file does not say;
    ``grade_map`` maps a tool's label texts to grades; ``annotators`` renames annotators (the name the
    import would give, e.g. ``label-studio-3`` or an Argilla user id → a username); ``option_names``: how
    messages name the options (`metrics.formats.read_labels`). Returns how many labels were added, changed (a
    new version) and unchanged, and what the file left out."""
    renames = _check_renames(annotators)
    with collector_paused():  # rows by the hundred thousand, none in a cycle
        file, labels = _read(source, filename, fmt, annotator, grade_map, option_names)
        return store_labels(
            db,
            actor,
            project,
            file,
            lambda s, proj: _check(s, proj, file, labels, renames),
            left_out=labels.left_out_text(),
        )


def preview_labels(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    source: Source,
    *,
    fmt: str,
    annotator: str | None = None,
    grade_map: Mapping[str, int] | None = None,
    annotators: Mapping[str, str] | None = None,
    filename: str | None = None,
    option_names: Mapping[str, str] | None = None,
) -> LabelImportPreview:
    """What `import_labels` with these arguments would import, nothing written (admin): every check of the
    import runs (a bad file raises the same `InvalidInput`, every bad line named), then each annotator's
    labels are counted as the import would count them (added, changed, unchanged) and a username no user has
    yet is marked ``new_account`` (the import creates it deactivated, without a password)."""
    renames = _check_renames(annotators)
    file, labels = _read(source, filename, fmt, annotator, grade_map, option_names)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "preview label imports")
        rows = preview(s, proj, file, _check(s, proj, file, labels, renames))
    return LabelImportPreview(source=file.name, annotators=tuple(rows), left_out=labels.left_out_text())


def grade_map_from_text(text: str) -> dict[str, int]:
    """A grade map typed one ``LABEL=GRADE`` a line (``Highly relevant=3``; blank lines are skipped; the last
    ``=`` splits, so a label may hold one), or InvalidInput naming the line."""
    out = {}
    for number, label, value in _assignments(
        text, "grade map", "LABEL=GRADE with an integer GRADE", last=True
    ):
        try:
            out[label] = int(value)
        except ValueError:
            raise InvalidInput(
                f"grade map line {number}: expected LABEL=GRADE with an integer GRADE; got {value!r:.80}"
            ) from None
    return out


def annotator_map_from_text(text: str) -> dict[str, str]:
    """Annotator renames typed one ``NAME=USER`` a line (``label-studio-3=alice``; blank lines are skipped),
    or InvalidInput naming the line."""
    return {name: user for _, name, user in _assignments(text, "annotator map", "NAME=USER", last=False)}


def _assignments(text: str, what: str, form: str, *, last: bool) -> list[tuple[int, str, str]]:
    if not isinstance(text, str):
        raise InvalidInput(f"{what} must be text; got {type(text).__name__}")
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        key, sep, value = line.rpartition("=") if last else line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise InvalidInput(f"{what} line {number}: expected {form}; got {line.strip()!r:.80}")
        out.append((number, key, value))
    return out


def _read(
    source: Source,
    filename: str | None,
    fmt: str,
    annotator: str | None,
    grade_map: object,
    option_names: Mapping[str, str] | None,
) -> tuple[SourceFile, ForeignLabels]:
    """The file and its labels (`metrics.formats.read_labels`), or InvalidInput naming every bad line."""
    from metrics.formats import read_labels

    if fmt not in LABEL_FORMATS:
        raise InvalidInput(f"fmt must be one of {', '.join(map(repr, LABEL_FORMATS))}; got {fmt!r}")
    file = read_source(source, filename)
    try:
        labels = parse(
            read_labels, file, format=fmt, annotator=annotator, grade_map=grade_map, option_names=option_names
        )
    except (FormatError, InvalidInput):
        raise
    except QrelForgeError as exc:  # a bad argument, not a bad file
        raise InvalidInput(str(exc)) from None
    return file, labels


def _check_renames(annotators: object) -> dict[str, str]:
    if annotators is None:
        return {}
    if not isinstance(annotators, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in annotators.items()
    ):
        raise InvalidInput(f"annotators must map names (str) to usernames (str); got {annotators!r:.80}")
    return dict(annotators)


def _check(
    s: Session, proj: Project, file: SourceFile, labels: list, renames: dict[str, str]
) -> list[_Checked]:
    """Every label resolved to a pair and a username, or InvalidInput listing every bad one (also a second
    label of one pair by one user, as names differing only in case or renamed to one, unless it is the next
    version of the same annotator's label)."""
    pairs = label_import.pair_keys(s, proj.id)
    queries, docs = set(corpus.query_index(s, proj.id)), set(corpus.doc_index(s, proj.id))
    by_text = label_import.query_ids_by_text(s, proj.id) if any(x.query_text for x in labels) else {}
    grades = settings_of(proj).grades
    problems, out = [], []
    seen: dict[tuple[int, str], tuple[int, str, int]] = {}  # -> first line, annotator, last version
    names: dict[str, str] = {}  # annotator as written -> username (a file names a few, many times each)
    for x in labels:
        try:
            qid = _query_of(x, by_text)
            username = names.get(x.annotator)
            if username is None:
                username = names[x.annotator] = _username(renames.get(x.annotator, x.annotator))
            c = _Checked(
                x.line,
                _pair_of(proj, pairs, queries, docs, qid, x.doc_id),
                username,
                _grade(x.grade, grades),
                _reason(x.reason),
                x.version,
            )
            key = (c.pair_id, c.username)
            first, name, version = seen.get(key, (x.line, x.annotator, 0))
            if (name, version + 1) != (x.annotator, x.version):
                raise InvalidInput(
                    f"a second label of this pair by user {c.username!r}, first on line {first}"
                )
            seen[key] = (first, x.annotator, x.version)
            out.append(c)
        except InvalidInput as exc:
            problems.append(Problem(file.name, x.line, _shown(x), str(exc)))
    fail(problems[:1000])
    return out


def _shown(x) -> str:
    query = x.query_id or x.query_text
    return f"{query} {x.doc_id} {x.annotator} {x.grade}"


def _query_of(x, by_text: dict[str, list[str]]) -> str:
    if x.query_id:
        return x.query_id
    found = by_text.get(x.query_text, [])
    if len(found) != 1:
        how = "no query" if not found else f"{len(found)} queries ({', '.join(map(repr, found[:5]))})"
        raise InvalidInput(f"{how} of the project has the text {x.query_text!r:.80}")
    return found[0]


def _pair_of(proj: Project, pairs: dict, queries: set, docs: set, qid: str, did: str) -> int:
    if qid not in queries:
        raise InvalidInput(f"unknown query {qid!r:.80}")
    if did not in docs:
        raise InvalidInput(f"unknown document {did!r:.80}")
    found = pairs.get((qid, did))
    if found is None:
        raise InvalidInput(
            f"query {qid!r:.80}, document {did!r:.80} is not a pair of project {proj.name!r}'s pool "
            "(pool it first)"
        )
    pair_id, excluded = found
    if excluded:
        raise InvalidInput(f"query {qid!r:.80}, document {did!r:.80} is excluded from the pool")
    return pair_id


def _username(name: str) -> str:
    try:
        return check_username(name)
    except InvalidInput:
        raise InvalidInput(
            f"annotator must be 2-64 characters of a-z, 0-9, '.', '_', '-' (not 'system'); got {name!r:.80}"
        ) from None


def _grade(grade: int, grades: tuple) -> int:
    if grade not in grades:
        raise InvalidInput(f"grade {grade} is not one of the project's grades {list(grades)}")
    return grade


def _reason(reason: str) -> str:
    why = unstorable(reason)
    if why:
        raise InvalidInput(f"reason {why}")
    return check_length(reason, "reason")
