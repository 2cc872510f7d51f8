"""One list per concept: judge backends, label formats, import kinds and release formats are each defined once
(an enum or a registry) and every other list of them (CLI choices and commands, service tuples, help lines,
the README's table) is read from that definition. The database CHECK constraints built from the enums are
compared with the migrated database in tests/services/test_store_schema.py; the Data page's selectors in
tests/app/test_app_import_labels.py; the measures' README table in tests/metrics/test_metrics_package.py."""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest

import metrics.formats
from annotate_app.cli import build_parser
from annotate_app.judges import BUILDERS, Backend, JudgeSetup, LexicalJudge
from annotate_app.services import export, imports
from annotate_app.services.import_kinds import IMPORT_KINDS, ImportKind
from annotate_app.services.imports import LABEL_FORMAT_HELP, LABEL_FORMATS
from annotate_app.services.release_formats import ReleaseFormat
from annotate_app.store.enums import JudgeBackend
from metrics.formats import LabelFormat
from metrics.formats._label_readers import READERS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub


def _command(*path: str) -> argparse.ArgumentParser:
    """The parser of the CLI command ``qrelforge PATH...``."""
    parser = build_parser(path[0])
    for name in path:
        parser = _subcommands(parser).choices[name]
    return parser


def _choices(*path: str, option: str) -> list[str]:
    """The choices of ``option`` of the CLI command ``qrelforge PATH...``."""
    (action,) = [a for a in _command(*path)._actions if option in a.option_strings]
    return [str(c) for c in action.choices]


# ------------------------------------------------------------------------------------------ judge backends
def test_the_store_names_the_judges_backend_enum():
    assert JudgeBackend is Backend


RUNS = [  # every backend: whether a judge of it runs (else it only imports labels)
    (Backend.OPENAI, True),
    (Backend.REPLAY, False),
    (Backend.LEXICAL, True),
    (Backend.ENSEMBLE, True),
]


def test_every_backend_runs_or_only_imports():
    assert [(b, b in BUILDERS) for b in Backend] == RUNS


def test_each_builder_makes_a_judge_of_its_backend():
    lexical = JudgeSetup(name="m", corpus=lambda: {"d1": "a b"})
    setup = JudgeSetup(
        name="j",
        base_url="http://127.0.0.1:9/v1",
        model="m",
        corpus=lambda: {"d1": "a b"},
        members=((Backend.LEXICAL, lexical), (Backend.LEXICAL, lexical)),  # an ensemble's
    )
    for backend, build in BUILDERS.items():
        judge = build(setup)
        assert (judge.backend, judge.name) == (backend, "j")
        getattr(judge, "close", lambda: None)()


def test_judge_add_offers_the_runnable_backends():
    assert _choices("judge", "add", option="--backend") == [b.value for b in BUILDERS]


class _Replaying(LexicalJudge):
    """A stand-in for a new backend's judge."""

    @property
    def backend(self) -> Backend:
        return Backend.REPLAY


def test_a_builder_registered_in_one_line_is_offered_added_and_run(cli, monkeypatch):
    """The one line that registers a backend's builder is all the CLI and the services need."""
    assert "replay" not in _choices("judge", "add", option="--backend")
    monkeypatch.setitem(BUILDERS, Backend.REPLAY, _Replaying.from_setup)  # the registration line
    assert "replay" in _choices("judge", "add", option="--backend")
    assert cli("demo-data")[0] == 0
    assert cli("judge", "add", "-p", "demo", "new", "--backend", "replay")[:2] == (0, "judge new (replay)\n")
    assert cli("judge", "run", "-p", "demo", "new", "--pairs", "all")[:2] == (
        0,
        "judge new: 12 pairs, 12 sent, 0 cached, 0 failed\n",
    )


# ------------------------------------------------------------------------------------------- label formats
def test_every_label_format_has_its_reader_and_one_line_of_help():
    assert list(READERS) == list(LabelFormat)
    for fmt in LabelFormat:
        assert fmt.help and "\n" not in fmt.help and fmt.help == READERS[fmt].help


def test_the_label_format_lists_are_read_from_the_enum():
    values = [f.value for f in LabelFormat]
    assert list(LABEL_FORMATS) == values
    assert {f.value: f.help for f in LabelFormat} == LABEL_FORMAT_HELP
    assert _choices("import", "labels", option="--format") == values


def test_the_readme_label_table_has_a_row_per_format():
    section = README[README.index("## Labels from other tools") :]
    table = re.search(r"^\| `--format` \|.*?(?=\n\n)", section, flags=re.S | re.M)
    assert table is not None
    rows = re.findall(r"^\| `([^`]+)` \|", table.group(0), flags=re.M)[1:]  # the header's cell first
    assert rows == [f.value for f in LabelFormat]


# -------------------------------------------------------------------------------------------- import kinds
COMMANDS = [  # the stored kind, `qrelforge import COMMAND`, the service function
    (ImportKind.DOCUMENTS, "docs", "import_documents"),
    (ImportKind.QUERIES, "queries", "import_queries"),
    (ImportKind.RUN, "run", "import_run"),
    (ImportKind.QRELS, "qrels", "import_qrels"),
    (ImportKind.CHUNKS, "chunks", "import_chunk_map"),
    (ImportKind.LABELS, "labels", "import_labels"),
]


def test_every_import_kind_has_its_command_and_service_function():
    assert [(k, i.command, i.function) for k, i in IMPORT_KINDS.items()] == COMMANDS
    assert all(callable(getattr(imports, i.function)) for i in IMPORT_KINDS.values())


def test_qrelforge_import_has_a_command_per_kind_with_its_help():
    sub = _subcommands(_command("import"))
    helps = {a.dest: a.help for a in sub._choices_actions}
    assert [c for c in sub.choices if c in helps and c not in ("ir-datasets", "list", "undo")] == [
        i.command for i in IMPORT_KINDS.values()
    ]
    assert all(helps[i.command] == i.help for i in IMPORT_KINDS.values())


def test_the_preview_reads_each_kind_with_its_reader():
    import_preview = importlib.import_module("annotate_app.services.imports.preview")
    readers = {k: i.reader for k, i in IMPORT_KINDS.items() if i.reader}
    assert readers == import_preview._READERS and set(readers) == set(ImportKind) - {ImportKind.LABELS}
    assert all(callable(getattr(metrics.formats, r)) for r in readers.values())


# ----------------------------------------------------------------------------------------- release formats
def test_every_release_format_has_a_writer():
    assert list(export._WRITERS) == list(ReleaseFormat)
    assert tuple(f.value for f in ReleaseFormat) == export.FORMATS


def test_export_offers_the_release_formats_then_the_other_exports():
    assert _choices("export", option="--format") == [
        *(f.value for f in ReleaseFormat),
        "labels-csv",
        "label-studio",
    ]


@pytest.mark.parametrize("fmt", list(ReleaseFormat))
def test_each_release_format_names_its_file(fmt):
    assert fmt.label and fmt.suffix and re.fullmatch(r"[a-z]+/[a-z-]+", fmt.mime)


# ------------------------------------------------------------------------------------------------ measures
def test_every_measure_the_cli_and_the_pages_name_is_registered():
    """Measures are the registry's (`metrics.measures.REGISTRY`; the README's table is generated from it):
    the CLI's defaults, the Score page's and the calibration's measures parse against it."""
    from annotate_app.cli.scoring import DEFAULT_MEASURES
    from annotate_app.services._judge_state import TAU_MEASURE
    from annotate_app.ui.components.score_panels import measures_for
    from metrics.measures import parse_measures

    for names in (DEFAULT_MEASURES, measures_for(10), [TAU_MEASURE]):
        assert [str(m) for m in parse_measures(names)] == names
