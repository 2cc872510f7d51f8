"""Peak RSS of a document import (issue 14 item 6): ``qrelforge import docs`` of a generated JSONL corpus of
``--mb`` megabytes into a fresh SQLite database, measured with ``/usr/bin/time -v`` in a child process.

"new" is today's path (`services.imports.import_documents`: `metrics.formats.iter_corpus`, 5000 documents at a
time in one transaction); "old" re-creates the old path's reading step — the whole file through
`metrics.formats.read_corpus` into a DataFrame, then its records as dicts — which alone held ~6× the file (the
old import then wrote them). Run:

    python benchmarks/import_docs_memory.py --mb 1024            # new path only (the old one needs ~6 GB)
    python benchmarks/import_docs_memory.py --mb 100 --old       # both, on a smaller file

The corpus goes to a temporary directory (``--tmp``), deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEW = """
import sys
from annotate_app.services import imports, projects
from annotate_app.services.auth import SYSTEM
from annotate_app.store.db import Database
from annotate_app.store.migrate import upgrade

upgrade(sys.argv[1])
db = Database(sys.argv[1])
projects.create_project(db, SYSTEM, "big")
print(imports.import_documents(db, SYSTEM, "big", sys.argv[2]))
"""
OLD = """
import sys
from metrics.formats import read_corpus

records = read_corpus(sys.argv[2]).to_dict(orient="records")
print(len(records), "records read whole")
"""


def generate(path: Path, mb: int) -> int:
    """A JSONL corpus of about ``mb`` MB (documents of ~1 kB of text); returns the number of documents."""
    target, n = mb * 1024 * 1024, 0
    text = " ".join(f"word{i % 997}" for i in range(120))
    with open(path, "w", encoding="utf-8") as f:
        while f.tell() < target:
            f.write(json.dumps({"doc_id": f"D{n}", "title": f"title {n}", "text": f"{n} {text}"}) + "\n")
            n += 1
    return n


def peak(script: str, db_url: str, corpus: Path) -> tuple[float, float, str]:
    """(peak RSS in MB, wall seconds, the child's output)."""
    t0 = time.monotonic()
    done = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "-c", script, db_url, str(corpus)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - t0
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return kb / 1024, wall, done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1024, help="corpus size in MB (default 1024)")
    parser.add_argument("--old", action="store_true", help="also measure the old read-whole path")
    parser.add_argument("--tmp", default=None, help="where the corpus and database go (default: /tmp)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.tmp) as folder:
        corpus = Path(folder) / "corpus.jsonl"
        n = generate(corpus, args.mb)
        size = corpus.stat().st_size / 1024 / 1024
        print(f"corpus: {n} documents, {size:.0f} MB")
        if args.old:
            rss, wall, out = peak(OLD, "", corpus)
            print(
                f"old (read whole): peak RSS {rss:.0f} MB ({rss / size:.1f}x the file), {wall:.0f} s: {out}"
            )
        rss, wall, out = peak(NEW, f"sqlite:///{folder}/qrelforge.db", corpus)
        print(f"new (streamed):   peak RSS {rss:.0f} MB ({rss / size:.2f}x the file), {wall:.0f} s: {out}")


if __name__ == "__main__":
    main()
