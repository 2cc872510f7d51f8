"""Hostile gzip uploads on the Score page, in Debian's Chromium: a 3 MB bomb is refused with a clear message,
and the app server never inflates it whole (its peak RSS, VmHWM of the streamlit process, stays under 600 MB;
before the fix a 3 MB upload reached 3 GB in 10 s); a valid 3 MB run of 3,000 lines padded to 1 MiB (3 GB
inflated) is scored while the server grows by less than 300 MB (it reached 6.3 GB while the readers cut their
input by a count of lines); one line just under the 16 MiB line limit is scored with the server under 300 MB
in all."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from e2e_helpers import go, login, start_server, stop_server
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e
expect.set_options(timeout=60_000)

LIMIT_MB = 256  # the server's QRELFORGE_MAX_INFLATED_MB: the bomb inflates to about 3 GB


def _bomb(path: Path) -> Path:
    """About 3 MB of gzip inflating to about 3 GB of one repeated run line (multi-member, valid gzip)."""
    block = b"q1 Q0 D1 1 1.0 bomb\n" * (2**20 // 20)
    member = gzip.compress(block, compresslevel=9)
    path.write_bytes(member * (3 * 2**20 // len(member)))
    return path


def _peak_mb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) // 1024


def _score_page(browser, server):
    """A new browser context logged in as rita, on the Score page of ``server``: (context, page)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    login(page, server.url, "rita")
    go(page, f"{server.url}/score")
    expect(page.get_by_role("heading", name="Score", exact=True)).to_be_visible()
    return context, page


def _serve(servers, tmp_path, env: dict[str, str]):
    """The app on the released demo (``tmp_path / "qrelforge.db"``) with ``env``, stopped afterwards."""
    folder = tmp_path / "server"
    folder.mkdir()
    server = start_server(folder, tmp_path / "qrelforge.db", extra_env=env)
    servers.append(server)
    yield server
    stop_server(server)


@pytest.fixture
def bomb_server(servers, released_db, tmp_path):
    """The app on the released demo, its inflated-size limit at `LIMIT_MB`."""
    yield from _serve(servers, tmp_path, {"QRELFORGE_MAX_INFLATED_MB": str(LIMIT_MB)})


@pytest.fixture
def default_server(servers, released_db, tmp_path):
    """The app on the released demo, with the default reading limits."""
    yield from _serve(servers, tmp_path, {})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "run.trec.gz:2: duplicate document 'D1' for query 'q1' (first on line 1)"),
        (b"\n", f"run.trec.gz: gzip content inflates to more than {LIMIT_MB} MB"),
    ],
    ids=["repeated lines", "empty lines"],
)
def test_a_gzip_bomb_uploaded_on_the_score_page_is_refused_in_bounded_memory(
    browser, bomb_server, tmp_path, content, message
):
    path = tmp_path / "run.trec.gz"
    if content is None:
        _bomb(path)
    else:
        member = gzip.compress(content * 2**20, compresslevel=9)
        path.write_bytes(member * (3 * 2**20 // len(member)))  # about 3 MB of gzip, 3 GB of empty lines
    assert 2.5 * 2**20 < path.stat().st_size < 3.5 * 2**20
    context, page = _score_page(browser, bomb_server)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    expect(page.get_by_text("run.trec.gz was not read: ")).to_be_visible()
    expect(page.get_by_text(message)).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    peak = _peak_mb(bomb_server.process.pid)
    context.close()
    assert peak < 600, f"the app server's peak RSS was {peak} MB"


def _long_lines(path: Path, lines: int = 3000) -> Path:
    """A valid run of ``lines`` distinct lines, each padded with 1 MiB of spaces: about 3 MB of gzip, 3 GB
    inflated, within the default limits (4096 MB inflated, 16 MB a line). Readers that cut their input by a
    count of lines held all of it at once (the app server reached 6.3 GB)."""
    with open(path, "wb") as f:
        for i in range(lines):
            line = b"q1 Q0 D%d %d %d longlines" % (i, i + 1, lines - i)
            f.write(gzip.compress(line + b" " * 2**20 + b"\n", compresslevel=9))
    return path


def _scored_upload(browser, server, path: Path, text: str) -> tuple[int, int]:
    """The server's peak RSS (MB) before and after ``path`` is uploaded on the Score page and scored
    (``text``, the run's tag, shown)."""
    context, page = _score_page(browser, server)
    before = _peak_mb(server.process.pid)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    expect(page.get_by_text(text).first).to_be_visible(timeout=300_000)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    peak = _peak_mb(server.process.pid)
    context.close()
    print(f"the app server's peak RSS: {before} MB before the upload, {peak} MB after")
    return before, peak


def test_a_run_of_long_lines_uploaded_on_the_score_page_is_scored_in_bounded_memory(
    browser, default_server, tmp_path
):
    path = _long_lines(tmp_path / "long.trec.gz")
    assert path.stat().st_size < 4 * 2**20
    before, peak = _scored_upload(browser, default_server, path, "longlines")
    assert peak - before < 300, f"the app server grew from {before} to {peak} MB"


def test_one_huge_line_uploaded_on_the_score_page_keeps_the_server_under_300_mb(
    browser, default_server, tmp_path
):
    path = tmp_path / "huge.trec.gz"
    line = b"q1 Q0 D0 1 1.5 hugeline" + b" " * (16 * 2**20 - 1024) + b"\n"
    path.write_bytes(gzip.compress(line + b"q1 Q0 D1 2 0.5 hugeline\n", compresslevel=1))
    before, peak = _scored_upload(browser, default_server, path, "hugeline")
    assert peak < 300, f"the app server reached {peak} MB (from {before} MB)"
