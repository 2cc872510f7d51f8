"""Peak RSS and CPU time of the run readers on hostile but valid shapes: each reader in its own child process
under ``/usr/bin/time -v``.

Shapes (``--mb`` MiB of content each, default 3000; ``.gz`` and, with ``--plain``, plain):

- ``long``: ``--mb`` distinct run lines, each padded with 1 MiB of spaces (3,000 lines, 3 GB, by default);
- ``huge``: one valid run line padded to just under the line limit (16 MiB by default), then one short line;
- ``repeated``: one run line repeated (read until its first duplicate, then refused);
- ``blank``: empty lines, then one run line.

Readers:

- ``import``: ``qrelforge import run`` into a fresh SQLite project holding the queries and documents;
- ``score``: ``qrelforge score QRELS RUN``;
- ``upload``: the Score page's upload path, `annotate_app.ui.components.score_panels._uploads` with
  Streamlit's ``file_uploader`` answering the file's bytes as an upload (gzip shapes only: a plain file is
  over the page's upload limit).

``--code REV`` measures the code as it was at git revision REV (exported by `_code.export_revision`) instead
of this checkout: run it once with ``--code main`` (or the base commit) and once without, for before and
after (figures: docs/reliability.md, section 7). Files go to ``--tmp`` (default /tmp) and are deleted
afterwards. Example:

    python benchmarks/hostile_imports.py --mb 3000 --plain
    python benchmarks/hostile_imports.py --mb 3000 --code 8c0ceb2 --shapes long blank
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _code import REPO, export_revision  # noqa: E402

MIB = 1 << 20
LINE_LIMIT = 16 * MIB
SHAPES = ("long", "huge", "repeated", "blank")
READERS = ("import", "score", "upload")
UPLOAD = """
import io, sys
from pathlib import Path
import streamlit as st
from annotate_app.ui.components import score_panels

path = Path(sys.argv[1])

class Upload(io.BytesIO):
    name, size = path.name, path.stat().st_size

st.file_uploader = lambda *a, **k: [Upload(path.read_bytes())]
errors = []
st.error = lambda text, *a, **k: errors.append(str(text))
st.code = lambda text, *a, **k: errors.append(str(text).splitlines()[0])
runs = score_panels._uploads([])
print("; ".join(f"{name}: {len(run)} rows" for name, run in runs.items()) or " / ".join(errors)[:300])
"""


def _run_line(i: int, pad: int = 0) -> bytes:
    return b"q1 Q0 D%d %d %d.5 hostile" % (i, i + 1, 10_000 - i) + b" " * pad + b"\n"


def _write(path: Path, pieces, gzipped: bool) -> None:
    """``pieces`` (an iterable of bytes) to ``path``, through a fast gzip writer when ``gzipped`` (level 1;
    a repeated piece compresses once, its member repeated)."""
    if not gzipped:
        with open(path, "wb") as f:
            for piece in pieces:
                f.write(piece)
        return
    last, member = None, b""
    with open(path, "wb") as f:
        for piece in pieces:
            if piece is not last:
                member, last = gzip.compress(piece, compresslevel=1), piece
            f.write(member)


def generate(shape: str, mb: int, path: Path, gzipped: bool) -> int:
    """Write ``shape`` of about ``mb`` MiB to ``path``; returns the number of run lines (documents D0..)."""
    if shape == "long":
        _write(path, (_run_line(i, MIB - len(_run_line(i))) for i in range(mb)), gzipped)
        return mb
    if shape == "huge":
        line = _run_line(0)
        big = line[:-1] + b" " * (LINE_LIMIT - 1024 - len(line)) + b"\n"
        _write(path, [big, _run_line(1)], gzipped)
        return 2
    if shape == "repeated":
        line = _run_line(0)
        block = line * (MIB // len(line))
        _write(path, (block for _ in range(mb)), gzipped)
        return 1
    block = b"\n" * MIB
    _write(path, [*(block for _ in range(mb)), _run_line(0)], gzipped)
    return 1


def measure(argv: list[str], code: Path, cwd: Path) -> dict:
    """Run ``argv`` (a python child) under ``/usr/bin/time -v``: peak RSS (MB), CPU and wall seconds, the
    last line of its output."""
    env = {**os.environ, "PYTHONPATH": str(code), "QRELFORGE_DATA_DIR": str(cwd)}
    t0 = time.monotonic()
    done = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True
    )
    wall = time.monotonic() - t0
    stats = dict(re.findall(r"^\s*([^:\n]+?): (\S+)$", done.stderr, re.M))
    own = done.stdout + done.stderr.split("\tCommand being timed")[0]
    noise = ("WARNING streamlit", "Command exited")
    said = [x for x in own.splitlines() if x.strip() and not any(n in x for n in noise)]
    return {
        "rss_mb": int(stats["Maximum resident set size (kbytes)"]) / 1024,
        "cpu_s": float(stats["User time (seconds)"]) + float(stats["System time (seconds)"]),
        "wall_s": wall,
        "status": done.returncode,
        "said": (said[-1] if said else "")[:160],
    }


def prepare_project(folder: Path, code: Path, docs: int) -> str:
    """A fresh SQLite database with project ``p``: query q1 and documents D0..D{docs-1}."""
    url = f"sqlite:///{folder}/qf.db"
    (folder / "docs.jsonl").write_text(
        "".join(json.dumps({"doc_id": f"D{i}", "title": "t", "text": f"x {i}"}) + "\n" for i in range(docs))
    )
    (folder / "queries.jsonl").write_text(json.dumps({"query_id": "q1", "text": "q"}) + "\n")
    env = {**os.environ, "PYTHONPATH": str(code)}
    cli = [sys.executable, "-m", "annotate_app.cli"]
    for argv in (
        ["init", "--db", url, "--project", "p"],
        ["import", "docs", "--db", url, "-p", "p", str(folder / "docs.jsonl")],
        ["import", "queries", "--db", url, "-p", "p", str(folder / "queries.jsonl")],
    ):
        subprocess.run([*cli, *argv], env=env, check=True, capture_output=True, cwd=folder)
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=3000, help="MiB of content per shape (default 3000)")
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--readers", nargs="+", choices=READERS, default=list(READERS))
    parser.add_argument("--plain", action="store_true", help="also the plain (not gzip) files")
    parser.add_argument("--code", default=None, help="git revision to measure instead of this checkout")
    parser.add_argument("--tmp", default=None, help="folder for the files (default: the system's)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args()
    code = export_revision(args.code) if args.code else REPO
    label = args.code or "this checkout"
    results = []
    print(f"code: {label}; {args.mb} MiB per shape\n")
    print(f"{'shape':<10} {'file':<6} {'reader':<7} {'peak RSS':>9} {'CPU':>8} {'wall':>8}  outcome")
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        folder = Path(tmp)
        (folder / "qrels.trec").write_text("q1 0 D0 1\n")
        url = prepare_project(folder, code, max(args.mb, 2)) if "import" in args.readers else ""
        for shape in args.shapes:
            for gzipped in (True, False) if args.plain else (True,):
                path = folder / f"{shape}.trec{'.gz' if gzipped else ''}"
                generate(shape, args.mb, path, gzipped)
                for reader in args.readers:
                    if reader == "upload" and not gzipped:
                        continue
                    argv = {
                        "import": ["-m", "annotate_app.cli", "import", "run", "--db", url, "-p", "p",
                                   "--name", f"{shape}{int(gzipped)}", str(path)],
                        "score": ["-m", "annotate_app.cli", "score", str(folder / "qrels.trec"), str(path)],
                        "upload": ["-c", UPLOAD, str(path)],
                    }[reader]  # fmt: skip
                    row = measure(argv, code, folder)
                    row.update(shape=shape, gzip=gzipped, reader=reader, code=label, mb=args.mb)
                    results.append(row)
                    kind = "gzip" if gzipped else "plain"
                    print(
                        f"{shape:<10} {kind:<6} {reader:<7} {row['rss_mb']:>6.0f} MB {row['cpu_s']:>6.1f} s "
                        f"{row['wall_s']:>6.1f} s  {row['said']}",
                        flush=True,
                    )
                path.unlink()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
