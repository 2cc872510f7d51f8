"""Backup and restore of a whole database (admins; the CLI's `SYSTEM`), between SQLite and PostgreSQL alike.

The archive is a zip of ``manifest.json`` and one JSONL member a table, written with mode `ARCHIVE_MODE`
(it holds password hashes). `restore` checks the whole archive before writing, in one transaction, and
refuses a non-empty database unless ``force=True``. Both are audited. Format: docs/modules.md.

>>> # backup(db, SYSTEM, "qf.zip"); restore(other_db, SYSTEM, "qf.zip")
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from sqlalchemy.exc import DataError, IntegrityError

from annotate_app.services.auth import Actor, Role, audit, authorize
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.store import backup as backup_store
from annotate_app.store import users
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction
from annotate_app.store.migrate import current_revision, head_revision
from annotate_app.store.models import utcnow

__all__ = [
    "backup",
    "restore",
    "read_manifest",
    "BackupInfo",
    "FORMAT",
    "VERSION",
    "MAX_MANIFEST",
    "MAX_LINE",
    "BATCH",
    "ARCHIVE_MODE",
]

FORMAT, VERSION = "qrelforge-backup", 1
BATCH = 5000
MAX_LINE = 256 << 20  # one row (a document version's text) may be long, not unbounded
MAX_MANIFEST = 16 << 20
ARCHIVE_MODE = 0o600  # the archive holds password hashes: owner only


@dataclass(frozen=True)
class BackupInfo:
    """An archive: where it is, its schema revision, the rows of each table, and its own sha256."""

    path: str
    schema_revision: str
    tables: dict[str, int]
    sha256: str

    def __str__(self) -> str:
        total = sum(self.tables.values())
        return (
            f"{self.path}: {total} rows in {len(self.tables)} tables, schema {self.schema_revision}, "
            f"sha256 {self.sha256}"
        )


def _info(path: Path, manifest: dict) -> BackupInfo:
    return BackupInfo(
        path=str(path),
        schema_revision=manifest["schema_revision"],
        tables={t["name"]: t["rows"] for t in manifest["tables"]},
        sha256=_file_sha256(path),
    )


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


# ----------------------------------------------------------------------------------------------- backup
def backup(db: Database, actor: Actor, dest: str | os.PathLike, *, overwrite: bool = False) -> BackupInfo:
    """Write the whole database to the archive ``dest`` (admin). The file appears only when complete (it is
    written next to ``dest`` and renamed); an existing file is refused unless ``overwrite=True``."""
    path = Path(dest)
    if path.exists() and not overwrite:
        raise Conflict(f"{path} already exists; choose another file or overwrite it")
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        manifest = _write_archive(db, actor, partial)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    info = _info(path, manifest)
    with db.write() as s:
        audit(
            s,
            actor,
            AuditAction.BACKUP_CREATED,
            target=str(path)[:1000],
            details={"sha256": info.sha256, "rows": info.tables},
        )
    return info


def _private_file(path: Path) -> io.BufferedWriter:
    """``path`` opened for writing with mode `ARCHIVE_MODE` from its first byte (created so, and changed so
    when it already exists); a symbolic link there is refused."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, ARCHIVE_MODE)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, ARCHIVE_MODE)  # an existing file would keep its old mode
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def _write_archive(db: Database, actor: Actor, path: Path) -> dict:
    revision = current_revision(db)
    entries = []
    with (
        _private_file(path) as raw,
        zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive,
        db.read(snapshot=True) as s,
    ):
        authorize(s, actor, Role.ADMIN, "back up the database")
        for table in backup_store.tables():
            member = f"tables/{table.name}.jsonl"
            digest, n = hashlib.sha256(), 0
            with archive.open(member, "w", force_zip64=True) as out:
                for row in backup_store.rows(s, table):
                    line = (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
                    digest.update(line)
                    out.write(line)
                    n += 1
            entries.append(
                {
                    "name": table.name,
                    "member": member,
                    "columns": backup_store.columns(table),
                    "rows": n,
                    "sha256": digest.hexdigest(),
                }
            )
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "schema_revision": revision,
            "created_at": utcnow().isoformat(),
            "source_dialect": db.dialect,
            "tables": entries,
        }
        archive.writestr("manifest.json", json.dumps(manifest, indent=1))
    return manifest


# ---------------------------------------------------------------------------------------------- restore
def read_manifest(source: str | os.PathLike) -> dict:
    """The archive's manifest, checked against this version of QrelForge (format, version, schema revision,
    tables and columns). Raises InvalidInput naming the archive."""
    path = Path(source)
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("manifest.json")
            if info.file_size > MAX_MANIFEST:
                raise InvalidInput(f"{path}: manifest.json is {info.file_size} bytes; not a QrelForge backup")
            manifest = json.loads(archive.read(info))
    except (OSError, KeyError, zipfile.BadZipFile, ValueError) as exc:
        raise InvalidInput(f"{path}: not a QrelForge backup ({exc})") from None
    _check_manifest(path, manifest)
    return manifest


def _check_manifest(path: Path, manifest: Any) -> None:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InvalidInput(f"{path}: not a QrelForge backup (manifest format is not {FORMAT!r})")
    if manifest.get("version") != VERSION:
        raise InvalidInput(
            f"{path}: backup format version {manifest.get('version')!r}; this QrelForge reads "
            f"version {VERSION}"
        )
    if manifest.get("schema_revision") != head_revision():
        raise InvalidInput(
            f"{path}: backup of schema {manifest.get('schema_revision')!r}; this QrelForge is at "
            f"{head_revision()!r} (restore it with the version that wrote it, then upgrade)"
        )
    entries = manifest.get("tables")
    if not isinstance(entries, list):
        entries = []
    expected = {t.name: backup_store.columns(t) for t in backup_store.tables()}
    names = [t.get("name") if isinstance(t, dict) else None for t in entries]
    if sorted(map(str, names)) != sorted(expected):
        raise InvalidInput(f"{path}: the archive's tables {names} are not the schema's {sorted(expected)}")
    for entry in entries:
        ok = (
            isinstance(entry.get("rows"), int)
            and isinstance(entry.get("sha256"), str)
            and entry.get("member") == f"tables/{entry['name']}.jsonl"
        )
        if (
            not ok
            or not isinstance(entry.get("columns"), list)
            or sorted(map(str, entry["columns"])) != sorted(expected[entry["name"]])
        ):
            raise InvalidInput(f"{path}: manifest entry of table {entry['name']!r} does not match the schema")


def _lines(archive: zipfile.ZipFile, path: Path, member: str) -> Iterator[tuple[int, bytes]]:
    try:
        with archive.open(member) as raw:
            # a big buffer in front of the member's decompressor: readline() is then fast on long files
            stream = io.BufferedReader(cast(io.RawIOBase, raw), 1 << 20)
            number = 0
            while line := stream.readline(MAX_LINE + 1):
                number += 1
                if len(line) > MAX_LINE or not line.endswith(b"\n"):
                    raise InvalidInput(f"{path}: {member}:{number}: line too long or unterminated")
                yield number, line
    except (KeyError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InvalidInput(f"{path}: {member}: cannot be read ({exc})") from None


def _rows(archive: zipfile.ZipFile, path: Path, entry: dict) -> Iterator[dict]:
    """The decoded rows of a table member (every value checked against its column)."""
    table = next(t for t in backup_store.tables() if t.name == entry["name"])
    decode = backup_store.decoder(table, entry["columns"])
    for number, line in _lines(archive, path, entry["member"]):
        try:
            yield decode(json.loads(line))
        except (ValueError, RecursionError) as exc:  # json errors and backup_store.BadValue
            raise InvalidInput(f"{path}: {entry['member']}:{number}: {exc}") from None


def _verify(archive: zipfile.ZipFile, path: Path, manifest: dict) -> None:
    """Every member's sha256 and row count as the manifest says, every row decodable."""
    for entry in manifest["tables"]:
        digest, n = hashlib.sha256(), 0
        for _, line in _lines(archive, path, entry["member"]):
            digest.update(line)
            n += 1
        if digest.hexdigest() != entry["sha256"] or n != entry["rows"]:
            raise InvalidInput(
                f"{path}: {entry['member']} does not match the manifest ({n} rows, sha256 "
                f"{digest.hexdigest()[:16]}...; expected {entry['rows']} rows, "
                f"{entry['sha256'][:16]}...): the archive is damaged"
            )
        for _ in _rows(archive, path, entry):
            pass


def restore(db: Database, actor: Actor, source: str | os.PathLike, *, force: bool = False) -> BackupInfo:
    """Load an archive into ``db`` (admin): checked first, then written in one transaction (see the module
    doc). The database must be at the archive's schema revision (run ``qrelforge init`` on a new one). A
    database holding any row is refused unless ``force=True``, which replaces its contents."""
    path = Path(source)
    manifest = read_manifest(path)
    if current_revision(db) != manifest["schema_revision"]:
        raise Conflict(
            f"the database is at schema {current_revision(db)!r}, the backup at "
            f"{manifest['schema_revision']!r}; run `qrelforge init` first"
        )
    with zipfile.ZipFile(path) as archive:
        _verify(archive, path, manifest)
        try:
            with db.write() as s:
                _load(s, actor, archive, path, manifest, force)
        except (IntegrityError, DataError) as exc:
            detail = str(getattr(exc, "orig", exc)).strip().splitlines()[0]
            raise InvalidInput(f"{path}: the archive does not fit the database ({detail})") from None
    return _info(path, manifest)


def _load(s, actor: Actor, archive: zipfile.ZipFile, path: Path, manifest: dict, force: bool) -> None:
    authorize(s, actor, Role.ADMIN, "restore the database")
    present = {name: n for name, n in backup_store.counts(s).items() if n}
    if present and not force:
        shown = ", ".join(f"{n} {name}" for name, n in present.items())
        raise Conflict(
            f"the database is not empty ({shown}); restore into an empty database, or force it to "
            "replace everything"
        )
    if present:
        backup_store.wipe(s)
    backup_store.defer_constraints(s)
    entries = {t["name"]: t for t in manifest["tables"]}
    for table in backup_store.tables():  # parents first
        batch: list[dict] = []
        for row in _rows(archive, path, entries[table.name]):
            batch.append(row)
            if len(batch) == BATCH:
                backup_store.load(s, table, batch)
                batch = []
        backup_store.load(s, table, batch)
    backup_store.reset_sequences(s)
    users.add_audit(
        s,
        actor_id=None,
        actor_name=actor.username,
        action=AuditAction.BACKUP_RESTORED,
        project_id=None,
        target=str(path)[:1000],
        details={
            "replaced": present,
            "source_dialect": manifest.get("source_dialect"),
            "created_at": manifest.get("created_at"),
        },
    )
