"""``qrelforge import ir-datasets``: a dataset registered from local files (TrecDocs, TsvQueries, TrecQrels)
read through ir_datasets from its cache, with the network switched off; unknown ids and uncached datasets
end in one line, exit 2."""

from __future__ import annotations

import uuid

import pytest
from store_fixtures import synthetic_project

from annotate_app.cli import main
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput
from annotate_app.services.imports.irdatasets import import_ir_dataset

ir_datasets = pytest.importorskip("ir_datasets")

DOCS = """<DOC>
<DOCNO> D1 </DOCNO>
<TEXT>
Solar panels turn sunlight into electricity.
</TEXT>
</DOC>
<DOC>
<DOCNO> D2 </DOCNO>
<TEXT>
Wind turbines and their blades.
</TEXT>
</DOC>
"""


def _register(tmp_path, monkeypatch, *, extra_qrel: str = "") -> str:
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecDocs, TrecQrels, TsvQueries
    from ir_datasets.util import LocalDownload

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "ir_datasets_home"))
    (tmp_path / "docs.trec").write_text(DOCS)
    (tmp_path / "queries.tsv").write_text("q1\tsolar power\nq2\twind energy\n")
    (tmp_path / "qrels.txt").write_text("q1 0 D1 2\nq1 0 D2 0\nq2 0 D2 1\n" + extra_qrel)
    parts = [
        TrecDocs(LocalDownload(tmp_path / "docs.trec"), parser="text"),
        TsvQueries(LocalDownload(tmp_path / "queries.tsv")),
        TrecQrels(LocalDownload(tmp_path / "qrels.txt"), {0: "not", 1: "related", 2: "answers"}),
    ]
    name = f"qrelforge-test/tiny-{uuid.uuid4().hex[:8]}"  # the registry is process-wide
    ir_datasets.registry.register(name, Dataset(*parts))
    return name


@pytest.fixture
def empty_project(db_url, db):
    from annotate_app.services import projects

    projects.create_project(db, SYSTEM, "p")
    return db_url


def test_import_a_registered_dataset_twice(empty_project, db, tmp_path, monkeypatch, capsys):
    name = _register(tmp_path, monkeypatch)
    assert main(["import", "ir-datasets", "--db", empty_project, "-p", "p", name]) == 0
    assert capsys.readouterr().out == (
        f"documents docs.jsonl: 2 added, 0 changed, 0 unchanged\n"
        f"queries queries.jsonl: 2 added, 0 changed, 0 unchanged\n"
        f"qrels {name}: 3 added, 0 changed, 0 unchanged\n"
    )
    assert main(["import", "ir-datasets", "--db", empty_project, "-p", "p", name]) == 0
    assert capsys.readouterr().out == (
        f"documents docs.jsonl: already imported (import 1); 2 unchanged\n"
        f"queries queries.jsonl: already imported (import 2); 2 unchanged\n"
        f"qrels {name}: 0 added, 0 changed, 3 unchanged\n"
    )


def test_unknown_dataset_is_one_line_exit_2(empty_project, capsys):
    assert main(["import", "ir-datasets", "--db", empty_project, "-p", "p", "no-such/dataset"]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == (
        "",
        "qrelforge: error: unknown ir_datasets dataset 'no-such/dataset' "
        "(see https://ir-datasets.com for the ids)\n",
    )


def test_a_dataset_not_in_the_cache_is_not_downloaded(empty_project, db, tmp_path, monkeypatch, capsys):
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TsvQueries
    from ir_datasets.util import Download, RequestsDownload

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    remote = Download(
        [RequestsDownload("https://example.invalid/queries.tsv")], cache_path=tmp_path / "q.tsv"
    )
    name = f"qrelforge-test/remote-{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(name, Dataset(TsvQueries(remote)))
    assert main(["import", "ir-datasets", "--db", empty_project, "-p", "p", name]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"qrelforge: error: ir_datasets dataset {name!r} is not in the local cache (")
    assert err.count("\n") == 1


def test_qrels_are_checked_like_any_import(db, tmp_path, monkeypatch):
    synthetic_project(db, "p", queries=1, docs=1)
    name = _register(tmp_path, monkeypatch, extra_qrel="q2 0 D7 1\n")
    with pytest.raises(InvalidInput) as exc:
        import_ir_dataset(db, SYSTEM, "p", name)
    assert str(exc.value) == f"{name}/qrels.trec:4: unknown document 'D7': 'q2 0 D7 1'"
    # documents and queries came first, each its own transaction: the fixed dataset completes the import
    (tmp_path / "qrels.txt").write_text("q1 0 D1 2\nq1 0 D2 0\nq2 0 D2 1\n")
    reports = import_ir_dataset(db, SYSTEM, "p", name)
    assert [(r.kind, r.added, r.unchanged) for r in reports] == [
        ("documents", 0, 2),
        ("queries", 0, 2),
        ("qrels", 3, 0),
    ]
