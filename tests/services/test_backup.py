"""``qrelforge backup`` / ``restore``: a whole database round-trips SQLite → PostgreSQL → SQLite with every
id, every label version, adjudication, release and audit entry, so that every export is byte-identical; a bad
or damaged archive is refused before anything is written; a non-empty target needs --force; a failed restore
leaves the target as it was.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from service_table import SAMPLE, build_world, fast_hashes, fingerprint, log_in_callers
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from annotate_app.cli import main
from annotate_app.services import (
    adjudication,
    backup,
    export,
    imports,
    labels,
    projects,
    queue,
    releases,
    users,
)
from annotate_app.services.auth import SYSTEM, authenticate
from annotate_app.services.errors import Conflict, InvalidInput, PermissionDenied
from annotate_app.store import backup as backup_store
from annotate_app.store.db import Database
from annotate_app.store.migrate import head_revision, upgrade

HEAD = head_revision()
N_TABLES = len(backup_store.tables())


def _sqlite(path: Path) -> Database:
    upgrade(f"sqlite:///{path}")
    return Database(f"sqlite:///{path}")


@pytest.fixture
def pg(pg_session_url):
    from store_fixtures import _truncate

    _truncate(pg_session_url)
    db = Database(pg_session_url)
    yield db
    db.dispose()


@pytest.fixture(scope="session")
def rich_template(tmp_path_factory):
    """A SQLite database with history of every kind — label edits, a changed document (version 2, stale
    labels), guidelines v2, prior qrels, a chunk map, two releases, a skipped claim, deactivated users, the
    audit log — and its backup (built once)."""
    folder = tmp_path_factory.mktemp("rich")
    patch = fast_hashes()
    try:
        db = _sqlite(folder / "rich.db")
        _fill(db, folder)
        backup.backup(db, SYSTEM, folder / "rich.zip")
        db.dispose()
    finally:
        patch.undo()
    return folder


def _fill(db, folder: Path) -> None:
    ids = build_world(db, folder)
    log_in_callers(db)
    alice = authenticate(db, "alice", "alice-demo")
    labels.save_label(db, alice, "work", ids["Y"], grade=3, reason="on second thoughts: fully")  # version 2
    queue.skip(db, alice, "work", ids["X"], reason="cannot tell from the text")
    projects.set_guidelines(db, SYSTEM, "demo", "# Guidelines v2\n\n'quotes', \"doubles\", 100% _and_ \\")
    imports.import_qrels(db, SYSTEM, "demo", SAMPLE / "qrels.trec", name="legacy")
    imports.import_chunk_map(
        db, SYSTEM, "work", b'{"chunk_id": "D1#0", "doc_id": "D1"}\n', filename="c.jsonl"
    )
    docs = [json.loads(line) for line in (SAMPLE / "docs.jsonl").read_text().splitlines()]
    docs[0]["text"] += " (revised)"
    imports.import_documents(
        db,
        SYSTEM,
        "work",
        "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs).encode(),
        filename="docs-v2.jsonl",
    )
    # new qrels for the second release (identical ones would make none): the disagreement adjudicated again
    adjudication.adjudicate(db, SYSTEM, "demo", ids["D"], grade=0, reason="re-read under guidelines v2")
    releases.create_release(
        db,
        SYSTEM,
        "demo",
        justification="second release after the guidelines changed",
        note="v2 'note' with ;-- and %",
    )


@pytest.fixture
def rich(rich_template, tmp_path, fast_hashing):
    shutil.copyfile(rich_template / "rich.db", tmp_path / "rich.db")
    shutil.copyfile(rich_template / "rich.zip", tmp_path / "good.zip")
    db = Database(f"sqlite:///{tmp_path / 'rich.db'}")
    yield db
    db.dispose()


def exports(db) -> dict[str, bytes]:
    """Every release of every project in every format, and the labels CSV."""
    out = {}
    for p in projects.list_projects(db, SYSTEM):
        for r in releases.list_releases(db, SYSTEM, p.name):
            for fmt in export.FORMATS:
                out[f"{p.name} v{r.version} {fmt}"] = export.export_release(
                    db, SYSTEM, p.name, r.version, format=fmt
                )
        out[f"{p.name} labels"] = export.export_labels_csv(db, SYSTEM, p.name)
    return out


def dump(archive: Path) -> dict[str, list[str]]:
    with zipfile.ZipFile(archive) as z:
        return {t.name: z.read(f"tables/{t.name}.jsonl").decode().splitlines() for t in backup_store.tables()}


# ----------------------------------------------------------------------------------------- round trip
def test_sqlite_to_postgresql_to_sqlite_keeps_everything(rich, pg, tmp_path):
    before = exports(rich)
    assert sum(1 for k in before if " v" in k) == 6  # two releases of demo in three formats
    first = backup.backup(rich, SYSTEM, tmp_path / "a.zip")
    backup.restore(pg, SYSTEM, first.path)
    assert exports(pg) == before
    second = backup.backup(pg, SYSTEM, tmp_path / "b.zip")
    back = _sqlite(tmp_path / "back.db")
    backup.restore(back, SYSTEM, second.path)
    assert exports(back) == before
    a, b = dump(tmp_path / "a.zip"), dump(tmp_path / "b.zip")
    for name in a:
        if name != "audit_log":
            assert a[name] == b[name], name
    assert (
        b["audit_log"][: len(a["audit_log"])] == a["audit_log"]
    )  # then the restore and the exports made since
    assert [json.loads(x)[4] for x in b["audit_log"][len(a["audit_log"]) :]] == ["backup_restored"] + [
        "release_exported"
    ] * 6
    for release in releases.list_releases(back, SYSTEM, "demo"):
        qrels = releases.release_qrels(back, SYSTEM, "demo", release.version)
        canonical = releases.canonical_trec(
            qrels.query_id.to_pylist(), qrels.doc_id.to_pylist(), qrels.relevance
        )
        assert releases.sha256_text(canonical) == release.content_hash
    back.dispose()


def test_a_restored_database_keeps_working(rich, pg, tmp_path):
    """New rows get fresh ids (PostgreSQL sequences moved past the restored ids); logins and the append-only
    rule survive."""
    backup.restore(pg, SYSTEM, tmp_path / "good.zip")
    users.create_user(pg, SYSTEM, "newcomer", "newcomer-password")
    projects.create_project(pg, SYSTEM, "after")
    bob = authenticate(pg, "bob", "bob-demo")
    view = queue.next_pair(pg, bob, "work")
    labels.save_label(pg, bob, "work", view.pair_id, grade=1, reason="after the restore")
    with pg.write() as s, pytest.raises(DBAPIError, match="immutable"):
        s.execute(text("UPDATE labels SET grade = 0"))


# ------------------------------------------------------------------------------------------- refusals
def test_a_non_empty_target_needs_force_and_force_replaces_it(rich, db, tmp_path):
    from annotate_app.services.demo import load_demo

    load_demo(db)
    alice = authenticate(db, "alice", "alice-demo")
    labels.save_label(
        db, alice, "demo", queue.next_pair(db, alice, "demo").pair_id, grade=1, reason="mine, old"
    )
    before = fingerprint(db)
    with pytest.raises(
        Conflict,
        match=r"^the database is not empty \(4 users, 1 projects, .*; restore into an "
        r"empty database, or force it to replace everything$",
    ):
        backup.restore(db, SYSTEM, tmp_path / "good.zip")
    assert fingerprint(db) == before
    backup.restore(
        db, SYSTEM, tmp_path / "good.zip", force=True
    )  # labels (immutable) are replaced, not updated
    assert exports(db) == exports(rich)
    with db.write() as s, pytest.raises(DBAPIError, match="immutable"):
        s.execute(text("DELETE FROM labels"))


def _rewrite(archive: Path, out: Path, table: str, edit) -> None:
    """A copy of ``archive`` whose ``table`` lines pass through ``edit``, manifest hashes updated (a
    well-formed but wrong archive)."""
    import hashlib

    with zipfile.ZipFile(archive) as z:
        members = {n: z.read(n) for n in z.namelist()}
    lines = members[f"tables/{table}.jsonl"].decode().splitlines(keepends=True)
    data = "".join(edit(lines)).encode()
    members[f"tables/{table}.jsonl"] = data
    manifest = json.loads(members["manifest.json"])
    for entry in manifest["tables"]:
        if entry["name"] == table:
            entry["sha256"], entry["rows"] = hashlib.sha256(data).hexdigest(), data.count(b"\n")
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(out, "w") as z:
        for name, content in members.items():
            z.writestr(name, content)


def _flip_byte(archive: Path, out: Path) -> None:
    with zipfile.ZipFile(archive) as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = bytearray(members["tables/labels.jsonl"])
    data[10] ^= 0x01
    members["tables/labels.jsonl"] = bytes(data)
    with zipfile.ZipFile(out, "w") as z:
        for name, content in members.items():
            z.writestr(name, content)


def _manifest(archive: Path, out: Path, change) -> None:
    with zipfile.ZipFile(archive) as z:
        members = {n: z.read(n) for n in z.namelist()}
    manifest = json.loads(members["manifest.json"])
    change(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(out, "w") as z:
        for name, content in members.items():
            z.writestr(name, content)


BAD_ARCHIVES = {
    "not a zip": (
        lambda a, o: o.write_bytes(b"PK\x03\x04 not really"),
        r"^.+bad\.zip: not a QrelForge backup \(",
    ),
    "damaged": (
        _flip_byte,
        r"tables/labels\.jsonl does not match the manifest \(.*\): the archive is damaged$",
    ),
    "newer schema": (
        lambda a, o: _manifest(a, o, lambda m: m.update(schema_revision="9999")),
        rf"backup of schema '9999'; this QrelForge is at '{HEAD}' \(restore it with the version",
    ),
    "missing table": (lambda a, o: _manifest(a, o, lambda m: m["tables"].pop()), r"the archive's tables \["),
    "wrong type": (
        lambda a, o: _rewrite(a, o, "labels", lambda ls: [ls[0].replace(",", ',"x",', 1)] + ls[1:]),
        r"tables/labels\.jsonl:1: expected a list of \d+ values",
    ),
    "bad time": (
        lambda a, o: _rewrite(
            a, o, "users", lambda ls: [re.sub(r'"\d{4}-[^"]+"', '"yesterday"', ls[0], count=1)] + ls[1:]
        ),
        r"tables/users\.jsonl:1: column \w+: expected an ISO 8601 time",
    ),
    "NUL": (
        lambda a, o: _rewrite(a, o, "queries", lambda ls: [ls[0].replace('"q1"', '"q\\u00001"', 1)] + ls[1:]),
        r"tables/queries\.jsonl:1: column external_id: text contains a NUL character",
    ),
    "orphan": (
        lambda a, o: _rewrite(
            a, o, "labels", lambda ls: [re.sub(r"^\[(\d+),(\d+),", r"[\1,99999,", ls[0])] + ls[1:]
        ),
        r"the archive does not fit the database \(",
    ),
    "duplicate id": (
        lambda a, o: _rewrite(a, o, "labels", lambda ls: ls + ls[:1]),
        r"the archive does not fit the database \(",
    ),
}


@pytest.mark.parametrize("case", list(BAD_ARCHIVES))
def test_a_bad_archive_is_refused_and_the_target_left_as_it_was(rich, db, tmp_path, case):
    make, message = BAD_ARCHIVES[case]
    backup.restore(db, SYSTEM, tmp_path / "good.zip")  # the target holds data: force restores must keep it
    before = fingerprint(db)
    make(tmp_path / "good.zip", tmp_path / "bad.zip")
    with pytest.raises(InvalidInput, match=message):
        backup.restore(db, SYSTEM, tmp_path / "bad.zip", force=True)
    assert fingerprint(db) == before


def test_backup_never_leaves_a_partial_file_and_does_not_overwrite(rich, tmp_path):
    target = tmp_path / "a.zip"
    target.write_text("precious")
    with pytest.raises(Conflict, match=r"a\.zip already exists; choose another file or overwrite it$"):
        backup.backup(rich, SYSTEM, target)
    assert target.read_text() == "precious"
    bob = authenticate(rich, "bob", "bob-demo")
    with pytest.raises(
        PermissionDenied, match=r"^bob \(annotator\) may not back up the database: admin role required$"
    ):
        backup.backup(rich, bob, tmp_path / "b.zip")
    assert not (tmp_path / "b.zip").exists() and not [p for p in tmp_path.iterdir() if "partial" in p.name]


# ------------------------------------------------------------------------------------------------ CLI
def test_cli_backup_and_restore(rich, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("QRELFORGE_DATABASE_URL", raising=False)
    source = rich.url.render_as_string(hide_password=False)
    archive = tmp_path / "cli.zip"
    assert main(["backup", str(archive), "--db", source]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(
        rf"{re.escape(str(archive))}: \d+ rows in {N_TABLES} tables, schema {HEAD}, sha256 [0-9a-f]{{64}}\n",
        out,
    )
    assert main(["backup", str(archive), "--db", source]) == 2
    assert (
        capsys.readouterr().err
        == f"qrelforge: error: {archive} already exists; choose another file or overwrite it\n"
    )
    fresh = f"sqlite:///{tmp_path / 'new' / 'fresh.db'}"  # not even initialised: restore creates the schema
    assert main(["restore", str(archive), "--db", fresh]) == 0
    assert capsys.readouterr().out.startswith(f"restored {archive}: ")
    assert main(["restore", str(archive), "--db", fresh]) == 2
    assert capsys.readouterr().err.startswith("qrelforge: error: the database is not empty (")
    assert main(["restore", str(archive), "--db", fresh, "--force"]) == 0
    shutil.copyfile(archive, tmp_path / "junk.zip")
    (tmp_path / "junk.zip").write_bytes(b"junk")
    assert main(["restore", str(tmp_path / "junk.zip"), "--db", fresh]) == 2
    assert capsys.readouterr().err.startswith(
        f"qrelforge: error: {tmp_path / 'junk.zip'}: not a QrelForge backup ("
    )
