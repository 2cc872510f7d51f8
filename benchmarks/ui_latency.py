"""The annotator's round trip in a real browser, on a project of 100k pairs.

    .venv/bin/python benchmarks/ui_latency.py                    # 100k pairs, 60 measured submits
    .venv/bin/python benchmarks/ui_latency.py --submits 100 --rebuild

Setup goes through the services (documents, queries and a 100k-entry run imported, depth-50 pooling into 100k
pairs, N = 2); the SQLite file is kept in benchmarks/.data/ (git-ignored) and reused. Then it starts the app
(``streamlit run``, as `make run` does, on a free port), logs an annotator in with Debian's Chromium and,
for each pair, presses a grade key and types a reason (not timed), then measures from pressing Ctrl+Enter
until the next pair is shown *and* the app is idle (script not running, websocket connected).

Printed: median, p95, min and max of the browser round trip; as its peer, the same work done directly through
the services in this process (``save_label`` + ``next_pair`` + ``my_progress``, what one submit runs on the
server), and their ratio (the rest is Streamlit, the websocket and the browser). Targets: median < 400 ms,
p95 < 800 ms.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))  # the end-to-end tests' server helpers

from e2e_helpers import start_server, stop_server  # noqa: E402

from annotate_app.services import imports, labels, pooling, projects, queue, users  # noqa: E402
from annotate_app.services.auth import SYSTEM, authenticate  # noqa: E402
from annotate_app.store.db import Database  # noqa: E402
from annotate_app.store.migrate import upgrade  # noqa: E402

DATA = ROOT / "benchmarks" / ".data"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'
PAIR = re.compile(r"^Query (\S+) · document (\S+)$")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
DEPTH = 50
WORDS = (
    "battery",
    "invoice",
    "refund",
    "return",
    "warranty",
    "shipping",
    "order",
    "screen",
    "charger",
    "repair",
    "receipt",
    "account",
    "password",
    "delivery",
    "exchange",
    "voucher",
)


# ------------------------------------------------------------------------------------------------ setup
def _files(pairs: int) -> dict[str, bytes]:
    queries = pairs // DEPTH
    docs = max(queries * 2, 1000)
    doc_lines = "".join(
        json.dumps(
            {
                "doc_id": f"D{i}",
                "title": f"{WORDS[i % 16]} guide {i}",
                "text": " ".join(WORDS[(i * 7 + j) % 16] for j in range(60)),
            }
        )
        + "\n"
        for i in range(docs)
    )
    query_lines = "".join(
        json.dumps({"query_id": f"q{j}", "text": f"{WORDS[j % 16]} {WORDS[(j * 5) % 16]}"}) + "\n"
        for j in range(queries)
    )
    run = "".join(
        f"q{j} Q0 D{(j * 7919 + r * 4729) % docs} {r + 1} {DEPTH - r} bench\n"
        for j in range(queries)
        for r in range(DEPTH)
    )
    return {"docs": doc_lines.encode(), "queries": query_lines.encode(), "run": run.encode()}


def build(path: Path, pairs: int) -> dict[str, float]:
    """Project ``bench``: ``pairs`` pairs, annotators ``ann1`` (browser) and ``ann2`` (services)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    db = Database(f"sqlite:///{path}")
    timings = {}
    upgrade(db)
    projects.create_project(db, SYSTEM, "bench", title="UI latency", guidelines="# Bench\n\nJudge quickly.")
    files = _files(pairs)
    steps = (
        ("docs", imports.import_documents, "docs.jsonl"),
        ("queries", imports.import_queries, "queries.jsonl"),
        ("run", imports.import_run, "run.trec"),
    )
    for kind, fn, name in steps:
        start = time.perf_counter()
        fn(db, SYSTEM, "bench", files[kind], filename=name)
        timings[f"import {kind}"] = time.perf_counter() - start
    start = time.perf_counter()
    report = pooling.pool(db, SYSTEM, "bench", depth=DEPTH)
    timings["pool"] = time.perf_counter() - start
    for name in ("ann1", "ann2"):
        users.create_user(db, SYSTEM, name, f"{name}-password")
    projects.assign(db, SYSTEM, "bench", ["ann1", "ann2"])
    with db.write() as s:
        s.connection().exec_driver_sql("ANALYZE")
    db.dispose()
    spent = ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
    print(f"built {path.name}: {report.added} pairs; {spent}")
    return timings


# ---------------------------------------------------------------------------------------------- browser
def _pair(page) -> tuple[str, str]:
    text = page.locator('[data-testid="stCaptionContainer"]', has_text=PAIR).first.inner_text().strip()
    return PAIR.match(text).groups()


def browser_submits(url: str, n: int, warmup: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(30_000)
        page.goto(url)
        page.wait_for_selector(IDLE)
        page.get_by_label("Username", exact=True).fill("ann1")
        page.get_by_label("Password", exact=True).fill("ann1-password")
        page.get_by_role("button", name="Log in").click()
        page.wait_for_selector("text=Logged in as ann1")
        page.wait_for_selector(IDLE)
        for i in range(warmup + n):
            query, doc = _pair(page)
            page.evaluate("document.activeElement && document.activeElement.blur()")
            page.keyboard.press(str(i % 4))
            page.wait_for_selector(f"text=Chosen grade: {i % 4} · ")
            page.wait_for_selector(IDLE)
            page.get_by_label("Reason", exact=True).click()
            page.keyboard.type(f"benchmark reason {i}")
            start = time.perf_counter()
            page.keyboard.press("Control+Enter")
            page.wait_for_selector(f"text=Saved {query} · {doc}: grade")
            page.wait_for_selector(IDLE)
            if i >= warmup:
                times.append(time.perf_counter() - start)
        browser.close()
    return times


def service_submits(path: Path, n: int, warmup: int) -> list[float]:
    """The same work without the browser: save_label, next_pair and my_progress, as ann2."""
    db = Database(f"sqlite:///{path}")
    actor = authenticate(db, "ann2", "ann2-password")
    view = queue.next_pair(db, actor, "bench")
    times = []
    for i in range(warmup + n):
        start = time.perf_counter()
        labels.save_label(
            db, actor, "bench", view.pair_id, grade=i % 4, reason=f"benchmark reason {i}", seconds=1.0
        )
        view = queue.next_pair(db, actor, "bench")
        queue.my_progress(db, actor, "bench")
        if i >= warmup:
            times.append(time.perf_counter() - start)
    db.dispose()
    return times


def _summary(name: str, times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    figures = {
        "median": statistics.median(ordered),
        "p95": ordered[max(0, round(0.95 * len(ordered)) - 1)],
        "min": ordered[0],
        "max": ordered[-1],
    }
    print(f"{name:<34} n={len(times):<4} " + "  ".join(f"{k} {v * 1000:7.1f} ms" for k, v in figures.items()))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--submits", type=int, default=60, help="measured submits (>= 50 for the report)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true", help="rebuild the database even if it exists")
    args = parser.parse_args(argv)
    path = DATA / f"ui_latency_{args.pairs}.db"
    if args.rebuild or not path.exists():
        build(path, args.pairs)
    server = start_server(DATA, path)
    try:
        browser = browser_submits(server.url, args.submits, args.warmup)
    finally:
        stop_server(server)
    services = service_submits(path, args.submits, args.warmup)
    print(f"\n{args.pairs} pairs, SQLite; submit key → next pair shown and app idle:")
    b = _summary("browser round trip", browser)
    s = _summary("services only (same work)", services)
    print(
        f"{'ratio browser / services':<34} median {b['median'] / s['median']:.1f}x  "
        f"p95 {b['p95'] / s['p95']:.1f}x"
    )
    verdict = "met" if b["median"] < 0.4 and b["p95"] < 0.8 else "NOT met"
    print(f"target median < 400 ms and p95 < 800 ms: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
