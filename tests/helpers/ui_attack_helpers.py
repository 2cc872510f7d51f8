"""Data for the app's attack tests: hostile text (scripts, event handlers, ``javascript:`` links, HTML
comments, Streamlit Markdown directives, LaTeX), a project full of it, and a project with 100 000 candidates
for one query.

`build_attack_project` (through the services, as an admin would import it and annotators would judge it):

- project ``attack`` (sorts before ``demo``, so the sidebar picks it first), title and guidelines hostile;
- documents `EVIL_DOC` and `EVIL_DOC2` (IDs and titles are HTML, texts hold every payload) and ``plain``;
  query `EVIL_QUERY`; runs `EVIL_RUN` and ``plain_run`` over all three documents;
- alice and bob judge (EVIL_QUERY, EVIL_DOC) apart and (EVIL_QUERY, plain) alike, with hostile reasons; rita
  adjudicates with a hostile reason and makes release 1 with a hostile justification and note;
- then (EVIL_QUERY, EVIL_DOC2) is added (hostile note), bob judges it, and bob edits his label of EVIL_DOC,
  which re-opens that disagreement: alice's card shows EVIL_DOC2, rita's adjudication queue shows EVIL_DOC,
  the Score page finds EVIL_DOC2 unjudged in the release.
"""

from __future__ import annotations

import json

from app_helpers import PASSWORDS

# Each payload would set window.__pwned (and open a dialog) if the browser ran it.
SCRIPT = "<script>window.__pwned=1;alert(1)</script>"
IMG = '<img src=x onerror="window.__pwned=1;alert(1)">'
SVG = '<svg onload="window.__pwned=1;alert(1)"></svg>'
LINK = "[click](javascript:window.__pwned=1;alert(1))"
COMMENT = "<!-- x -->"
DIRECTIVE = ":red[x]"
MATH = "$x$"
PAYLOADS = (SCRIPT, IMG, SVG, LINK, COMMENT, DIRECTIVE, MATH)
HOSTILE = " ".join(PAYLOADS)
HOSTILE_TEXT = "First line " + SCRIPT + "\n" + "\n".join(PAYLOADS[1:]) + "\nlast line"
# Guidelines are Markdown by design: each payload in a block of its own, so that the link is parsed as a link
# (after an HTML line, CommonMark would read the rest of the block as raw HTML), then the same as one block.
GUIDELINES = "# Rules\n\n" + "\n\n".join(PAYLOADS) + "\n\n" + HOSTILE_TEXT
# IDs and names may not hold spaces, but HTML does not need them.
EVIL_DOC = "<img/src=x/onerror=window.__pwned=1>"
EVIL_DOC2 = "<svg/onload=window.__pwned=2>"
EVIL_QUERY = "<script>window.__pwned=3</script>"
EVIL_RUN = "[run](javascript:window.__pwned=4)"
PROJECT = "attack"

# Who may open which page (written out from the rules, not read from `nav.PAGES`): annotators judge;
# reviewers also see agreement, adjudicate, release and score; only admins administer.
A, R, D = "annotator", "reviewer", "admin"
ALLOWED = {  # page → the roles that may open it
    "views/annotate/annotate.py": {A, R, D},
    "views/annotate/my_labels.py": {A, R, D},
    "views/review/agreement.py": {R, D},
    "views/review/adjudicate.py": {R, D},
    "views/review/release.py": {R, D},
    "views/review/score.py": {R, D},
    "views/admin/admin_users.py": {D},
    "views/admin/admin_project.py": {D},
    "views/admin/admin_data.py": {D},
    "views/admin/audit.py": {D},
}

__all__ = [
    "SCRIPT",
    "IMG",
    "SVG",
    "LINK",
    "COMMENT",
    "DIRECTIVE",
    "MATH",
    "PAYLOADS",
    "HOSTILE",
    "HOSTILE_TEXT",
    "GUIDELINES",
    "EVIL_DOC",
    "EVIL_DOC2",
    "EVIL_QUERY",
    "EVIL_RUN",
    "PROJECT",
    "A",
    "R",
    "D",
    "ALLOWED",
    "build_attack_project",
    "login_token",
    "fake_uploads",
    "build_big_project",
    "BIG_PROJECT",
    "BIG_N",
]


def fake_uploads(monkeypatch, files: list[tuple[str, bytes]], *, many: bool) -> list[dict]:
    """Make ``st.file_uploader`` return ``files`` (name, bytes), as a list when ``many``; returns the keyword
    arguments of every call (AppTest has no file uploads)."""
    import streamlit as st
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    records = [
        UploadedFile(UploadedFileRec(f"id{i}", name, "text/plain", data), None)
        for i, (name, data) in enumerate(files)
    ]
    calls: list[dict] = []

    def fake(*args, **kwargs):
        calls.append(kwargs)
        return records if many else records[0]

    monkeypatch.setattr(st, "file_uploader", fake)
    return calls


def login_token(db, username: str, *, age: float = 0) -> str:
    """The login cookie the app would have written ``age`` seconds ago for ``username`` (password from
    `app_helpers.PASSWORDS`): the id of a server-side session opened then, for the session lifetime."""
    from datetime import timedelta

    from annotate_app.services.auth import authenticate, open_session
    from annotate_app.store.models import utcnow
    from annotate_app.ui import settings

    actor = authenticate(db, username, PASSWORDS[username])
    hours = settings.app_settings().session_seconds / 3600
    return open_session(db, actor, hours=hours, now=utcnow() - timedelta(seconds=age))


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def _corpus(db, admin) -> None:
    from annotate_app.services import imports, projects

    projects.create_project(db, admin, PROJECT, title=HOSTILE, guidelines=GUIDELINES)
    docs = [
        {"doc_id": EVIL_DOC, "title": "Title " + HOSTILE, "text": HOSTILE_TEXT},
        {"doc_id": EVIL_DOC2, "title": "Second " + HOSTILE, "text": "Second text " + HOSTILE_TEXT},
        {"doc_id": "plain", "title": "Plain", "text": "nothing to see"},
    ]
    imports.import_documents(db, admin, PROJECT, _jsonl(docs), filename="docs.jsonl")
    imports.import_queries(
        db,
        admin,
        PROJECT,
        _jsonl([{"query_id": EVIL_QUERY, "text": "click x " + HOSTILE}]),
        filename="queries.jsonl",
    )
    for name, order in (
        (EVIL_RUN, (EVIL_DOC, "plain", EVIL_DOC2)),
        ("plain_run", ("plain", EVIL_DOC2, EVIL_DOC)),
    ):
        lines = "".join(
            f"{EVIL_QUERY} Q0 {doc} {rank} {3 - rank} {name}\n" for rank, doc in enumerate(order, 1)
        )
        imports.import_run(db, admin, PROJECT, lines.encode(), filename="run.trec")
    projects.assign(db, admin, PROJECT, ["alice", "bob"])


def _judge_queue(db, who, answers: dict[str, tuple[int, str]]) -> None:
    """``who`` takes and labels every pair the queue gives them: doc_id → (grade, reason)."""
    from annotate_app.services import labels, queue

    while (view := queue.next_pair(db, who, PROJECT)) is not None:
        grade, reason = answers[view.doc_id]
        labels.save_label(db, who, PROJECT, view.pair_id, grade=grade, reason=reason, seconds=2.0)


def _edit(db, who, pair_id: int, grade: int, reason: str) -> None:
    from annotate_app.services import labels, queue

    current = queue.get_pair(db, who, PROJECT, pair_id).current.version
    labels.save_label(
        db, who, PROJECT, pair_id, grade=grade, reason=reason, seconds=2.0, expected_version=current
    )


def build_attack_project(db) -> dict[str, int]:
    """Build the ``attack`` project (see the module doc); returns doc_id → pair_id."""
    from annotate_app.services import adjudication, pooling, releases
    from annotate_app.services.auth import authenticate

    who = {name: authenticate(db, name, PASSWORDS[name]) for name in ("admin", "alice", "bob", "rita")}
    _corpus(db, who["admin"])
    pairs = {
        doc: pooling.add_pair(db, who["admin"], PROJECT, EVIL_QUERY, doc, note="Note " + HOSTILE).pair_id
        for doc in (EVIL_DOC, "plain")
    }
    for name, grade in (("alice", 2), ("bob", 0)):
        _judge_queue(
            db,
            who[name],
            {EVIL_DOC: (grade, f"{name} says " + HOSTILE_TEXT), "plain": (0, f"{name} plain " + HOSTILE)},
        )
    adjudication.adjudicate(db, who["rita"], PROJECT, pairs[EVIL_DOC], grade=2, reason="Final " + HOSTILE)
    releases.create_release(
        db, who["rita"], PROJECT, justification="Because " + HOSTILE_TEXT, note="Note " + HOSTILE
    )
    pairs[EVIL_DOC2] = pooling.add_pair(
        db, who["admin"], PROJECT, EVIL_QUERY, EVIL_DOC2, note="Later " + HOSTILE
    ).pair_id
    _judge_queue(db, who["bob"], {EVIL_DOC2: (3, "bob later " + HOSTILE)})
    _edit(db, who["bob"], pairs[EVIL_DOC], 1, "bob changed his mind " + HOSTILE_TEXT)
    return pairs


# ---------------------------------------------------------------------------------------------- big project
BIG_PROJECT = "big"
BIG_N = 100_000


def build_big_project(db) -> None:
    """Project ``big``: one query with `BIG_N` candidate documents, each pooled by hand (BIG_N pairs, origin
    ``manual``), alice a member. The project, query and membership go through the services; the documents,
    their versions and the pairs are bulk inserts (`store.bulk.bulk_insert`, about a second instead of the
    import and pooling services' ten)."""
    from annotate_app.services import imports, projects
    from annotate_app.services.auth import SYSTEM

    projects.create_project(db, SYSTEM, BIG_PROJECT, title="one query, 100 000 candidates")
    imports.import_queries(
        db, SYSTEM, BIG_PROJECT, _jsonl([{"query_id": "q1", "text": "candidate"}]), filename="queries.jsonl"
    )
    _bulk_candidates(db)
    projects.assign(db, SYSTEM, BIG_PROJECT, ["alice"])


def _bulk_candidates(db) -> None:
    import hashlib

    from annotate_app.store import projects as store_projects
    from annotate_app.store.bulk import bulk_insert
    from annotate_app.store.corpus import doc_index, query_index
    from annotate_app.store.models import Document, DocumentVersion, Pair, utcnow

    now = utcnow()
    with db.write() as s:
        project = store_projects.find(s, BIG_PROJECT).id
        sha = {i: hashlib.sha256(f"t{i}\x1fcandidate".encode()).hexdigest() for i in range(BIG_N)}
        bulk_insert(
            s,
            Document.__table__,
            [
                {
                    "project_id": project,
                    "external_id": f"d{i:06d}",
                    "version": 1,
                    "content_sha256": sha[i],
                    "updated_at": now,
                }
                for i in range(BIG_N)
            ],
        )
        docs = doc_index(s, project)
        bulk_insert(
            s,
            DocumentVersion.__table__,
            [
                {
                    "document_id": docs[f"d{i:06d}"][0],
                    "version": 1,
                    "title": f"t{i}",
                    "text": "candidate",
                    "meta": {},
                    "source_version": None,
                    "content_sha256": sha[i],
                    "source": "bulk",
                    "created_at": now,
                }
                for i in range(BIG_N)
            ],
        )
        [(query, _)] = query_index(s, project).values()
        bulk_insert(
            s,
            Pair.__table__,
            [
                {
                    "project_id": project,
                    "query_id": query,
                    "document_id": docs[f"d{i:06d}"][0],
                    "origin": "manual",
                    "note": "",
                    "claimed": 0,
                    "excluded": False,
                    "created_at": now,
                }
                for i in range(BIG_N)
            ],
        )
