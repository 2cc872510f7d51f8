"""Real database faults for the tests (issue 16 item 5): a database locked by another connection, a server
that does not answer, a disk that is full — on SQLite and PostgreSQL.

- `locked(url)`: SQLite ``BEGIN IMMEDIATE`` from another connection; PostgreSQL ``LOCK TABLE`` of every table
  in ACCESS EXCLUSIVE mode from another connection (give the app's URL `with_lock_timeout`).
- `unreachable_url(url)`: SQLite: a folder where the file should be (cannot be opened); PostgreSQL: a closed
  port.
- `full_disk(url, folder)`: a tiny tmpfs, filled. SQLite: the database file moves onto it (the WAL cannot
  grow); PostgreSQL: the tables move to a tablespace on it. Needs root (mount); skipped otherwise.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = [
    "locked",
    "with_lock_timeout",
    "unreachable_url",
    "closed_port",
    "full_disk",
    "tmpfs",
    "psycopg_dsn",
    "TcpProxy",
]


def psycopg_dsn(url: str) -> str:
    from sqlalchemy import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _tables() -> list[str]:
    from annotate_app.store.models import Base

    return [t.name for t in Base.metadata.sorted_tables]


@contextlib.contextmanager
def locked(url: str) -> Iterator[None]:
    """Another connection holds the database's write lock (SQLite) or every table's lock (PostgreSQL)."""
    if url.startswith("sqlite"):
        other = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            other.execute("ROLLBACK")
            other.close()
        return
    import psycopg

    with psycopg.connect(psycopg_dsn(url)) as other:
        other.execute(f"LOCK TABLE {', '.join(_tables())} IN ACCESS EXCLUSIVE MODE")
        try:
            yield
        finally:
            other.rollback()


def with_lock_timeout(url: str, ms: int = 300) -> str:
    """A PostgreSQL URL whose sessions give up waiting for a lock after ``ms`` (an operator's setting)."""
    from sqlalchemy import make_url

    if url.startswith("sqlite"):
        return url
    u = make_url(url).update_query_dict({"options": f"-c lock_timeout={ms}"})
    return u.render_as_string(hide_password=False)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed: connecting is refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def unreachable_url(url: str, folder: Path) -> str:
    """The same kind of database, unreachable: a folder in place of the SQLite file; a closed port."""
    from sqlalchemy import make_url

    if url.startswith("sqlite"):
        where = folder / "a-folder-not-a-database"
        where.mkdir(exist_ok=True)
        return f"sqlite:///{where}"
    return make_url(url).set(port=closed_port()).render_as_string(hide_password=False)


@contextlib.contextmanager
def tmpfs(folder: Path, size_kb: int) -> Iterator[Path]:
    """A tmpfs of ``size_kb`` mounted on ``folder`` (root only: the test is skipped otherwise)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("a full disk is simulated with a tmpfs mount, which needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0777", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path) -> None:
    """Write to ``folder`` until its filesystem is full."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\1" * 4096)
    finally:
        os.close(fd)


@contextlib.contextmanager
def full_disk(url: str, folder: Path) -> Iterator[str]:
    """The database of ``url`` on a full disk; yields the URL to use meanwhile."""
    if url.startswith("sqlite"):
        source = Path(url.removeprefix("sqlite:///"))
        with tmpfs(folder, source.stat().st_size // 1024 + 1024) as mount:
            target = mount / source.name
            shutil.copyfile(source, target)
            probe = sqlite3.connect(target)  # creates the -wal and -shm files while there is room
            probe.execute("PRAGMA journal_mode=WAL")
            probe.execute("SELECT count(*) FROM users").fetchone()
            _fill(mount)
            try:
                yield f"sqlite:///{target}"
            finally:
                probe.close()
        return
    yield from _pg_full_disk(url, folder)


_FILL = (  # random text (it does not compress), 200 rows of 960 characters at a time
    "INSERT INTO qf_filler SELECT (SELECT string_agg(md5(random()::text || g || k), '') "
    "FROM generate_series(1, 30) k) FROM generate_series(1, 200) g"
)


def _pg_full_disk(url: str, folder: Path) -> Iterator[str]:

    # the server (user postgres) must reach the folder: not under pytest's private (0700) tmp folder
    folder = Path(tempfile.mkdtemp(prefix="qf-pg-full-"))
    folder.chmod(0o755)
    try:
        yield from _pg_tablespace(url, folder)
    finally:
        folder.rmdir()


def _pg_tablespace(url: str, folder: Path) -> Iterator[str]:
    import psycopg

    with tmpfs(folder, 4096) as mount:
        space = mount / "pg"
        space.mkdir()
        shutil.chown(space, "postgres", "postgres")
        with psycopg.connect(psycopg_dsn(url), autocommit=True) as admin:
            admin.execute(f"CREATE TABLESPACE qf_full LOCATION '{space}'")
            try:
                # compacted first: the tables are emptied by DELETE between tests, and their dead rows
                # would take the small disk's room
                admin.execute(f"VACUUM FULL {', '.join(_tables())}")
                for table in _tables():
                    admin.execute(f"ALTER TABLE {table} SET TABLESPACE qf_full")
                admin.execute("CREATE TABLE qf_filler (x text) TABLESPACE qf_full")
                with contextlib.suppress(psycopg.errors.DiskFull):
                    while True:
                        admin.execute(_FILL)
                yield url
            finally:
                admin.execute("DROP TABLE IF EXISTS qf_filler")
                for table in _tables():
                    admin.execute(f"ALTER TABLE {table} SET TABLESPACE pg_default")
                admin.execute("DROP TABLESPACE qf_full")


class TcpProxy:
    """A loopback TCP forwarder to ``target`` (host, port) that can be cut: `down` closes the listener and
    every forwarded connection (the database "goes away" for whoever connects through it), `up` listens
    again on the same port."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.port = closed_port()
        self._listener: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()

    def up(self) -> TcpProxy:

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def _accept(self, listener: socket.socket) -> None:

        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def down(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(OSError):  # wakes the accepting thread (close alone does not, on Linux)
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def url(self, url: str) -> str:
        """``url`` (PostgreSQL) through this proxy."""
        from sqlalchemy import make_url

        return make_url(url).set(host="127.0.0.1", port=self.port).render_as_string(hide_password=False)
