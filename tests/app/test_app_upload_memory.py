"""The Score page's upload path (`score_panels._uploads`) reading the costliest valid shape — one line just
under the 16 MiB line limit, gzip — in a fresh process that holds what the page's module imports: its peak
resident memory (VmHWM) stays under 300 MB, the bound asked for any input within the documented limits."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20
PEAK_MB = 300
CHILD = """
import io, re, sys
from pathlib import Path
import streamlit as st
from annotate_app.ui.components import score_panels

path = Path(sys.argv[1])

class Upload(io.BytesIO):
    name, size = path.name, path.stat().st_size

st.file_uploader = lambda *a, **k: [Upload(path.read_bytes())]
st.error = st.code = lambda text, *a, **k: print(text)
runs = score_panels._uploads([])
print([len(run) for run in runs.values()])
print(int(re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1)) // 1024)
"""


@pytest.mark.slow
def test_one_huge_line_uploaded_on_the_score_page_peaks_under_300_mb(tmp_path):
    path = tmp_path / "huge.trec.gz"
    line = b"q1 Q0 D0 1 1.5 t" + b" " * (16 * MIB - 1024) + b"\n"
    path.write_bytes(gzip.compress(line + b"q1 Q0 D1 2 0.5 t\n", compresslevel=1))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows, peak = done.stdout.strip().splitlines()[-2:]
    print(f"one huge line through the Score page's upload: peak {peak} MB")
    assert rows == "[2]"
    assert int(peak) < PEAK_MB
