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
from annotate_app.services import adjudication, gate, releases, users
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import PermissionDenied

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "labels"
GRADE_NAMES = ["--grade-map", "Not relevant=0", "--grade-map", "Somewhat relevant=1"]
GRADE_NAMES += ["--grade-map", "Relevant=2", "--grade-map", "Highly relevant=3"]
U1, U2 = "0b6b1c2e-8f3a-4d5e-9c1a-2f4e6a8b0c11", "7d9e2f41-3b5c-4a6d-8e0f-1a2b3c4d5e6f"

# format, files (each with its extra options), the two annotators the files name
CASES = [
    ("jsonl", [("labels.jsonl", [])], ("ann1", "ann2")),
    ("label-studio", [("label_studio.json", GRADE_NAMES)], ("label-studio-3", "label-studio-7")),
    ("argilla", [("argilla.json", [])], (U1, U2)),
    ("prodigy", [("prodigy.jsonl", [])], ("relevance-alice", "relevance-bob")),
    (
        "quepid",
        [("quepid_alice.csv", ["--annotator", "alice"]), ("quepid_bob.csv", ["--annotator", "bob"])],
        ("alice", "bob"),
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


@pytest.mark.parametrize(("fmt", "files", "annotators"), CASES, ids=[c[0] for c in CASES])
def test_import_then_agreement_and_release(project, db, capsys, fmt, files, annotators):
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
        assert out == f"labels {name}: {12 // len(files)} added, 0 changed, 0 unchanged\n"
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
    assert out == f"labels {name}: 0 added, 0 changed, {12 // len(files)} unchanged\n"
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
    assert len(reasons) > 1 or fmt == "quepid"  # the reasons the tools recorded are kept


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
    first = f"{path}:2: no annotator: the record names none and annotator= was not given: {no_one!r}"
    assert err.splitlines() == [
        f"  {first}",
        f"  {path}:3: grade 'high' is not an integer nor a label of grade_map: {high!r}",
        f"qrelforge: error: {first} (and 1 more problem)",
    ]
    assert users.list_users(db, SYSTEM) == []
