"""Two app replicas on one PostgreSQL database behind Debian's nginx (the configuration of docs/deploy.md,
rendered from docs/nginx.conf.example), driven in Debian's Chromium.

Each test gets a scratch PostgreSQL database (created, migrated, loaded with ``qrelforge demo-data --db``,
dropped at the end), two Streamlit servers on it sharing the cookie secrets, and nginx in front of them on a
loopback port (websocket upgrade, sticky sessions by nginx's own route cookie). A browser is put on a replica
by giving it a route cookie that nginx's consistent hash maps there (`e2e_helpers.route_to`), and every page
load checks which replica answered (nginx's ``X-QrelForge-Upstream`` header).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest
from app_helpers import COOKIE_SECRET, PASSWORDS, ROOT, sample_grades
from e2e_helpers import (
    IDLE,
    ROUTE_COOKIE,
    UPSTREAM_HEADER,
    Server,
    current_pair,
    idle,
    kill_server,
    login,
    route_to,
    start_nginx,
    start_server,
    stop_server,
)
from playwright.sync_api import expect
from store_fixtures import PG_ADMIN_URL, _psycopg_dsn

from annotate_app.ui import auth

pytestmark = pytest.mark.e2e
expect.set_options(timeout=30_000)
# Streamlit's own secret (XSRF tokens of uploads, st.login): shared too, like QRELFORGE_COOKIE_SECRET
STREAMLIT_SECRET = "qrelforge-test-streamlit-secret-0123456789"


@dataclass
class Cluster:
    proxy: Server
    a: Server
    b: Server
    database_url: str

    @property
    def url(self) -> str:
        return self.proxy.url


@pytest.fixture
def pg_demo_url(worker_id):
    """A scratch PostgreSQL database, migrated, holding the demo (dropped after the test)."""
    import psycopg
    from sqlalchemy import make_url

    from annotate_app.store.migrate import upgrade

    name = f"qrelforge_replicas_{worker_id}_{os.getpid()}"
    with psycopg.connect(_psycopg_dsn(PG_ADMIN_URL), autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    url = make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    upgrade(url)
    subprocess.run(
        [sys.executable, "-m", "annotate_app.cli", "demo-data", "--db", url],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    yield url
    with psycopg.connect(_psycopg_dsn(PG_ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def cluster(servers, pg_demo_url, tmp_path) -> Cluster:
    """Replicas a and b on the demo database, nginx in front (all stopped after the test)."""
    env = {"QRELFORGE_COOKIE_SECRET": COOKIE_SECRET, "STREAMLIT_SERVER_COOKIE_SECRET": STREAMLIT_SECRET}
    replicas = []
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        replica = start_server(folder, database_url=pg_demo_url, extra_env=env)
        servers.append(replica)
        replicas.append(replica)
    proxy = start_nginx(tmp_path / "nginx", replicas)
    servers.append(proxy)
    yield Cluster(proxy=proxy, a=replicas[0], b=replicas[1], database_url=pg_demo_url)
    for process in (proxy, *replicas):
        stop_server(process)


@pytest.fixture
def new_page(browser):
    """``new_page()``: a page in a new browser context (its own cookies), closed after the test."""
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(30_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def _database(cluster: Cluster):
    from annotate_app.store.db import Database

    return Database(cluster.database_url)


def _pin(page, cluster: Cluster, replica: Server) -> None:
    """Give the page's browser the route cookie that nginx sends to ``replica``."""
    cookie = {"name": ROUTE_COOKIE, "value": route_to(cluster.proxy, replica), "url": cluster.url}
    page.context.add_cookies([cookie])


def _open(page, url: str, replica: Server) -> None:
    """Load ``url`` through nginx and check that ``replica`` served it."""
    response = page.goto(url)
    assert response is not None
    # nginx lists every upstream it tried ("a, b" after a failover); the last one served the page
    served = response.headers[UPSTREAM_HEADER.lower()].split(",")[-1].strip()
    assert served == replica.url.removeprefix("http://")
    idle(page)


def _login_cookie(page) -> dict:
    return next(c for c in page.context.cookies() if c["name"] == auth.COOKIE and c["value"])


def _press_grade(page, grade: int) -> None:
    """Choose a grade with the mouse: Playwright waits until the button takes clicks (this test is about
    replicas; test_e2e_keyboard drives the keys, where a key pressed while the page is built is lost)."""
    page.get_by_role("button", name=re.compile(rf"^{grade} · ")).click()
    expect(page.get_by_text(f"Chosen grade: {grade} · ")).to_be_visible()
    idle(page)


def _label(page, pair: tuple[str, str], grade: int, who: str) -> None:
    """Grade the pair on the card, give a reason, save, and wait for the acknowledgement."""
    _press_grade(page, grade)
    page.get_by_label("Reason", exact=True).fill(f"{who}: grade for {pair[0]} {pair[1]}")
    page.get_by_role("button", name=re.compile(r"^Submit")).click()
    expect(page.get_by_text(f"Saved {pair[0]} · {pair[1]}: grade")).to_be_visible()
    idle(page)


def _saved(cluster: Cluster) -> dict[str, set[tuple[str, str]]]:
    """Who labelled which (query, document), read from the database."""
    from annotate_app.services import labels
    from annotate_app.services.auth import authenticate

    db = _database(cluster)
    try:
        out = {}
        for name in ("alice", "bob"):
            actor = authenticate(db, name, PASSWORDS[name])
            out[name] = {(x.query_id, x.doc_id) for x in labels.my_labels(db, actor, "demo", limit=1000)}
        return out
    finally:
        db.dispose()


def test_a_login_on_one_replica_is_valid_on_the_other(new_page, cluster):
    first = new_page()
    _pin(first, cluster, cluster.a)
    _open(first, cluster.url, cluster.a)
    login(first, cluster.url, "alice")
    token = _login_cookie(first)

    other = new_page()
    _pin(other, cluster, cluster.b)
    other.context.add_cookies([token])
    _open(other, f"{cluster.url}/my_labels", cluster.b)
    expect(other.get_by_text("Logged in as alice")).to_be_visible()
    expect(other.get_by_role("heading", name="My labels")).to_be_visible()
    expect(other.get_by_role("button", name="Log in")).to_have_count(0)


def test_a_log_out_on_one_replica_ends_the_session_on_both(new_page, cluster):
    on_a = new_page()
    _pin(on_a, cluster, cluster.a)
    _open(on_a, cluster.url, cluster.a)
    login(on_a, cluster.url, "alice")
    on_b = new_page()
    _pin(on_b, cluster, cluster.b)
    on_b.context.add_cookies([_login_cookie(on_a)])
    _open(on_b, cluster.url, cluster.b)
    expect(on_b.get_by_text("Logged in as alice")).to_be_visible()

    on_a.get_by_test_id("stSidebar").get_by_role("button", name="Log out").click()
    expect(on_a.get_by_role("button", name="Log in")).to_be_visible()
    # the tab still open on replica b: its next action finds the session ended in the database
    on_b.get_by_test_id("stSidebar").get_by_role("link", name="My labels", exact=True).click()
    expect(on_b.get_by_role("button", name="Log in")).to_be_visible()
    expect(on_b.get_by_text(auth.ENDED)).to_be_visible()
    expect(on_b.get_by_text("Logged in as alice")).to_have_count(0)
    _open(on_b, f"{cluster.url}/my_labels", cluster.b)  # and a new load on b as well
    expect(on_b.get_by_role("button", name="Log in")).to_be_visible()


def test_annotators_on_different_replicas_share_one_queue_without_overlap(new_page, cluster):
    from annotate_app.services import projects
    from annotate_app.services.auth import authenticate

    db = _database(cluster)
    admin = authenticate(db, "admin", PASSWORDS["admin"])
    projects.update_settings(db, admin, "demo", annotators_per_pair=1)  # one label per pair: no overlap
    db.dispose()
    truth = sample_grades()
    pages = {"alice": new_page(), "bob": new_page()}
    for (name, page), replica in zip(pages.items(), (cluster.a, cluster.b), strict=True):
        _pin(page, cluster, replica)
        _open(page, cluster.url, replica)
        login(page, cluster.url, name)

    seen: dict[str, list] = {name: [] for name in pages}
    current = {name: current_pair(page) for name, page in pages.items()}
    while any(current.values()):
        for name, pair in current.items():
            if pair is not None:
                _label(pages[name], pair, truth[pair], name)
                seen[name].append(pair)
                current[name] = current_pair(pages[name])
    assert seen["alice"] and seen["bob"]  # both had work
    assert not set(seen["alice"]) & set(seen["bob"])
    assert sorted(seen["alice"] + seen["bob"]) == sorted(truth)
    saved = _saved(cluster)
    assert saved == {name: set(pairs) for name, pairs in seen.items()}


def test_a_killed_replica_loses_no_acknowledged_label(new_page, cluster):
    truth = sample_grades()
    page = new_page()
    _pin(page, cluster, cluster.a)
    _open(page, cluster.url, cluster.a)
    login(page, cluster.url, "alice")
    acked = []
    for _ in range(3):
        pair = current_pair(page)
        assert pair is not None
        _label(page, pair, truth[pair], "alice")
        acked.append(pair)
    pending = current_pair(page)
    assert pending is not None
    _press_grade(page, truth[pending])  # a grade chosen, not saved: the kill comes mid-session

    kill_server(cluster.a)
    assert _saved(cluster)["alice"] == set(acked)

    # the tab loses its websocket and reconnects at once through nginx, which sends it to replica b: a new
    # Streamlit session there (the chosen grade, kept in a's memory, is gone), still logged in
    expect(page.get_by_text("No grade chosen yet")).to_be_visible(timeout=60_000)
    page.wait_for_selector(IDLE, timeout=60_000)
    expect(page.get_by_text("Logged in as alice")).to_be_visible()
    _open(page, cluster.url, cluster.b)  # a reload lands on b as well
    expect(page.get_by_text("Logged in as alice")).to_be_visible()
    expect(page.get_by_text("3 / 12 judged")).to_be_visible()
    pair = current_pair(page)
    assert pair == pending  # her unfinished claim, kept in the database
    _label(page, pair, truth[pair], "alice")
    assert _saved(cluster)["alice"] == {*acked, pending}
