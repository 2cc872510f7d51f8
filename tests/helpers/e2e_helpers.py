"""Browser-test helpers: the app server (``streamlit run`` in its own process group, port 0, URL read from the
log, ``/_stcore/health`` polled), Debian's Chromium for pytest-playwright, and small page actions.

Import into a test module: ``from e2e_helpers import app_server, browser_type_launch_args, servers  # noqa``.
Each test gets its own server and a fresh copy of the demo database; the session fixture `servers` owns every
process and stops any left over (SIGTERM to the process group, then SIGKILL).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from app_helpers import APP, COOKIE_SECRET, PASSWORDS, ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
PAIR = re.compile(r"^Query (\S+) · document (\S+)$")
SERVER = APP.with_name("server.py")  # the app behind its ASGI wrapper (no 404 probes on deep links)
NGINX = Path("/usr/sbin/nginx")  # Debian's nginx (make test installs it)
NGINX_TEMPLATE = ROOT / "docs" / "nginx.conf.example"  # the documented configuration, rendered by the tests
ROUTE_COOKIE = "qrelforge_route"  # nginx's sticky-session cookie (see the template)
UPSTREAM_HEADER = "X-QrelForge-Upstream"  # the replica that answered, added by nginx

__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "IDLE",
    "SCREENSHOTS",
    "PAIR",
    "NGINX",
    "NGINX_TEMPLATE",
    "ROUTE_COOKIE",
    "UPSTREAM_HEADER",
    "Server",
    "start_server",
    "stop_server",
    "kill_server",
    "free_port",
    "render_nginx_conf",
    "start_nginx",
    "upstream_for",
    "route_to",
    "servers",
    "app_server",
    "browser_type_launch_args",
    "idle",
    "login",
    "shot",
    "current_pair",
    "go",
]


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    log: Path


def start_server(
    folder: Path,
    database: Path | None = None,
    *,
    timeout: float = 90.0,
    extra_env: dict | None = None,
    database_url: str | None = None,
    log_name: str = "server.log",
) -> Server:
    """Start the app on a free port with the SQLite file ``database`` (or any ``database_url``: replicas on
    one PostgreSQL database); returns when /_stcore/health answers ok. The log is ``folder / log_name``."""
    if (database is None) == (database_url is None):
        raise ValueError(
            f"give database or database_url, not both or neither; got {database!r} and {database_url!r}"
        )
    env = {
        **os.environ,
        "QRELFORGE_DATA_DIR": str(folder),
        "QRELFORGE_DATABASE_URL": database_url or f"sqlite:///{database}",
        "QRELFORGE_COOKIE_SECRET": COOKIE_SECRET,
        "PYTHONUNBUFFERED": "1",
        **(extra_env or {}),
    }
    log = folder / log_name
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(SERVER),
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        "0",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--server.runOnSave",
        "false",
        "--client.toolbarMode",
        "minimal",
    ]
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env, start_new_session=True
        )
    server = Server("", process, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the app server exited with {process.returncode}:\n{log.read_text()}", pytrace=False)
        found = re.search(r"URL: (http://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
        if found and _healthy(found.group(1)):
            server.url = found.group(1)
            return server
        time.sleep(0.1)
    stop_server(server)
    pytest.fail(f"the app server did not start within {timeout:.0f} s:\n{log.read_text()}", pytrace=False)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().strip() == b"ok"
    except OSError:
        return False


def stop_server(server: Server) -> None:
    """SIGTERM the server's process group (only that group), SIGKILL it if it lingers."""
    if server.process.poll() is not None:
        return
    try:
        os.killpg(server.process.pid, signal.SIGTERM)
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=15)
    except ProcessLookupError:
        pass


def kill_server(server: Server) -> None:
    """SIGKILL the server's process group at once (a crashed replica: no shutdown code runs)."""
    if server.process.poll() is None:
        os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=15)


# -------------------------------------------------------------------------------------------------- nginx
def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (nginx cannot listen on port 0 and report it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def render_nginx_conf(folder: Path, *, listen: str, replicas: list[str]) -> str:
    """`NGINX_TEMPLATE` with its ``{{prefix}}``, ``{{listen}}`` and ``{{replicas}}`` filled in."""
    lines = "\n        ".join(f"server {address} max_fails=1 fail_timeout=10s;" for address in replicas)
    text = NGINX_TEMPLATE.read_text()
    for name, value in {"prefix": str(folder), "listen": listen, "replicas": lines}.items():
        text = text.replace("{{" + name + "}}", value)
    left = re.search(r"\{\{\w+\}\}", text)
    if left:
        raise ValueError(f"{NGINX_TEMPLATE}: placeholder {left.group()} has no value")
    return text


def start_nginx(folder: Path, replicas: list[Server], *, timeout: float = 30.0) -> Server:
    """nginx in the foreground (``daemon off``, its own process group) with the rendered template, on a free
    loopback port in front of ``replicas``; returns when /_stcore/health answers ok through it. Without
    Debian's nginx the test fails (never skips)."""
    if not NGINX.exists():
        pytest.fail(
            f"nginx is missing at {NGINX}: run `make test` (it installs Debian's nginx) or "
            "`apt-get install nginx`",
            pytrace=False,
        )
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = folder / "nginx.conf"
    addresses = [server.url.removeprefix("http://") for server in replicas]
    conf.write_text(render_nginx_conf(folder, listen=f"127.0.0.1:{port}", replicas=addresses))
    log = folder / "error.log"
    command = [str(NGINX), "-p", str(folder), "-c", str(conf), "-e", str(log), "-g", "daemon off;"]
    with open(folder / "nginx.out", "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    proxy = Server(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = (folder / "nginx.out").read_text(errors="replace")
            pytest.fail(f"nginx exited with {process.returncode}:\n{output}", pytrace=False)
        if _healthy(proxy.url):
            return proxy
        time.sleep(0.1)
    stop_server(proxy)
    pytest.fail(
        f"nginx did not answer within {timeout:.0f} s:\n{log.read_text(errors='replace')}", pytrace=False
    )


def upstream_for(proxy: Server, route: str) -> str:
    """The replica (``127.0.0.1:PORT``) nginx sends a browser with route cookie ``route`` to."""
    request = urllib.request.Request(
        f"{proxy.url}/_stcore/health", headers={"Cookie": f"{ROUTE_COOKIE}={route}"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.headers[UPSTREAM_HEADER]


def route_to(proxy: Server, replica: Server) -> str:
    """A route cookie value that nginx's consistent hash maps to ``replica`` (found by asking nginx)."""
    address = replica.url.removeprefix("http://")
    for n in range(200):
        if upstream_for(proxy, f"route-{n}") == address:
            return f"route-{n}"
    pytest.fail(f"no route cookie among 200 reaches the replica {address}", pytrace=False)


@pytest.fixture(scope="session")
def servers():
    """Every server started in this session (stopped at the end if a test left one running)."""
    started: list[Server] = []
    yield started
    for server in started:
        stop_server(server)


@pytest.fixture
def app_server(servers, demo_template, tmp_path) -> Server:
    """The app on a fresh copy of the demo database (stopped after the test)."""
    database = tmp_path / "qrelforge.db"
    shutil.copyfile(demo_template, database)
    server = start_server(tmp_path, database)
    servers.append(server)
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright launches Debian's Chromium (never a downloaded browser); missing, the tests fail."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"Chromium is missing at {CHROMIUM}: run `make test` (it installs Debian's chromium) or "
            "`apt-get install chromium`; never `playwright install`",
            pytrace=False,
        )
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


# ------------------------------------------------------------------------------------------------ actions
def idle(page) -> None:
    """Wait until the script is not running and the websocket is connected."""
    page.wait_for_selector(IDLE, timeout=30_000)


def go(page, url: str) -> None:
    page.goto(url)
    idle(page)


def login(page, url: str, username: str) -> None:
    from playwright.sync_api import expect

    go(page, url)
    page.get_by_label("Username", exact=True).fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORDS[username])
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text(f"Logged in as {username}")).to_be_visible()
    idle(page)
    # the login cookie is written by a script in the page: a new load before it ran would be logged out
    page.wait_for_function("() => /(^|; )qrelforge_login=[^;]/.test(document.cookie)")


def shot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.mouse.move(1, 1)  # no hover highlight in the picture
    page.screenshot(path=str(path), full_page=True)
    return path


def current_pair(page) -> tuple[str, str] | None:
    """(query_id, doc_id) on the card, or None when the card says nothing is left."""
    from playwright.sync_api import expect

    card = (
        page.get_by_text(PAIR)
        .or_(page.get_by_text("Nothing left to judge"))
        .or_(page.get_by_text("No disagreement waits"))
    )
    expect(card.first).to_be_visible()
    text = card.first.inner_text().strip()
    found = PAIR.match(text)
    return found.groups() if found else None
