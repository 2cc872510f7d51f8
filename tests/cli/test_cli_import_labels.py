"""``qrelforge import labels``: human labels made in Label Studio, Argilla, Prodigy, Quepid (or plain JSONL),
each format's example from tests/fixtures/labels/ imported, then agreement and a release; bad files refused
with exact, line-numbered messages, importing nothing."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from xml.etree import ElementTree

import pytest
from store_fixtures import synthetic_project

from annotate_app.cli import main
from annotate_app.services import adjudication, gate, labels, releases, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import PermissionDenied

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "labels"
U1, U2 = "99e68edb-ee02-43ee-a462-ed4ea968d38f", "05597270-1b78-4a3c-ae64-a061c87e4ee7"
P1, P2 = "1ed4cad4-9edc-4d6d-83bb-b7e595c2fe0b", "e1eec138-4623-4b5b-b555-6d1d69348d78"

# format, files (each with its extra options), the two annotators the files name, what they leave out
CASES = [
    ("jsonl", [("labels.jsonl", [])], ("ann1", "ann2"), ""),
    (
        "label-studio",
        [("label_studio.json", [])],
        ("label-studio-2", "label-studio-3"),
        "; 1 left out: 1 skipped",
    ),
    ("argilla", [("argilla_datasets.jsonl", [])], (U1, U2), "; 2 left out: 1 draft, 1 discarded"),
    (
        "prodigy",
        [("prodigy.jsonl", [])],
        ("2024-04-20_10-59-51", "2024-07-22_18-49-53"),
        "; 4 left out: 3 rejected, 1 without a choice",
    ),
    (
        "quepid",
        [("quepid_alice.csv", ["--annotator", "alice"]), ("quepid_bob.csv", ["--annotator", "bob"])],
        ("alice", "bob"),
        "",
    ),
]


@pytest.fixture
def project(db_url, db, tmp_path):
    synthetic_project(db, "p", queries=2, docs=3, n=2)  # q0, q1 × D0, D1, D2: six pooled pairs
    return db_url


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("fmt", "files", "annotators", "left_out"), CASES, ids=[c[0] for c in CASES])
def test_import_then_agreement_and_release(project, db, capsys, fmt, files, annotators, left_out):
    for name, options in files:
        code, out, err = _run(
            capsys,
            "import",
            "labels",
            "--db",
            project,
            "-p",
            "p",
            str(FIXTURES / name),
            "--format",
            fmt,
            *options,
        )
        assert (code, err) == (0, "")
        assert out == f"labels {name}: {12 // len(files)} added, 0 changed, 0 unchanged{left_out}\n"
    summary = gate.agreement(db, SYSTEM, "p")
    assert (summary.n_pairs, summary.n_annotators, summary.n_labels) == (6, 2, 12)
    assert (summary.percent_agreement, summary.value, summary.passes) == (1.0, 1.0, True)
    assert sorted(summary.pairwise.columns) == sorted(annotators)
    code, out, _ = _run(capsys, "agreement", "--db", project, "-p", "p")
    assert code == 0 and out.endswith("release: 1 disagreements are not adjudicated\n")
    (worst,) = gate.disagreements(db, SYSTEM, "p")
    assert (worst.query_id, worst.doc_id, sorted(x.grade for x in worst.labels)) == ("q1", "D2", [1, 2])
    assert sorted(x.annotator for x in worst.labels) == sorted(annotators)
    adjudication.adjudicate(db, SYSTEM, "p", worst.pair_id, grade=1, reason="marginal: one mention")
    code, out, _ = _run(capsys, "agreement", "--db", project, "-p", "p")
    assert out.endswith("release: ready\n")
    # the accounts exist but cannot log in
    for name in annotators:
        assert users.get_user(db, SYSTEM, name).active is False
        with pytest.raises(PermissionDenied):
            authenticate(db, name, "anything-at-all")
    # again: nothing added
    name, options = files[0]
    code, out, _ = _run(
        capsys,
        "import",
        "labels",
        "--db",
        project,
        "-p",
        "p",
        str(FIXTURES / name),
        "--format",
        fmt,
        *options,
    )
    assert out == f"labels {name}: 0 added, 0 changed, {12 // len(files)} unchanged{left_out}\n"
    release = releases.create_release(db, SYSTEM, "p")
    assert (release.version, release.n_qrels) == (1, 6)
    code, out, _ = _run(capsys, "export", "--db", project, "-p", "p", "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    grades = {(r["query_id"], r["doc_id"]): r["relevance"] for r in rows}
    assert grades == {
        ("q0", "D0"): 3,
        ("q0", "D1"): 1,
        ("q0", "D2"): 0,
        ("q1", "D0"): 2,
        ("q1", "D1"): 0,
        ("q1", "D2"): 1,
    }
    reasons = {x["reason"] for r in rows for x in r["labels"]}
    assert len(reasons) > 1 or fmt in ("quepid", "prodigy")  # the reasons the tools recorded are kept


def test_label_studio_round_trip(project, db, capsys, tmp_path):
    code, out, _ = _run(capsys, "export", "--db", project, "-p", "p", "--format", "label-studio")
    tasks = json.loads(out)
    assert code == 0 and len(tasks) == 6
    assert tasks[0] == {
        "data": {"query_id": "q0", "query": "query 0", "doc_id": "D0", "title": "t0", "text": "text 0"}
    }
    code, config, _ = _run(
        capsys, "export", "--db", project, "-p", "p", "--format", "label-studio", "--config"
    )
    view = ElementTree.fromstring(config)
    choices = view.find("Choices")
    assert choices is not None and choices.get("name") == "relevance"
    assert [(c.get("value"), c.get("alias")) for c in choices] == [
        ("Not relevant", "0"),
        ("Related, does not answer", "1"),
        ("Partly answers", "2"),
        ("Fully answers", "3"),
    ]
    # what Label Studio exports once two annotators judged every task with that config
    for i, task in enumerate(tasks, 1):
        task["id"] = i
        task["annotations"] = [
            {
                "id": 10 * i + who,
                "completed_by": who,
                "was_cancelled": False,
                "result": [
                    {
                        "from_name": "relevance",
                        "to_name": "text",
                        "type": "choices",
                        "value": {"choices": [str(i % 4)]},
                    },
                    {
                        "from_name": "reason",
                        "to_name": "text",
                        "type": "textarea",
                        "value": {"text": [f"why {i}"]},
                    },
                ],
            }
            for who in (1, 2)
        ]
    path = tmp_path / "project-4-at-2026-12-01.json"
    path.write_text(json.dumps(tasks))
    code, out, err = _run(
        capsys, "import", "labels", "--db", project, "-p", "p", str(path), "--format", "label-studio"
    )
    assert (code, out, err) == (0, f"labels {path.name}: 12 added, 0 changed, 0 unchanged\n", "")
    summary = gate.agreement(db, SYSTEM, "p")
    assert (summary.n_pairs, summary.n_labels, summary.percent_agreement) == (6, 12, 1.0)
    code, out, _ = _run(capsys, "export", "--db", project, "-p", "p", "--format", "labels-csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {(r["query_id"], r["doc_id"], r["annotator"], r["grade"], r["reason"]) for r in rows[:2]} == {
        ("q0", "D0", "label-studio-1", "1", "why 1"),
        ("q0", "D0", "label-studio-2", "1", "why 1"),
    }


@pytest.mark.parametrize(
    ("argv", "stderr"),
    [
        (
            ["--grade-map", "Relevant"],
            "qrelforge: error: --grade-map must be LABEL=GRADE with an integer GRADE; got 'Relevant'\n",
        ),
        (["--annotator-map", "alice"], "qrelforge: error: --annotator-map must be NAME=USER; got 'alice'\n"),
        (
            ["--grade-map", "Relevant=high"],
            "qrelforge: error: --grade-map must be LABEL=GRADE with an integer GRADE; got 'Relevant=high'\n",
        ),
    ],
)
def test_bad_options_are_one_line_exit_2(project, capsys, argv, stderr):
    path = str(FIXTURES / "labels.jsonl")
    code, out, err = _run(
        capsys, "import", "labels", "--db", project, "-p", "p", path, "--format", "jsonl", *argv
    )
    assert (code, out, err) == (2, "", stderr)


def test_a_bad_file_lists_every_problem_and_imports_nothing(project, db, capsys, tmp_path):
    path = tmp_path / "bad.jsonl"
    good = '{"query_id": "q0", "doc_id": "D0", "annotator": "ann1", "grade": 1}'
    no_one = '{"query_id": "q0", "doc_id": "D1", "grade": 1}'
    high = good.replace("D0", "D2").replace("1}", '"high"}')
    path.write_text(f"{good}\n{no_one}\n{high}\n")
    code, out, err = _run(
        capsys, "import", "labels", "--db", project, "-p", "p", str(path), "--format", "jsonl"
    )
    assert (code, out) == (2, "")
    first = f"{path}:2: no annotator: the record names none and --annotator was not given: {no_one!r}"
    assert err.splitlines() == [
        f"  {first}",
        f"  {path}:3: grade 'high' is not an integer nor a label of --grade-map: {high!r}",
        f"qrelforge: error: {first} (and 1 more problem)",
    ]
    assert users.list_users(db, SYSTEM) == []


def _import(capsys, db_url: str, path, fmt: str, *options: str) -> tuple[int, str, str]:
    return _run(capsys, "import", "labels", "--db", db_url, "-p", "p", str(path), "--format", fmt, *options)


DRY_RUN = """\
{path}: 12 labels by 2 annotators; 4 left out: 3 rejected, 1 without a choice.
annotator            labels  new  changed  unchanged  account
2024-04-20_10-59-51  6       {new}    0        {same}          {account}
2024-07-22_18-49-53  6       {new}    0        {same}          {account}
{note}Dry run: nothing imported (without --dry-run: import 12 labels into p).
"""
NOTE = (
    "New accounts, created disabled (no password): 2024-04-20_10-59-51, 2024-07-22_18-49-53. "
    "Enable one on the Users page (reactivate, then set its password).\n"
)


def test_dry_run_prints_the_data_pages_preview_and_imports_nothing(project, db, capsys):
    path = FIXTURES / "prodigy.jsonl"
    code, out, err = _import(capsys, project, path, "prodigy", "--dry-run")
    assert (code, err) == (0, "")
    assert out == DRY_RUN.format(path=path, new=6, same=0, account="new (disabled)", note=NOTE)
    assert users.list_users(db, SYSTEM) == [] and gate.agreement(db, SYSTEM, "p").n_labels == 0
    _import(capsys, project, path, "prodigy")
    code, out, err = _import(capsys, project, path, "prodigy", "--dry-run")
    assert out == DRY_RUN.format(path=path, new=0, same=6, account="exists", note="")


def test_prodigy_sessions_make_versions_in_timestamp_order_once(project, db, capsys):
    path = FIXTURES / "prodigy_sessions.jsonl"
    code, out, err = _import(capsys, project, path, "prodigy")
    assert (code, out, err) == (
        0,
        "labels prodigy_sessions.jsonl: 7 added, 1 changed, 0 unchanged; 2 left out: 2 ignored\n",
        "",
    )
    code, out, _ = _import(capsys, project, path, "prodigy")
    assert out == "labels prodigy_sessions.jsonl: 0 added, 0 changed, 8 unchanged; 2 left out: 2 ignored\n"
    history = [
        (x.version, x.grade)
        for x in labels.pair_history(db, SYSTEM, "p", _pair_id(db, "q1", "D0"))
        if x.annotator == P1
    ]
    assert history == [(2, 1), (1, 0)]


def _pair_id(db, qid: str, did: str) -> int:
    from annotate_app.services import pooling

    pool = pooling.list_pairs(db, SYSTEM, "p")
    (pair,) = pool[(pool.query_id == qid) & (pool.doc_id == did)].pair_id.tolist()
    return int(pair)


@pytest.fixture
def numeric(db_url, db):
    """A project whose query and document IDs are numbers' text, as in the CSV uploaded to Label Studio."""
    from annotate_app.services import imports, pooling, projects

    projects.create_project(db, SYSTEM, "p", annotators_per_pair=2)
    docs = "".join(
        json.dumps({"doc_id": str(d), "title": f"t{d}", "text": f"text {d}"}) + "\n" for d in (7, 8, 9)
    )
    queries = "".join(json.dumps({"query_id": str(q), "text": f"query {q}"}) + "\n" for q in (101, 102))
    run = "".join(f"{q} Q0 {d} {d - 6} {10 - d} sys\n" for q in (101, 102) for d in (7, 8, 9))
    imports.import_documents(db, SYSTEM, "p", docs.encode(), filename="docs.jsonl")
    imports.import_queries(db, SYSTEM, "p", queries.encode(), filename="queries.jsonl")
    imports.import_run(db, SYSTEM, "p", run.encode(), filename="run.trec")
    pooling.pool(db, SYSTEM, "p", depth=3)
    return db_url


@pytest.mark.parametrize(
    ("name", "out"),
    [
        ("label_studio_numeric_ids.json", "12 added, 0 changed, 0 unchanged; 1 left out: 1 skipped"),
        ("label_studio_task.json", "2 added, 0 changed, 0 unchanged; 1 left out: 1 skipped"),
    ],
)
def test_label_studio_numeric_ids_and_a_single_task(numeric, db, capsys, name, out):
    code, got, err = _import(capsys, numeric, FIXTURES / name, "label-studio")
    assert (code, got, err) == (0, f"labels {name}: {out}\n", "")


@pytest.mark.parametrize(
    ("name", "fmt", "options", "message"),
    [
        (
            "label_studio_min.json",
            "label-studio",
            [],
            "{path}:2: this is Label Studio's JSON-MIN export, which does not keep who gave each label: "
            "export the project as JSON (Export, then JSON) and import that file",
        ),
        (
            "label_studio.csv",
            "label-studio",
            [],
            "{path}:1: this is Label Studio's CSV export, which does not keep who gave each label: "
            "export the project as JSON (Export, then JSON) and import that file",
        ),
        (
            "quepid_alice.csv",
            "quepid",
            [],
            "{path}:2: Quepid's ratings do not say who rated: give --annotator",
        ),
    ],
)
def test_refused_files_are_one_line_exit_2(project, db, capsys, name, fmt, options, message):
    path = FIXTURES / name
    code, out, err = _import(capsys, project, path, fmt, *options)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1].startswith("qrelforge: error: " + message.format(path=path))
    assert gate.agreement(db, SYSTEM, "p").n_labels == 0


def test_a_rating_of_3_5_names_the_value(project, db, capsys, tmp_path):
    path = tmp_path / "case_1_judgements.csv"
    path.write_text("query,docid,rating\nquery 0,D0,3.0\nquery 0,D1,3.5")
    code, out, err = _import(capsys, project, path, "quepid", "--annotator", "rita")
    assert (code, out, err) == (
        2,
        "",
        f"qrelforge: error: {path}:3: rating '3.5' is not an integer nor a label of --grade-map: "
        "'query 0,D1,3.5'\n",
    )
