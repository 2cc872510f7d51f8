"""Judge client throughput: 10,000 pairs through `OpenAIJudge` against a loopback chat completions server.

The server (tests/helpers/llm_server.py, started here in its own process) answers every request after 50 ms;
the client sends 16 requests at a time (``JudgeClient(workers=16)``) and puts every result in a `SQLiteCache`
file as it arrives. Results go to a sink that only counts them: nothing is held. Then the same pairs run again
with the same cache, which must send 0 requests. Target: >= 250 pairs/s on the first run (the ideal is 16 /
0.05 s = 320 pairs/s).

Printed per run: pairs/s, requests sent, pairs from the cache, failed pairs, and the peak RSS of this process
so far (``resource.getrusage``; the server's memory is not included).

Usage: ``python benchmarks/judge_throughput.py [--pairs 10000] [--workers 16] [--delay 0.05]``
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from annotate_app.judges import JudgeClient, JudgeResult, JudgeTask, OpenAIJudge, Pair, SQLiteCache  # noqa: E402

TARGET = 250.0
DOCS_PER_QUERY = 10


def make_pairs(n: int) -> Iterator[Pair]:
    """``n`` deterministic pairs, 10 documents per query, generated lazily (about 600 characters each)."""
    for i in range(n):
        q = i // DOCS_PER_QUERY
        yield Pair(
            query_id=f"q{q}",
            query=f"how do I replace the battery of model {q}",
            doc_id=f"d{i}",
            document=f"Document {i}. "
            + "Switch the device off, open the cover and lift the battery out. " * 9,
            doc_version="1",
        )


def start_server(delay: float) -> tuple[subprocess.Popen[str], int]:
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "helpers" / "llm_server.py"), "--delay", str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line.startswith("port "):
        server.kill()
        raise SystemExit(f"the loopback server did not start: {line!r}")
    return server, int(line.split()[1])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_once(label: str, judge: OpenAIJudge, cache: SQLiteCache, n: int, workers: int) -> dict[str, float]:
    grades = [0] * 4

    def sink(result: JudgeResult) -> None:
        if result.grade is not None:
            grades[result.grade] += 1

    client = JudgeClient(judge, JudgeTask(), cache=cache, workers=workers, max_in_flight=2 * workers)
    start = time.perf_counter()
    counts = client.run_into(make_pairs(n), sink)
    elapsed = time.perf_counter() - start
    figures = {
        "pairs/s": counts.done / elapsed,
        "seconds": elapsed,
        "sent": counts.sent,
        "cached": counts.cached,
        "failed": counts.failed,
        "peak RSS MB": peak_rss_mb(),
    }
    shown = ", ".join(f"{k} {v:,.1f}" if isinstance(v, float) else f"{k} {v:,}" for k, v in figures.items())
    print(f"{label}: {counts.done:,} pairs; {shown}; grades {grades}", flush=True)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.05, help="the server's answer time, seconds")
    args = parser.parse_args(argv)
    server, port = start_server(args.delay)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            url = f"http://127.0.0.1:{port}/v1"
            with (
                OpenAIJudge(url, "bench-model", timeout_s=10, api_key_env="QRELFORGE_BENCH_NO_KEY") as judge,
                SQLiteCache(Path(scratch) / "judge-cache.sqlite") as cache,
            ):
                setup = f"{args.workers} concurrent requests, server answers in {args.delay}s"
                print(f"{args.pairs:,} pairs, {setup}")
                first = run_once("first run", judge, cache, args.pairs, args.workers)
                again = run_once("rerun    ", judge, cache, args.pairs, args.workers)
    finally:
        server.terminate()
        server.wait(timeout=10)
    met = first["pairs/s"] >= TARGET
    print(
        f"target >= {TARGET:.0f} pairs/s: {'met' if met else 'MISSED'}; rerun sent {again['sent']:,} requests"
    )
    return 0 if met and again["sent"] == 0 and first["failed"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
