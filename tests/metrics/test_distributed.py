"""metrics.distributed: a partitioned run scored on a local Ray gives evaluate's numbers on the whole run."""

from __future__ import annotations

import doctest
import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import metrics.distributed
from annotate_app.cli import main
from metrics import EvaluationError, FormatError, QrelForgeError, evaluate, read_qrels
from metrics.distributed import evaluate_ray, evaluate_ray_runs, partition_paths, read_partitions

MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR", "FirstRel", "R-Prec"]
N_QUERIES, DEPTH, PARTS = 2_000, 500, 4  # 1M run lines


@pytest.fixture(scope="module")
def cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def _ids(prefix: str, numbers: np.ndarray) -> np.ndarray:
    return np.char.add(prefix, numbers.astype(str))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Qrels of q0..q1999 (q0..q99 without relevant documents, q1900.. missing from the run), and a run of 1M
    lines over q0..q1899 and 100 extra queries x0..x99, split by query into 4 TREC partitions (one gzipped)
    and 4 Parquet ones; ``all.txt`` is the concatenation."""
    rng = np.random.default_rng(7)
    root = tmp_path_factory.mktemp("distributed")
    qrels_q = np.repeat(np.arange(N_QUERIES), 30)
    qrels_d = rng.integers(0, 2 * DEPTH, len(qrels_q))
    qrels_rel = np.where(qrels_q < 100, 0, rng.integers(0, 3, len(qrels_q)))
    seen = set()
    with (root / "qrels.txt").open("w") as f:
        for q, d, r in zip(qrels_q.tolist(), qrels_d.tolist(), qrels_rel.tolist(), strict=True):
            if (q, d) not in seen:
                seen.add((q, d))
                f.write(f"q{q} 0 D{d} {r}\n")
    queries = np.r_[_ids("q", np.arange(1900)), _ids("x", np.arange(100))]
    rng.shuffle(queries)
    run_q = np.repeat(queries, DEPTH)
    docs = np.concatenate([rng.permutation(2 * DEPTH)[:DEPTH] for _ in queries])
    scores = np.round(rng.random(len(run_q)), 2)  # ties: broken by doc ID, as trec_eval does
    lines = [
        f"{q} Q0 D{d} {i % DEPTH + 1} {s} tagR\n"
        for i, (q, d, s) in enumerate(zip(run_q.tolist(), docs.tolist(), scores.tolist(), strict=True))
    ]
    (root / "all.txt").write_text("".join(lines))
    trec, parquet = root / "trec", root / "parquet"
    trec.mkdir()
    parquet.mkdir()
    cut = len(queries) // PARTS * DEPTH
    for p in range(PARTS):
        rows = slice(p * cut, (p + 1) * cut if p < PARTS - 1 else len(lines))
        text = "".join(lines[rows])
        if p == 1:
            (trec / f"part-{p}.txt.gz").write_bytes(gzip.compress(text.encode()))
        else:
            (trec / f"part-{p}.txt").write_text(text)
        table = pa.table({"query_id": run_q[rows], "doc_id": _ids("D", docs[rows]), "score": scores[rows]})
        pq.write_table(table, parquet / f"part-{p}.parquet")
    (trec / "_SUCCESS").write_text("")  # written by Spark; not a partition
    qrels = read_qrels(root / "qrels.txt")
    return root, qrels, evaluate(qrels, root / "all.txt", MEASURES)


def _assert_same(got, want) -> None:
    assert got.query_ids == want.query_ids
    assert got.n == want.n
    assert got.counts == want.counts
    assert got.missing_queries == want.missing_queries
    assert got.extra_queries == want.extra_queries
    for name, mean in want.mean.items():
        assert got.mean[name] == pytest.approx(mean, abs=1e-12, rel=0), name
    for name in want.values:
        np.testing.assert_allclose(got.values[name], want.values[name], rtol=0, atol=1e-12, equal_nan=True)
    assert got.per_query.columns.tolist() == want.per_query.columns.tolist()


def test_the_generated_data_covers_the_edge_cases(data):
    _, _, want = data
    assert want.counts.missing == 100 and want.counts.extra == 100 and want.counts.no_relevant >= 100
    assert want.n["P@10"] == N_QUERIES and want.n["AP"] < N_QUERIES and want.n["FirstRel"] < N_QUERIES


def test_trec_partitions_score_as_the_concatenated_run(cluster, data):
    root, qrels, want = data
    got = evaluate_ray(qrels, root / "trec", MEASURES)
    _assert_same(got, want)
    assert got.name == want.name == "tagR"


def test_parquet_partitions_score_as_the_concatenated_run(cluster, data):
    root, qrels, want = data
    got = evaluate_ray(root / "qrels.txt", str(root / "parquet" / "*.parquet"), MEASURES)
    _assert_same(got, want)
    assert got.name == "parquet"  # no tag in Parquet: the directory's name
    assert evaluate_ray(qrels, root / "parquet" / "part-2.parquet", ["P@10"], name="tagR").name == "tagR"


def test_read_partitions_is_the_local_twin(data):
    root, qrels, want = data
    _assert_same(evaluate(qrels, read_partitions(root / "trec"), MEASURES), want)


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def small(tmp_path):
    qrels = _write(tmp_path / "qrels.txt", "q1 0 D1 1\nq2 0 D2 1\nq3 0 D3 0\n")
    parts = tmp_path / "parts"
    parts.mkdir()
    _write(parts / "a.txt", "q1 Q0 D1 1 0.9 t\nq1 Q0 D2 2 0.8 t\n")
    _write(parts / "b.txt", "q2 Q0 D9 1 0.7 t\nq9 Q0 D2 1 0.5 t\n")
    return qrels, parts


def test_a_query_split_across_partitions_is_refused_naming_both_files(cluster, small):
    qrels, parts = small
    _write(parts / "c.txt", "q3 Q0 D3 1 0.9 t\nq1 Q0 D7 1 0.1 t\n")
    message = f"query 'q1' is split across partitions '{parts / 'a.txt'}' and '{parts / 'c.txt'}'"
    with pytest.raises(EvaluationError, match=message.replace(".", r"\.")):
        evaluate_ray(qrels, parts, MEASURES)
    with pytest.raises(EvaluationError, match="split across partitions"):
        read_partitions(parts)


def test_small_run_missing_extra_and_undefined_queries(cluster, small):
    qrels, parts = small
    got = evaluate_ray(qrels, parts, ["P@2", "AP", "FirstRel"])
    assert got.per_query_dict() == {
        "q1": {"P@2": 0.5, "AP": 1.0, "FirstRel": 1.0},
        "q2": {"P@2": 0.0, "AP": 0.0, "FirstRel": None},
        "q3": {"P@2": 0.0, "AP": None, "FirstRel": None},
    }
    assert got.n == {"P@2": 3, "AP": 2, "FirstRel": 1}
    assert (got.counts.missing, got.counts.extra, got.counts.no_relevant) == (1, 1, 1)
    with pytest.raises(EvaluationError, match="strict=True"):
        evaluate_ray(qrels, parts, ["P@2"], strict=True)


def test_several_runs_share_the_cluster(cluster, small):
    qrels, parts = small
    first, second = evaluate_ray_runs(qrels, [parts, [parts / "a.txt"]], ["P@2"], names=[None, "only-a"])
    assert (first.name, first.counts.missing) == ("t", 1)
    assert (second.name, second.counts.missing) == ("only-a", 2)


def test_a_bad_partition_raises_the_format_error_of_read_run(cluster, small):
    qrels, parts = small
    _write(parts / "c.txt", "q3 Q0 D3 1 high t\n")
    with pytest.raises(FormatError, match=r"c\.txt:1") as caught:
        evaluate_ray(qrels, parts, MEASURES)
    assert str(caught.value).startswith(f"{parts / 'c.txt'}:1: ")
    assert (caught.value.source, caught.value.line) == (str(parts / "c.txt"), 1)


def test_parquet_without_a_score_column_is_refused(tmp_path, small):
    qrels, _ = small
    pq.write_table(pa.table({"query_id": ["q1"], "doc_id": ["D1"]}), tmp_path / "p.parquet")
    with pytest.raises(FormatError, match=r"p\.parquet.*columns \['score'\]"):
        read_partitions(tmp_path / "p.parquet")


def test_partition_paths(tmp_path):
    for name in ("b.txt", "a.txt", ".hidden", "_SUCCESS"):
        (tmp_path / name).write_text("")
    assert partition_paths(tmp_path) == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert partition_paths(str(tmp_path / "*.txt")) == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    with pytest.raises(EvaluationError, match="does not exist"):
        partition_paths(tmp_path / "nope.txt")
    with pytest.raises(EvaluationError, match="matches no file"):
        partition_paths(str(tmp_path / "*.gz"))
    with pytest.raises(EvaluationError, match="given twice"):
        partition_paths([tmp_path, tmp_path / "a.txt"])


def test_bad_address_and_num_cpus_name_the_value(cluster, small):
    qrels, parts = small
    with pytest.raises(EvaluationError, match="address='auto', but Ray is already initialized"):
        evaluate_ray(qrels, parts, ["P@2"], address="auto")
    with pytest.raises(EvaluationError, match="num_cpus must be None or an int >= 1; got 0"):
        evaluate_ray(qrels, parts, ["P@2"], num_cpus=0)


def test_cli_ray_engine_prints_what_the_local_engine_prints(cluster, data, capsys):
    root, _, _ = data
    args = ["score", str(root / "qrels.txt"), "-m", "P@10", "-m", "AP", "-m", "FirstRel", "--format", "json"]
    assert main([*args, "--per-query", str(root / "all.txt"), str(root / "parquet")]) == 0
    local = capsys.readouterr().out
    ray_run = subprocess.run(
        [sys.executable, "-m", "annotate_app.cli", *args, "--per-query", "--engine", "ray"]
        + ["--address", cluster, str(root / "trec"), str(root / "parquet")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ray_run.returncode == 0, ray_run.stderr
    on_ray, here = json.loads(ray_run.stdout), json.loads(local)
    # the fingerprints name different files holding the same run (one file here, partitions on Ray)
    prints = on_ray.pop("fingerprint"), here.pop("fingerprint")
    assert on_ray == here and prints[0]["measures"] == prints[1]["measures"] == ["P@10", "AP", "FirstRel"]
    assert [r["name"] for r in here["runs"]] == ["tagR", "parquet"]


def test_cli_refuses_what_the_ray_engine_does_not_do(small, capsys):
    qrels, parts = small
    assert main(["score", str(qrels), str(parts), "--address", "auto"]) == 2
    assert "--address 'auto' needs --engine ray" in capsys.readouterr().err
    assert main(["score", str(qrels), str(parts), "--engine", "ray", "--corpus", "c.jsonl"]) == 2
    assert "--corpus 'c.jsonl' is not supported with --engine ray" in capsys.readouterr().err


def test_without_ray_the_module_imports_and_evaluate_ray_names_the_extra(small):
    qrels, parts = small
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["ray"] = None  # import ray -> ImportError
        import metrics.distributed as distributed
        from metrics import QrelForgeError
        print(len(distributed.read_partitions({str(parts)!r})))
        try:
            distributed.evaluate_ray({str(qrels)!r}, {str(parts)!r}, ["P@10"])
        except QrelForgeError as exc:
            print(type(exc).__name__, exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=os.environ.copy()
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "4"
    assert "pip install 'qrelforge[ray]'" in out.stdout.splitlines()[1]
    assert issubclass(EvaluationError, QrelForgeError)


def test_doctests():
    assert doctest.testmod(metrics.distributed).failed == 0
