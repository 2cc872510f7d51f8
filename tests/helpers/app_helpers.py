"""Helpers of the app tests (AppTest and Playwright): a demo database per test, logged-in AppTests, judging
the sample corpus through the services.

Import the fixtures into a test module (``from app_helpers import app_db, demo_template  # noqa: F401``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from store_fixtures import cheap_hashes

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "annotate_app" / "streamlit_app.py"
SAMPLE = ROOT / "sample_corpus"
COOKIE_SECRET = "qrelforge-test-cookie-secret-0123456789"
PASSWORDS = {"alice": "alice-demo", "bob": "bob-demo", "rita": "rita-demo", "admin": "admin-demo"}
# bob disagrees with the sample qrels here (alice never does): two flips across the relevance cut-off and one
# within the relevant grades, so binary Cohen's kappa is 0.657 (< 0.7) and three pairs need adjudication.
BOB_FLIPS = {("q1", "D1"): 0, ("q1", "D3"): 1, ("q3", "D6"): 3}

__all__ = [
    "APP",
    "SAMPLE",
    "COOKIE_SECRET",
    "PASSWORDS",
    "BOB_FLIPS",
    "demo_template",
    "app_db",
    "app_as",
    "sample_grades",
    "judge_all",
    "chunk_run",
    "FAR_CHUNK",
    "far_chunk_run",
    "labelled_db",
    "released_db",
    "clear_streamlit_caches",
    "plain",
    "texts",
]


def plain(markdown: str) -> str:
    """The text an escaped Markdown message shows (the app escapes messages that quote user input)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def texts(elements) -> list[str]:
    """The shown text of alert elements (st.error, st.success ...)."""
    return [plain(e.value) for e in elements]


def sample_grades() -> dict[tuple[str, str], int]:
    """(query_id, doc_id) → grade of sample_corpus/qrels.trec."""
    out = {}
    for line in (SAMPLE / "qrels.trec").read_text().splitlines():
        qid, _, doc, grade = line.split()
        out[(qid, doc)] = int(grade)
    return out


def _fast_hasher():
    from argon2 import PasswordHasher

    return PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    """A migrated SQLite file holding the demo (users hashed with cheap argon2 parameters)."""
    from annotate_app.services.demo import load_demo
    from annotate_app.store.db import Database

    path = tmp_path_factory.mktemp("demo-template") / "qrelforge.db"
    db = Database(f"sqlite:///{path}")
    try:
        with cheap_hashes():
            load_demo(db)
    finally:
        db.dispose()
    return path


def clear_streamlit_caches() -> None:
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


def app_database(template, tmp_path, monkeypatch):
    """Yield a Database on a fresh copy of the SQLite file ``template``, with the app configured for it
    (environment) and empty Streamlit caches before and after."""
    from annotate_app.store.db import Database

    path = tmp_path / "qrelforge.db"
    shutil.copyfile(template, path)
    url = f"sqlite:///{path}"
    monkeypatch.setenv("QRELFORGE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("QRELFORGE_DATABASE_URL", url)
    monkeypatch.setenv("QRELFORGE_COOKIE_SECRET", COOKIE_SECRET)
    monkeypatch.delenv("QRELFORGE_SESSION_HOURS", raising=False)
    clear_streamlit_caches()
    db = Database(url)
    yield db
    db.dispose()
    clear_streamlit_caches()


@pytest.fixture
def app_db(demo_template, tmp_path, monkeypatch, fast_hashing):
    """A fresh copy of the demo database, configured for the app (env), with empty Streamlit caches."""
    yield from app_database(demo_template, tmp_path, monkeypatch)


def app_as(db, username: str | None = None, page: str | None = None):
    """An AppTest of the entry point, logged in as ``username`` (None: logged out), run once, then switched to
    ``page`` (e.g. ``"views/review/agreement.py"``) if given."""
    from streamlit.testing.v1 import AppTest

    from annotate_app.services.auth import authenticate
    from annotate_app.ui import state

    at = AppTest.from_file(str(APP), default_timeout=30)
    if username is not None:
        at.session_state[state.ACTOR] = authenticate(db, username, PASSWORDS[username])
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def judge_all(db, flips: dict[tuple[str, str], int] | None = None) -> None:
    """alice and bob label every pair of the demo, alternately: alice the sample grades, bob the sample grades
    except ``flips`` (default `BOB_FLIPS`)."""
    from annotate_app.services import labels, queue
    from annotate_app.services.auth import authenticate

    truth = sample_grades()
    wrong = BOB_FLIPS if flips is None else flips
    people = {name: authenticate(db, name, PASSWORDS[name]) for name in ("alice", "bob")}
    active = dict(people)
    while active:
        for name, actor in list(active.items()):
            view = queue.next_pair(db, actor, "demo")
            if view is None:
                del active[name]
                continue
            key = (view.query_id, view.doc_id)
            grade = wrong.get(key, truth[key]) if name == "bob" else truth[key]
            labels.save_label(
                db, actor, "demo", view.pair_id, grade=grade, reason=f"{name} judged {key}", seconds=3.0
            )


def judge_with_evidence(db, spans: dict[str, list[tuple[int, int]]]) -> int:
    """The demo with evidence optional, every pair labelled by alice and bob alike (no disagreement), and
    their labels of q1 · D1 re-saved with ``spans`` (annotator → passages). Returns that pair's id."""
    from annotate_app.services import labels, projects
    from annotate_app.services.auth import SYSTEM, authenticate

    projects.update_settings(db, SYSTEM, "demo", evidence="optional")
    judge_all(db, flips={})
    pair_id = 0
    for name, evidence in spans.items():
        actor = authenticate(db, name, PASSWORDS[name])
        (mine,) = [x for x in labels.my_labels(db, actor, "demo") if (x.query_id, x.doc_id) == ("q1", "D1")]
        labels.save_label(
            db,
            actor,
            "demo",
            mine.pair_id,
            grade=mine.grade,
            reason=mine.reason,
            evidence=evidence,
            expected_version=1,
        )
        pair_id = mine.pair_id
    return pair_id


def chunk_run(db) -> dict[str, tuple[int, int]]:
    """Import into the demo a chunk map with offsets (chunk ``<doc>#1``: the second sentence of each
    document) and a chunk-level run ``chunks`` ranking every chunk for every query. Returns doc_id → that
    chunk's ``[start, end)``."""
    import json

    from annotate_app.services import imports
    from annotate_app.services.auth import SYSTEM
    from annotate_app.ui.components.evidence_text import sentences

    docs = [json.loads(line) for line in (SAMPLE / "docs.jsonl").read_text(encoding="utf-8").splitlines()]
    spans = {d["doc_id"]: sentences(d["text"])[1] for d in docs}
    chunks = "".join(
        json.dumps({"chunk_id": f"{doc}#1", "doc_id": doc, "start": a, "end": b}) + "\n"
        for doc, (a, b) in spans.items()
    )
    imports.import_chunk_map(db, SYSTEM, "demo", chunks.encode(), filename="chunks.jsonl")
    run = "".join(
        f"{q} Q0 {doc}#1 {i + 1} {10 - i} chunks\n" for q in ("q1", "q2", "q3") for i, doc in enumerate(spans)
    )
    imports.import_run(db, SYSTEM, "demo", run.encode(), filename="chunks.trec", chunks=True)
    return spans


FAR_CHUNK = "The retrieved chunk says: power the device off first."
"""The sentence of `far_chunk_run`'s chunk, deep in a long document."""


def far_chunk_run(db, lines: int = 100) -> tuple[str, tuple[int, int]]:
    """Rewrite D1 (alice's first pair, q1) as a long document, query terms only at its very start and the
    sentence `FAR_CHUNK` after ``lines`` lines of some 58 characters (100: 5,600 characters in), and as many
    after it; import a chunk map placing chunk ``D1#far`` on that sentence and a chunk-level run ``far``
    ranking it for q1. Returns (D1's text, the chunk's span)."""
    from annotate_app.services import imports
    from annotate_app.services.auth import SYSTEM

    filler = "".join(f"Line {i} of the manual is about something else entirely.\n" for i in range(lines))
    text = "更换电池 first.\n" + filler + FAR_CHUNK + "\n" + filler
    start = text.index(FAR_CHUNK)
    span = (start, start + len(FAR_CHUNK))
    line = json.dumps({"doc_id": "D1", "title": "A long manual", "text": text}) + "\n"
    imports.import_documents(db, SYSTEM, "demo", line.encode(), filename="long.jsonl")
    chunk = json.dumps({"chunk_id": "D1#far", "doc_id": "D1", "start": span[0], "end": span[1]}) + "\n"
    imports.import_chunk_map(db, SYSTEM, "demo", chunk.encode(), filename="far.jsonl")
    imports.import_run(db, SYSTEM, "demo", b"q1 Q0 D1#far 1 9 far\n", filename="far.trec", chunks=True)
    return text, span


@pytest.fixture
def labelled_db(app_db):
    """The demo with every pair labelled by alice and bob (three disagreements, kappa 0.657)."""
    judge_all(app_db)
    return app_db


@pytest.fixture
def released_db(labelled_db):
    """The labelled demo with its disagreements adjudicated to the sample grades and release 1 made."""
    from annotate_app.services import adjudication, gate, releases
    from annotate_app.services.auth import authenticate

    rita = authenticate(labelled_db, "rita", PASSWORDS["rita"])
    truth = sample_grades()
    for item in gate.disagreements(labelled_db, rita, "demo"):
        grade = truth[(item.query_id, item.doc_id)]
        adjudication.adjudicate(
            labelled_db, rita, "demo", item.pair_id, grade=grade, reason="as the sample says"
        )
    releases.create_release(labelled_db, rita, "demo", justification="kappa below 0.7 on a 12-pair corpus")
    return labelled_db
