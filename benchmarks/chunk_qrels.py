"""Time the passage functions on 1,000,000 chunks and 100,000 passages: `chunk_qrels`, `evidence_scores`
(a run of 10 chunks for each of 10,000 queries, k = 1, 3, 5, 10), `score_chunk_run` (the evidence measures
and nDCG@10, R@10 on the chunk qrels), `perfect_evidence_recall` and `compare_chunkers` (two chunkings),
with the peak resident memory of the process; with ``--cli``, also ``qrelforge score --passages P --chunks C
RUN`` end to end on the same data written as files (JSONL passages and chunks, a TREC run), in a
subprocess.

    .venv/bin/python benchmarks/chunk_qrels.py [--chunks 1000000] [--passages 100000] [--repeat 1] [--cli]

The data: 50,000 documents of 10,000 characters, each cut into 20 chunks of 500 characters (1,000,000
chunks; the second chunking for `compare_chunkers` is 1,000-character windows every 500, overlapping); 10,000
queries, each with 10 passages of 20-400 characters on 5 of the documents, graded 1..3. Each time is the best
of ``--repeat`` runs; the DataFrames are built beforehand and not timed.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd

from metrics.passages import (
    chunk_qrels,
    compare_chunkers,
    evidence_scores,
    perfect_evidence_recall,
    score_chunk_run,
)

SCORED = [
    "nDCG@10",
    "R@10",
    *(f"Evidence{m}@{k}" for m in ("Recall", "Precision", "IoU") for k in (1, 3, 5, 10)),
]

DOC_LENGTH, CHUNK = 10_000, 500


def data(
    n_chunks: int, n_passages: int, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    per_doc = DOC_LENGTH // CHUNK
    n_docs = n_chunks // per_doc
    doc_names = np.array([f"d{i:06d}" for i in range(n_docs)], dtype=object)
    doc = np.repeat(np.arange(n_docs), per_doc)
    start = np.tile(np.arange(per_doc) * CHUNK, n_docs)
    chunks = pd.DataFrame(
        {
            "chunk_id": [f"c{i:07d}" for i in range(len(doc))],
            "doc_id": doc_names[doc],
            "start": start,
            "end": start + CHUNK,
        }
    )
    windows = np.tile(np.arange(per_doc - 1) * CHUNK, n_docs)
    wdoc = np.repeat(np.arange(n_docs), per_doc - 1)
    overlapping = pd.DataFrame(
        {
            "chunk_id": [f"w{i:07d}" for i in range(len(wdoc))],
            "doc_id": doc_names[wdoc],
            "start": windows,
            "end": windows + 2 * CHUNK,
        }
    )
    n_queries = n_passages // 10
    query = np.repeat(np.arange(n_queries), 10)
    pdoc = rng.integers(0, n_docs, size=(n_queries, 5))[
        np.arange(n_queries).repeat(10), np.tile(np.arange(10) // 2, n_queries)
    ]
    slot = np.tile(np.arange(10) % 2, n_queries)  # two passages a document: first and second half
    length = rng.integers(20, 400, size=len(query))
    pstart = slot * (DOC_LENGTH // 2) + rng.integers(0, DOC_LENGTH // 2 - 400, size=len(query))
    passages = pd.DataFrame(
        {
            "query_id": [f"q{i:05d}" for i in query],
            "doc_id": doc_names[pdoc],
            "start": pstart,
            "end": pstart + length,
            "grade": rng.integers(1, 4, size=len(query)),
        }
    )
    ids = chunks["chunk_id"].to_numpy(dtype=object)
    # each query's run: 10 distinct chunks, half from its passages' documents (often right, often not)
    near = pdoc.reshape(n_queries, 10)[:, ::2] * per_doc + rng.integers(0, per_doc, size=(n_queries, 5))
    far = rng.integers(0, len(chunks), size=(n_queries, 5))
    run = {f"q{q:05d}": list(dict.fromkeys(ids[np.r_[near[q], far[q]]].tolist())) for q in range(n_queries)}
    return passages, chunks, overlapping, run


class Seconds(float):
    """Wall seconds that print with the CPU seconds beside them (on a loaded machine CPU is the steadier)."""

    cpu: float = 0.0

    def __format__(self, spec: str) -> str:
        return f"{float(self):{spec}} s wall, {self.cpu:5.2f} s CPU"


def best_of(repeat: int, call) -> tuple[Seconds, object]:
    times, out = [], None
    for _ in range(repeat):
        begin, cpu = time.perf_counter(), time.process_time()
        out = call()
        took = Seconds(time.perf_counter() - begin)
        took.cpu = time.process_time() - cpu
        times.append(took)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cli", action="store_true", help="also time qrelforge score --passages on files")
    args = parser.parse_args()
    passages, chunks, overlapping, run = data(args.chunks, args.passages)
    print(f"{len(chunks):,} chunks, {len(passages):,} passages, {len(run):,} queries")
    seconds, qrels = best_of(args.repeat, lambda: chunk_qrels(passages, chunks))
    print(f"chunk_qrels               {seconds:6.2f}  ({len(qrels):,} chunk judgments)")
    seconds, _ = best_of(args.repeat, lambda: evidence_scores(passages, chunks, run, k=(1, 3, 5, 10)))
    print(f"evidence_scores           {seconds:6.2f}")
    seconds, _ = best_of(args.repeat, lambda: score_chunk_run(passages, chunks, run, SCORED))
    print(f"score_chunk_run           {seconds:6.2f}  ({len(SCORED)} measures)")
    seconds, _ = best_of(args.repeat, lambda: perfect_evidence_recall(passages, overlapping, k=(1, 3, 5, 10)))
    print(f"perfect_evidence_recall   {seconds:6.2f}  (overlapping windows)")
    seconds, table = best_of(
        args.repeat, lambda: compare_chunkers(passages, {"500": chunks, "1000/500": overlapping})
    )
    print(f"compare_chunkers (2)      {seconds:6.2f}")
    print(table.round(4).to_string())
    print(f"peak RSS                  {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:6.0f} MB")
    if args.cli:
        cli(passages, chunks, run)


def cli(passages: pd.DataFrame, chunks: pd.DataFrame, run: dict) -> None:
    """``qrelforge score --passages --chunks RUN`` on the data as files, timed in a subprocess."""
    import os
    import subprocess
    import sys
    import tempfile

    from metrics.formats import write_passages

    with tempfile.TemporaryDirectory() as folder:
        p_file, c_file, r_file = (os.path.join(folder, n) for n in ("p.jsonl", "c.jsonl", "run.trec"))
        write_passages(passages.assign(doc_version=1), p_file)
        chunks.to_json(c_file, orient="records", lines=True)
        with open(r_file, "w") as f:
            for q, ranked in run.items():
                f.writelines(f"{q} Q0 {c} {i + 1} {len(ranked) - i} bench\n" for i, c in enumerate(ranked))
        command = [
            sys.executable,
            "-m",
            "annotate_app.cli",
            "score",
            "--passages",
            p_file,
            "--chunks",
            c_file,
        ]
        command += [r_file, *(a for m in SCORED for a in ("-m", m))]
        begin, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, check=True, capture_output=True)
        seconds = Seconds(time.perf_counter() - begin)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds.cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        print(
            f"qrelforge score --passages {seconds:6.2f}  "
            f"(files: reading, chunk qrels, {len(SCORED)} measures)"
        )


if __name__ == "__main__":
    main()
