"""`EXPLAIN ANALYZE` of the claim path on 200k pairs (PostgreSQL), before and after the seek.

    .venv/bin/python benchmarks/claim_plans.py            # writes docs/plans/claim-path-{before,after}.txt

Builds a project of 200k pairs in SQL (1 000 documents x 200 queries, N = 2, 20 annotators): 150k pairs
complete (2 claims), 50k with one claim, a fifth of those by ann00; then ANALYZE. It runs three steps of
the product's own code inside a transaction that is rolled back and, just before each SQL statement they
send, runs it under ``EXPLAIN (ANALYZE, BUFFERS)`` in a savepoint that is rolled back (so every plan sees the
state its statement sees):

- take: ``queue._claim`` for ann00 (who holds 10k of the 50k open pairs, the first ones in queue order);
- skip: the statements of ``queue.skip`` on the pair just taken;
- nothing left: ``queue._next`` for ann00 after every open pair it never had is filled (the transaction
  first sets their ``claimed`` to N), so only its own open pairs remain;
- nothing left, marked (after only): the same, a second time, answered from the "nothing left" marker the
  first one set (`store.exhausted`);
- nothing left for anyone (after only): every pair at N (the transaction sets every ``claimed`` to N), as at
  the end of a wave: ann00's empty claim also sets the project's marker;
- nothing left for anyone, another member (after only): then ann01, who never asked, is answered from the
  project's marker.

"before" is the old code itself — git revision ``--old-revision`` (default ``_code.OLD_REVISION``: the code
when issue 14 was filed), exported into a temporary folder and imported by a child process
(``QRELFORGE_BENCH_CODE``, benchmarks/_code.py) — on the same database; "after" is this checkout. The old code
maps fewer columns than the database has (later migrations only add nullable or defaulted ones), and every
step is rolled back, so both see the same rows.
"""

from __future__ import annotations

import argparse
import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _code import CODE_ENV, OLD_REVISION, code_root, export_revision  # noqa: E402

sys.path.insert(0, str(code_root()))  # this checkout, or the old code in the child process

from _pg import scratch_database  # noqa: E402
from sqlalchemy import event, select, text  # noqa: E402

from annotate_app.services import projects, queue, users  # noqa: E402
from annotate_app.services._context import annotator_context  # noqa: E402
from annotate_app.services.auth import SYSTEM, authenticate  # noqa: E402
from annotate_app.store import (
    annotation,  # noqa: E402
    judges,  # noqa: E402
)
from annotate_app.store import projects as projects_store  # noqa: E402
from annotate_app.store.db import Database  # noqa: E402
from annotate_app.store.models import Project, User  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "docs" / "plans"
PROJECT, WHO = "bench", "ann00"
FILL_ALL = "UPDATE pairs SET claimed = :n WHERE project_id = :p AND claimed < :n"
FILL = (
    "UPDATE pairs SET claimed = :n WHERE project_id = :p AND claimed < :n AND NOT EXISTS "
    "(SELECT 1 FROM assignments a WHERE a.pair_id = pairs.id AND a.annotator_id = :u)"
)


BUILD = [
    "INSERT INTO documents (project_id, external_id, version, content_sha256, updated_at) "
    "SELECT :p, 'D' || i, 1, md5(i::text) || md5(i::text), now() FROM generate_series(0, :docs - 1) i",
    "INSERT INTO document_versions (document_id, version, title, text, meta, content_sha256, source, "
    "created_at) "
    "SELECT id, 1, 'title', 'text of ' || external_id, '{}', content_sha256, '', now() FROM documents",
    "INSERT INTO queries (project_id, external_id, text, meta, content_sha256, created_at) "
    "SELECT :p, 'q' || j, 'question ' || j, '{}', md5(j::text) || md5(j::text), now() "
    "FROM generate_series(0, :queries - 1) j",
    # pair k (in queue order: by query, then document): complete for k >= 50k, else one claim
    "INSERT INTO pairs (project_id, query_id, document_id, origin, note, claimed, excluded, created_at) "
    "SELECT :p, q.id, d.id, 'pool', '', CASE WHEN (q.id - 1) * :docs + d.id > :open THEN 2 ELSE 1 END, "
    "false, now() "
    "FROM queries q CROSS JOIN documents d ORDER BY q.id, d.id",
    # slot 1: ann00 on a fifth of the open pairs (the first in queue order), else one of the others
    "INSERT INTO assignments (project_id, pair_id, annotator_id, slot, status, version, grade, stale, "
    "assigned_at, updated_at) SELECT :p, p.id, CASE WHEN p.claimed = 1 AND p.id <= :open / 5 THEN :u "
    "ELSE :u + 1 + p.id % 19 END, 1, 'done', 1, 1, false, now(), now() FROM pairs p",
    "INSERT INTO assignments (project_id, pair_id, annotator_id, slot, status, version, grade, stale, "
    "assigned_at, updated_at) SELECT :p, p.id, :u + 1 + (p.id + 7) % 19, 2, 'done', 1, 1, false, now(), "
    "now() "
    "FROM pairs p WHERE p.claimed = 2",
]


def _build(db: Database) -> None:
    from annotate_app.store.migrate import upgrade

    upgrade(db.url)
    projects.create_project(db, SYSTEM, PROJECT, annotators_per_pair=2)
    names = [f"ann{k:02d}" for k in range(20)]
    for name in names:
        users.create_user(db, SYSTEM, name, f"{name}-password")
    projects.assign(db, SYSTEM, PROJECT, names)
    with db.write() as s:
        p = s.execute(text("SELECT id FROM projects WHERE name = :n"), {"n": PROJECT}).scalar_one()
        u = s.execute(text("SELECT id FROM users WHERE username = 'ann00'")).scalar_one()
        for sql in BUILD:
            s.execute(text(sql), {"p": p, "u": u, "docs": 1000, "queries": 200, "open": 50_000})
    with db.engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM ANALYZE")


class _Rollback(Exception):
    pass


def _claim(s, user, proj):
    """`queue._claim` as the imported code defines it (the old one read the judge settings itself)."""
    if len(inspect.signature(queue._claim).parameters) == 3:
        return queue._claim(s, user, proj)
    return queue._claim(s, user, proj, judges.settings_row(s, proj.id))


def _take(s, user, proj) -> None:
    _claim(s, user, proj)


def _skip(s, user, proj) -> None:
    a = _claim(s, user, proj)
    if a is None:
        raise RuntimeError("nothing to take")
    s.info["record"] = True  # only the skip's statements
    mine = annotation.own_assignment(s, a.pair_id, user.id)
    annotation.skip(s, mine.id, "cannot judge")
    annotation.release_slot(s, a.pair_id)


def _nothing(s, user, proj) -> None:
    s.execute(text(FILL), {"n": proj.annotators_per_pair, "p": proj.id, "u": user.id})
    s.info["record"] = True
    if queue._next(s, user, proj) is not None:
        raise RuntimeError("expected nothing left")


def _nothing_marked(s, user, proj) -> None:
    """The next "nothing left" for ann00 once the first one set its marker: the transaction's rows are
    re-read (project, membership), then `queue._next` answers from the marker."""
    s.execute(text(FILL), {"n": proj.annotators_per_pair, "p": proj.id, "u": user.id})
    if queue._next(s, user, proj) is not None:
        raise RuntimeError("expected nothing left")
    _asked_again(s, user, proj.id)


def _asked_again(s, who, project_id: int) -> None:
    """``who`` asks: the rows ``annotator_context`` loads are read again (project, membership), recorded,
    then `queue._next`, which must answer "nothing left"."""
    s.expire_all()
    s.info["record"] = True
    proj = s.get(Project, project_id)
    held = projects_store.member(s, proj.id, who.id)  # noqa: F841  (kept referenced, as annotator_context does)
    if queue._next(s, who, proj) is not None:
        raise RuntimeError("expected nothing left")


def _nothing_for_anyone(s, user, proj) -> None:
    s.execute(text(FILL_ALL), {"n": proj.annotators_per_pair, "p": proj.id})
    s.info["record"] = True
    if queue._next(s, user, proj) is not None:
        raise RuntimeError("expected nothing left")


def _nothing_for_another(s, user, proj) -> None:
    """After `_nothing_for_anyone`, ann01's call: the rows re-read (project, membership), then `queue._next`
    answers from the project's marker."""
    s.execute(text(FILL_ALL), {"n": proj.annotators_per_pair, "p": proj.id})
    if queue._next(s, user, proj) is not None:
        raise RuntimeError("expected nothing left")
    _asked_again(s, s.scalars(select(User).where(User.username == "ann01")).one(), proj.id)


STEPS = {
    "take": (_take, True),
    "skip": (_skip, False),
    "nothing left": (_nothing, False),
    "nothing left, marked (after only)": (_nothing_marked, False),
    "nothing left for anyone (after only)": (_nothing_for_anyone, False),
    "nothing left for anyone, another member (after only)": (_nothing_for_another, False),
}


def _explain(db: Database, me, step, record_all: bool) -> str:
    """Run ``step`` in a transaction that is rolled back; before each statement it sends (from its start, or
    from where it sets ``s.info['record']``), the same statement under EXPLAIN ANALYZE inside a savepoint
    that is rolled back, so the plan sees the state the statement sees and changes nothing."""
    out: list[str] = []
    state: dict = {}

    def listen(conn, cursor, statement, params, context, executemany):
        s = state.get("session")
        if (
            s is None
            or not (record_all or s.info.get("record"))
            or statement.startswith(("SAVEPOINT", "EXPL"))
        ):
            return
        cursor.execute("SAVEPOINT plan")
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + statement, params)
        plan = "\n".join(r[0] for r in cursor.fetchall())
        cursor.execute("ROLLBACK TO SAVEPOINT plan")
        out.append(f"-- {_oneline(statement, params)}\n{plan}\n")

    event.listen(db.engine, "before_cursor_execute", listen)
    try:
        with db.write() as s:
            user, proj = annotator_context(s, me, PROJECT, "judge pairs")
            state["session"] = s
            step(s, user, proj)
            state["session"] = None
            raise _Rollback
    except _Rollback:
        pass
    finally:
        event.remove(db.engine, "before_cursor_execute", listen)
    return "\n".join(out)


def _oneline(sql: str, params) -> str:
    return " ".join(sql.split()) + f"   -- params {params}"


def _write(db: Database, name: str, path: Path, which: str) -> None:
    """Every step's plans with the imported code, into ``path`` ("before": the steps the old code has)."""
    me = authenticate(db, WHO, f"{WHO}-password")
    with db.read() as s:
        counts = s.execute(
            text("SELECT count(*), sum(CASE WHEN claimed < 2 THEN 1 ELSE 0 END) FROM pairs")
        ).one()
    parts = [
        f"# Claim path {name} the seek ({which}): EXPLAIN (ANALYZE, BUFFERS) on PostgreSQL, {counts[0]} "
        f"pairs ({counts[1]} open), N = 2, annotator {WHO}. Written by benchmarks/claim_plans.py.\n"
    ]
    for title, (step, record_all) in STEPS.items():
        if name == "before" and "(after only)" in title:
            continue
        parts.append(f"\n######## {title}\n\n{_explain(db, me, step, record_all)}")
    path.write_text("".join(parts))
    print(f"wrote {path}", flush=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=OUT, help="the folder to write the plans to")
    parser.add_argument("--old-revision", default=OLD_REVISION, help="the git revision 'before' explains")
    parser.add_argument("--child", nargs=2, metavar=("URL", "FILE"), help=argparse.SUPPRESS)  # the old code's
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.child:  # the old code's process: the database is built, write its plans
        db = Database(args.child[0], pool_size=4)
        try:
            _write(db, "before", Path(args.child[1]), f"the code at git {args.old_revision}")
        finally:
            db.dispose()
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    url = scratch_database("qrelforge_plans", create=True)
    db = Database(url, pool_size=4)
    code = export_revision(args.old_revision)
    try:
        print("building 200k pairs ...", flush=True)
        _build(db)
        before = args.out / "claim-path-before.txt"
        child = [sys.executable, str(Path(__file__).resolve()), "--child", url, str(before)]
        child += ["--old-revision", args.old_revision]
        subprocess.run(child, env={**os.environ, CODE_ENV: str(code)}, check=True)
        _write(db, "after", args.out / "claim-path-after.txt", "this checkout")
    finally:
        shutil.rmtree(code, ignore_errors=True)
        db.dispose()
        scratch_database("qrelforge_plans", create=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
